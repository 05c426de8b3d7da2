"""Statements whose rows iceduck writes itself: ``EXPLAIN`` (the Iceberg scans, then DuckDB's
plan), ``DESCRIBE`` of a table (its Iceberg schema), ``SHOW TABLES|NAMESPACES`` (the
catalog's listing, not DuckDB's) and ``SHOW CREATE TABLE|TBLPROPERTIES``.

Each answer is a query of text lists run on the statement's cursor
(:func:`iceduck.engine.queries.select_lists`), so its rows are fetched as any query's are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from iceduck.engine import queries
from iceduck.engine.results import Running, StatementRows
from iceduck.engine.types import quote_identifier
from iceduck.errors import NotFoundError, UserError
from iceduck.session.iceberg_sources import Lookup, Source
from iceduck.session.name_resolution import (
    all_namespaces,
    not_found_message,
    resolve_table_name,
    resolve_view_name,
    written_namespace,
)
from iceduck.session.paimon_sources import PaimonSource, explain_paimon
from iceduck.session.result import Result
from iceduck.sql.describe import describe_columns, plain_columns
from iceduck.sql.explain import ScanExplanation, explain_metadata_table, explain_scan, snapshot_ndv
from iceduck.sql.parse import Statement
from iceduck.sql.references import ResolvedName
from iceduck.sql.show import ShowTable, show_table_columns, show_view_columns

if TYPE_CHECKING:
    import pyarrow as pa

    from iceduck.catalog.base import Catalog
    from iceduck.catalog.paimon_warehouse import PaimonWarehouse
    from iceduck.engine.connection import Duck
    from iceduck.spec.schema import Schema


def arrow_rows(duck: Duck, text: str, table: pa.Table, name: str, running: Running) -> Result:
    """A statement whose rows iceduck computed as an Arrow table (a ``CALL``'s): registered
    on its cursor as ``name`` and read as any query's rows, with their types."""
    queries.register_arrow(duck, name, table)
    return Result(queries.run(duck, f"SELECT * FROM {quote_identifier(name)}", None, running), text)


def scans_of(sources: list[Source]) -> list[ScanExplanation]:
    """What a result says about the Iceberg scans of its statement (the shell's ``.files``)."""
    return [ScanExplanation(s.display, s.view, s.selector, s.plan) for s in sources if s.plan is not None]


def explain(
    duck: Duck,
    statement: Statement,
    sql: str,
    params: Any,
    sources: list[Source],
    paimon: Sequence[PaimonSource] = (),
) -> Result:
    """``EXPLAIN [ANALYZE] q``: the manifests and files each Iceberg or Paimon scan reads
    and skips, then DuckDB's plan of the rewritten query."""
    lines: list[str] = []
    for source in sources:
        if source.plan is not None:
            ndv = snapshot_ndv(source.loaded.metadata, source.plan.snapshot_id)
            scan = ScanExplanation(source.display, source.view, source.selector, source.plan, ndv)
            lines.extend(explain_scan(scan))
        elif source.metadata_table is not None:
            lines.extend(explain_metadata_table(source.display, source.metadata_table, source.rows or 0))
    for paimon_source in paimon:
        lines.extend(explain_paimon(paimon_source))
    if not lines:
        lines.append("no Iceberg tables in this query")
    keyword = "EXPLAIN ANALYZE " if statement.analyze else "EXPLAIN "
    for plan in queries.explain(duck, keyword + sql, queries.duck_params(params)):
        lines.append("DuckDB plan:")
        lines.extend("  " + line for line in plan.rstrip().splitlines())
    queries.select_lists(duck, {"explain": lines})
    return Result(StatementRows(duck), keyword + sql, scans_of(sources))


def lines(duck: Duck, text: str, column: str, values: list[str]) -> Result:
    """A statement answered by lines of text, one column ``column`` (``EXPLAIN`` of a write)."""
    queries.select_lists(duck, {column: values})
    return Result(StatementRows(duck), text)


def describe_table(duck: Duck, sql: str, source: Source) -> Result:
    """``DESCRIBE ns.t``: the columns of the schema read (:mod:`iceduck.sql.describe`),
    typed as DuckDB reads them (its DESCRIBE of the scan); of a metadata table, which
    columns are required."""
    types = [str(row[1]) for row in queries.rows(duck, sql)]
    if source.metadata_table is None:
        ndv = snapshot_ndv(source.loaded.metadata, source.target.snapshot_id)
        columns = describe_columns(source.target.schema.fields, types, ndv)
    else:
        columns = plain_columns([n for n, _ in source.required], types, [r for _, r in source.required])
    queries.select_lists(duck, columns)
    return Result(StatementRows(duck), sql)


def describe_view(duck: Duck, sql: str, schema: Schema) -> Result:
    """``DESCRIBE ns.v`` of a catalog view: the columns of the view's schema (names and
    comments as the view records them), typed as DuckDB reads its query."""
    types = [str(row[1]) for row in queries.rows(duck, sql)]
    queries.select_lists(duck, describe_columns(schema.fields, types))
    return Result(StatementRows(duck), sql)


def describe_paimon(duck: Duck, sql: str, source: PaimonSource) -> Result:
    """``DESCRIBE p.db.t``: the columns of the Paimon schema read, ``NOT NULL`` ones
    required, primary-key ones ``PRI``, descriptions as comments; of a system table, its
    columns."""
    described = queries.rows(duck, sql)
    types = [str(row[1]) for row in described]
    if source.metadata_table is None:
        fields = source.table.schema.fields
        columns = plain_columns([f.name for f in fields], types, [not f.type.nullable for f in fields])
        keys = set(source.table.schema.primary_keys)
        columns["key"] = ["PRI" if f.name in keys else None for f in fields]  # as DuckDB marks them
        columns["comment"] = [f.description for f in fields]
    else:
        names = [str(row[0]) for row in described]
        columns = plain_columns(names, types, [False] * len(names))
    queries.select_lists(duck, columns)
    return Result(StatementRows(duck), sql)


def show_table(duck: Duck, text: str, statement: ShowTable, lookup: Lookup) -> Result:
    """SHOW CREATE TABLE / SHOW TBLPROPERTIES of a table (:mod:`iceduck.sql.show`)."""
    catalog = lookup.catalog
    name = resolve_table_name(catalog, statement.name, lookup.namespace)
    if name is None:
        view = resolve_view_name(catalog, statement.name, lookup.namespace)
        if view is None:
            raise NotFoundError(not_found_message(catalog, statement.name, lookup.namespace))
        columns = show_view_columns(statement, catalog.name, view, catalog.load_view(view).metadata)
        queries.select_lists(duck, columns)
        return Result(StatementRows(duck), text)
    if name != ResolvedName(name.identifier):
        raise UserError(f"SHOW {statement.what} takes a table: {'.'.join(statement.name)} is not one")
    metadata = catalog.load_table(name.identifier).metadata
    queries.select_lists(duck, show_table_columns(statement, catalog.name, name.identifier, metadata))
    return Result(StatementRows(duck), text)


def show(
    duck: Duck,
    text: str,
    what: str,
    namespace: tuple[str, ...] | None,
    lookup: Lookup,
    session_tables: Sequence[str] = (),
    paimon: Mapping[str, PaimonWarehouse] | None = None,
    session_views: Sequence[str] = (),
) -> Result:
    """``SHOW NAMESPACES [IN ns]`` (the children of ``ns``, or the top level) or ``SHOW
    TABLES [IN ns]`` (of ``ns``; else of the current namespace, as in Spark; else all),
    followed by ``session_tables``, the connection's temporary tables and views, with an
    empty namespace: Spark lists its temporary views so in every namespace's listing.
    ``IN p`` or ``IN p.db`` of an attached Paimon warehouse ``p`` lists its databases or
    tables. ``SHOW VIEWS [IN ns]`` likewise lists the catalog's views of ``ns`` followed by
    ``session_views``, in Spark's columns ``namespace``, ``viewName``, ``isTemporary``."""
    paimon = paimon or {}
    catalog = lookup.catalog
    if namespace and namespace[0].lower() in paimon:
        return _show_paimon(duck, text, what, namespace, paimon[namespace[0].lower()])
    if what == "NAMESPACES":
        names = [".".join(ns) for ns in catalog.list_namespaces(namespace or ())]
        queries.select_lists(duck, {"namespace": names})
        return Result(StatementRows(duck), text)
    if namespace is not None:
        namespace = written_namespace(catalog, namespace)
    elif lookup.namespace:
        namespace = lookup.namespace
    spaces = [namespace] if namespace is not None else all_namespaces(catalog)
    if what == "VIEWS":
        return _show_views(duck, text, spaces, catalog, session_views)
    tables = [(".".join(t.namespace), t.name) for ns in spaces for t in catalog.list_tables(ns)]
    tables.extend(("", name) for name in sorted(session_tables))
    queries.select_lists(duck, {"namespace": [t[0] for t in tables], "name": [t[1] for t in tables]})
    return Result(StatementRows(duck), text)


def _show_views(
    duck: Duck, text: str, spaces: Sequence[tuple[str, ...]], catalog: Catalog, session_views: Sequence[str]
) -> Result:
    """SHOW VIEWS: Spark's columns; ``isTemporary`` as the text ``true``/``false`` (every SHOW
    answers text columns)."""
    views = [(".".join(v.namespace), v.name, "false") for ns in spaces for v in catalog.list_views(ns)]
    views.extend(("", name, "true") for name in sorted(session_views))
    columns = {"namespace": [v[0] for v in views], "viewName": [v[1] for v in views]}
    queries.select_lists(duck, {**columns, "isTemporary": [v[2] for v in views]})
    return Result(StatementRows(duck), text)


def _show_paimon(
    duck: Duck, text: str, what: str, namespace: tuple[str, ...], warehouse: PaimonWarehouse
) -> Result:
    """SHOW NAMESPACES IN p (the databases) / SHOW TABLES IN p[.db] of a Paimon warehouse."""
    if len(namespace) > 2:
        shown = ".".join(namespace)
        raise UserError(f"SHOW {what} IN {shown}: a Paimon warehouse has databases, then tables")
    if what == "NAMESPACES":
        if len(namespace) > 1:
            raise UserError(f"SHOW NAMESPACES IN {'.'.join(namespace)}: Paimon databases do not nest")
        names = [f"{warehouse.alias}.{db}" for db in warehouse.databases()]
        queries.select_lists(duck, {"namespace": names})
        return Result(StatementRows(duck), text)
    databases = warehouse.databases()
    if len(namespace) == 2:
        databases = [db for db in databases if db.lower() == namespace[1].lower()]
        if not databases:
            known = ", ".join(warehouse.databases()) or "none"
            raise NotFoundError(f"Paimon database {'.'.join(namespace)} not found; databases: {known}")
    tables = [(f"{warehouse.alias}.{db}", t) for db in databases for t in warehouse.tables(db)]
    queries.select_lists(duck, {"namespace": [t[0] for t in tables], "name": [t[1] for t in tables]})
    return Result(StatementRows(duck), text)
