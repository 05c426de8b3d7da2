"""DuckDB's catalog views and table functions answered with the Iceberg tables too.

A query that reads ``information_schema.tables|columns|schemata|views``, ``duckdb_tables()``,
``duckdb_views()``, ``duckdb_columns()``, ``duckdb_schemas()`` or ``pragma_table_info('t')`` (found by
:func:`iceduck.sql.introspection.system_refs`, also behind ``SHOW ALL TABLES`` and
``PRAGMA table_info``) reads DuckDB's own rows -- the session's temporary tables -- followed
by the rows of the Iceberg catalog's namespaces and tables, and of each attached Paimon
warehouse's databases and tables (its alias as the database), in DuckDB's columns
(:mod:`iceduck.engine.introspection`).

The catalog's Iceberg views are listed as DuckDB lists its own views: in
``information_schema.tables`` (``VIEW``), ``.views`` and ``.columns``, ``duckdb_views()``,
``duckdb_columns()``, ``SHOW ALL TABLES`` and ``pragma_table_info``, not in
``duckdb_tables()``. A view's columns are its current version's schema; its definition the
``CREATE VIEW`` of the SQL iceduck reads it by (the ``duckdb`` representation, else the
``spark`` or ``trino`` one translated: :func:`iceduck.sql.view_sql.duckdb_text`), printed as
DuckDB prints its own, with the column list when the schema renames the query's columns
(Spark's ``spark.query-column-names``); its comment the ``comment`` property.

What it costs: names come from the catalog's listings (``list_namespaces``,
``list_tables``); a table's metadata is loaded only when the query uses a column that needs
it (its types, comment, size: :data:`~iceduck.sql.introspection.METADATA_COLUMNS`), and then
through the catalog's load, whose parsed metadata files are kept by location (the catalog's
:class:`~iceduck.catalog.metadata_files.MetadataCache`): a table that did not change is
read again from that cache, one that changed has a new metadata location. A ``WHERE`` on
the schema or table name limits what is listed and loaded, unless ``SET iceduck.pruning =
false`` (the answer is the same; the query keeps its WHERE).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from iceduck.catalog.base import Catalog, TableIdentifier
from iceduck.catalog.paimon_warehouse import DB_SUFFIX, load_paimon_table
from iceduck.engine import introspection as rows_of
from iceduck.engine.introspection import ListedTable
from iceduck.errors import UnsupportedError, UserError
from iceduck.session.iceberg_sources import Lookup
from iceduck.session.name_resolution import all_namespaces, resolve_table_name, resolve_view_name
from iceduck.spec.paimon.iceberg_bridge import iceberg_schema
from iceduck.sql.classify import dotted_name
from iceduck.sql.describe import default_sql
from iceduck.sql.introspection import (
    DUCKDB_DATABASES,
    DUCKDB_SCHEMAS,
    DUCKDB_TABLES,
    DUCKDB_VIEWS,
    SCHEMATA,
    TABLE_INFO,
    TABLES,
    VIEWS,
    NameFilter,
    SystemRef,
)
from iceduck.sql.references import ResolvedName, TableRef
from iceduck.sql.view_sql import READ_ORDER, duckdb_text

if TYPE_CHECKING:
    from iceduck.catalog.paimon_warehouse import PaimonWarehouse
    from iceduck.engine.connection import Duck

#: the property Spark keeps a table's comment in (``COMMENT 'text'``), a view's too
COMMENT = "comment"
#: Spark's property of a view's query output names (``SparkView.QUERY_COLUMN_NAMES``)
QUERY_COLUMN_NAMES = "spark.query-column-names"


def attach_system_sources(
    duck: Duck,
    refs: Sequence[SystemRef],
    lookup: Lookup,
    paimon: Mapping[str, PaimonWarehouse],
    temporary: Callable[[str], bool],
    unique_name: Callable[[str], str],
    pruning: bool = True,
    opened: Catalog | None = None,
) -> list[tuple[TableRef, str]]:
    """The relation of each reference in ``refs``, its Iceberg rows registered on ``duck``;
    ``temporary`` says whether a one-part name is a session's temporary table (whose
    ``pragma_table_info`` stays DuckDB's). ``pruning`` off lists every table. ``opened`` is
    the catalog as opened (``lookup.catalog`` may be a transaction in front of it), whose
    warehouse and read-only flag ``duckdb_databases()`` shows."""
    relations: list[tuple[TableRef, str]] = []
    for ref in refs:
        names = ref.filter if pruning else NameFilter()
        if ref.kind == DUCKDB_DATABASES:
            databases = _databases(opened or lookup.catalog, paimon)
            rows = [row for database in databases for row in rows_of.database_rows(*database)]
            relations.append((ref.ref, _attach(duck, ref, rows, unique_name)))
            continue
        if ref.kind in (SCHEMATA, DUCKDB_SCHEMAS):
            rows = [
                row
                for catalog, spaces in _namespaces(lookup, paimon)
                for row in rows_of.schema_rows(
                    ref.kind, catalog, [s for s in spaces if names.keeps_schema(s)]
                )
            ]
            relations.append((ref.ref, _attach(duck, ref, rows, unique_name)))
            continue
        if ref.kind == TABLE_INFO:
            table = _described(duck, ref, lookup, paimon, temporary)
            if table is not None:
                spelled = rows_of.spelled_types(duck, [table])
                rows = rows_of.column_rows(ref.kind, [table], spelled)
                relations.append((ref.ref, _attach(duck, ref, rows, unique_name, with_own=False)))
            continue
        tables = (
            [] if ref.kind in (VIEWS, DUCKDB_VIEWS) else _tables(lookup, paimon, names, ref.needs_metadata)
        )
        if ref.kind != DUCKDB_TABLES:
            tables += _views(duck, lookup, names, ref.needs_metadata)
        spelled = rows_of.spelled_types(duck, tables)
        if ref.kind in (VIEWS, DUCKDB_VIEWS):
            rows = rows_of.view_rows(ref.kind, tables)
        elif ref.kind in (TABLES, DUCKDB_TABLES):
            reserved = rows_of.keywords(duck) if ref.needs_metadata and ref.kind != TABLES else frozenset()
            rows = rows_of.table_rows(ref.kind, tables, spelled, reserved)
        else:
            rows = rows_of.column_rows(ref.kind, tables, spelled)
        relations.append((ref.ref, _attach(duck, ref, rows, unique_name)))
    return relations


def _attach(
    duck: Duck,
    ref: SystemRef,
    rows: list[rows_of.Row],
    unique_name: Callable[[str], str],
    with_own: bool = True,
) -> str:
    return rows_of.attach_rows(duck, ref.own, rows, unique_name("catalog"), with_own)


def _databases(
    catalog: Catalog, paimon: Mapping[str, PaimonWarehouse]
) -> list[tuple[str, str, str | None, bool]]:
    """(name, type, path, read-only) of the Iceberg catalog and each attached Paimon
    warehouse (read only: iceduck never writes Paimon tables)."""
    location = getattr(catalog, "warehouse", None)  # the catalogs that have one say where
    path = str(location) if location else None
    found = [(catalog.name, "iceberg", path, bool(getattr(catalog, "read_only", False)))]
    found.extend((w.alias, "paimon", w.location, True) for w in paimon.values())
    return found


def _namespaces(lookup: Lookup, paimon: Mapping[str, PaimonWarehouse]) -> list[tuple[str, list[str]]]:
    """(database, its schema names): the Iceberg catalog's namespaces (levels joined by
    ``.``), then each attached Paimon warehouse's databases."""
    catalog = lookup.catalog
    found = [(catalog.name, [".".join(ns) for ns in all_namespaces(catalog)])]
    found.extend((w.alias, w.databases()) for w in paimon.values())
    return found


def _tables(
    lookup: Lookup, paimon: Mapping[str, PaimonWarehouse], names: NameFilter, load: bool
) -> list[ListedTable]:
    """The tables the filter keeps, by name from the listings; loaded when ``load``."""
    catalog = lookup.catalog
    listed: list[ListedTable] = []
    for namespace in all_namespaces(catalog):
        schema = ".".join(namespace)
        if not names.keeps_schema(schema):
            continue
        for identifier in catalog.list_tables(namespace):
            if names.keeps_table(identifier.name):
                listed.append(_iceberg(lookup, identifier, schema, load))
    for warehouse in paimon.values():
        for database in warehouse.databases():
            if not names.keeps_schema(database):
                continue
            for name in warehouse.tables(database):
                if names.keeps_table(name):
                    listed.append(_paimon(warehouse, database, name, load))
    return listed


def _views(duck: Duck, lookup: Lookup, names: NameFilter, load: bool) -> list[ListedTable]:
    """The catalog's views the filter keeps, by name from ``list_views``; loaded when ``load``."""
    catalog = lookup.catalog
    listed: list[ListedTable] = []
    for namespace in all_namespaces(catalog):
        schema = ".".join(namespace)
        if names.keeps_schema(schema):
            for identifier in catalog.list_views(namespace):
                if names.keeps_table(identifier.name):
                    listed.append(_iceberg_view(duck, lookup, identifier, schema, load))
    return listed


def _iceberg_view(
    duck: Duck, lookup: Lookup, identifier: TableIdentifier, schema: str, load: bool
) -> ListedTable:
    """A view: its current version's schema, comment and definition (module docstring)."""
    catalog = lookup.catalog
    if not load:
        return ListedTable(catalog.name, schema, identifier.name, is_view=True)
    metadata = catalog.load_view(identifier).metadata
    version = metadata.current_version
    columns = metadata.schema_by_id(version.schema_id)
    rep = next((r for d in READ_ORDER if (r := version.representation(d)) is not None), None)
    definition = None
    if rep is not None:
        try:
            text = duckdb_text(rep.sql, rep.dialect, str(identifier))
        except (UserError, UnsupportedError):
            text = None  # a listing shows the view; reading it says why it cannot be read
        if text is not None:
            names = [f.name for f in columns.fields]
            renamed = (
                names
                if metadata.properties.get(QUERY_COLUMN_NAMES, ",".join(names)).split(",") != names
                else None
            )
            definition = rows_of.view_sql(duck, schema, identifier.name, renamed, text)
    return ListedTable(
        catalog.name,
        schema,
        identifier.name,
        columns,
        metadata.properties.get(COMMENT),
        insertable=False,
        is_view=True,
        definition=definition,
    )


def _iceberg(lookup: Lookup, identifier: TableIdentifier, schema: str, load: bool) -> ListedTable:
    catalog = lookup.catalog
    if not load:
        return ListedTable(catalog.name, schema, identifier.name)
    metadata = catalog.load_table(identifier).metadata
    snapshot = metadata.current_snapshot()
    total = snapshot.summary.get("total-records") if snapshot is not None else "0"
    columns = metadata.schema()
    return ListedTable(
        catalog.name,
        schema,
        identifier.name,
        columns,
        metadata.properties.get(COMMENT),
        int(total) if total is not None and total.isdigit() else None,
        tuple(default_sql(f.field_type, f.write_default) for f in columns.fields),
    )


def _paimon(warehouse: PaimonWarehouse, database: str, name: str, load: bool) -> ListedTable:
    """A Paimon table: iceduck reads it and never writes it, so it is no insertable table."""
    if not load:
        return ListedTable(warehouse.alias, database, name, insertable=False)
    display = f"{warehouse.alias}.{database}.{name}"
    table = load_paimon_table(warehouse.table_location(database, name), display)
    size = 0 if table.snapshot is None else table.snapshot.total_record_count
    schema = iceberg_schema(table.schema)
    return ListedTable(warehouse.alias, database, name, schema, table.schema.comment, size, insertable=False)


def _described(
    duck: Duck,
    ref: SystemRef,
    lookup: Lookup,
    paimon: Mapping[str, PaimonWarehouse],
    temporary: Callable[[str], bool],
) -> ListedTable | None:
    """The Iceberg or Paimon table or Iceberg view ``pragma_table_info('name')`` names, loaded; None for
    DuckDB's own (a temporary table, a name the catalog does not have: DuckDB then says so)."""
    assert ref.argument is not None
    try:
        parts = dotted_name(ref.argument, "pragma_table_info")
    except UserError:
        return None
    if len(parts) == 1 and temporary(parts[0]):
        return None
    warehouse = paimon.get(parts[0].lower())
    if warehouse is not None and len(parts) == 3:
        location = warehouse.table_location(parts[1], parts[2])  # names matched as DuckDB does
        folder, table = location.rstrip("/").rsplit("/", 2)[-2:]
        return _paimon(warehouse, folder.removesuffix(DB_SUFFIX), table, load=True)
    catalog = lookup.catalog
    name = resolve_table_name(catalog, parts, lookup.namespace)
    if name is None:
        view = resolve_view_name(catalog, parts, lookup.namespace)
        return (
            None if view is None else _iceberg_view(duck, lookup, view, ".".join(view.namespace), load=True)
        )
    if name != ResolvedName(name.identifier):
        return None
    return _iceberg(lookup, name.identifier, ".".join(name.identifier.namespace), load=True)
