"""An Iceberg catalog in the AWS Glue Data Catalog, shared with Spark's and PyIceberg's
``GlueCatalog`` (Iceberg Java's ``GlueCatalog`` and ``GlueTableOperations``).

What is stored where is :mod:`iceduck.catalog.glue_input`: a namespace is one Glue
database, a table a Glue table whose ``metadata_location`` parameter names its current
metadata file. The client and its properties are :mod:`iceduck.catalog.glue_client`.

Commits (Java's ``GlueTableOperations.doCommit``): read the Glue table, check that its
``metadata_location`` is still the base's (otherwise :class:`CommitConflictError`, nothing
written), write ``<NNNNN>-<uuid>.metadata.json``, then ``UpdateTable`` with the new
parameters and the ``VersionId`` of the table version read -- Glue's optimistic check:
Glue refuses the update with ``ConcurrentModificationException`` when another writer
updated the table since that version, which becomes a :class:`CommitConflictError`. The
first check alone leaves a window between the read and the update; the ``VersionId``
closes it on Glue (a test server that ignores ``VersionId`` leaves only the first check).
``SkipArchive`` is ``glue.skip-archive`` (default true, as Java's: no Glue table version is
archived per commit).

Writes are sent once (no SDK retries: the write client has ``total_max_attempts`` 1), so
Glue's refusal speaks for that one request -- Java's ``RetryDetector`` exists for the same
reason, since a retried ``UpdateTable`` whose first attempt landed is refused as
concurrent. A refusal (an AWS error code other than a 5xx) certainly changed nothing: the
new metadata file is deleted. A lost answer (a dropped connection, a timeout, a 5xx, an
interrupt) may have landed: the table is read again (:mod:`iceduck.catalog.commit_outcome`)
and the commit is a success, a failure, or :class:`CommitStateUnknownError` with every
file kept.

Glue has no rename: as Java's ``renameTable``, the target is created as a copy of the
source's Glue table (same parameters, so the same metadata file) and the source deleted;
if that delete fails the copy is deleted again. Glue has no multi-table transaction either,
so :meth:`GlueCatalog.commit_tables` takes one table only.

A Glue table that is not Iceberg's (a Hive or Delta table in the same database) is never
read, changed or dropped as one: the error names it and its ``table_type``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Self

from iceduck.catalog import glue_input as gi
from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.commit_outcome import Outcome, settle_failed_swap, swap_outcome
from iceduck.catalog.glue_client import (
    error_code,
    is_refusal,
    make_client,
    region,
    secrets,
    translate,
)
from iceduck.catalog.jdbc_catalog import join_location, warehouse_location
from iceduck.catalog.metadata_files import (
    MetadataCache,
    delete_quietly,
    delete_removed_metadata_files,
    next_metadata_location,
    with_previous_file,
    write_metadata_file,
)
from iceduck.catalog.names import check_new_table, namespace_display
from iceduck.catalog.purge import purge_table_files
from iceduck.catalog.views_refused import NoViews
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CorruptDataError,
    IceduckError,
    NotFoundError,
    UnsupportedError,
    UserError,
    ValidationError,
)
from iceduck.io.fileio import MissingFileError
from iceduck.spec.table_metadata import TableMetadata


def _flag(properties: Mapping[str, str], key: str, default: bool) -> bool:
    value = properties.get(key)
    if value is None or not value.strip():
        return default
    if value.strip().lower() not in ("true", "false"):
        raise UserError(f"catalog property {key} must be true or false, not {value!r}")
    return value.strip().lower() == "true"


class GlueCatalog(NoViews):
    """Catalog ``name`` in the Glue Data Catalog the properties reach (see the module
    docstring); ``warehouse`` is where new tables go when their database has no location."""

    views_kind = "the Glue catalog"
    views_reason = "iceduck does not store views in Glue yet"

    def __init__(
        self,
        name: str,
        warehouse: str,
        properties: Mapping[str, str] | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        if not name:
            raise UserError("a catalog name must not be empty")
        self.name = name
        self.warehouse = warehouse_location(warehouse)
        self.read_only = read_only
        props = dict(properties or {})
        #: the AWS account whose catalog this is (``glue.id``); None: the caller's own
        self.catalog_id = props.get("glue.id") or None
        self.skip_archive = _flag(props, "glue.skip-archive", True)
        self.validate_names = not _flag(props, "glue.skip-name-validation", False)
        where = f"Glue catalog '{name}'" + (f" (catalog id {self.catalog_id})" if self.catalog_id else "")
        self.where = where
        self._secrets = secrets(props)
        self._read = make_client(props, where)
        self._write = make_client(props, where, attempts=1)
        self.endpoint = (
            props.get("glue.endpoint") or f"the Glue endpoint of region {region(props) or '(default)'}"
        )
        self._metadata = MetadataCache()

    def close(self) -> None:
        for client in (self._read, self._write):
            client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, client: Any, operation: str, about: str, **kwargs: Any) -> dict[str, Any]:
        """``client.<operation>(**kwargs)`` with the catalog id; failures as iceduck errors."""
        if self.catalog_id:
            kwargs["CatalogId"] = self.catalog_id
        try:
            result: dict[str, Any] = getattr(client, operation)(**kwargs)
        except Exception as e:
            raise self._translate(e, about) from None
        return result

    def _translate(self, error: Exception, about: str) -> IceduckError:
        if isinstance(error, IceduckError):
            return error
        return translate(error, self.where, about, self._secrets, self.endpoint)

    def _pages(self, operation: str, key: str, about: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            page = self._call(
                self._read, operation, about, **kwargs, **({"NextToken": token} if token else {})
            )
            yield from page.get(key, ())
            token = page.get("NextToken")
            if not token:
                return

    def _database(self, namespace: Namespace) -> dict[str, Any] | None:
        """The Glue database of ``namespace`` (None: missing, or not a one-level name)."""
        if len(namespace) != 1:
            return None
        about = f"namespace '{namespace[0]}'"
        try:
            return self._call(self._read, "get_database", about, Name=namespace[0])["Database"]
        except NotFoundError:
            return None

    def _glue_table(self, identifier: TableIdentifier) -> dict[str, Any] | None:
        """The Glue table of ``identifier`` (None when it or its database is missing)."""
        if len(identifier.namespace) != 1:
            return None
        try:
            table = self._call(
                self._read,
                "get_table",
                self._about(identifier),
                DatabaseName=identifier.namespace[0],
                Name=identifier.name,
            )
        except NotFoundError:
            return None
        return table["Table"]

    def _iceberg_table(self, identifier: TableIdentifier) -> dict[str, Any]:
        """The Glue table of an Iceberg table: NotFoundError when missing, UnsupportedError
        naming its ``table_type`` when it is some other kind of table."""
        table = self._glue_table(identifier)
        if table is None:
            raise NotFoundError(f"table '{identifier}' not found in {self.where}")
        if not gi.is_iceberg(table):
            raise UnsupportedError(
                f"Glue table '{identifier}' in {self.where} is not an Iceberg table: its table_type "
                f"parameter is {gi.iceberg_table_type(table)!r}, not 'ICEBERG'; iceduck reads and writes "
                "only Iceberg tables"
            )
        return table

    @staticmethod
    def _about(identifier: TableIdentifier) -> str:
        return f"table '{identifier}'"

    # -- namespaces ----------------------------------------------------------------------------

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]:
        """The databases, sorted; a database has no namespaces below it (Glue has one level)."""
        if parent:
            if not self.namespace_exists(parent):
                raise self._namespace_not_found(parent)
            return []
        return sorted(
            (str(db["Name"]),) for db in self._pages("get_databases", "DatabaseList", "the databases")
        )

    def namespace_exists(self, namespace: Namespace) -> bool:
        return self._database(namespace) is not None

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """Java's ``loadNamespaceMetadata`` (parameters, ``location``, ``comment``), with the
        default ``location`` (where its tables go, ``<warehouse>/<db>.db``) when none is stored."""
        glue_db = self._database(namespace)
        if glue_db is None:
            raise self._namespace_not_found(namespace)
        properties = gi.namespace_properties(glue_db)
        properties.setdefault(gi.LOCATION_PROPERTY, join_location(self.warehouse, f"{namespace[0]}.db"))
        return properties

    def _check_one_level(self, namespace: Namespace) -> str:
        if len(namespace) != 1:
            raise UnsupportedError(
                f"namespace '{namespace_display(namespace)}': a Glue database has exactly one level "
                f"({self.where} cannot nest namespaces)"
            )
        gi.check_database_name(namespace[0], self.validate_names)
        return namespace[0]

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        """Java's ``createNamespace``: ``CreateDatabase`` with :func:`~glue_input.database_input`."""
        self._check_writable(f"create namespace '{namespace_display(namespace)}'")
        name = self._check_one_level(namespace)
        glue_db = gi.database_input(name, properties or {})
        self._call(self._write, "create_database", f"namespace '{name}'", DatabaseInput=glue_db)

    def update_namespace_properties(
        self, namespace: Namespace, updates: dict[str, str], removals: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """Read the database, then ``UpdateDatabase`` with the properties changed."""
        self._check_writable(f"alter namespace '{namespace_display(namespace)}'")
        both = sorted(set(updates) & set(removals))
        if both:
            raise ValidationError(f"properties both set and removed: {', '.join(both)}")
        glue_db = self._database(namespace)
        if glue_db is None:
            raise self._namespace_not_found(namespace)
        stored = gi.namespace_properties(glue_db)
        removed = [key for key in removals if key in stored]
        missing = [key for key in removals if key not in stored]
        changed = {k: v for k, v in stored.items() if k not in removals}
        changed.update(updates)
        self._call(
            self._write,
            "update_database",
            f"namespace '{namespace[0]}'",
            Name=namespace[0],
            DatabaseInput=gi.database_input(namespace[0], changed),
        )
        return sorted(updates), removed, missing

    def drop_namespace(self, namespace: Namespace) -> None:
        """Java's ``dropNamespace``: refused while the database holds any table (Iceberg's or not)."""
        self._check_writable(f"drop namespace '{namespace_display(namespace)}'")
        if self._database(namespace) is None:
            raise self._namespace_not_found(namespace)
        about = f"namespace '{namespace[0]}'"
        tables = self._call(self._read, "get_tables", about, DatabaseName=namespace[0], MaxResults=1)
        if tables.get("TableList"):
            raise ValidationError(
                f"namespace '{namespace[0]}' is not empty: it holds table '{tables['TableList'][0]['Name']}'"
            )
        self._call(self._write, "delete_database", about, Name=namespace[0])

    # -- tables --------------------------------------------------------------------------------

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]:
        """The Iceberg tables of the database, sorted (other kinds of Glue tables are left out,
        as Java's ``listTables`` leaves them)."""
        if self._database(namespace) is None:
            raise self._namespace_not_found(namespace)
        tables = self._pages(
            "get_tables", "TableList", f"namespace '{namespace[0]}'", DatabaseName=namespace[0]
        )
        names = sorted(str(t["Name"]) for t in tables if gi.is_iceberg(t))
        return [TableIdentifier(namespace, name) for name in names]

    def table_exists(self, identifier: TableIdentifier) -> bool:
        table = self._glue_table(identifier)
        return table is not None and gi.is_iceberg(table)

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """The metadata file the Glue table's ``metadata_location`` names."""
        location = self._metadata_location(self._iceberg_table(identifier), identifier)
        try:
            metadata = self._metadata.load(location)
        except MissingFileError:
            # a concurrent drop with purge, or a commit that deleted old metadata files
            now = self._glue_table(identifier)
            if now is None:
                raise NotFoundError(
                    f"table '{identifier}' not found in {self.where} (dropped meanwhile)"
                ) from None
            if (now.get("Parameters") or {}).get(gi.METADATA_LOCATION) != location:
                return self.load_table(identifier)
            raise MissingFileError(
                f"metadata file of table '{identifier}' ({self.where}) does not exist", location
            ) from None
        return LoadedTable(identifier, location, metadata)

    def _metadata_location(self, table: Mapping[str, Any], identifier: TableIdentifier) -> str:
        location = (table.get("Parameters") or {}).get(gi.METADATA_LOCATION)
        if not location:
            raise CorruptDataError(
                f"Glue table '{identifier}' ({self.where}) has table_type ICEBERG but no metadata_location"
            )
        return str(location)

    def default_table_location(self, identifier: TableIdentifier) -> str:
        """Java's ``GlueCatalog.defaultWarehouseLocation``: ``<database LocationUri>/<table>``
        when the database has a location, else ``<warehouse>/<database>.db/<table>`` (Hive's
        layout, as PyIceberg's too)."""
        glue_db = self._database(identifier.namespace)
        if glue_db is not None and glue_db.get("LocationUri"):
            return join_location(str(glue_db["LocationUri"]), identifier.name)
        return join_location(self.warehouse, f"{namespace_display(identifier.namespace)}.db", identifier.name)

    def _check_new_name(self, identifier: TableIdentifier) -> None:
        check_new_table(identifier)
        self._check_one_level(identifier.namespace)
        gi.check_table_name(identifier.name, self.validate_names)
        if self._database(identifier.namespace) is None:
            raise self._namespace_not_found(identifier.namespace)
        if self._glue_table(identifier) is not None:
            raise AlreadyExistsError(f"table '{identifier}' already exists in {self.where}")

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        """Write ``00000-<uuid>.metadata.json``, then ``CreateTable`` pointing at it."""
        self._check_writable(f"create table '{identifier}'")
        self._check_new_name(identifier)
        location = next_metadata_location(metadata, None)
        metadata = write_metadata_file(location, metadata)
        parameters = gi.table_parameters({}, location, None)
        table_input = gi.table_input(identifier.name, metadata, parameters)
        self._send_write(
            identifier,
            location,
            None,
            "create_table",
            DatabaseName=identifier.namespace[0],
            TableInput=table_input,
        )
        return LoadedTable(identifier, location, metadata)

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        """Check the base, write the next metadata file, ``UpdateTable`` with ``VersionId``."""
        identifier = base.identifier
        self._check_writable(f"commit to table '{identifier}'")
        table = self._iceberg_table(identifier)
        current = self._metadata_location(table, identifier)
        if current != base.metadata_location:
            raise self._conflict(base, current)
        metadata = with_previous_file(metadata, base.metadata, base.metadata_location)
        location = next_metadata_location(metadata, base.metadata_location)
        metadata = write_metadata_file(location, metadata)
        parameters = gi.table_parameters(table.get("Parameters") or {}, location, base.metadata_location)
        request: dict[str, Any] = {
            "DatabaseName": identifier.namespace[0],
            "TableInput": gi.table_input(identifier.name, metadata, parameters),
            "SkipArchive": self.skip_archive,
        }
        if table.get("VersionId"):
            request["VersionId"] = table["VersionId"]
        self._send_write(identifier, location, base.metadata_location, "update_table", **request)
        delete_removed_metadata_files(base.metadata, metadata)
        return LoadedTable(identifier, location, metadata)

    def _conflict(self, base: LoadedTable, current: str | None) -> CommitConflictError:
        return CommitConflictError(
            f"table '{base.identifier}' changed since it was loaded (base {base.metadata_location} is no "
            f"longer current, Glue's metadata_location is {current}): another writer committed first"
        )

    def _send_write(
        self,
        identifier: TableIdentifier,
        location: str,
        base_location: str | None,
        operation: str,
        **kwargs: Any,
    ) -> None:
        """Send the one request that swaps ``location`` in; on failure, settle what happened
        to the new metadata file (module docstring: refusals, lost answers)."""
        if self.catalog_id:
            kwargs["CatalogId"] = self.catalog_id
        try:
            getattr(self._write, operation)(**kwargs)
        except BaseException as e:
            if isinstance(e, Exception) and is_refusal(e):
                delete_quietly(location)  # Glue refused this one request: nothing changed
                raise self._refusal(e, identifier) from None
            error: BaseException = self._refusal(e, identifier) if isinstance(e, Exception) else e
            settle_failed_swap(
                error, self._outcome(identifier, location, base_location), location, str(identifier)
            )

    def _refusal(self, error: Exception, identifier: TableIdentifier) -> IceduckError:
        if error_code(error) == "EntityNotFoundException":
            if self._database(identifier.namespace) is None:
                return self._namespace_not_found(identifier.namespace)
            return NotFoundError(f"table '{identifier}' not found in {self.where} (dropped meanwhile?)")
        if error_code(error) == "ConcurrentModificationException":
            return CommitConflictError(
                f"table '{identifier}' changed since it was loaded: Glue detected a concurrent update "
                f"({self.where}); another writer committed first"
            )
        return self._translate(error, self._about(identifier))

    def _outcome(self, identifier: TableIdentifier, location: str, base_location: str | None) -> Outcome:
        def current() -> str | None:
            table = self._glue_table(identifier)
            if table is None:
                return None
            return (table.get("Parameters") or {}).get(gi.METADATA_LOCATION)

        return swap_outcome(current, location, base_location, self._metadata.load)

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        """One table: :meth:`commit_table`. Several: refused, as Glue updates one table per
        request and Java's ``GlueCatalog`` has no multi-table commit."""
        if len(changes) == 1:
            return [self.commit_table(*changes[0])]
        raise UnsupportedError(
            f"{self.where} cannot commit to several tables atomically (Glue has no such request)"
        )

    def register_table(self, identifier: TableIdentifier, metadata_location: str) -> LoadedTable:
        """Java's ``registerTable``: ``CreateTable`` pointing at the existing file, no file written."""
        self._check_writable(f"register table '{identifier}'")
        if not metadata_location:
            raise UserError("cannot register an empty metadata file location as a table")
        self._check_new_name(identifier)
        metadata = self._metadata.load(metadata_location)
        table_input = gi.table_input(
            identifier.name, metadata, gi.table_parameters({}, metadata_location, None)
        )
        self._call(
            self._write,
            "create_table",
            self._about(identifier),
            DatabaseName=identifier.namespace[0],
            TableInput=table_input,
        )
        return LoadedTable(identifier, metadata_location, metadata)

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        """Java's ``dropTable``: ``DeleteTable``; then, with ``purge``, every file it reaches."""
        self._check_writable(f"drop table '{identifier}'")
        loaded = None
        if purge:
            try:
                loaded = self.load_table(identifier)
            except (NotFoundError, UnsupportedError):
                raise
            except IceduckError:
                loaded = None  # Java: "Failed to load table metadata ..., continuing drop without purge"
        else:
            self._iceberg_table(identifier)
        self._call(
            self._write,
            "delete_table",
            self._about(identifier),
            DatabaseName=identifier.namespace[0],
            Name=identifier.name,
        )
        if loaded is not None:
            purge_table_files(loaded.metadata, loaded.metadata_location)

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        """Java's ``renameTable``: create the target as a copy of the source's Glue table, then
        delete the source (and the copy again when that fails)."""
        self._check_writable(f"rename table '{source}'")
        if source == target:
            return
        table = self._iceberg_table(source)
        self._check_new_name(target)
        copy = gi.renamed_table_input(table, target.name)
        self._call(
            self._write,
            "create_table",
            self._about(target),
            DatabaseName=target.namespace[0],
            TableInput=copy,
        )
        try:
            self._call(
                self._write,
                "delete_table",
                self._about(source),
                DatabaseName=source.namespace[0],
                Name=source.name,
            )
        except BaseException:
            self._call(
                self._write,
                "delete_table",
                self._about(target),
                DatabaseName=target.namespace[0],
                Name=target.name,
            )
            raise

    # -- checks --------------------------------------------------------------------------------

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise UserError(f"the catalog is read-only: cannot {action} ({self.where})")

    def _namespace_not_found(self, namespace: Namespace) -> NotFoundError:
        return NotFoundError(f"namespace '{namespace_display(namespace)}' not found in {self.where}")
