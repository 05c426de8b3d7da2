"""An Iceberg catalog in a Hive Metastore (``thrift://host:port``), as Iceberg Java's
``HiveCatalog`` keeps it, so Spark's ``type=hive`` catalog and iceduck share its tables.

* A namespace is a Hive database: one level only. Its properties are the database's
  parameters plus ``location`` (the database's ``locationUri``) and ``comment`` (its
  description), as Java's ``HiveCatalog.convertToDatabase``/``convertToMetadata`` map them;
  a new database's location is ``<warehouse>/<db>.db`` unless ``location`` is given.
* A table is a metastore table whose parameter ``table_type`` is ``ICEBERG``; its current
  metadata file is the parameter ``metadata_location`` (:mod:`iceduck.catalog.hive_thrift`
  says what else is stored). A metastore table without that marker is a Hive table, and
  loading it is an error naming what it is.
* New tables go to ``<database location>/<table>`` (Java's ``defaultWarehouseLocation``).
* A commit takes the metastore's exclusive lock on the table, re-reads the table, checks
  that ``metadata_location`` is still the base (else :class:`CommitConflictError`), and
  swaps it with ``alter_table_with_environment_context`` (Java's ``doCommit``). When the
  connection fails after that call was sent, the answer is lost, not the commit: the table
  is read again on a new connection (:mod:`iceduck.catalog.commit_outcome`), and what
  cannot be told is :class:`CommitStateUnknownError` with every file kept.

Java's lock-free mode (``engine.hive.lock-enabled=false``: ``alter_table`` with the
``expected_parameter_key``/``expected_parameter_value`` check, HIVE-26882) needs a metastore
of Hive 4; the metastore iceduck is tested against (3.1.3) ignores those keys, so iceduck
always locks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self, TypeVar

from iceduck.catalog import hive_thrift as hms
from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.commit_outcome import settle_failed_swap, swap_outcome
from iceduck.catalog.jdbc_catalog import join_location
from iceduck.catalog.metadata_files import (
    MetadataCache,
    delete_quietly,
    delete_removed_metadata_files,
    next_metadata_location,
    with_previous_file,
    write_metadata_file,
)
from iceduck.catalog.names import check_namespace, check_new_table, namespace_display
from iceduck.catalog.purge import purge_table_files
from iceduck.catalog.views_refused import NoViews
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    IceduckError,
    NotFoundError,
    StorageError,
    UnsupportedError,
    UserError,
    ValidationError,
)
from iceduck.spec.table_metadata import TableMetadata

T = TypeVar("T")


class HiveCatalog(NoViews):
    """Catalog ``name`` in the metastore at ``uri``; see the module docstring."""

    views_kind = "the Hive catalog"
    views_reason = "iceduck does not store views in a Hive metastore yet"

    def __init__(
        self,
        uri: str,
        warehouse: str,
        name: str,
        *,
        properties: Mapping[str, str] | None = None,
        read_only: bool = False,
    ) -> None:
        if not name:
            raise UserError("a catalog name must not be empty")
        self.name = name
        self.uri = uri
        self.warehouse = warehouse.rstrip("/")
        self.read_only = read_only
        self.lock_timeout_s = (
            float((properties or {}).get("lock-acquire-timeout-ms", hms.LOCK_TIMEOUT_S * 1000)) / 1000
        )
        self._host, self._port = hms.parse_thrift_uri(uri)
        self._metadata = MetadataCache()
        hms.bindings()  # a missing thrift is one error when the catalog opens
        self._call(lambda c: c.get_all_databases())  # a metastore that is down: one error now

    def close(self) -> None:
        """Nothing stays open: every call has a connection of its own."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- connections ---------------------------------------------------------------------------

    def _client(self) -> hms.Guarded:
        """A connection whose transport failures are one :class:`StorageError` naming the URI."""
        return hms.Guarded(self.name, self.uri, hms.Connection(self._host, self._port))

    def _call(self, action: Callable[[Any], T]) -> T:
        with self._client() as client:
            return action(client)

    # -- namespaces ----------------------------------------------------------------------------

    def _database(self, namespace: Namespace) -> str:
        if len(namespace) != 1:
            raise UserError(
                f"namespace '{namespace_display(namespace)}': a Hive Metastore namespace is one "
                "database, so it has exactly one level"
            )
        return namespace[0]

    def _get_database(self, client: Any, namespace: Namespace) -> Any:
        """The database; NotFoundError for one that is missing, or a deeper namespace (which
        a reader may probe: ``a.b.t`` names table ``t`` in namespace ``a.b`` only perhaps)."""
        _, _, ttypes = hms.bindings()
        if len(namespace) != 1:
            raise self._namespace_not_found(namespace)
        try:
            return client.get_database(self._database(namespace))
        except ttypes.NoSuchObjectException:
            raise self._namespace_not_found(namespace) from None

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]:
        """The databases (Java's ``listNamespaces``: nothing below a database)."""
        if parent:
            if not self.namespace_exists(parent):
                raise self._namespace_not_found(parent)
            return []
        return sorted((name,) for name in self._call(lambda c: c.get_all_databases()))

    def namespace_exists(self, namespace: Namespace) -> bool:
        if len(namespace) != 1:
            return False
        try:
            self._call(lambda c: self._get_database(c, namespace))
        except NotFoundError:
            return False
        return True

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """Java's ``convertToMetadata``: parameters, ``location``, ``comment``."""
        return hms.database_properties(self._call(lambda c: self._get_database(c, namespace)))

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        """Java's ``convertToDatabase``: ``location`` and ``comment`` become the database's
        location and description, the rest its parameters."""
        self._check_writable(f"create namespace '{namespace_display(namespace)}'")
        check_namespace(namespace)
        name = self._database(namespace)
        _, _, ttypes = hms.bindings()
        hive_db = hms.new_database(name, dict(properties or {}), f"{self.warehouse}/{name}.db")
        try:
            self._call(lambda c: c.create_database(hive_db))
        except ttypes.AlreadyExistsException:
            raise AlreadyExistsError(f"namespace '{name}' already exists in catalog '{self.name}'") from None

    def update_namespace_properties(
        self, namespace: Namespace, updates: dict[str, str], removals: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """Java's ``setProperties``/``removeProperties``: ``alter_database`` with the merged
        parameters (``location`` and ``comment`` as the database's own fields)."""
        self._check_writable(f"alter namespace '{namespace_display(namespace)}'")
        both = sorted(set(updates) & set(removals))
        if both:
            raise ValidationError(f"properties both set and removed: {', '.join(both)}")
        if hms.LOCATION in removals:
            raise ValidationError("cannot remove the location of a Hive database")

        def alter(client: Any) -> tuple[list[str], list[str], list[str]]:
            hive_db = self._get_database(client, namespace)
            current = hms.database_properties(hive_db)
            removed = [key for key in removals if key in current]
            missing = [key for key in removals if key not in current]
            hms.change_database(hive_db, updates, removed)
            client.alter_database(hive_db.name, hive_db)
            return sorted(updates), removed, missing

        return self._call(alter)

    def drop_namespace(self, namespace: Namespace) -> None:
        """Java's ``dropNamespace``: ``drop_database`` without data or cascade."""
        self._check_writable(f"drop namespace '{namespace_display(namespace)}'")
        name = self._database(namespace)
        _, _, ttypes = hms.bindings()
        try:  # Hive 3.1's drop_database of a missing database fails with a NullPointerException
            self._call(lambda c: (self._get_database(c, namespace), c.drop_database(name, False, False)))
        except ttypes.NoSuchObjectException:
            raise self._namespace_not_found(namespace) from None
        except ttypes.InvalidOperationException as e:
            raise ValidationError(f"namespace '{name}' is not empty: {e.message}") from None

    # -- tables --------------------------------------------------------------------------------

    def _get_table(self, client: Any, identifier: TableIdentifier) -> Any | None:
        """The metastore table, or None when there is none (in a deeper namespace: none)."""
        _, _, ttypes = hms.bindings()
        if len(identifier.namespace) != 1:
            return None
        try:
            return client.get_table(self._database(identifier.namespace), identifier.name)
        except ttypes.NoSuchObjectException:
            return None

    def _iceberg_table(self, client: Any, identifier: TableIdentifier) -> Any:
        table = self._get_table(client, identifier)
        if table is None:
            raise NotFoundError(f"table '{identifier}' not found in catalog '{self.name}'")
        if not hms.is_iceberg(table):
            raise UnsupportedError(f"'{identifier}' in catalog '{self.name}' is {hms.what_it_is(table)}")
        return table

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]:
        """The Iceberg tables of the database (Java's ``listTables``: Hive tables left out)."""

        def tables(client: Any) -> list[Any]:
            name = self._database(namespace)
            self._get_database(client, namespace)
            names = client.get_all_tables(name)
            return list(client.get_table_objects_by_name(name, names)) if names else []

        found = [t.tableName for t in self._call(tables) if hms.is_iceberg(t)]
        return [TableIdentifier(namespace, name) for name in sorted(found)]

    def table_exists(self, identifier: TableIdentifier) -> bool:
        if len(identifier.namespace) != 1:
            return False
        table = self._call(lambda c: self._get_table(c, identifier))
        return table is not None and hms.is_iceberg(table)

    def _current_location(self, identifier: TableIdentifier) -> str | None:
        table = self._call(lambda c: self._get_table(c, identifier))
        return None if table is None else (table.parameters or {}).get(hms.METADATA_LOCATION_PROP)

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """The metadata file ``metadata_location`` names; a Hive table is an error naming it."""
        table = self._call(lambda c: self._iceberg_table(c, identifier))
        location = (table.parameters or {}).get(hms.METADATA_LOCATION_PROP)
        if not location:
            raise UnsupportedError(
                f"Iceberg table '{identifier}' in catalog '{self.name}' has no metadata_location"
            )
        return LoadedTable(identifier, location, self._metadata.load(location))

    def default_table_location(self, identifier: TableIdentifier) -> str:
        """Java's ``HiveCatalog.defaultWarehouseLocation``: ``<database location>/<table>``,
        else ``<warehouse>/<db>.db/<table>``."""
        hive_db = self._call(lambda c: self._get_database(c, identifier.namespace))
        if hive_db.locationUri:
            return join_location(hive_db.locationUri, identifier.name)
        return join_location(self.warehouse, f"{identifier.namespace[0]}.db", identifier.name)

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        """Write ``00000-<uuid>.metadata.json``, then ``create_table`` under the table's lock."""
        check_new_table(identifier)
        self._check_writable(f"create table '{identifier}'")
        self._database(identifier.namespace)
        self._check_name_free(identifier)
        location = next_metadata_location(metadata, None)
        metadata = write_metadata_file(location, metadata)
        self._swap(identifier, None, None, metadata, location)
        return LoadedTable(identifier, location, metadata)

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        """Write the next metadata file and swap it in under the lock if ``base`` is current."""
        identifier = base.identifier
        self._check_writable(f"commit to table '{identifier}'")
        metadata = with_previous_file(metadata, base.metadata, base.metadata_location)
        location = next_metadata_location(metadata, base.metadata_location)
        metadata = write_metadata_file(location, metadata)
        self._swap(identifier, base.metadata_location, base.metadata, metadata, location)
        delete_removed_metadata_files(base.metadata, metadata)
        return LoadedTable(identifier, location, metadata)

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        """One table at a time only: the metastore has no multi-table swap."""
        if len(changes) == 1:
            return [self.commit_table(*changes[0])]
        raise UnsupportedError(
            f"catalog '{self.name}' is a Hive Metastore, which cannot commit to several tables atomically"
        )

    def register_table(self, identifier: TableIdentifier, metadata_location: str) -> LoadedTable:
        """Java's ``registerTable``: a metastore table pointing at the existing file."""
        check_new_table(identifier)
        self._check_writable(f"register table '{identifier}'")
        self._database(identifier.namespace)
        if not metadata_location:
            raise UserError("cannot register an empty metadata file location as a table")
        self._check_name_free(identifier)
        metadata = self._metadata.load(metadata_location)
        self._swap(identifier, None, None, metadata, metadata_location, keep_file=True)
        return LoadedTable(identifier, metadata_location, metadata)

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        """Java's ``dropTable``: ``drop_table`` without deleting data; with ``purge``, every file."""
        self._check_writable(f"drop table '{identifier}'")
        loaded = self.load_table(identifier)
        _, _, ttypes = hms.bindings()
        try:
            self._call(lambda c: c.drop_table(self._database(identifier.namespace), identifier.name, False))
        except ttypes.NoSuchObjectException:
            raise NotFoundError(f"table '{identifier}' not found in catalog '{self.name}'") from None
        if purge:
            purge_table_files(loaded.metadata, loaded.metadata_location)

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        """Java's ``renameTable``: ``alter_table`` of the source with its new names."""
        check_new_table(target)
        self._check_writable(f"rename table '{source}'")
        self._database(target.namespace)
        if source == target:
            return
        _, _, ttypes = hms.bindings()

        def rename(client: Any) -> None:
            table = self._iceberg_table(client, source)
            self._get_database(client, target.namespace)
            if self._get_table(client, target) is not None:
                raise AlreadyExistsError(f"table '{target}' already exists in catalog '{self.name}'")
            table.dbName, table.tableName = self._database(target.namespace), target.name
            client.alter_table(self._database(source.namespace), source.name, table)

        try:
            self._call(rename)
        except ttypes.InvalidOperationException as e:
            raise UserError(f"cannot rename '{source}' to '{target}': {e.message}") from None

    # -- the swap ------------------------------------------------------------------------------

    def _swap(
        self,
        identifier: TableIdentifier,
        base_location: str | None,
        base: TableMetadata | None,
        metadata: TableMetadata,
        location: str,
        *,
        keep_file: bool = False,
    ) -> None:
        """Java's ``HiveTableOperations.doCommit``: under the table's lock, check the base and
        create or alter the metastore table. Errors before the create/alter was sent delete
        the new file (unless ``keep_file``); a lost answer is settled by reading the table."""
        db_name = self._database(identifier.namespace)
        _, _, ttypes = hms.bindings()
        sent = False
        try:
            with self._client() as client:
                lock_id = hms.acquire_lock(client, db_name, identifier.name, self.lock_timeout_s)
                try:
                    table = self._get_table(client, identifier)
                    self._check_base(identifier, table, base_location)
                    if table is None:
                        self._get_database(client, identifier.namespace)
                        new = hms.new_table(db_name, identifier.name, metadata, location)
                        sent = True
                        client.create_table(new)
                    else:
                        table.parameters = hms.table_parameters(
                            table.parameters or {}, base, metadata, location, base_location
                        )
                        table.sd = hms.storage_descriptor(metadata)
                        context = ttypes.EnvironmentContext(properties={hms.DO_NOT_UPDATE_STATS: "true"})
                        sent = True
                        client.alter_table_with_environment_context(db_name, identifier.name, table, context)
                finally:
                    self._release(client, lock_id)
        except ttypes.AlreadyExistsException:
            self._forget(location, keep_file)
            raise AlreadyExistsError(
                f"table '{identifier}' already exists in catalog '{self.name}'"
            ) from None
        except IceduckError as e:
            if not sent or not isinstance(e, StorageError):
                self._forget(location, keep_file)
                raise
            self._settle(e, identifier, location, base_location, keep_file)
        except BaseException as e:  # an interrupt or a metastore exception after the call was sent
            if not sent:
                self._forget(location, keep_file)
                raise
            self._settle(e, identifier, location, base_location, keep_file)

    def _release(self, client: Any, lock_id: int) -> None:
        """Unlock; when the commit's connection failed, on a new one (the lock outlives the
        connection that took it: left held, it would stop every writer until the metastore
        times it out, ``hive.txn.timeout``, 300 s by default). A metastore gone altogether
        times it out itself."""
        try:
            hms.release_lock(client, lock_id)
            return
        except hms.transport_errors():
            pass
        try:
            with hms.Connection(self._host, self._port) as fresh:
                hms.release_lock(fresh, lock_id)
        except hms.transport_errors():
            pass

    def _settle(
        self,
        error: BaseException,
        identifier: TableIdentifier,
        location: str,
        base: str | None,
        keep_file: bool,
    ) -> None:
        outcome = swap_outcome(
            lambda: self._current_location(identifier), location, base, self._metadata.load
        )
        if keep_file and outcome.name == "NOT_LANDED":
            raise error
        settle_failed_swap(error, outcome, location, str(identifier))

    def _check_base(self, identifier: TableIdentifier, table: Any | None, base_location: str | None) -> None:
        if table is not None and not hms.is_iceberg(table):
            raise AlreadyExistsError(
                f"'{identifier}' in catalog '{self.name}' already exists as {hms.what_it_is(table)}"
            )
        current = None if table is None else (table.parameters or {}).get(hms.METADATA_LOCATION_PROP)
        if base_location is None and table is not None:
            raise AlreadyExistsError(f"table '{identifier}' already exists in catalog '{self.name}'")
        if base_location is not None and table is None:
            raise NotFoundError(
                f"table '{identifier}' not found in catalog '{self.name}' (dropped meanwhile?)"
            )
        if current != base_location:
            raise CommitConflictError(
                f"table '{identifier}' changed since it was loaded (base {base_location} is no longer "
                f"current: {current}): another writer committed first"
            )

    @staticmethod
    def _forget(location: str, keep_file: bool) -> None:
        if not keep_file:
            delete_quietly(location)

    # -- checks --------------------------------------------------------------------------------

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise UserError(f"the catalog is read-only: cannot {action} (catalog '{self.name}', {self.uri})")

    def _check_name_free(self, identifier: TableIdentifier) -> None:
        check_namespace(identifier.namespace)
        table = self._call(
            lambda c: (self._get_database(c, identifier.namespace), self._get_table(c, identifier))[1]
        )
        if table is not None:
            what = "table" if hms.is_iceberg(table) else hms.what_it_is(table)
            raise AlreadyExistsError(f"'{identifier}' already exists in catalog '{self.name}' ({what})")

    def _namespace_not_found(self, namespace: Namespace) -> NotFoundError:
        return NotFoundError(f"namespace '{namespace_display(namespace)}' not found in catalog '{self.name}'")
