"""``iceduck.connect``: PEP 249 connections and cursors over a :class:`~iceduck.session.session.Session`.

::

    import iceduck

    with iceduck.connect("warehouse") as con:
        cur = con.cursor()
        cur.execute("SELECT count(*) FROM ns.events WHERE device_id = ?", [42])
        print(cur.fetchone())

A connection owns one session (catalog, manifest cache, DuckDB database); each cursor
holds the result of its last statement. Errors are raised as PEP 249 classes that are
also the iceduck error they come from (:mod:`iceduck.dbapi`).

Transactions: with ``autocommit`` True (the default) every statement commits on its own
(one Iceberg snapshot per write), and ``commit``/``rollback`` have nothing to do unless a
``BEGIN`` opened a transaction. With ``autocommit = False`` the first statement opens a
transaction (:mod:`iceduck.txn.transaction`): ``commit`` makes all of its changes, on every
table, visible at once and ``rollback`` discards them, as in sqlite3 and psycopg; closing
the connection with a transaction open rolls it back, and leaving ``with connect(...)``
commits it (rolls it back on an exception) before closing, as psycopg does.

Besides PEP 249, a cursor hands out its rows as Arrow (``fetch_arrow_table``,
``fetch_record_batch``, ``df``, ``pl``, and ``__arrow_c_stream__`` so that
``pyarrow.table(cur)`` and ``polars.DataFrame(cur)`` read it without copies).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from iceduck import dbapi
from iceduck.dbapi import InterfaceError, ProgrammingError, dbapi_error, write_answer
from iceduck.errors import IceduckError
from iceduck.session.caller_scope import PythonScope, Registry

if TYPE_CHECKING:
    from iceduck.session.session import Result, Session

T = TypeVar("T")
Parameters = Sequence[Any] | dict[str, Any] | None


def connect(
    warehouse: str | Path | None = None,
    catalog: str | None = None,
    *,
    catalog_uri: str | None = None,
    properties: Mapping[str, str] | None = None,
    catalog_type: str | None = None,
    read_only: bool = False,
    manifest_cache_entries: int | None = None,
    namespace: str | Sequence[str] | None = None,
    paimon: str | Path | Mapping[str, str | Path] | None = None,
) -> Connection:
    """Open a lake: the warehouse ``warehouse`` through catalog ``catalog`` (default
    ``iceduck``, the name Spark's jobs must use too: a shared catalog's rows are per name).

    ``warehouse`` is a folder or a location URI (``s3://bucket/wh``, ``gs://...``,
    ``abfss://...``, ``file:/...``): where new tables go. ``catalog_uri`` names the catalog:
    ``postgresql://user:password@host:5432/db`` (or ``postgres://``, or Spark's
    ``jdbc:postgresql://host:5432/db``) for Iceberg's JDBC catalog in PostgreSQL,
    ``sqlite:///path/catalog.db`` (PyIceberg's form) or ``jdbc:sqlite:/path/catalog.db``
    (Spark's) for a SQLite file (:mod:`iceduck.catalog.uri`). Without it the catalog is
    ``<warehouse>/catalog.db`` (SQLite, in the layout of Iceberg's JDBC catalog, shared with
    Spark and PyIceberg; created when missing unless ``read_only``), or for
    ``catalog_type="hadoop"`` Spark's Hadoop catalog layout under the folder; both need a
    local warehouse. ``properties`` are Iceberg catalog properties named as a Spark job's
    ``spark.sql.catalog.<name>.<property>`` settings name them (``s3.endpoint``,
    ``s3.access-key-id``, ``s3.secret-access-key``, ``client.region``, ``jdbc.user``,
    ``jdbc.password``...), for the object store and the catalog; a warehouse in object
    storage is checked when connecting, so a wrong bucket, credential or endpoint fails here.

    With neither ``warehouse`` nor ``catalog_uri``, the lake is the one the environment
    (``ICEDUCK_CATALOG_URI``, ``ICEDUCK_WAREHOUSE``, ``ICEDUCK_PROPERTY__S3__ENDPOINT``...)
    and the config file (``~/.iceduck/config.toml``, or ``$ICEDUCK_CONFIG``) describe, the
    arguments given winning; without those, ``./warehouse`` (:mod:`iceduck.config`). Naming
    either opens exactly what the call says: neither is read.

    ``manifest_cache_entries`` bounds the connection's cache of parsed manifests and
    manifest lists, in manifest entries plus list rows (default
    :data:`iceduck.scan.manifest_cache.DEFAULT_MAX_ENTRIES`; about 3.7 KB each for a table of
    four columns with metrics, more for wider tables); least recently used go first.

    ``namespace`` is the current namespace to start with, as after ``USE namespace``
    (``"db"``, ``"iceduck.db"``, or the levels ``("deep", "er")``): one-part table names
    are read and created in it. It must exist (ProgrammingError naming it otherwise).

    ``paimon`` attaches Apache Paimon warehouses beside the catalog, as
    ``ATTACH 'path' AS p (TYPE paimon)`` does: a location is attached as ``paimon``
    (``SELECT * FROM paimon.db.orders``), a mapping ``{alias: location}`` attaches each.
    """
    # Imported here, not at the top: ``import iceduck`` stays cheap (no DuckDB, no sqlglot)
    # for tools that only need the module globals, such as ``iceduck --help``.
    from iceduck.config import resolve_lake
    from iceduck.session.session import Session

    lake = _call(lambda: resolve_lake(warehouse, catalog_uri, catalog, catalog_type, properties))
    session = _call(
        lambda: Session(
            lake.warehouse,
            lake.name,
            catalog_type=lake.catalog_type,
            read_only=read_only,
            manifest_cache_entries=manifest_cache_entries,
            namespace=namespace,
            catalog_uri=lake.catalog_uri,
            properties=lake.properties,
        )
    )
    if paimon is not None:
        attached = {"paimon": paimon} if isinstance(paimon, str | Path) else dict(paimon)
        try:
            for alias, location in attached.items():
                _call(lambda: session.attach_paimon(location, alias))  # noqa: B023
        except BaseException:
            session.close()
            raise
    return Connection(session)


def _call(fn: Callable[[], T]) -> T:
    """Run ``fn``, raising errors as PEP 249 classes (see :mod:`iceduck.dbapi`); a Python
    exception hostile input or the machine can provoke (an ``OSError`` opening the warehouse,
    a NUL or a lone surrogate in its path) as the iceduck kind it means."""
    try:
        return fn()
    except IceduckError as e:
        raise dbapi_error(e) from e
    except Exception as e:
        # not at the top: ``import iceduck`` stays cheap (no DuckDB, no sqlglot)
        from iceduck.engine.errors import is_duckdb_error
        from iceduck.session.result import python_error

        if is_duckdb_error(e):
            raise dbapi_error(e) from e
        translated = python_error(e)
        if translated is None:
            raise
        raise dbapi_error(translated) from e


def _pep249_reader(reader: Any) -> Any:
    """``reader`` (a ``pyarrow.RecordBatchReader``) raising its errors as :func:`_call` does."""
    import pyarrow as pa

    def batches() -> Iterator[Any]:
        while True:
            try:
                batch = _call(reader.read_next_batch)
            except StopIteration:
                return
            yield batch

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


class Connection:
    """A PEP 249 connection to one warehouse."""

    # PEP 249's optional extension: the exception classes as connection attributes, so code
    # holding several drivers' connections can write ``except con.ProgrammingError``.
    Warning = dbapi.Warning
    Error = dbapi.Error
    InterfaceError = dbapi.InterfaceError
    DatabaseError = dbapi.DatabaseError
    DataError = dbapi.DataError
    OperationalError = dbapi.OperationalError
    IntegrityError = dbapi.IntegrityError
    InternalError = dbapi.InternalError
    ProgrammingError = dbapi.ProgrammingError
    NotSupportedError = dbapi.NotSupportedError

    def __init__(self, session: Session) -> None:
        self.session = session
        self._cursors: weakref.WeakSet[Cursor] = weakref.WeakSet()

    @property
    def closed(self) -> bool:
        return self.session.closed

    @property
    def namespace(self) -> str | None:
        """The current namespace (``USE``, ``connect(namespace=)``), dotted; None when none is."""
        return ".".join(self.session.namespace) or None

    def _check(self) -> None:
        if self.session.closed:
            raise InterfaceError("the connection is closed")

    def cursor(self) -> Cursor:
        self._check()
        cursor = Cursor(self)
        self._cursors.add(cursor)
        return cursor

    def execute(self, sql: str, parameters: Parameters = None) -> Cursor:
        """Shortcut (as in sqlite3 and DuckDB): a new cursor that ran ``sql``."""
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Sequence[Parameters]) -> Cursor:
        """Shortcut: a new cursor that ran ``sql`` for every parameter set (see Cursor.executemany)."""
        return self.cursor().executemany(sql, seq_of_parameters)

    def register(self, view_name: str, python_object: Any) -> Connection:
        """Make a DataFrame or Arrow object readable as ``view_name`` by every later statement
        of the connection (as DuckDB's ``register``): it wins over a Python variable and over
        an Iceberg table of the current namespace of that name, until :meth:`unregister`."""
        self._check()
        _call(lambda: self.session.registry.register(view_name, python_object))
        return self

    def unregister(self, view_name: str) -> Connection:
        """Forget a registered name (an unknown one is no error, as in DuckDB)."""
        self._check()
        self.session.registry.unregister(view_name)
        return self

    @property
    def autocommit(self) -> bool:
        """True (the default): each statement commits on its own. False: the first statement
        opens a transaction that lasts until :meth:`commit` or :meth:`rollback`."""
        return self.session.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        """Turning autocommit on commits the open transaction (as sqlite3's ``autocommit``)."""
        self._check()
        if not isinstance(value, bool):
            raise ProgrammingError(f"autocommit is True or False, not {value!r}")
        if value and self.session.transaction is not None:
            self.commit()
        self.session.autocommit = value

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open (as sqlite3's ``in_transaction``)."""
        return self.session.transaction is not None

    def commit(self) -> None:
        """Commit the open transaction, every table at once; nothing to do without one.
        Fails on a closed connection."""
        self._check()
        if self.session.transaction is not None:
            _call(self.session.commit)

    def rollback(self) -> None:
        """Discard the open transaction and the files it wrote; nothing to do without one.
        Fails on a closed connection."""
        self._check()
        if self.session.transaction is not None:
            _call(self.session.rollback)

    def interrupt(self) -> None:
        """Stop the statements of this connection running now (call it from another thread);
        each raises an error saying "the query was interrupted". The shell's Ctrl-C."""
        self.session.interrupt()

    def close(self) -> None:
        """Close the cursors and the session; closing twice is an error (PEP 249 suite)."""
        self._check()
        for cursor in list(self._cursors):
            cursor.close()
        self._cursors.clear()
        self.session.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.closed:  # closed inside the block already: leaving it is no second close
            return
        try:
            if self.session.transaction is not None:
                if kind is None:
                    self.commit()
                else:
                    self.rollback()
        finally:
            self.close()


class Cursor:
    """A PEP 249 cursor: runs statements and fetches the rows of the last one."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.arraysize = 1
        self._result: Result | None = None
        #: after a write statement: the rows of DuckDB's answer not fetched yet
        self._written_rows: list[tuple[Any, ...]] | None = None
        self._rowcount: int | None = None
        self._closed = False
        #: objects registered on this cursor only (``register``), as on a DuckDB cursor
        self._registry = Registry()

    # -- state ----------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")
        self.connection._check()

    def _result_of_last(self) -> Result:
        self._check_open()
        if self._result is None:
            raise ProgrammingError("no statement has been executed on this cursor")
        return self._result

    def _rows(self) -> Result | list[tuple[Any, ...]]:
        """The result to fetch from; after a write statement, the rows left of DuckDB's
        answer to it (:func:`iceduck.dbapi.write_answer`: the count of rows changed)."""
        result = self._result_of_last()
        if result.written is not None:
            if self._written_rows is None:
                self._written_rows = write_answer(result.statement, result.rowcount)[1]
            return self._written_rows
        return result

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        """7-tuples per column; the type code compares equal to ``iceduck.STRING`` and co.
        After a write statement, DuckDB's: ``Count`` (DML, CREATE) or ``Success``."""
        if self._result is not None and self._result.written is not None:
            return write_answer(self._result.statement, self._result.rowcount)[0]
        return None if self._result is None else self._result.description

    @property
    def rowcount(self) -> int:
        """Rows a write changed (summed over ``executemany``); -1 for queries and DDL."""
        if self._rowcount is not None:
            return self._rowcount
        return -1 if self._result is None else self._result.rowcount

    @property
    def result(self) -> Result | None:
        """The session's result of the last statement (Arrow access, the scans planned)."""
        return self._result

    # -- statements -----------------------------------------------------------------------------

    def execute(self, sql: str, parameters: Parameters = None) -> Cursor:
        """Run ``sql``. A one-part name that is no Iceberg table may read a DataFrame or
        Arrow object: one registered on this cursor or its connection, or a variable of the
        calling code (see :mod:`iceduck.session.caller_scope`); a parameter may be a table (``FROM ?``)."""
        self._check_open()
        self._release()
        scope = PythonScope.of_caller([self._registry])  # held for this statement only
        try:
            self._result = _call(partial(self.connection.session.execute, sql, parameters, scope))
        finally:
            # the scope holds this frame, which holds the scope: without the cycle broken,
            # a dropped cursor's result lives until the garbage collector runs, and so does
            # its hold on a repeated query's DuckDB cursor (iceduck.session.prepared)
            del scope
        return self

    def register(self, view_name: str, python_object: Any) -> Cursor:
        """Make a DataFrame or Arrow object readable as ``view_name`` by the statements of this
        cursor only (as on a DuckDB cursor); see :meth:`Connection.register`."""
        self._check_open()
        _call(lambda: self._registry.register(view_name, python_object))
        return self

    def unregister(self, view_name: str) -> Cursor:
        """Forget a name registered on this cursor (an unknown one is no error)."""
        self._check_open()
        self._registry.unregister(view_name)
        return self

    def executemany(self, sql: str, seq_of_parameters: Sequence[Parameters]) -> Cursor:
        """Run ``sql`` once per parameter set; ``rowcount`` is the total of rows changed.

        ``INSERT INTO t [(cols)] VALUES (?, ...)`` over many rows runs as *one* INSERT, so
        the batch is one Iceberg commit (see :mod:`iceduck.session.batch_insert`); any other
        statement runs once per parameter set, inside one transaction, so the batch is still
        one commit (all parameter sets or none) -- in autocommit mode a transaction of its
        own, otherwise the connection's open one. A statement that commits by itself (DDL)
        still does, each time.
        """
        from iceduck.session.batch_insert import batch_insert

        self._check_open()
        self._release()
        rows = list(seq_of_parameters)
        batch = batch_insert(sql, rows)
        if batch is not None:
            self.execute(batch.sql, batch.parameters)
            return self
        session = self.connection.session
        own = len(rows) > 1 and session.autocommit and session.transaction is None
        if own:
            session.begin(implicit=True)
        total = 0
        try:
            for parameters in rows:
                self.execute(sql, parameters)
                count = self.rowcount
                total = -1 if count < 0 or total < 0 else total + count
        except BaseException:
            if own and session.transaction is not None:
                session.rollback()
            raise
        if own and session.transaction is not None:
            _call(session.commit)
        self._rowcount = total
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        result = self._rows()
        if isinstance(result, list):
            return result.pop(0) if result else None
        return _call(result.fetchone)

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        result = self._rows()
        count = self.arraysize if size is None else size
        if isinstance(result, list):
            taken = result[:count]
            del result[:count]
            return taken
        return _call(lambda: result.fetchmany(count))

    def fetchall(self) -> list[tuple[Any, ...]]:
        result = self._rows()
        if isinstance(result, list):
            taken = list(result)
            result.clear()
            return taken
        return _call(result.fetchall)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    def setinputsizes(self, sizes: Any) -> None:
        """Accepted and ignored (PEP 249 allows it): DuckDB sizes parameters itself."""

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        """Accepted and ignored: no column needs a buffer size announced."""

    # -- Arrow ----------------------------------------------------------------------------------

    def fetch_arrow_table(self) -> Any:
        """The unread rows as a ``pyarrow.Table`` (a statement without rows gives an empty one)."""
        result = self._result_of_last()
        return _call(result.to_arrow_table)

    to_arrow_table = fetch_arrow_table

    def fetch_record_batch(self, rows_per_batch: int = 1_000_000) -> Any:
        """A ``pyarrow.RecordBatchReader`` streaming the unread rows from DuckDB, a batch
        at a time; an error met while reading it is raised as a PEP 249 class too."""
        result = self._result_of_last()
        return _pep249_reader(_call(lambda: result.fetch_record_batch(rows_per_batch)))

    to_arrow_reader = fetch_record_batch

    def df(self) -> Any:
        """The unread rows as a ``pandas.DataFrame`` (ImportError naming pandas when missing)."""
        return _call(self._result_of_last().df)

    def pl(self) -> Any:
        """The unread rows as a ``polars.DataFrame`` (ImportError naming polars when missing)."""
        return _call(self._result_of_last().pl)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """Arrow PyCapsule stream: ``pyarrow.table(cur)``, ``polars.DataFrame(cur)`` copy nothing."""
        result = self._result_of_last()
        return _call(lambda: result.__arrow_c_stream__(requested_schema))

    # -- closing --------------------------------------------------------------------------------

    def _release(self) -> None:
        self._rowcount = None
        self._written_rows = None
        if self._result is not None:
            self._result.close()
            self._result = None

    def close(self) -> None:
        self._release()
        self._registry.clear()
        self._closed = True

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
