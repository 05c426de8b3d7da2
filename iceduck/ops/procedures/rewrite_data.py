"""``CALL system.rewrite_data_files(table, strategy, sort_order, options, where)``: compaction.

Spark's procedure (Iceberg 1.10): small files (and files carrying deletes) of each partition
are read *with their deletes applied* -- position deletes, deletion vectors and equality
deletes, through the same scan as any query -- and written again as files of about
``target-file-size-bytes`` in the table's current schema and partition spec, so deleted
rows disappear and files of an old spec move to the current one. Which files and groups are
rewritten is :mod:`iceduck.scan.compaction` (Java's bin-pack planner); how rows are laid out
in the new files is :mod:`iceduck.ops.procedures.rewrite_layout`.

* ``strategy``: ``binpack`` (default) or ``sort``; a ``sort_order`` alone means ``sort``.
  ``sort`` uses ``sort_order`` (``'id DESC NULLS LAST, name'`` or ``'zorder(a, b)'``) or
  else the table's sort order (an unsorted table without ``sort_order`` is an error, as in
  Spark).
* ``where`` (Spark SQL: ``'id > 10 and name = "x"'``): only files that may hold matching
  rows, by partition values and column metrics, are candidates -- whole files are
  rewritten, as Spark does.
* ``options``: the planner's (see :mod:`iceduck.scan.compaction`), plus
  ``partial-progress.enabled`` (false) and ``partial-progress.max-commits`` (10): the groups
  are committed in up to that many commits, each valid on its own, and a commit that fails
  on a conflict counts its files in ``failed_data_files_count`` instead of failing the call,
  unless more than ``partial-progress.max-failed-commits`` (default: max-commits) fail;
  ``use-starting-sequence-number`` (true): the new files get the data sequence number of the
  snapshot the rewrite read, so equality deletes committed meanwhile still apply to them.
  ``max-concurrent-file-group-rewrites``, ``rewrite-job-order``, ``compression-factor``,
  ``shuffle-partitions-per-file``, ``var-length-contribution`` and ``max-output-size`` are
  accepted and ignored (Spark tuning: iceduck rewrites the groups one after the other in one
  DuckDB process). ``remove-dangling-deletes`` is accepted too: iceduck always drops the
  delete files that applied only to rewritten files, in the rewrite's own commit (Java
  leaves v2 position delete files behind unless it is true, then drops them in a second
  commit). Any other option is an error.

Each commit is a ``replace`` snapshot. Spec, "Commit Conflict Resolution and Retry":
"Replace operations must verify that the files that will be deleted are still in the table"
-- and, as Java's ``RewriteFiles`` validates, no delete file added since the rewrite read
the table may apply to a rewritten file, or the rows it deletes would come back in the new
files: a concurrent DELETE makes one of the two fail. Delete files that applied only to
rewritten files are dropped (``removed_delete_files_count``). A crash before the commit
leaves the table as it was (the files written are orphans); the commit itself is the one
atomic metadata swap.

Result (Spark's columns): ``rewritten_data_files_count`` int, ``added_data_files_count``
int, ``rewritten_bytes_count`` bigint, ``failed_data_files_count`` int,
``removed_delete_files_count`` int.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from iceduck.engine.queries import temp_table
from iceduck.engine.write import FileTarget, column_ref, order_by_sql, write_data_files
from iceduck.errors import CommitConflictError, UserError
from iceduck.ops.context import OpContext, WriteTarget
from iceduck.ops.procedures import rewrite_layout as layout
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows
from iceduck.ops.procedures.where import where_filter
from iceduck.ops.rows import (
    LAST_UPDATED,
    ROW_ID,
    column_list,
    has_lineage,
    plan_target,
    register_target,
    restricted,
    run_sql,
)
from iceduck.ops.snapshot_commit import WrittenFiles, commit_changes, file_target
from iceduck.scan.compaction import (
    PLANNER_OPTIONS,
    BinPackPlanner,
    BinPackSettings,
    FileGroup,
    bool_option,
    dead_delete_files,
    long_option,
)
from iceduck.scan.tasks import FileScanTask, ScanPlan
from iceduck.spec import properties as props
from iceduck.spec.manifest import DataFile, FileContent, ManifestContent
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Operation
from iceduck.spec.sort import UNSORTED, SortOrder
from iceduck.spec.transforms import IdentityTransform
from iceduck.sql.classify import dotted_name
from iceduck.sql.rewrite_order import ZOrder, parse_rewrite_order
from iceduck.txn import change_requests as ch
from iceduck.txn.snapshot import SnapshotChanges
from iceduck.txn.sort_update import sort_order_from_terms
from iceduck.txn.spec_update import bind_term

PARTIAL_PROGRESS = "partial-progress.enabled"
MAX_COMMITS = "partial-progress.max-commits"
MAX_COMMITS_DEFAULT = 10
MAX_FAILED_COMMITS = "partial-progress.max-failed-commits"
USE_STARTING_SEQUENCE_NUMBER = "use-starting-sequence-number"
#: Spark tuning options iceduck accepts and ignores (see the module docstring)
IGNORED_OPTIONS = frozenset(
    {
        "max-concurrent-file-group-rewrites", "rewrite-job-order", "compression-factor",
        "shuffle-partitions-per-file", "var-length-contribution", "max-output-size",
        "remove-dangling-deletes",
    }
)  # fmt: skip
OPTIONS = PLANNER_OPTIONS | IGNORED_OPTIONS | {PARTIAL_PROGRESS, MAX_COMMITS, MAX_FAILED_COMMITS}
OPTIONS |= {USE_STARTING_SEQUENCE_NUMBER}


@dataclass(frozen=True)
class Layout:
    """How a group's rows are ordered into files: none (bin-pack), a sort order, or a z-order."""

    sort_order: SortOrder = UNSORTED
    zorder: tuple[str, ...] = ()


@dataclass
class Outcome:
    """The counts of the result row."""

    rewritten: int = 0
    added: int = 0
    rewritten_bytes: int = 0
    failed: int = 0
    removed_deletes: int = 0
    #: bytes of all groups, and of the groups done: the progress reported to the shell
    total_bytes: int = 0
    done_bytes: int = 0

    def group_done(self, ctx: OpContext, group: FileGroup) -> None:
        self.done_bytes += group.size_bytes
        ctx.report_progress(100.0 * self.done_bytes / max(self.total_bytes, 1))

    def row(self) -> tuple[int, int, int, int, int]:
        return (self.rewritten, self.added, self.rewritten_bytes, self.failed, self.removed_deletes)


def rewrite_data_files(ctx: OpContext, args: Arguments) -> Rows:
    target = _target(ctx, args)
    metadata = target.table.metadata
    options: Mapping[str, str] = args.get("options", {})
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise UserError(
            f"rewrite_data_files: cannot use options {unknown}, they are not supported "
            f"(supported: {', '.join(sorted(OPTIONS))})"
        )
    table_target = props.int_property(
        metadata.properties, props.TARGET_FILE_SIZE_BYTES, props.TARGET_FILE_SIZE_BYTES_DEFAULT
    )
    settings = BinPackSettings.of(options, table_target)
    chosen = _layout(args, metadata.schema(), metadata.sort_order(), metadata.sort_orders)
    partial = bool_option(options, PARTIAL_PROGRESS, False)
    max_commits = _positive(options, MAX_COMMITS, MAX_COMMITS_DEFAULT)
    max_failed = long_option(options, MAX_FAILED_COMMITS, max_commits)
    starting_seq = bool_option(options, USE_STARTING_SEQUENCE_NUMBER, True)
    if metadata.current_snapshot_id is None:
        ctx.notices.append("nothing rewritten: the table has no snapshot")
        return [Outcome().row()]
    plan = plan_target(ctx, target)
    candidates = plan.tasks
    if "where" in args:
        candidates = _matching(ctx, target, plan, args["where"])
    planner = BinPackPlanner(settings, metadata.default_spec_id)
    groups = planner.groups(candidates)
    outcome = Outcome()
    if not groups:
        ctx.notices.append(planner.why_none(candidates))
        return [outcome.row()]
    snapshot = metadata.snapshot_for_ref(target.branch)
    sequence = (
        snapshot.sequence_number if (starting_seq and snapshot and metadata.format_version >= 2) else None
    )
    outcome.total_bytes = sum(g.size_bytes for g in groups)
    batches = _batches(groups, max_commits if partial else 1)
    failures: list[CommitConflictError] = []
    dangling = _dangling_equality_deletes(ctx, target, plan)
    for n, batch in enumerate(batches):
        try:
            extra = dangling if n == 0 else []
            _rewrite_batch(ctx, target, plan, batch, chosen, settings, sequence, outcome, extra)
        except CommitConflictError as e:
            if not partial:
                raise
            failures.append(e)
            outcome.failed += sum(len(g.tasks) for g in batch)
        target = ctx.resolve_target((*target.identifier.namespace, target.identifier.name))
    if len(failures) > max_failed:
        raise CommitConflictError(
            f"rewrite_data_files: {len(failures)} of {len(batches)} commits failed, more than "
            f"{MAX_FAILED_COMMITS}={max_failed} ({outcome.rewritten} files were rewritten by the "
            f"others); first failure: {failures[0]}"
        )
    return [outcome.row()]


def _matching(ctx: OpContext, target: WriteTarget, plan: ScanPlan, where: str) -> tuple[FileScanTask, ...]:
    """The tasks of ``plan`` whose files may hold rows ``where`` matches (partition values,
    then column metrics: the planner's pruning)."""
    implied = where_filter(ctx, target, plan, where, "rewrite_data_files")
    wanted = {t.path for t in plan_target(ctx, target, implied).tasks}
    return tuple(t for t in plan.tasks if t.path in wanted)


def _target(ctx: OpContext, args: Arguments) -> WriteTarget:
    text = args.required("table")
    target = ctx.resolve_target(dotted_name(text, "rewrite_data_files' table argument"))
    if target.branch != "main":
        raise UserError(f"rewrite_data_files takes a table, not a branch: {text}")
    return target


def _layout(args: Arguments, schema: Schema, table_order: SortOrder, known: Sequence[SortOrder]) -> Layout:
    """The strategy and sort order arguments as a :class:`Layout` (Spark's rules). A given
    sort order equal to one of the table's (``known``) is that one, so the new files
    record its id."""
    strategy = args.get("strategy")
    text = args.get("sort_order")
    if strategy is None:
        strategy = "sort" if text is not None else "binpack"
    strategy = strategy.strip().lower()
    if strategy == "binpack":
        if text is not None:
            raise UserError("rewrite_data_files: cannot set a sort_order with the binpack strategy")
        return Layout()
    if strategy != "sort":
        raise UserError(f"rewrite_data_files: unsupported strategy {args['strategy']!r}: use binpack or sort")
    if text is None:
        if table_order.is_unsorted:
            raise UserError(
                "rewrite_data_files: cannot sort data without a valid sort order: the table's sort order "
                "is unsorted and no sort_order was given"
            )
        return Layout(sort_order=table_order)
    parsed = parse_rewrite_order(text)
    if isinstance(parsed, ZOrder):
        refs = []
        for path in parsed.columns:
            source_id, _ = bind_term(schema, IdentityTransform(), path, "zorder")
            refs.append(column_ref(schema, source_id))
        if len(refs) > layout.MAX_ZORDER_COLUMNS:
            raise UserError(f"zorder takes at most {layout.MAX_ZORDER_COLUMNS} columns, not {len(refs)}")
        return Layout(zorder=tuple(refs))
    terms = [ch.SortTerm(t.transform, t.source, t.direction, t.null_order) for t in parsed]
    order = sort_order_from_terms(schema, terms)
    same = [o for o in known if o.fields == order.fields]
    return Layout(sort_order=same[0] if same else order)


def _dangling_equality_deletes(ctx: OpContext, target: WriteTarget, plan: ScanPlan) -> list[str]:
    """Equality delete files of the snapshot read that apply to no live data file (``plan``
    covers them all): no data file of their partition has a smaller data sequence number
    (spec: an equality delete applies only when "the data file's data sequence number is
    strictly less than the delete's"), or none may hold their keys by its bounds -- as an
    upsert of new keys leaves them. They delete nothing, and never will: a file added later
    gets a larger sequence number. Java drops them with ``remove-dangling-deletes``;
    iceduck in the compaction's commit, so a compacted table keeps none."""
    metadata = target.table.metadata
    snapshot = metadata.snapshot_by_id(plan.snapshot_id) if plan.snapshot_id is not None else None
    if snapshot is None:
        return []
    applying = {d.path for t in plan.tasks for d in t.equality_deletes}
    specs = metadata.specs_by_id()
    found: list[str] = []
    for m in ctx.manifests.snapshot_manifests(snapshot, metadata.format_version):
        if m.content is ManifestContent.DELETES:
            for d in ctx.manifests.parsed_manifest(m, specs).deletes:
                if d.content is FileContent.EQUALITY_DELETES and d.path not in applying:
                    found.append(d.path)
    return list(dict.fromkeys(found))


def _positive(options: Mapping[str, str], name: str, default: int) -> int:
    value = long_option(options, name, default)
    if value <= 0:
        raise UserError(f"'{name}' is set to {value} but must be > 0")
    return value


def _batches(groups: Sequence[FileGroup], commits: int) -> list[list[FileGroup]]:
    """``groups`` split into at most ``commits`` batches of about as many groups each (Java:
    ``max(1, groups / max-commits)`` groups per commit)."""
    per_commit = max(1, -(-len(groups) // commits))
    return [list(groups[i : i + per_commit]) for i in range(0, len(groups), per_commit)]


def _rewrite_batch(
    ctx: OpContext,
    target: WriteTarget,
    plan: ScanPlan,
    groups: Sequence[FileGroup],
    chosen: Layout,
    settings: BinPackSettings,
    sequence_number: int | None,
    outcome: Outcome,
    dangling: Sequence[str] = (),
) -> None:
    """Rewrite ``groups`` and commit them as one ``replace`` snapshot; it also drops the
    ``dangling`` delete files."""
    metadata = target.table.metadata
    tasks = [t for g in groups for t in g.tasks]
    rewritten = {t.path for t in tasks}
    removed_deletes = [*dead_delete_files(plan.tasks, rewritten), *dangling]
    base = file_target(metadata)
    lineage = has_lineage(metadata)
    with WrittenFiles() as written:
        added: list[DataFile] = []
        for group in groups:
            added.extend(written.add(_write_group(ctx, plan, group, base, chosen, settings, lineage)))
            outcome.group_done(ctx, group)
        if chosen.sort_order is not UNSORTED and chosen.sort_order not in metadata.sort_orders:
            # files sorted by an order the table does not have record none (Java: null)
            added = [dataclasses.replace(f, sort_order_id=None) for f in added]
        changes = SnapshotChanges(
            operation=Operation.REPLACE,
            added_data_files=tuple(added),
            removed_data_files=tuple(t.path for t in tasks),
            removed_delete_files=tuple(removed_deletes),
            validate_from_snapshot_id=plan.snapshot_id,
            validate_no_new_deletes_for=tuple(t.path for t in tasks),
            added_data_sequence_number=sequence_number,
        )
        commit_changes(ctx, target, changes, written)
    outcome.rewritten += len(tasks)
    outcome.added += len(added)
    outcome.rewritten_bytes += sum(t.file_size_in_bytes for t in tasks)
    outcome.removed_deletes += len(removed_deletes)


def _file_target(base: FileTarget, chosen: Layout, roll_size: int) -> FileTarget:
    """The table's file target rolling files at ``roll_size`` bytes, with (for sort) the
    rewrite's sort order."""
    properties = {**base.properties, props.TARGET_FILE_SIZE_BYTES: str(roll_size)}
    order = chosen.sort_order if not chosen.zorder else UNSORTED
    return dataclasses.replace(base, properties=properties, sort_order=order)


def _write_group(
    ctx: OpContext,
    plan: ScanPlan,
    group: FileGroup,
    base: FileTarget,
    chosen: Layout,
    settings: BinPackSettings,
    lineage: bool,
) -> list[DataFile]:
    """The group's live rows (deletes applied), written as new files of the current spec.

    Bin-pack lets the writer roll files at the target size. Sort and z-order cut the
    ordered rows into runs of about a target file's rows themselves, and the writer rolls
    only past ``max-file-size-bytes`` (the estimate of bytes per row comes from the input
    files, whose compression differs from the output's)."""
    scan = register_target(ctx, restricted(plan, group.tasks), lineage, kind="compact")
    items = column_list(scan.schema)
    if lineage:
        items += f", {ROW_ID}, {LAST_UPDATED}"
    if chosen.sort_order.is_unsorted and not chosen.zorder:
        writer = _file_target(base, chosen, settings.target_file_size)
        return write_data_files(ctx.duck, f"SELECT {items} FROM {scan.relation}", writer, row_lineage=lineage)
    writer = _file_target(base, chosen, settings.max_file_size)
    per_file = layout.rows_per_file(_records(group.tasks), group.size_bytes, settings.target_file_size)
    if chosen.zorder:
        chunks = layout.zorder_chunks_sql(scan.relation, items, chosen.zorder, per_file)
    else:
        chunks = layout.sorted_chunks_sql(scan.relation, items, order_by_sql(writer), per_file)
    name = ctx.unique_name("compact_rows")
    files: list[DataFile] = []
    with temp_table(ctx.duck, name, chunks) as table:
        ((count,),) = run_sql(ctx, f"SELECT coalesce(max({layout.CHUNK}) + 1, 0) FROM {table}")
        for chunk in range(count):
            query = f"SELECT {items} FROM {table} WHERE {layout.CHUNK} = {chunk}"
            files.extend(write_data_files(ctx.duck, query, writer, row_lineage=lineage))
    return files


def _records(tasks: Sequence[FileScanTask]) -> int:
    return sum(t.record_count for t in tasks)


PROCEDURE = Procedure(
    name="rewrite_data_files",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("strategy", Kind.STRING),
        Parameter("sort_order", Kind.STRING),
        Parameter("options", Kind.STRING_MAP),
        Parameter("where", Kind.STRING),
    ),
    output=pa.schema(
        [
            pa.field("rewritten_data_files_count", pa.int32()),
            pa.field("added_data_files_count", pa.int32()),
            pa.field("rewritten_bytes_count", pa.int64()),
            pa.field("failed_data_files_count", pa.int32()),
            pa.field("removed_delete_files_count", pa.int32()),
        ]
    ),
    run=rewrite_data_files,
    summary="compact small files and apply deletes (bin-pack or sort)",
)
