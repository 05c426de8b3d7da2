"""Finding the rows a DML statement touches: the target table as a DuckDB relation with its
row addresses, and the rows a condition matches.

A row of an Iceberg table is addressed by its data file and position (``_file``,
``_pos``: spec, "Reserved Field IDs"), exactly what position deletes and deletion vectors
record, so every row-level operation works in three steps: register the target's scan on
the statement's DuckDB cursor with those metadata columns (and, in v3, ``_row_id`` and
``_last_updated_sequence_number``: "Row Lineage"), let DuckDB find the affected addresses
(a DELETE condition, an UPDATE's WHERE, a MERGE join), then rewrite or delete by address
(:mod:`iceduck.ops.row_changes`).

Whole files are settled from metadata when possible: with a condition the SQL layer calls
*exact* (:func:`iceduck.sql.filters.row_filter`), a data file whose partition proves every
row matches (the planner's residual is ``true``: strict projection, spec "Scan Planning"
note 1) or whose column metrics do (:class:`~iceduck.spec.expressions.strict_metrics.
StrictMetricsEvaluator`) is deleted without reading its data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from iceduck.engine.deletes import deleted_positions
from iceduck.engine.layout import field_ids_reader
from iceduck.engine.queries import arrow_rows, rows
from iceduck.engine.read import register_scan
from iceduck.engine.types import quote_identifier
from iceduck.ops.context import OpContext, WriteTarget
from iceduck.scan.planner import name_mapping, plan_scan
from iceduck.scan.tasks import MATCH_ALL, FileScanTask, ScanPlan
from iceduck.scan.trusted_metrics import MetricsTrust
from iceduck.spec.column_names import unique_names
from iceduck.spec.expressions.predicates import AlwaysTrue, BooleanExpression
from iceduck.spec.expressions.strict_metrics import StrictMetricsEvaluator
from iceduck.spec.manifest import DataFile
from iceduck.spec.schema import FILE_PATH_ID, LAST_UPDATED_SEQUENCE_NUMBER_ID, POS_ID, ROW_ID_ID, Schema
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.sql.condition import Condition
from iceduck.sql.filters import row_filter
from iceduck.sql.parameters import parameters_used

#: metadata column names the target relation carries besides the table's columns
FILE, POS, ROW_ID, LAST_UPDATED = "_file", "_pos", "_row_id", "_last_updated_sequence_number"


def relation_name(view: str) -> str:
    """A temporary view's fully qualified name: the session's reference resolver leaves
    names under DuckDB's ``temp`` catalog alone instead of looking them up as Iceberg."""
    return f"temp.main.{quote_identifier(view)}"


def branch_snapshot(target: WriteTarget) -> Snapshot | None:
    """The snapshot the write starts from: the branch head (None for an empty table); a
    branch the write creates (a write-audit-publish branch) starts from main's head, as
    :func:`iceduck.txn.snapshot.branch_head` forks it."""
    metadata = target.table.metadata
    if target.branch not in metadata.refs:
        return metadata.current_snapshot()
    return metadata.snapshot_for_ref(target.branch)


def has_lineage(metadata: TableMetadata) -> bool:
    """v3 tables carry row lineage (spec, "Row Lineage"): rewrites keep it."""
    return metadata.format_version >= 3


def plan_target(ctx: OpContext, target: WriteTarget, row_filter: BooleanExpression = MATCH_ALL) -> ScanPlan:
    """The scan of the branch head with the table's current schema (writes always use it).

    Its tasks list every delete file of their data files, also those that cannot delete a
    row the filter matches (``whole_files``): a copy-on-write rewrite copies a file's other
    rows, which those deletes may remove."""
    metadata = target.table.metadata
    return plan_scan(
        metadata,
        snapshot=branch_snapshot(target),
        schema=metadata.schema(),
        row_filter=row_filter,
        cache=ctx.manifests,
        field_ids_of=field_ids_reader(ctx.duck, ctx.layouts, name_mapping(metadata)),
        whole_files=True,
    )


def scan_field_ids(schema: Schema, lineage: bool) -> list[int]:
    """The target relation's columns: the table's, then ``_file``, ``_pos`` and lineage."""
    ids = [f.field_id for f in schema.fields] + [FILE_PATH_ID, POS_ID]
    if lineage:
        ids += [ROW_ID_ID, LAST_UPDATED_SEQUENCE_NUMBER_ID]
    return ids


@dataclass(frozen=True)
class TargetRelation:
    """A scan of the target registered on the statement's cursor as a temporary view."""

    plan: ScanPlan
    view: str
    lineage: bool

    @property
    def relation(self) -> str:
        return relation_name(self.view)

    @property
    def schema(self) -> Schema:
        return self.plan.schema


def register_target(ctx: OpContext, plan: ScanPlan, lineage: bool, kind: str = "target") -> TargetRelation:
    view = ctx.unique_name(kind)
    field_ids = scan_field_ids(plan.schema, lineage)
    register_scan(ctx.duck, plan, view, field_ids, layouts=ctx.layouts, positions=ctx.positions)
    return TargetRelation(plan, view, lineage)


def restricted(plan: ScanPlan, tasks: Sequence[FileScanTask]) -> ScanPlan:
    """``plan`` reading only ``tasks`` (the files a rewrite reads back)."""
    return dataclasses.replace(plan, tasks=tuple(tasks))


def column_list(schema: Schema, prefix: str = "") -> str:
    """The table's columns as a scan of it names them (:mod:`iceduck.spec.column_names`)."""
    names = unique_names([f.name for f in schema.fields])
    return ", ".join(prefix + quote_identifier(name) for name in names)


# -- the rows a condition matches ----------------------------------------------------------


@dataclass(frozen=True)
class Matches:
    """What a DELETE condition selects."""

    plan: ScanPlan
    #: files every live row of which matches: removed without reading their data
    whole: tuple[FileScanTask, ...]
    #: live rows of ``whole`` (what the DELETE reports for them)
    whole_rows: int
    #: matched rows of the other files: columns ``_file``, ``_pos``
    addresses: pa.Table


def live_rows(ctx: OpContext, tasks: Sequence[FileScanTask]) -> int:
    """Rows of ``tasks`` not deleted by their position deletes/DVs (no equality deletes)."""
    deleted = deleted_positions(ctx.duck, [t for t in tasks if t.has_deletes], ctx.positions)
    total = 0
    for t in tasks:
        gone = deleted.get(t.path)
        total += t.record_count - (0 if gone is None else int(((gone >= 0) & (gone < t.record_count)).sum()))
    return total


def find_matches(
    ctx: OpContext,
    target: WriteTarget,
    condition: Condition | None,
    alias: str,
    *,
    metadata_only: bool = True,
) -> Matches:
    """The rows of the target that ``condition`` (over ``alias``) matches.

    No condition matches every row: every file goes whole. ``metadata_only`` allows
    settling whole files from partitions or metrics; without it every row is located
    through DuckDB.
    """
    metadata = target.table.metadata
    if condition is None:
        plan = plan_target(ctx, target)
        tasks = tuple(t for t in plan.tasks if not t.equality_deletes) if metadata_only else ()
        rest = _others(plan, tasks)
        return Matches(plan, tasks, live_rows(ctx, tasks), _addresses(ctx, plan, rest, None, alias))
    implied, exact = row_filter(condition, metadata.schema(), ctx.params, ctx.timezone, alias)
    if not ctx.pruning:
        implied, metadata_only = MATCH_ALL, False
    plan = plan_target(ctx, target, implied)
    whole: tuple[FileScanTask, ...] = ()
    if metadata_only and exact:
        whole = _whole_by_metrics(ctx, target, plan)
    rest = _others(plan, whole)
    return Matches(plan, whole, live_rows(ctx, whole), _addresses(ctx, plan, rest, condition, alias))


def _others(plan: ScanPlan, whole: Sequence[FileScanTask]) -> list[FileScanTask]:
    paths = {t.path for t in whole}
    return [t for t in plan.tasks if t.path not in paths]


def _whole_by_metrics(ctx: OpContext, target: WriteTarget, plan: ScanPlan) -> tuple[FileScanTask, ...]:
    """Whole-file matches: the partition decides the filter (residual ``true``), or the
    file's metrics prove the residual -- what the partition leaves undecided -- for every
    row. Metrics come from the manifests' data files (parsed once per connection)."""
    files = data_files_by_path(ctx, target)
    evaluators: dict[Any, StrictMetricsEvaluator] = {}
    found: list[FileScanTask] = []
    by_metrics: list[tuple[FileScanTask, DataFile, StrictMetricsEvaluator]] = []
    for t in plan.tasks:
        if t.equality_deletes:
            continue
        if isinstance(t.residual, AlwaysTrue):
            found.append(t)
            continue
        f = files.get(t.path)
        if f is None:
            continue
        strict = evaluators.get(t.residual)
        if strict is None:
            strict = evaluators[t.residual] = StrictMetricsEvaluator(plan.schema, t.residual)
        if strict.must_match(f):
            by_metrics.append((t, f, strict))
    # only metrics that describe what is read prove a match (scan.trusted_metrics)
    reader = field_ids_reader(ctx.duck, ctx.layouts, plan.name_mapping)
    trust = MetricsTrust(plan.name_mapping is not None, reader)
    trusted = trust.trusted([f for _, f, _ in by_metrics])
    found.extend(t for (t, _, strict), f in zip(by_metrics, trusted, strict=True) if strict.must_match(f))
    return tuple(found)


def data_files_by_path(ctx: OpContext, target: WriteTarget) -> dict[str, Any]:
    """Live data files of the branch head by path (their metrics, partitions, spec ids)."""
    snapshot = branch_snapshot(target)
    if snapshot is None:
        return {}
    metadata = target.table.metadata
    specs = metadata.specs_by_id()
    found: dict[str, Any] = {}
    for m in ctx.manifests.snapshot_manifests(snapshot, metadata.format_version):
        cm = ctx.manifests.parsed_manifest(m, specs)
        for f in cm.files:
            found[f.file_path] = f
    return found


def _addresses(
    ctx: OpContext, plan: ScanPlan, tasks: Sequence[FileScanTask], condition: Condition | None, alias: str
) -> pa.Table:
    """``_file``, ``_pos`` of the rows of ``tasks`` where ``condition`` is true."""
    if not tasks:
        return pa.table({FILE: pa.array([], pa.string()), POS: pa.array([], pa.int64())})
    scan = register_target(ctx, restricted(plan, tasks), lineage=False, kind="match")
    where = "" if condition is None else f" WHERE ({condition.text})"
    sql = f"SELECT {FILE}, {POS} FROM {scan.relation} AS {quote_identifier(alias)}{where}"
    query = ctx.prepare_query(sql)
    return arrow_rows(ctx.duck, query, params_for(query, ctx.params))


# -- running SQL with the statement's parameters ---------------------------------------------


def params_for(sql: str, params: Any) -> Any:
    """The statement's parameters that ``sql`` (a piece of the statement) uses
    (:func:`iceduck.sql.parameters.parameters_used`: found by the tokenizer, so never
    inside a string literal or a comment)."""
    return parameters_used(sql, params)


def run_sql(ctx: OpContext, sql: str) -> list[tuple[Any, ...]]:
    """Execute ``sql`` on the statement's cursor with the parameters it uses; its rows."""
    return rows(ctx.duck, sql, params_for(sql, ctx.params))
