"""The Iceberg tables a statement reads: each reference resolved to a table and a snapshot,
then planned from the manifest index and attached to the statement's DuckDB cursor.

:func:`resolve_source` is step 4 of the life of a query (see :mod:`iceduck.session.session`): a
dotted name or a metadata path becomes a :class:`Source` (the loaded table, the snapshot and
schema chosen by time travel, a branch/tag/snapshot suffix or the current snapshot of main).
:func:`plan_sources` is steps 5-7: the row filter pushed down per reference, the scan planned
(:func:`iceduck.scan.planner.plan_scan`), and the relation that replaces the reference in the
statement's text -- a derived table reading the plan's files, a registered metadata table,
or (for DESCRIBE, which takes a name) a registered view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iceduck.catalog.base import Catalog, LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.direct import load_table_from_path
from iceduck.catalog.metadata_files import MetadataCache
from iceduck.engine import queries
from iceduck.engine.deletes import PositionCache
from iceduck.engine.layout import LayoutCache, field_ids_reader
from iceduck.engine.projection import METADATA_COLUMNS
from iceduck.engine.read import attach_scan, register_scan
from iceduck.errors import NotFoundError, UserError
from iceduck.ops.wap import wap_enabled
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import name_mapping, plan_scan
from iceduck.scan.snapshots import ScanTarget, resolve
from iceduck.scan.tasks import MATCH_ALL, ScanPlan
from iceduck.session.name_resolution import not_found_message, resolve_table_name
from iceduck.spec.expressions.predicates import AlwaysFalse, BooleanExpression
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import RefType
from iceduck.sql.columns import ColumnsUsed, columns_used
from iceduck.sql.derived import NO_OUTER, Outer
from iceduck.sql.describe import described_table
from iceduck.sql.parse import Statement
from iceduck.sql.predicates import pushdown
from iceduck.sql.references import ChangesBound, ResolvedName, TableRef, metadata_columns_named
from iceduck.sql.rewrite import quote_identifier

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: DuckDB's own schemas and catalogs: dotted names under them are DuckDB's, not Iceberg's
DUCKDB_SCHEMAS = frozenset({"information_schema", "pg_catalog", "main", "temp", "system", "memory"})


@dataclass
class Source:
    """One Iceberg table reference of a statement, resolved."""

    ref: TableRef
    loaded: LoadedTable
    display: str
    target: ScanTarget
    selector: str
    metadata_table: str | None = None
    #: a time-travel selector was given (metadata tables then show that snapshot)
    time_travel: bool = False
    #: name prefix of the DuckDB objects of this source (the view name for DESCRIBE)
    view: str = ""
    #: the SQL relation that replaces the reference
    relation: str = ""
    plan: ScanPlan | None = None
    rows: int | None = None
    #: a metadata table's columns: (name, required)
    required: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class Lookup:
    """Where a session resolves names: its catalog, current namespace and metadata cache."""

    catalog: Catalog
    namespace: Namespace
    metadata_files: MetadataCache
    #: the session's write-audit-publish branch: an unsuffixed read of a table with
    #: ``write.wap.enabled`` reads it once it exists, as Spark's ``SparkReadConf.branch``
    wap_branch: str | None = None


@dataclass(frozen=True)
class Planning:
    """What planning and attaching scans needs from the session: its caches, the time zone
    of pushed-down timestamps and its name source for DuckDB objects."""

    manifests: ManifestCache
    layouts: LayoutCache
    positions: PositionCache
    timezone: str
    unique_name: Callable[..., str]
    #: ``SET iceduck.pruning = false`` (:mod:`iceduck.session.own_objects`): no filter is pushed
    #: down, every file of the snapshot is read and the query's WHERE alone decides
    pruning: bool = True
    #: scans output only the columns the query can name (:mod:`iceduck.sql.columns`); off
    #: when a statement is bound again after DuckDB named a column no scan output
    prune_columns: bool = True


def resolve_source(
    ref: TableRef, loaded: dict[TableIdentifier, LoadedTable], lookup: Lookup
) -> Source | None:
    """The resolved Iceberg source of ``ref``; None for a name that is DuckDB's own.
    ``loaded`` holds the statement's tables loaded so far (a table named twice loads once)."""
    if ref.path is not None:
        direct = load_table_from_path(ref.path, lookup.metadata_files)
        return _target(ref, direct, ref.display, ResolvedName(direct.identifier))
    bare = len(ref.parts) == 1  # a CTE's name never gets here (table_refs)
    catalog = lookup.catalog
    name = None
    if not bare or lookup.namespace:
        name = resolve_table_name(
            catalog, ref.parts, lookup.namespace, lambda ident: _load_if_exists(catalog, loaded, ident)
        )
    if name is None:
        # DuckDB's own (pg_tables, main.t), or a name DuckDB reports missing (see Session.run)
        if ref.changes is not None:
            raise NotFoundError(not_found_message(catalog, ref.parts, lookup.namespace))
        if (bare and ref.time_travel is None) or ref.parts[0].lower() in DUCKDB_SCHEMAS:
            return None
        raise NotFoundError(not_found_message(catalog, ref.parts, lookup.namespace))
    table = loaded.get(name.identifier)
    if table is None:
        table = loaded[name.identifier] = catalog.load_table(name.identifier)
    return _target(ref, table, f"{catalog.name}.{name.identifier}", name, lookup.wap_branch)


def _load_if_exists(
    catalog: Catalog, loaded: dict[TableIdentifier, LoadedTable], ident: TableIdentifier
) -> bool:
    """Whether ``ident`` is a table, loading it into ``loaded`` on the way: the load a
    statement needs anyway doubles as the existence check, so a remote catalog answers one
    request per table rather than two (an existence check, then the load). A load that
    fails with NotFoundError while the catalog still lists the table (its metadata file is
    missing) is that error, not "no such table"."""
    if ident in loaded:
        return True
    try:
        loaded[ident] = catalog.load_table(ident)
    except NotFoundError:
        if catalog.table_exists(ident):
            raise
        return False
    return True


def _target(
    ref: TableRef, table: LoadedTable, display: str, name: ResolvedName, wap_branch: str | None = None
) -> Source:
    """The snapshot and schema ``ref`` reads of ``table``: its time travel, else the name's
    branch/tag/snapshot/timestamp suffix, else the session's WAP branch (when the table
    has WAP enabled and that branch), else the current snapshot of main."""
    travel = ref.time_travel
    selectors = [s for s in (name.branch, name.tag, name.snapshot_id, name.timestamp_ms) if s is not None]
    if travel is not None and selectors:
        raise UserError(f"{ref.display}: cannot combine a branch, tag or snapshot suffix with {travel}")
    kwargs: dict[str, Any] = {"table": display}
    if travel is not None and travel.version is not None:
        kwargs["version"], selector = travel.version, f"VERSION AS OF {travel.version!r}"
    elif travel is not None:
        kwargs["timestamp_ms"], selector = travel.timestamp_ms, f"TIMESTAMP AS OF {travel.timestamp_ms} ms"
    elif name.branch is not None:
        kwargs.update(ref=name.branch, expect=RefType.BRANCH)
        selector = f"branch {name.branch}"
    elif name.tag is not None:
        kwargs.update(ref=name.tag, expect=RefType.TAG)
        selector = f"tag {name.tag}"
    elif name.snapshot_id is not None:
        kwargs["snapshot_id"], selector = name.snapshot_id, f"snapshot_id_{name.snapshot_id}"
    elif name.timestamp_ms is not None:
        kwargs["timestamp_ms"], selector = name.timestamp_ms, f"at_timestamp_{name.timestamp_ms}"
    elif wap_branch is not None and wap_enabled(table.metadata) and wap_branch in table.metadata.refs:
        kwargs.update(ref=wap_branch, expect=RefType.BRANCH)
        selector = f"WAP branch {wap_branch}"
    else:
        selector = "current snapshot of main"
    target = resolve(table.metadata, **kwargs)
    chosen = travel is not None or bool(selectors)
    return Source(ref, table, display, target, selector, name.metadata_table, chosen)


def plan_sources(
    statement: Statement,
    sources: list[Source],
    params: Any,
    duck: Duck,
    planning: Planning,
    outer: Outer = NO_OUTER,
) -> None:
    """Plan each data source of ``statement`` with the filter its WHERE/ON clauses imply and
    attach it to ``duck`` (setting ``plan``, ``view`` and ``relation``); register each
    metadata table. ``outer``: the conditions on the statement's output where it is used
    (a catalog view's query), which prune too. The same scan twice in one statement is
    planned and attached once."""
    data = [s for s in sources if s.metadata_table is None and s.ref.changes is None]
    filters: dict[int, BooleanExpression]
    if statement.kind == "DESCRIBE":
        filters = {id(s.ref.node): AlwaysFalse() for s in data}  # no rows needed: read no manifest
    elif not planning.pruning:
        filters = {id(s.ref.node): MATCH_ALL for s in data}
    else:
        schemas = {id(s.ref.node): s.target.schema for s in data}
        filters = pushdown(statement.tree, schemas, params, planning.timezone, outer)
    named = metadata_columns_named(statement) if data else frozenset()
    prune = data and statement.kind != "DESCRIBE" and planning.prune_columns
    used = columns_used(statement.tree, {id(s.ref.node) for s in data}) if prune else ColumnsUsed(None)
    planned: dict[tuple[Any, ...], Source] = {}
    for source in sources:
        if source.metadata_table is not None:
            _register_metadata_table(duck, source, planning)
            continue
        if source.ref.changes is not None:
            _register_changes(duck, source, planning)
            continue
        row_filter = filters[id(source.ref.node)]
        names = None if id(source.ref.node) in used.whole else used.names
        field_ids = scan_columns(source.target.schema, named, names)
        key = (
            source.loaded.metadata_location,
            source.target.snapshot_id,
            source.target.schema,
            row_filter,
            field_ids,
        )
        same = planned.get(key)
        if same is not None:
            source.plan, source.view, source.relation = same.plan, same.view, same.relation
            continue
        source.plan = plan_scan(
            source.loaded.metadata,
            snapshot=source.target.snapshot,
            schema=source.target.schema,
            row_filter=row_filter,
            case_sensitive=True,
            cache=planning.manifests,
            field_ids_of=field_ids_reader(duck, planning.layouts, name_mapping(source.loaded.metadata)),
        )
        _attach(statement, source, field_ids, duck, planning)
        planned[key] = source


def _attach(
    statement: Statement, source: Source, field_ids: tuple[int, ...] | None, duck: Duck, planning: Planning
) -> None:
    """Make ``source``'s planned scan readable on ``duck``: a derived table, or for DESCRIBE
    (which takes a name, not a subquery) a registered view."""
    assert source.plan is not None
    source.view = planning.unique_name()
    layouts, positions = planning.layouts, planning.positions
    if statement.kind != "DESCRIBE":
        read_ahead = not statement.explain or statement.analyze  # EXPLAIN alone reads no rows
        scan = attach_scan(
            duck,
            source.plan,
            source.view,
            field_ids,
            layouts=layouts,
            positions=positions,
            read_ahead=read_ahead,
        )
        source.relation = f"({scan})"
        return
    register_scan(duck, source.plan, source.view, field_ids, layouts=layouts, positions=positions)
    source.relation = quote_identifier(source.view)
    if described_table(statement) is None:  # a query: DuckDB infers NOT NULL from tables
        required = [f.name for f in source.target.schema.fields if f.required]
        source.view = planning.unique_name("describe")
        source.relation = queries.empty_table(duck, source.view, source.relation, required)


def _register_metadata_table(duck: Duck, source: Source, planning: Planning) -> None:
    """A metadata table (``ns.t.snapshots``...) built as Arrow and registered on ``duck``;
    time travel shows the chosen snapshot."""
    # imported by the first metadata table: they are built with pyarrow
    from iceduck.scan.metadata_tables import metadata_table

    assert source.metadata_table is not None
    snapshot_id = source.target.snapshot_id if source.time_travel else None
    table = metadata_table(
        source.metadata_table,
        source.loaded.metadata,
        source.loaded.metadata_location,
        snapshot_id=snapshot_id,
        reader=planning.manifests,
    )
    source.view = planning.unique_name()
    source.rows = table.num_rows
    source.required = tuple((f.name, not f.nullable) for f in table.schema)
    queries.register_arrow(duck, source.view, table)
    source.relation = quote_identifier(source.view)


def _register_changes(duck: Duck, source: Source, planning: Planning) -> None:
    """``table_changes(...)``: the changelog rows (:mod:`iceduck.engine.changes`) as Arrow,
    registered on ``duck``."""
    from iceduck.engine.changes import changelog_rows
    from iceduck.scan.changes import Bound, changelog_ends, changelog_snapshots, plan_changes

    call = source.ref.changes
    assert call is not None
    metadata = source.loaded.metadata

    def bound(given: ChangesBound | None) -> Bound | None:
        if given is None:
            return None
        if given.ref is not None and given.ref in metadata.refs:
            return Bound(ref=given.ref)
        if given.ref is not None and given.timestamp_ms is None:
            raise NotFoundError(
                f"{source.display} has no branch or tag named {given.ref!r} (nor is it a time)"
            )
        return Bound(given.snapshot_id, None, given.timestamp_ms)

    start, end = changelog_ends(metadata, bound(call.start), bound(call.end))
    snapshots = [] if end is None else changelog_snapshots(metadata, start, end)
    schema = metadata.schema()
    steps = plan_changes(
        metadata,
        snapshots,
        schema,
        planning.manifests,
        field_ids_reader(duck, planning.layouts, name_mapping(metadata)),
    )
    columns = call.identifier_columns
    if columns is None:
        columns = tuple(schema.column_name(i) or str(i) for i in schema.identifier_field_ids)
    compute = (
        call.compute_updates if call.compute_updates is not None else call.identifier_columns is not None
    )
    if compute and call.net_changes:
        raise UserError("Not support net changes with update images")
    table = changelog_rows(
        duck,
        schema,
        steps,
        planning.unique_name,
        layouts=planning.layouts,
        positions=planning.positions,
        identifier_columns=columns,
        compute_updates=compute,
        net_changes=call.net_changes,
    )
    source.view = planning.unique_name()
    source.rows = table.num_rows
    queries.register_arrow(duck, source.view, table)
    source.relation = quote_identifier(source.view)


def scan_columns(
    schema: Schema, named: frozenset[str], used: frozenset[str] | None
) -> tuple[int, ...] | None:
    """The columns a scan outputs: the schema's columns the query can name (``used``, see
    :mod:`iceduck.sql.columns`; None: all of them), plus the metadata columns the query names
    (``SELECT _row_id, * FROM t``) unless the table has a real column of that name. None (all
    columns) when nothing is left out. Metadata columns then also appear in a ``*`` of the
    same query: a derived table has no hidden columns."""
    extra = [
        fid
        for fid, f in METADATA_COLUMNS.items()
        if f.name in named and schema.find_field_or_none(f.name) is None
    ]
    names = schema.sql_names()  # as the scan names its columns: unique without case
    fields = [f.field_id for f in schema.fields if used is None or names[f.field_id].lower() in used]
    if not fields and not extra and schema.fields:  # count(*): a scan reads one column at least
        fields = [schema.fields[0].field_id]
    if not extra and len(fields) == len(schema.fields):
        return None
    return (*fields, *extra)
