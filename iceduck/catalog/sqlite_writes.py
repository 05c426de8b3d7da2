"""Writes of the SQLite (JDBC layout) catalog: namespaces, table creation, commits, drops.

Every statement is the one Iceberg Java's ``JdbcCatalog``/``JdbcTableOperations`` (schema
version V1) runs, so a file changed by iceduck reads the same to Spark and PyIceberg:

* create namespace: one ``iceberg_namespace_properties`` row per property plus
  ``exists`` = ``true`` (Java adds it always, with or without properties; so does the
  catalog Spark writes);
* create table: ``INSERT`` of the row (``iceberg_type`` = ``TABLE``,
  ``previous_metadata_location`` NULL) after writing ``00000-<uuid>.metadata.json``;
* commit: ``UPDATE ... SET metadata_location = new, previous_metadata_location = base
  WHERE ... AND metadata_location = base`` -- a compare-and-swap: exactly one changed row
  means the commit landed, none means someone else committed first;
* drop: ``DELETE`` of the row; rename: ``UPDATE`` of namespace and name.

Check-then-write sequences run inside ``BEGIN IMMEDIATE`` (:meth:`SqliteCatalog._transaction`)
so another process cannot slip in between; the commit itself is one statement. A metadata
file written for a create or commit that certainly did not land is deleted again; when the
statement was interrupted (``KeyboardInterrupt``, a signal handler's ``SystemExit``) the row
is read back to find out (:mod:`iceduck.catalog.commit_outcome`), and a file the row may
point to is never deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.commit_outcome import Outcome, settle_failed_swap, swap_outcome
from iceduck.catalog.metadata_files import (
    delete_quietly,
    delete_removed_metadata_files,
    next_metadata_location,
    with_previous_file,
    write_metadata_file,
)
from iceduck.catalog.names import check_namespace, check_new_table, namespace_display, namespace_to_string
from iceduck.catalog.purge import purge_table_files
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    IceduckError,
    NotFoundError,
    UserError,
    ValidationError,
)
from iceduck.spec.table_metadata import TableMetadata

if TYPE_CHECKING:
    from iceduck.catalog.sqlite import SqliteCatalog

NAMESPACE_PROPERTIES = "iceberg_namespace_properties"
TABLES = "iceberg_tables"
NAMESPACE_EXISTS_PROPERTY = "exists"


def check_writable(catalog: SqliteCatalog, action: str) -> None:
    if catalog.read_only:
        raise UserError(
            f"the catalog is read-only: cannot {action} (catalog '{catalog.name}', {catalog.db_path})"
        )


# -- namespaces ------------------------------------------------------------------------------------


def create_namespace(catalog: SqliteCatalog, namespace: Namespace, properties: dict[str, str] | None) -> None:
    """Java's ``JdbcCatalog.createNamespace``: the properties plus ``exists`` = ``true``."""
    check_writable(catalog, f"create namespace '{namespace_display(namespace)}'")
    check_namespace(namespace)
    properties = dict(properties or {})
    if NAMESPACE_EXISTS_PROPERTY in properties:
        raise ValidationError(f"cannot set reserved namespace property {NAMESPACE_EXISTS_PROPERTY!r}")
    rows = [*properties.items(), (NAMESPACE_EXISTS_PROPERTY, "true")]
    name = namespace_to_string(namespace)
    with catalog._transaction():
        if catalog.namespace_exists(namespace):
            raise AlreadyExistsError(
                f"namespace '{namespace_display(namespace)}' already exists in catalog '{catalog.name}'"
            )
        for key, value in rows:
            catalog._execute(
                f"INSERT INTO {NAMESPACE_PROPERTIES} (catalog_name, namespace, property_key, property_value) "
                "VALUES (?, ?, ?, ?)",
                (catalog.name, name, key, value),
            )


def drop_namespace(catalog: SqliteCatalog, namespace: Namespace) -> None:
    """Java's ``dropNamespace`` (delete the property rows), refusing a namespace that still
    holds tables, views or (unlike Java, whose parent would silently live on through its
    child's rows) other namespaces."""
    check_writable(catalog, f"drop namespace '{namespace_display(namespace)}'")
    name = namespace_to_string(namespace)
    with catalog._transaction():
        if not namespace or not catalog.namespace_exists(namespace):
            raise catalog._namespace_not_found(namespace)
        (count,) = catalog._query(
            f"SELECT count(*) FROM {TABLES} WHERE catalog_name = ? AND table_namespace = ?",
            (catalog.name, name),
        )[0]
        if count:
            raise ValidationError(
                f"namespace '{namespace_display(namespace)}' is not empty: "
                f"it holds {count} table(s) or view(s)"
            )
        inner = catalog.list_namespaces(namespace)
        if inner:
            raise ValidationError(
                f"namespace '{namespace_display(namespace)}' is not empty: it holds namespace "
                f"'{namespace_display(inner[0])}'"
            )
        catalog._execute(
            f"DELETE FROM {NAMESPACE_PROPERTIES} WHERE catalog_name = ? AND namespace = ?",
            (catalog.name, name),
        )


def default_table_location(catalog: SqliteCatalog, identifier: TableIdentifier) -> str:
    """Java's ``JdbcCatalog.defaultWarehouseLocation``: ``<warehouse>/<level>/.../<table>``,
    the warehouse as configured (a plain path here, as Spark writes it for a plain path).
    Java ignores a namespace's ``location`` property here, and so do we."""
    warehouse = str(catalog.warehouse).rstrip("/") or "/"
    return "/".join((warehouse.rstrip("/"), *identifier.namespace, identifier.name))


# -- tables ------------------------------------------------------------------------------------


def _check_name_free(catalog: SqliteCatalog, identifier: TableIdentifier) -> None:
    row = catalog._table_row(identifier)
    if row is not None:
        kind = "view" if row[1] == "VIEW" else "table"
        raise AlreadyExistsError(f"{kind} '{identifier}' already exists in catalog '{catalog.name}'")


def create_table(catalog: SqliteCatalog, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
    """Write ``00000-<uuid>.metadata.json`` and insert the row (Java's ``doCommit`` with no base)."""
    check_new_table(identifier)
    check_writable(catalog, f"create table '{identifier}'")
    check_namespace(identifier.namespace)
    if not catalog.namespace_exists(identifier.namespace):
        raise catalog._namespace_not_found(identifier.namespace)
    _check_name_free(catalog, identifier)
    location = next_metadata_location(metadata, None)
    write_metadata_file(location, metadata)
    try:
        with catalog._transaction():
            if not catalog.namespace_exists(identifier.namespace):
                raise catalog._namespace_not_found(identifier.namespace)
            _check_name_free(catalog, identifier)
            columns = (
                "catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location"
            )
            values: tuple[object, ...] = (
                catalog.name,
                namespace_to_string(identifier.namespace),
                identifier.name,
                location,
                None,
            )
            if catalog._layout.record_type:
                columns += ", iceberg_type"
                values += ("TABLE",)
            catalog._execute(
                f"INSERT INTO {TABLES} ({columns}) VALUES ({', '.join('?' * len(values))})", values
            )
    except IceduckError:
        delete_quietly(location)  # a SQLite error or a check: the transaction was rolled back
        raise
    except BaseException as e:  # an interrupt or a bug: the COMMIT may have run to the end
        settle_failed_swap(e, _outcome(catalog, identifier, location, None), location, str(identifier))
    return LoadedTable(identifier, location, metadata)


def commit_table(catalog: SqliteCatalog, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
    """Write the next metadata file, then compare-and-swap the row from ``base``'s file to it."""
    identifier = base.identifier
    check_writable(catalog, f"commit to table '{identifier}'")
    metadata = with_previous_file(metadata, base.metadata, base.metadata_location)
    location = next_metadata_location(metadata, base.metadata_location)
    write_metadata_file(location, metadata)
    sql = (
        f"UPDATE {TABLES} SET metadata_location = ?, previous_metadata_location = ? "
        "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?"
        f"{catalog._tables_only()}"
    )
    params = (
        location,
        base.metadata_location,
        catalog.name,
        namespace_to_string(identifier.namespace),
        identifier.name,
        base.metadata_location,
    )
    try:
        changed = catalog._execute(sql, params)
    except IceduckError:
        delete_quietly(location)  # SQLite failed the statement: an autocommit statement changed nothing
        raise
    except BaseException as e:  # an interrupt or a bug: the UPDATE may have landed before it arrived
        outcome = _outcome(catalog, identifier, location, base.metadata_location)
        changed = int(settle_failed_swap(e, outcome, location, str(identifier)))
    if changed != 1:
        delete_quietly(location)
        if catalog._table_row(identifier) is None:
            raise NotFoundError(
                f"table '{identifier}' not found in catalog '{catalog.name}' (dropped meanwhile?)"
            )
        raise CommitConflictError(
            f"table '{identifier}' changed since it was loaded (base {base.metadata_location} is no "
            "longer current): another writer committed first"
        )
    delete_removed_metadata_files(base.metadata, metadata)
    return LoadedTable(identifier, location, metadata)


def _outcome(
    catalog: SqliteCatalog, identifier: TableIdentifier, location: str, base_location: str | None
) -> Outcome:
    """Whether the row now points at ``location`` (see :mod:`iceduck.catalog.commit_outcome`)."""

    def current() -> str | None:
        row = catalog._table_row(identifier)
        return row[0] if row is not None else None

    return swap_outcome(current, location, base_location, catalog._metadata.load)


def drop_table(catalog: SqliteCatalog, identifier: TableIdentifier, purge: bool) -> None:
    """Java's ``JdbcCatalog.dropTable``: delete the row; then, with ``purge``, every file."""
    check_writable(catalog, f"drop table '{identifier}'")
    loaded = None
    if purge:
        try:
            loaded = catalog.load_table(identifier)
        except NotFoundError:
            raise
        except IceduckError:
            loaded = None  # Java: "Failed to load table metadata ..., continuing drop without purge"
    row = catalog._table_row(identifier)
    if row is not None and row[1] == "VIEW":
        raise NotFoundError(f"'{identifier}' in catalog '{catalog.name}' is a view, not a table")
    deleted = catalog._execute(
        f"DELETE FROM {TABLES} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
        f"{catalog._tables_only()}",
        (catalog.name, namespace_to_string(identifier.namespace), identifier.name),
    )
    if deleted == 0:
        raise NotFoundError(f"table '{identifier}' not found in catalog '{catalog.name}'")
    if loaded is not None:
        purge_table_files(loaded.metadata, loaded.metadata_location)


def rename_table(catalog: SqliteCatalog, source: TableIdentifier, target: TableIdentifier) -> None:
    """Java's ``JdbcCatalog.renameTable``: same checks in the same order, one ``UPDATE``."""
    check_new_table(target)
    check_writable(catalog, f"rename table '{source}'")
    if source == target:
        return
    check_namespace(target.namespace)
    with catalog._transaction():
        if not catalog.table_exists(source):
            raise NotFoundError(f"table '{source}' not found in catalog '{catalog.name}'")
        if not catalog.namespace_exists(target.namespace):
            raise catalog._namespace_not_found(target.namespace)
        _check_name_free(catalog, target)
        catalog._execute(
            f"UPDATE {TABLES} SET table_namespace = ?, table_name = ? "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
            f"{catalog._tables_only()}",
            (
                namespace_to_string(target.namespace),
                target.name,
                catalog.name,
                namespace_to_string(source.namespace),
                source.name,
            ),
        )
