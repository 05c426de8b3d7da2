"""The Hive Metastore's Thrift API as the Hive catalog uses it: connections, the table lock,
and the metastore table that stands for an Iceberg table.

The generated bindings are PyIceberg's (its ``hive_metastore`` package, the maintained
generated code of Hive's ``hive_metastore.thrift``) over the ``thrift`` runtime; both are
imported when a catalog first connects (:func:`bindings`), so ``import iceduck`` needs
neither. What is stored follows Iceberg Java's ``HiveTableOperations`` and
``HiveOperationsBase`` for a table without the Hive engine (``engine.hive.enabled`` false):

* ``tableType`` ``EXTERNAL_TABLE`` and parameter ``EXTERNAL`` = ``TRUE``;
* parameters ``table_type`` = ``ICEBERG``, ``metadata_location``,
  ``previous_metadata_location``, ``uuid``, the table's properties, and the current
  snapshot's statistics (``numFiles``, ``numRows``, ``totalSize``, ``current-snapshot-id``...);
* the storage descriptor: the table location, the current schema's columns in Hive's type
  names (``HiveSchemaUtil.convert``), ``FileInputFormat``/``FileOutputFormat`` and
  ``LazySimpleSerDe``.

Commits take the metastore's lock on the table first, as Java's ``MetastoreLock`` does: a
``LockRequest`` of one ``EXCLUSIVE``, ``TABLE``-level component, then ``check_lock`` until it
is ``ACQUIRED`` (bounded), and ``unlock`` at the end.
"""

from __future__ import annotations

import getpass
import socket
import time
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from iceduck.catalog.hive_types import hive_type
from iceduck.errors import StorageError, UnsupportedError, UserError
from iceduck.spec.table_metadata import TableMetadata

ICEBERG_TABLE_TYPE = "ICEBERG"
TABLE_TYPE_PROP = "table_type"
METADATA_LOCATION_PROP = "metadata_location"
PREVIOUS_METADATA_LOCATION_PROP = "previous_metadata_location"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
#: Java's ``StatsSetupConst.DO_NOT_UPDATE_STATS``: the metastore must not compute statistics
#: of an Iceberg table's folder on alter_table
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"
INPUT_FORMAT = "org.apache.hadoop.mapred.FileInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.mapred.FileOutputFormat"
SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
#: how long a commit waits for the table lock: Java's ``lock-acquire-timeout-ms`` default,
#: 3 minutes (the catalog property of that name changes it)
LOCK_TIMEOUT_S = 180.0
#: the summary keys Java's ``HiveTableOperations.setSnapshotStats`` copies, under Hive's names
_STATS = {"total-data-files": "numFiles", "total-records": "numRows", "total-files-size": "totalSize"}
#: the Thrift transport's socket timeout: a metastore that accepts but never answers
SOCKET_TIMEOUT_MS = 120_000
#: Hive's metastore port, when a URI names none
DEFAULT_PORT = 9083


def parse_thrift_uri(uri: str) -> tuple[str, int]:
    """``thrift://host:port`` -> (host, port); Hive's default port 9083 when none is written."""
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError as e:
        raise UserError(f"malformed Hive Metastore URI {uri!r}: {e}") from None
    if parts.scheme.lower() != "thrift" or not parts.hostname:
        raise UserError(f"a Hive Metastore URI is thrift://host:port, not {uri!r}")
    if parts.path.strip("/") or parts.query or parts.username:
        raise UserError(f"the Hive Metastore URI {uri!r} has more than thrift://host:port")
    return parts.hostname, port or DEFAULT_PORT


def bindings() -> tuple[ModuleType, ModuleType, ModuleType]:
    """The Thrift runtime's transport and protocol modules and the metastore's ``ttypes``
    (with ``ThriftHiveMetastore`` reachable as ``bindings()[2].__name__``'s sibling)."""
    try:
        from hive_metastore import ttypes
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket
    except ImportError as e:
        raise UnsupportedError(
            f"the Hive catalog needs the thrift package and Hive's generated bindings ({e}): "
            "pip install 'iceduck[hive]'"
        ) from e
    return TSocket, TBinaryProtocol, ttypes


def transport_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean the connection failed (not an answer of the metastore)."""
    from thrift.Thrift import TApplicationException
    from thrift.transport.TTransport import TTransportException

    return (TTransportException, TApplicationException, OSError, EOFError)


class Connection:
    """A metastore client on a new connection, closed on leaving the ``with`` block.

    A class rather than a ``@contextmanager`` generator: the generated exceptions are
    immutable, and a generator's ``throw`` sets their ``__traceback__``, a TypeError."""

    def __init__(self, host: str, port: int) -> None:
        tsocket_module, protocol_module, _ = bindings()
        from hive_metastore.ThriftHiveMetastore import Client
        from thrift.transport.TTransport import TBufferedTransport

        sock = tsocket_module.TSocket(host, port)
        sock.setTimeout(SOCKET_TIMEOUT_MS)
        self._transport = TBufferedTransport(sock)
        self.client = Client(protocol_module.TBinaryProtocol(self._transport))

    def __enter__(self) -> Any:
        self._transport.open()
        return self.client

    def __exit__(self, *exc: object) -> None:
        self._transport.close()


class Guarded:
    """A :class:`Connection` of catalog ``name`` whose failures are iceduck's: a failed
    transport (on opening, or raised inside the block) is one :class:`StorageError` naming
    the URI and what to check; a ``MetaException`` (the metastore failed the call) a
    :class:`StorageError` with its message. The metastore's own answers (no such object,
    already exists) pass as they are, for the catalog to name."""

    def __init__(self, name: str, uri: str, connection: Connection) -> None:
        self._name = name
        self._uri = uri
        self._connection = connection

    def unreachable(self, error: BaseException) -> StorageError:
        return StorageError(
            f"the Hive Metastore of catalog '{self._name}' at {self._uri} did not answer ({error}): check "
            "that the metastore is running and listening there (hive --service metastore)",
            self._uri,
        )

    def __enter__(self) -> Any:
        try:
            return self._connection.__enter__()
        except transport_errors() as e:
            raise self.unreachable(e) from e

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        self._connection.__exit__()
        if error is not None and isinstance(error, transport_errors()):
            raise self.unreachable(error) from error
        _, _, ttypes = bindings()
        if isinstance(error, ttypes.MetaException | ttypes.InvalidObjectException):
            raise StorageError(
                f"the Hive Metastore of catalog '{self._name}' at {self._uri} refused: {error.message}",
                self._uri,
            ) from error


# -- the lock ----------------------------------------------------------------------------------


def acquire_lock(client: Any, database: str, table: str, timeout_s: float = LOCK_TIMEOUT_S) -> int:
    """Java's ``MetastoreLock.acquireLock``: request an exclusive table lock and wait until
    it is granted; its id. A lock not granted within ``timeout_s`` is released again and a
    :class:`UserError` names the table."""
    _, _, ttypes = bindings()
    component = ttypes.LockComponent(
        type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE, dbname=database, tablename=table
    )
    request = ttypes.LockRequest(
        component=[component], user=_user(), hostname=socket.gethostname(), agentInfo="iceduck"
    )
    response = client.lock(request)
    deadline = time.monotonic() + timeout_s
    pause = 0.05
    while response.state == ttypes.LockState.WAITING:
        if time.monotonic() >= deadline:
            release_lock(client, response.lockid)
            raise UserError(
                f"could not take the metastore lock on {database}.{table}: another writer held it for "
                f"{timeout_s:g} s (SHOW LOCKS in Hive names it); try again when it is released"
            )
        time.sleep(pause)  # the metastore has no blocking wait: Java polls with backoff too
        pause = min(pause * 2, 1.0)
        response = client.check_lock(ttypes.CheckLockRequest(lockid=response.lockid))
    if response.state != ttypes.LockState.ACQUIRED:
        state = ttypes.LockState._VALUES_TO_NAMES.get(response.state, response.state)
        raise UserError(f"could not take the metastore lock on {database}.{table}: the lock is {state}")
    return int(response.lockid)


def release_lock(client: Any, lock_id: int) -> None:
    """``unlock``; a lock the metastore no longer knows (timed out) is released already."""
    _, _, ttypes = bindings()
    try:
        client.unlock(ttypes.UnlockRequest(lockid=lock_id))
    except ttypes.NoSuchLockException:
        pass


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment: Java would use the process's UGI
        return "iceduck"


# -- the database a namespace is -----------------------------------------------------------------

LOCATION = "location"
COMMENT = "comment"
#: Java's ``HiveCatalog.HMS_DB_OWNER`` and ``HMS_DB_OWNER_TYPE``
OWNER = "hive.metastore.database.owner"
OWNER_TYPE = "hive.metastore.database.owner-type"


def database_properties(hive_db: Any) -> dict[str, str]:
    """Java's ``HiveCatalog.convertToMetadata``: the parameters, ``location`` (the
    ``locationUri``), ``comment`` (the description) and the owner."""
    _, _, ttypes = bindings()
    properties = dict(hive_db.parameters or {})
    if hive_db.locationUri:
        properties[LOCATION] = hive_db.locationUri
    if hive_db.description is not None:
        properties[COMMENT] = hive_db.description
    if hive_db.ownerName is not None:
        properties[OWNER] = hive_db.ownerName
        if hive_db.ownerType is not None:
            properties[OWNER_TYPE] = ttypes.PrincipalType._VALUES_TO_NAMES.get(hive_db.ownerType, "USER")
    return properties


def new_database(name: str, properties: dict[str, str], default_location: str) -> Any:
    """Java's ``HiveCatalog.convertToDatabase``: ``location``, ``comment`` and the owner keys
    become the database's fields (the owner the current user unless given), the rest its
    parameters."""
    _, _, ttypes = bindings()
    given = dict(properties)
    owner_type = given.pop(OWNER_TYPE, "USER")
    return ttypes.Database(
        name=name,
        description=given.pop(COMMENT, None),
        locationUri=given.pop(LOCATION, None) or default_location,
        ownerName=given.pop(OWNER, None) or _user(),
        ownerType=ttypes.PrincipalType._NAMES_TO_VALUES.get(owner_type.upper(), ttypes.PrincipalType.USER),
        parameters=given,
    )


def change_database(hive_db: Any, updates: dict[str, str], removals: list[str]) -> None:
    """Java's ``setProperties``/``removeProperties`` applied to ``hive_db`` in place."""
    _, _, ttypes = bindings()
    parameters = dict(hive_db.parameters or {})
    for key in removals:
        if key == COMMENT:
            hive_db.description = None
        parameters.pop(key, None)
    for key, value in updates.items():
        if key == LOCATION:
            hive_db.locationUri = value
        elif key == COMMENT:
            hive_db.description = value
        elif key == OWNER:
            hive_db.ownerName = value
        elif key == OWNER_TYPE:
            hive_db.ownerType = ttypes.PrincipalType._NAMES_TO_VALUES.get(
                value.upper(), ttypes.PrincipalType.USER
            )
        else:
            parameters[key] = value
    hive_db.parameters = parameters


# -- the metastore table -----------------------------------------------------------------------


def storage_descriptor(metadata: TableMetadata) -> Any:
    """Java's ``HiveOperationsBase.storageDescriptor`` with the Hive engine off."""
    _, _, ttypes = bindings()
    columns = [
        ttypes.FieldSchema(name=f.name, type=hive_type(f.field_type), comment=f.doc)
        for f in metadata.schema().fields
    ]
    return ttypes.StorageDescriptor(
        cols=columns,
        location=metadata.location,
        inputFormat=INPUT_FORMAT,
        outputFormat=OUTPUT_FORMAT,
        serdeInfo=ttypes.SerDeInfo(serializationLib=SERDE, parameters={}),
        compressed=False,
        numBuckets=-1,
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def table_parameters(
    stored: dict[str, str],
    base: TableMetadata | None,
    metadata: TableMetadata,
    location: str,
    previous: str | None,
) -> dict[str, str]:
    """The metastore parameters after a commit (Java's ``setHmsTableParameters``): the stored
    ones less the table properties the commit removed, plus the table's properties, the
    Iceberg markers and the current snapshot's statistics."""
    parameters = dict(stored)
    for key in base.properties if base is not None else {}:
        if key not in metadata.properties:
            parameters.pop(key, None)
    parameters.update(metadata.properties)
    parameters["EXTERNAL"] = "TRUE"
    parameters[TABLE_TYPE_PROP] = ICEBERG_TABLE_TYPE
    parameters[METADATA_LOCATION_PROP] = location
    if previous is not None:
        parameters[PREVIOUS_METADATA_LOCATION_PROP] = previous
    else:
        parameters.pop(PREVIOUS_METADATA_LOCATION_PROP, None)
    if metadata.table_uuid:
        parameters["uuid"] = metadata.table_uuid
    parameters["snapshot-count"] = str(len(metadata.snapshots))
    snapshot = metadata.current_snapshot()
    for key in ("current-snapshot-id", "current-snapshot-timestamp-ms", *_STATS.values()):
        parameters.pop(key, None)
    if snapshot is not None:
        parameters["current-snapshot-id"] = str(snapshot.snapshot_id)
        parameters["current-snapshot-timestamp-ms"] = str(snapshot.timestamp_ms)
        summary = snapshot.summary or {}
        for key, hive_key in _STATS.items():
            if key in summary:
                parameters[hive_key] = str(summary[key])
    return parameters


def new_table(database: str, name: str, metadata: TableMetadata, location: str) -> Any:
    """Java's ``HiveTableOperations.newHmsTable`` filled for its first metadata file."""
    _, _, ttypes = bindings()
    now = int(time.time())
    return ttypes.Table(
        tableName=name,
        dbName=database,
        owner=_user(),
        createTime=now,
        lastAccessTime=now,
        retention=2147483647,
        sd=storage_descriptor(metadata),
        partitionKeys=[],
        parameters=table_parameters({}, None, metadata, location, None),
        tableType=EXTERNAL_TABLE,
    )


def is_iceberg(table: Any) -> bool:
    """Java's ``validateTableIsIceberg``: ``table_type`` is ``ICEBERG`` (in any case)."""
    kind = (table.parameters or {}).get(TABLE_TYPE_PROP)
    return kind is not None and kind.upper() == ICEBERG_TABLE_TYPE


def what_it_is(table: Any) -> str:
    """A non-Iceberg metastore table in words: its table type and ``table_type`` parameter."""
    kind = (table.parameters or {}).get(TABLE_TYPE_PROP)
    shown = f"table_type={kind}" if kind else "no table_type parameter"
    return f"a Hive {table.tableType or 'table'} ({shown}), not an Iceberg table"
