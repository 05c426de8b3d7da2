"""An Iceberg catalog kept in the JDBC layout, on any database a dialect describes.

The rows live in a :class:`~iceduck.catalog.jdbc_store.JdbcStore`; this class gives them
their meaning, as Iceberg Java's ``JdbcCatalog`` and ``JdbcTableOperations`` (schema
version V1) do, so a database changed by iceduck reads the same to Spark and PyIceberg:

* create namespace: one ``iceberg_namespace_properties`` row per property plus
  ``exists`` = ``true`` (Java adds it always, with or without properties; so does the
  catalog Spark writes);
* create table: ``INSERT`` of the row (``iceberg_type`` = ``TABLE``,
  ``previous_metadata_location`` NULL) after writing ``00000-<uuid>.metadata.json``;
* commit: ``UPDATE ... SET metadata_location = new, previous_metadata_location = base
  WHERE ... AND metadata_location = base`` -- a compare-and-swap: exactly one changed row
  means the commit landed, none means someone else committed first;
* drop: ``DELETE`` of the row; rename: ``UPDATE`` of namespace and name.

Views (Java's ``JdbcViewOperations``) are rows with ``iceberg_type`` = ``VIEW`` pointing at
a view metadata file (``<location>/metadata/00000-<uuid>.gz.metadata.json``), committed by
the same compare-and-swap. Tables and views share one namespace of names: a name held by a
view is refused to a table and the other way round, with Java's messages ("View with same
name already exists: ns.v", "Table with same name already exists: ns.t"). A database whose
``iceberg_tables`` lacks ``iceberg_type`` (schema version V0) cannot mark a row as a view:
it lists no views and refuses to write one, as Java's catalog does ("JDBC catalog is
initialized without view support").

Check-then-write sequences run inside the store's write transaction, so another writer
cannot slip in between; the commit itself is one statement. A metadata file written for a
create or commit that certainly did not land is deleted again; when the statement was
interrupted (``KeyboardInterrupt``, a signal handler's ``SystemExit``) the row is read
back to find out (:mod:`iceduck.catalog.commit_outcome`), and a file the row may point to
is never deleted. So is a statement that lost its connection to a database server
(:meth:`~iceduck.catalog.jdbc_store.JdbcStore.may_have_run`): the server may have
committed it with the answer lost, so the row is read back on a new connection.

The warehouse is a location: a local folder (an absolute path, as Spark writes it for a
plain path) or a URI such as ``s3://bucket/wh``; new tables go to
``<warehouse>/<level>/.../<table>``, joined with ``/`` (Java's
``JdbcCatalog.defaultWarehouseLocation``), and a namespace's default ``location`` is
``<warehouse>/<level>/...``.

A database-specific catalog (:class:`~iceduck.catalog.sqlite.SqliteCatalog`) is this
class given a way to connect and a :class:`~iceduck.catalog.sql_dialect.SqlDialect`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self

from iceduck.catalog.base import LoadedTable, LoadedView, Namespace, TableIdentifier
from iceduck.catalog.commit_outcome import Outcome, settle_failed_swap, swap_outcome
from iceduck.catalog.jdbc_store import NAMESPACE_EXISTS_PROPERTY, JdbcStore
from iceduck.catalog.locations import URI_SCHEME
from iceduck.catalog.metadata_files import (
    MetadataCache,
    delete_quietly,
    delete_removed_metadata_files,
    next_metadata_location,
    read_view_metadata,
    with_previous_file,
    write_view_metadata_file,
)
from iceduck.catalog.names import check_namespace, check_new_table, children, namespace_display
from iceduck.catalog.purge import purge_table_files
from iceduck.catalog.sql_dialect import Connection, SqlDialect
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitStateUnknownError,
    CorruptDataError,
    IceduckError,
    NotFoundError,
    UnsupportedError,
    UserError,
    ValidationError,
)
from iceduck.io.fileio import MissingFileError
from iceduck.spec import properties as props
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.view_metadata import ViewMetadata

NAMESPACE_LOCATION_PROPERTY = "location"


def warehouse_location(warehouse: str | Path) -> str:
    """The warehouse as a location string: a URI (``s3://bucket/wh``, ``file:/wh``) as
    given, a plain path made absolute (table locations must not depend on the cwd)."""
    text = str(warehouse)
    if not text:
        raise UserError("the warehouse location must not be empty")
    if isinstance(warehouse, str) and URI_SCHEME.match(text):
        return text
    return str(Path(text).absolute())


def join_location(base: str, *levels: str) -> str:
    """``base/level/...``: locations are joined with ``/``, whatever the store."""
    return "/".join((base.rstrip("/"), *levels)) if base.rstrip("/") else "/" + "/".join(levels)


class JdbcCatalog:
    """Catalog ``name`` of the database ``connect`` opens; see the module docstring.

    ``where`` names the database in messages; ``warehouse`` is where new tables go (a
    folder or a URI: :func:`warehouse_location`). With ``read_only`` nothing is ever
    created or changed.
    """

    def __init__(
        self,
        name: str,
        warehouse: str | Path,
        connect: Callable[[], Connection],
        dialect: SqlDialect,
        where: str,
        *,
        read_only: bool = False,
    ) -> None:
        if not name:
            raise UserError("a catalog name must not be empty")
        self.name = name
        #: where new tables go, as a location string (module docstring)
        self.warehouse = warehouse_location(warehouse)
        self.read_only = read_only
        self._metadata = MetadataCache()
        self._store = JdbcStore(connect, dialect, name, where, read_only=read_only)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- namespaces ----------------------------------------------------------------------------

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]:
        """The namespaces one level below ``parent`` (the top level for ``()``), sorted.

        Like Java's ``JdbcCatalog.listNamespaces``, a namespace known only through a deeper
        one (``deep`` of ``deep.er``) is listed too.
        """
        if parent and not self.namespace_exists(parent):
            raise self._namespace_not_found(parent)
        return children(self._store.namespaces(), parent)

    def namespace_exists(self, namespace: Namespace) -> bool:
        return self._store.namespace_exists(namespace)

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """A namespace's properties as Java's ``loadNamespaceMetadata`` returns them: the
        stored ones without the reserved ``exists``, plus a default ``location``
        (``<warehouse>/<level>/<level>``) when none is stored."""
        if not namespace or not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        properties = self._store.namespace_properties(namespace)
        properties.pop(NAMESPACE_EXISTS_PROPERTY, None)
        properties.setdefault(NAMESPACE_LOCATION_PROPERTY, join_location(self.warehouse, *namespace))
        return properties

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        """Java's ``JdbcCatalog.createNamespace``: the properties plus ``exists`` = ``true``."""
        self._check_writable(f"create namespace '{namespace_display(namespace)}'")
        check_namespace(namespace)
        properties = dict(properties or {})
        if NAMESPACE_EXISTS_PROPERTY in properties:
            raise ValidationError(f"cannot set reserved namespace property {NAMESPACE_EXISTS_PROPERTY!r}")
        with self._store.transaction():
            if self.namespace_exists(namespace):
                raise AlreadyExistsError(
                    f"namespace '{namespace_display(namespace)}' already exists in catalog '{self.name}'"
                )
            self._store.insert_namespace(
                namespace, [*properties.items(), (NAMESPACE_EXISTS_PROPERTY, "true")]
            )

    def update_namespace_properties(
        self, namespace: Namespace, updates: dict[str, str], removals: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """Java's ``setProperties`` then ``removeProperties``, in one transaction: the keys
        (updated, removed, missing), missing being removals that were not set. The reserved
        ``exists`` row cannot be set or removed."""
        self._check_writable(f"alter namespace '{namespace_display(namespace)}'")
        if NAMESPACE_EXISTS_PROPERTY in updates or NAMESPACE_EXISTS_PROPERTY in removals:
            raise ValidationError(f"cannot change reserved namespace property {NAMESPACE_EXISTS_PROPERTY!r}")
        both = sorted(set(updates) & set(removals))
        if both:
            raise ValidationError(f"properties both set and removed: {', '.join(both)}")
        with self._store.transaction():
            if not namespace or not self.namespace_exists(namespace):
                raise self._namespace_not_found(namespace)
            stored = self._store.namespace_properties(namespace)
            removed = [key for key in removals if key in stored]
            missing = [key for key in removals if key not in stored]
            replaced = [key for key in updates if key in stored]
            self._store.delete_namespace_properties(namespace, [*removed, *replaced])
            self._store.insert_namespace(namespace, list(updates.items()))
        return sorted(updates), removed, missing

    def drop_namespace(self, namespace: Namespace) -> None:
        """Java's ``dropNamespace`` (delete the property rows), refusing a namespace that still
        holds tables, views or (unlike Java, whose parent would silently live on through its
        child's rows) other namespaces."""
        self._check_writable(f"drop namespace '{namespace_display(namespace)}'")
        with self._store.transaction():
            if not namespace or not self.namespace_exists(namespace):
                raise self._namespace_not_found(namespace)
            count = self._store.count_tables(namespace)
            if count:
                raise ValidationError(
                    f"namespace '{namespace_display(namespace)}' is not empty: "
                    f"it holds {count} table(s) or view(s)"
                )
            inner = self.list_namespaces(namespace)
            if inner:
                raise ValidationError(
                    f"namespace '{namespace_display(namespace)}' is not empty: it holds namespace "
                    f"'{namespace_display(inner[0])}'"
                )
            self._store.delete_namespace(namespace)

    # -- tables --------------------------------------------------------------------------------

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]:
        """The tables (not views) directly in ``namespace``, sorted by name."""
        if not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        return [TableIdentifier(namespace, name) for name in self._store.table_names(namespace)]

    def table_exists(self, identifier: TableIdentifier) -> bool:
        row = self._store.table_row(identifier)
        return row is not None and row.is_table

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """The table's current metadata, read from the location its catalog row holds.

        An unknown table is a :class:`NotFoundError` naming the table and the catalog; a
        row pointing at a missing file is a :class:`MissingFileError` naming that file.
        """
        row = self._store.table_row(identifier)
        if row is not None and row.is_view:
            raise NotFoundError(f"table '{identifier}' not found in catalog '{self.name}': it is a view")
        if row is None or not row.is_table:
            raise NotFoundError(f"table '{identifier}' not found in catalog '{self.name}'")
        location = row.metadata_location
        if not location:
            raise CorruptDataError(
                f"catalog row of table '{identifier}' (catalog '{self.name}') has no metadata_location",
                self._store.where,
            )
        try:
            metadata = self._metadata.load(location)
        except MissingFileError:
            # a concurrent drop with purge (or a commit that deleted old metadata files) may
            # have removed the file after the row was read: that is the table gone or moved
            now = self._store.table_row(identifier)
            if now is None or not now.is_table:
                raise NotFoundError(
                    f"table '{identifier}' not found in catalog '{self.name}' (dropped meanwhile)"
                ) from None
            if now.metadata_location != location:
                return self.load_table(identifier)
            raise MissingFileError(
                f"metadata file of table '{identifier}' (catalog '{self.name}') does not exist", location
            ) from None
        return LoadedTable(identifier, location, metadata)

    def default_table_location(self, identifier: TableIdentifier) -> str:
        """Java's ``JdbcCatalog.defaultWarehouseLocation``: ``<warehouse>/<level>/.../<table>``,
        the warehouse as configured (a plain path for a local folder, as Spark writes it for a
        plain path). Java ignores a namespace's ``location`` property here, and so do we."""
        return join_location(self.warehouse, *identifier.namespace, identifier.name)

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        """Write ``00000-<uuid>.metadata.json`` and insert the row (Java's ``doCommit`` with no base)."""
        check_new_table(identifier)
        self._check_writable(f"create table '{identifier}'")
        check_namespace(identifier.namespace)
        if not self.namespace_exists(identifier.namespace):
            raise self._namespace_not_found(identifier.namespace)
        self._check_name_free(identifier)
        location = next_metadata_location(metadata, None)
        metadata = self._metadata.write(location, metadata)
        try:
            with self._store.transaction():
                if not self.namespace_exists(identifier.namespace):
                    raise self._namespace_not_found(identifier.namespace)
                self._check_name_free(identifier)
                self._store.insert_table(identifier, location)
        except IceduckError as e:
            if not self._store.may_have_run(e):
                delete_quietly(location)  # a database error or a check: the transaction was rolled back
                raise
            settle_failed_swap(e, self._outcome(identifier, location, None), location, str(identifier))
        except BaseException as e:  # an interrupt or a bug: the COMMIT may have run to the end
            settle_failed_swap(e, self._outcome(identifier, location, None), location, str(identifier))
        return LoadedTable(identifier, location, metadata)

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        """Write the next metadata file, then compare-and-swap the row from ``base``'s file to it."""
        identifier = base.identifier
        self._check_writable(f"commit to table '{identifier}'")
        metadata = with_previous_file(metadata, base.metadata, base.metadata_location)
        location = next_metadata_location(metadata, base.metadata_location)
        metadata = self._metadata.write(location, metadata)
        try:
            landed = self._store.swap(identifier, base.metadata_location, location)
        except IceduckError as e:
            if not self._store.may_have_run(e):
                delete_quietly(location)  # a failed autocommit statement changed nothing
                raise
            outcome = self._outcome(identifier, location, base.metadata_location)
            landed = settle_failed_swap(e, outcome, location, str(identifier))
        except BaseException as e:  # an interrupt or a bug: the UPDATE may have landed before it arrived
            outcome = self._outcome(identifier, location, base.metadata_location)
            landed = settle_failed_swap(e, outcome, location, str(identifier))
        if not landed:
            delete_quietly(location)
            if self._store.table_row(identifier) is None:
                raise NotFoundError(
                    f"table '{identifier}' not found in catalog '{self.name}' (dropped meanwhile?)"
                )
            raise CommitConflictError(
                f"table '{identifier}' changed since it was loaded (base {base.metadata_location} is no "
                "longer current): another writer committed first"
            )
        delete_removed_metadata_files(base.metadata, metadata)
        return LoadedTable(identifier, location, metadata)

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        """Commit to several tables at once: every metadata file is written, then every row
        is swapped in one database transaction, so either all tables move or none does.

        A swap that finds its base no longer current rolls the whole transaction back:
        :class:`CommitConflictError`, and the new files are deleted. When the connection was
        lost during the transaction, the outcome is unknown: :class:`CommitStateUnknownError`,
        and the files stay (a landed swap may reference them).
        """
        self._check_writable("commit to several tables")
        identifiers = [base.identifier for base, _ in changes]
        if len(set(identifiers)) != len(identifiers):
            raise ValidationError("a multi-table commit names a table twice")
        prepared: list[tuple[LoadedTable, TableMetadata, str]] = []
        try:
            for base, metadata in changes:
                metadata = with_previous_file(metadata, base.metadata, base.metadata_location)
                location = next_metadata_location(metadata, base.metadata_location)
                metadata = self._metadata.write(location, metadata)
                prepared.append((base, metadata, location))
            with self._store.transaction():
                for base, _, location in prepared:
                    if not self._store.swap(base.identifier, base.metadata_location, location):
                        raise CommitConflictError(
                            f"table '{base.identifier}' changed since it was loaded (or was dropped): "
                            "another writer committed first; no table of the commit changed"
                        )
        except IceduckError as e:
            if isinstance(e, CommitConflictError) or not self._store.may_have_run(e):
                for _, _, location in prepared:
                    delete_quietly(location)
                raise
            raise CommitStateUnknownError(
                f"the multi-table commit may or may not have landed ({e}); its files were kept"
            ) from e
        for base, metadata, _ in prepared:
            delete_removed_metadata_files(base.metadata, metadata)
        return [LoadedTable(base.identifier, location, metadata) for base, metadata, location in prepared]

    def register_table(self, identifier: TableIdentifier, metadata_location: str) -> LoadedTable:
        """Java's ``BaseMetastoreCatalog.registerTable`` with ``JdbcTableOperations``: the
        name must be free and its namespace exist, the file must parse as table metadata,
        then the row is inserted as a create inserts it (no previous location) pointing at
        the file as given -- no new metadata file is written, so the row is the one Spark's
        ``register_table`` writes. Both names then share the table's files: a commit through
        either writes the next metadata file in the same folder, and a purge through either
        deletes them."""
        check_new_table(identifier)
        self._check_writable(f"register table '{identifier}'")
        if not metadata_location:
            raise UserError("cannot register an empty metadata file location as a table")
        check_namespace(identifier.namespace)
        if not self.namespace_exists(identifier.namespace):
            raise self._namespace_not_found(identifier.namespace)
        self._check_name_free(identifier)
        metadata = self._metadata.load(metadata_location)
        with self._store.transaction():
            if not self.namespace_exists(identifier.namespace):
                raise self._namespace_not_found(identifier.namespace)
            self._check_name_free(identifier)
            self._store.insert_table(identifier, metadata_location)
        return LoadedTable(identifier, metadata_location, metadata)

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        """Java's ``JdbcCatalog.dropTable``: delete the row; then, with ``purge``, every file."""
        self._check_writable(f"drop table '{identifier}'")
        loaded = None
        if purge:
            try:
                loaded = self.load_table(identifier)
            except NotFoundError:
                raise
            except IceduckError:
                loaded = None  # Java: "Failed to load table metadata ..., continuing drop without purge"
        row = self._store.table_row(identifier)
        if row is not None and row.is_view:
            raise NotFoundError(f"'{identifier}' in catalog '{self.name}' is a view, not a table")
        if not self._store.delete_table(identifier):
            raise NotFoundError(f"table '{identifier}' not found in catalog '{self.name}'")
        if loaded is not None:
            purge_table_files(loaded.metadata, loaded.metadata_location)

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        """Java's ``JdbcCatalog.renameTable``: same checks in the same order, one ``UPDATE``."""
        check_new_table(target)
        self._check_writable(f"rename table '{source}'")
        if source == target:
            return
        check_namespace(target.namespace)
        with self._store.transaction():
            if not self.table_exists(source):
                raise NotFoundError(f"table '{source}' not found in catalog '{self.name}'")
            if not self.namespace_exists(target.namespace):
                raise self._namespace_not_found(target.namespace)
            if self.view_exists(target):
                raise AlreadyExistsError(f"Cannot rename {source} to {target}. View already exists")
            self._check_name_free(target)
            self._store.rename_table(source, target)

    # -- views ---------------------------------------------------------------------------------

    def list_views(self, namespace: Namespace) -> list[TableIdentifier]:
        """The views directly in ``namespace``, sorted by name (none in a V0 database)."""
        if not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        return [TableIdentifier(namespace, name) for name in self._store.view_names(namespace)]

    def view_exists(self, identifier: TableIdentifier) -> bool:
        row = self._store.table_row(identifier)
        return row is not None and row.is_view

    def load_view(self, identifier: TableIdentifier) -> LoadedView:
        """The view's current metadata; NotFoundError naming the view (and saying so when the
        name is a table's), a broken file's error naming the file."""
        row = self._store.table_row(identifier)
        if row is None or not row.is_view:
            what = ": it is a table" if row is not None else ""
            raise NotFoundError(f"view '{identifier}' not found in catalog '{self.name}'{what}")
        if not row.metadata_location:
            raise CorruptDataError(
                f"catalog row of view '{identifier}' (catalog '{self.name}') has no metadata_location",
                self._store.where,
            )
        return LoadedView(identifier, row.metadata_location, read_view_metadata(row.metadata_location))

    def default_view_location(self, identifier: TableIdentifier) -> str:
        """As for a table (Java's ``BaseMetastoreViewCatalog`` asks ``defaultWarehouseLocation``)."""
        return self.default_table_location(identifier)

    def create_view(self, identifier: TableIdentifier, metadata: ViewMetadata) -> LoadedView:
        """Write ``00000-<uuid>.gz.metadata.json`` and insert the ``VIEW`` row (Java's
        ``JdbcViewOperations.doCommit`` with no base)."""
        check_new_table(identifier)
        self._check_writable(f"create view '{identifier}'")
        self._check_views(f"create view '{identifier}'")
        check_namespace(identifier.namespace)
        if not self.namespace_exists(identifier.namespace):
            raise self._namespace_not_found(identifier.namespace)
        self._check_view_name_free(identifier)
        location = write_view_metadata_file(metadata, None)
        try:
            with self._store.transaction():
                if not self.namespace_exists(identifier.namespace):
                    raise self._namespace_not_found(identifier.namespace)
                self._check_view_name_free(identifier)
                self._store.insert_view(identifier, location)
        except IceduckError as e:
            if not self._store.may_have_run(e):
                delete_quietly(location)
                raise
            settle_failed_swap(e, self._view_outcome(identifier, location, None), location, str(identifier))
        except BaseException as e:
            settle_failed_swap(e, self._view_outcome(identifier, location, None), location, str(identifier))
        return LoadedView(identifier, location, metadata)

    def commit_view(self, base: LoadedView, metadata: ViewMetadata) -> LoadedView:
        """Write the view's next metadata file, then compare-and-swap its row from ``base``'s."""
        identifier = base.identifier
        self._check_writable(f"replace view '{identifier}'")
        self._check_views(f"replace view '{identifier}'")
        location = write_view_metadata_file(metadata, base.metadata_location)
        try:
            landed = self._store.swap_view(identifier, base.metadata_location, location)
        except IceduckError as e:
            if not self._store.may_have_run(e):
                delete_quietly(location)
                raise
            outcome = self._view_outcome(identifier, location, base.metadata_location)
            landed = settle_failed_swap(e, outcome, location, str(identifier))
        except BaseException as e:
            outcome = self._view_outcome(identifier, location, base.metadata_location)
            landed = settle_failed_swap(e, outcome, location, str(identifier))
        if not landed:
            delete_quietly(location)
            if not self.view_exists(identifier):
                raise NotFoundError(
                    f"view '{identifier}' not found in catalog '{self.name}' (dropped meanwhile?)"
                )
            raise CommitConflictError(
                f"Cannot commit {identifier}: metadata location {base.metadata_location} has changed "
                "(another writer committed first)"
            )
        return LoadedView(identifier, location, metadata)

    def drop_view(self, identifier: TableIdentifier) -> None:
        """Java's ``JdbcCatalog.dropView``: delete the ``VIEW`` row, then the view's current
        metadata file when ``gc.enabled`` (default true; ``CatalogUtil.dropViewMetadata``)."""
        self._check_writable(f"drop view '{identifier}'")
        self._check_views(f"drop view '{identifier}'")
        try:
            last: LoadedView | None = self.load_view(identifier)
        except NotFoundError:
            raise
        except IceduckError:
            last = None  # Java: "Failed to load view metadata for view", dropped all the same
        if not self._store.delete_view(identifier):
            raise NotFoundError(f"view '{identifier}' not found in catalog '{self.name}'")
        if last is not None and props.bool_property(last.metadata.properties, "gc.enabled", True):
            delete_quietly(last.metadata_location)

    def rename_view(self, source: TableIdentifier, target: TableIdentifier) -> None:
        """Java's ``JdbcCatalog.renameView``: the same checks in the same order, one ``UPDATE``."""
        check_new_table(target)
        self._check_writable(f"rename view '{source}'")
        self._check_views(f"rename view '{source}'")
        if source == target:
            return
        check_namespace(target.namespace)
        with self._store.transaction():
            if not self.namespace_exists(target.namespace):
                raise self._namespace_not_found(target.namespace)
            if not self.view_exists(source):
                raise NotFoundError(f"view '{source}' not found in catalog '{self.name}'")
            if self.table_exists(target):
                raise AlreadyExistsError(f"Cannot rename {source} to {target}. Table already exists")
            if self.view_exists(target):
                raise AlreadyExistsError(f"Cannot rename {source} to {target}. View already exists")
            self._store.rename_view(source, target)

    def register_view(self, identifier: TableIdentifier, metadata_location: str) -> LoadedView:
        """Java's ``registerView``: the name free, the file read as view metadata, the row
        inserted pointing at it; nothing is written but the row."""
        check_new_table(identifier)
        self._check_writable(f"register view '{identifier}'")
        self._check_views(f"register view '{identifier}'")
        if not metadata_location:
            raise UserError("cannot register an empty metadata file location as a view")
        check_namespace(identifier.namespace)
        if not self.namespace_exists(identifier.namespace):
            raise self._namespace_not_found(identifier.namespace)
        self._check_view_name_free(identifier)
        metadata = read_view_metadata(metadata_location)
        with self._store.transaction():
            if not self.namespace_exists(identifier.namespace):
                raise self._namespace_not_found(identifier.namespace)
            self._check_view_name_free(identifier)
            self._store.insert_view(identifier, metadata_location)
        return LoadedView(identifier, metadata_location, metadata)

    def _view_outcome(self, identifier: TableIdentifier, location: str, base_location: str | None) -> Outcome:
        """Whether the view's row now points at ``location``: as for a table, except that a
        third file says nothing (a view's metadata keeps no log of earlier files)."""

        def current() -> str | None:
            row = self._store.table_row(identifier)
            return row.metadata_location if row is not None else None

        def no_log(other: str) -> TableMetadata:
            raise UnsupportedError(f"view metadata {other} keeps no log of earlier files")

        return swap_outcome(current, location, base_location, no_log)

    # -- checks --------------------------------------------------------------------------------

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise UserError(
                f"the catalog is read-only: cannot {action} (catalog '{self.name}', {self._store.where})"
            )

    def _check_name_free(self, identifier: TableIdentifier) -> None:
        """A new table's name: held by neither a table nor a view (Java's
        ``BaseMetastoreViewCatalog``: "View with same name already exists: %s")."""
        row = self._store.table_row(identifier)
        if row is not None and row.is_view:
            raise AlreadyExistsError(
                f"View with same name already exists: {identifier} (catalog '{self.name}')"
            )
        if row is not None:
            raise AlreadyExistsError(f"table '{identifier}' already exists in catalog '{self.name}'")

    def _check_view_name_free(self, identifier: TableIdentifier) -> None:
        """A new view's name, as Java's ``JdbcViewOperations.createView`` checks it."""
        row = self._store.table_row(identifier)
        if row is not None and row.is_view:
            raise AlreadyExistsError(f"View already exists: {identifier} (catalog '{self.name}')")
        if row is not None:
            raise AlreadyExistsError(
                f"Table with same name already exists: {identifier} (catalog '{self.name}')"
            )

    def _check_views(self, action: str) -> None:
        """Writing a view needs the V1 schema; Java: ``VIEW_WARNING_LOG_MESSAGE``."""
        if not self._store.holds_views:
            raise UnsupportedError(
                f"cannot {action}: the JDBC catalog database ({self._store.where}) has the V0 schema "
                "(iceberg_tables without the iceberg_type column), which cannot hold views. Java says: "
                "JDBC catalog is initialized without view support. To auto-migrate the database's schema "
                "and enable view support, set jdbc.schema-version=V1 (or run "
                "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5))"
            )

    def _outcome(self, identifier: TableIdentifier, location: str, base_location: str | None) -> Outcome:
        """Whether the row now points at ``location`` (see :mod:`iceduck.catalog.commit_outcome`)."""

        def current() -> str | None:
            row = self._store.table_row(identifier)
            return row.metadata_location if row is not None else None

        return swap_outcome(current, location, base_location, self._metadata.load)

    def _namespace_not_found(self, namespace: Namespace) -> NotFoundError:
        return NotFoundError(f"namespace '{namespace_display(namespace)}' not found in catalog '{self.name}'")
