"""``EXPLAIN``: what the metadata index let each Iceberg scan skip, as readable lines.

For every Iceberg table reference of the query, the scan plan: the snapshot read and why
(current, a ref, ``VERSION AS OF``...), the filter pushed into planning, manifests read
and skipped, data files read and skipped (by partition, by column metrics), the delete
files applied by kind and, when there are few, the files themselves, and the number of
distinct values of columns when a statistics file of the snapshot read has them
(``compute_table_stats``: the ``ndv`` of its theta sketches). The session appends DuckDB's
own plan of the rewritten query below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from iceduck.formats.statistics_file import ndv_by_field, statistics_for
from iceduck.scan.tasks import DeleteFile, ScanPlan
from iceduck.spec.expressions.predicates import AlwaysTrue
from iceduck.spec.manifest import FileContent
from iceduck.spec.table_metadata import TableMetadata

#: files are listed one by one up to this many
MAX_LISTED_FILES = 10


@dataclass(frozen=True)
class ScanExplanation:
    """One Iceberg scan of a statement, as EXPLAIN reports it."""

    table: str
    #: name prefix of the scan's DuckDB objects
    view: str
    #: how the snapshot was chosen, e.g. ``current snapshot of main``, ``VERSION AS OF 12``
    selector: str
    plan: ScanPlan
    #: field id -> number of distinct values, from the statistics file of the snapshot read
    ndv: Mapping[int, int] = field(default_factory=dict)


def snapshot_ndv(metadata: TableMetadata, snapshot_id: int | None) -> Mapping[int, int]:
    """Field id -> ``ndv`` of the statistics file registered for ``snapshot_id`` (empty
    without one): what EXPLAIN and DESCRIBE show."""
    statistics = statistics_for(metadata, snapshot_id)
    return {} if statistics is None else ndv_by_field(statistics)


def explain_scan(scan: ScanExplanation, max_files: int = MAX_LISTED_FILES) -> list[str]:
    plan, stats = scan.plan, scan.plan.stats
    lines = [f"Iceberg scan of {scan.table}"]
    snapshot = (
        "none (the table has no snapshot: empty)" if plan.snapshot_id is None else str(plan.snapshot_id)
    )
    lines.append(f"  snapshot: {snapshot} ({scan.selector})")
    lines.append(f"  schema id: {plan.schema.schema_id}")
    pushed = "none" if isinstance(plan.row_filter, AlwaysTrue) else str(plan.row_filter)
    lines.append(f"  pushed filter: {pushed}")
    lines.append(
        f"  manifests: {stats.manifests_total} total, {stats.manifests_read} read, "
        f"{stats.manifests_skipped} skipped"
    )
    skipped = stats.data_files_skipped_by_partition + stats.data_files_skipped_by_metrics
    lines.append(
        f"  data files: {stats.data_files_read} read, {skipped} skipped "
        f"({stats.data_files_skipped_by_partition} by partition, "
        f"{stats.data_files_skipped_by_metrics} by column metrics)"
    )
    lines.append(f"  rows in files read: {sum(t.record_count for t in plan.tasks)}")
    deletes = applied_deletes(plan)
    counts = {kind: sum(1 for d in deletes if delete_kind(d) == kind) for kind in DELETE_KINDS}
    shown = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    lines.append(f"  delete files applied: {len(deletes)} ({shown})")
    named = [(plan.schema.column_name(fid), n) for fid, n in scan.ndv.items()]
    if shown_ndv := ", ".join(f"{name}={n}" for name, n in named if name is not None):
        lines.append(f"  ndv: {shown_ndv}")
    if 0 < len(plan.tasks) <= max_files:
        lines.append("  files read:")
        for task in plan.tasks:
            extra = _task_deletes(task.deletion_vector, task.position_deletes, task.equality_deletes)
            lines.append(f"    {task.path} ({task.record_count} rows{extra})")
    if 0 < len(deletes) <= max_files:
        lines.append("  delete files:")
        for d in deletes:
            lines.append(f"    {d.path} ({delete_kind(d)}, {d.record_count} rows)")
    return lines


DELETE_KINDS = ("position", "deletion vector", "equality")


def delete_kind(d: DeleteFile) -> str:
    if d.is_deletion_vector:
        return "deletion vector"
    return "equality" if d.content is FileContent.EQUALITY_DELETES else "position"


def applied_deletes(plan: ScanPlan) -> list[DeleteFile]:
    """Each delete file (or deletion-vector blob) that applies to some task, once."""
    seen: dict[tuple[str, int | None], DeleteFile] = {}
    for task in plan.tasks:
        dv = (task.deletion_vector,) if task.deletion_vector is not None else ()
        for d in (*dv, *task.position_deletes, *task.equality_deletes):
            seen.setdefault((d.path, d.content_offset), d)
    return list(seen.values())


def _task_deletes(
    dv: DeleteFile | None, positions: tuple[DeleteFile, ...], equalities: tuple[DeleteFile, ...]
) -> str:
    parts = []
    if dv is not None:
        parts.append("a deletion vector")
    if positions:
        parts.append(f"{len(positions)} position delete file(s)")
    if equalities:
        parts.append(f"{len(equalities)} equality delete file(s)")
    return ", " + ", ".join(parts) if parts else ""


def explain_metadata_table(table: str, kind: str, rows: int) -> list[str]:
    return [f"Iceberg metadata table {table}.{kind}: {rows} rows, built from the table's metadata"]
