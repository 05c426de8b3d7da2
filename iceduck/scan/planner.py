"""Scan planning from the metadata index (spec, "Scan Planning").

"Scans are planned by reading the manifest files for the current snapshot", skipping as
much of the index as the row filter allows, level by level, as the metadata-indexing post
walks through it:

1. the manifest list: a manifest is skipped when it has no live files ("Manifests that
   contain no matching files, determined using either file counts or partition
   summaries, may be skipped") or when its partition summaries cannot match the filter's
   *inclusive projection* onto the spec the manifest was written with ("Conversion uses
   the partition spec that was used to write the manifest file regardless of the current
   partition spec");
2. the entries of the manifests read: "Deleted entries [...] are not used in a scan";
   a file whose partition tuple fails the projected filter is skipped, then one whose
   column metrics prove no row matches ("Scan predicates are also used to filter data
   and delete files using column bounds and counts");
3. delete manifests go through the same two levels and feed the
   :class:`~iceduck.scan.delete_index.DeleteIndex`, which attaches to each data file the
   deletes the scope rules select.

Each task carries its *residual*: the part of the filter its partition does not decide
(strict projection, note 1). Row filters arrive unbound (built by the SQL layer from what
it could convert) and are bound once against the scan schema; everything the planner does
is inclusive, so a file that may hold a matching row is never dropped.

Speed: projections, evaluators and residual caches are built once per partition spec per
scan. The manifest list is read once per connection and indexed
(:mod:`iceduck.scan.manifest_index`), so a filter on a partition field tests only the rows
whose summaries may overlap it: a point query's planning grows with the manifests that
can match, not with the table's history. Parsed manifests, with their base tasks, come
from the connection's :class:`~iceduck.scan.manifest_cache.ManifestCache`; a data file
without deletes and with a ``true`` residual reuses its cached task object. In an object
store, where a read is a round trip of 10-30 ms, the manifests a plan reads are fetched
together before they are parsed, with the delete manifests they may need
(:meth:`~iceduck.scan.manifest_cache.ManifestCache.prefetched`): one round trip, not one
per manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.scan.delete_index import DeleteIndex
from iceduck.scan.manifest_cache import CachedManifest, ManifestCache
from iceduck.scan.manifest_index import Bounds, FieldKey, ManifestListIndex, listed_files, required_bounds
from iceduck.scan.plan_cache import plan_key
from iceduck.scan.snapshots import schema_of_snapshot
from iceduck.scan.tasks import MATCH_ALL, DeleteFile, FileScanTask, ScanPlan, ScanStats
from iceduck.scan.trusted_metrics import FieldIdsOf, MetricsTrust
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.manifest_evaluator import ManifestEvaluator
from iceduck.spec.expressions.metrics_evaluator import InclusiveMetricsEvaluator
from iceduck.spec.expressions.predicates import AlwaysFalse, AlwaysTrue, BooleanExpression
from iceduck.spec.expressions.projection import inclusive_projection
from iceduck.spec.expressions.residuals import ResidualEvaluator
from iceduck.spec.expressions.row_evaluator import compile_row_filter
from iceduck.spec.manifest import DataFile, ManifestFile
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
#: manifests fetched at once from an object store (:meth:`ManifestCache.prefetched`): bounds
#: the bytes held before they are parsed
FETCH_BATCH = 256


def name_mapping(metadata: TableMetadata) -> str | None:
    """The table's ``schema.name-mapping.default`` (None when it has none)."""
    return metadata.properties.get(NAME_MAPPING_PROPERTY)


class _Current:
    """Sentinel: plan the table's current snapshot."""

    def __repr__(self) -> str:
        return "CURRENT"


CURRENT: Any = _Current()


class SpecFilter:
    """The row filter as seen through one partition spec; built lazily, once per scan."""

    def __init__(self, spec: PartitionSpec, schema: Schema, bound: BooleanExpression, case_sensitive: bool):
        self.spec = spec
        projected = inclusive_projection(spec, schema, case_sensitive).project(bound)
        self.manifest_evaluator = ManifestEvaluator(spec, projected)
        self._partition_test = compile_row_filter(projected)
        self._residuals = ResidualEvaluator(spec, schema, bound, case_sensitive)
        self._memo: dict[tuple[Any, ...], BooleanExpression | None] = {}
        #: what the projected filter requires of the manifest list's summaries
        self.required = required_bounds(self.manifest_evaluator.partition_filter, len(spec.fields))

    def _decide(self, partition: tuple[Any, ...]) -> BooleanExpression | None:
        if not self._partition_test(partition):
            return None
        residual = self._residuals.residual_for(partition)
        return None if isinstance(residual, AlwaysFalse) else residual

    def residual(self, partition: tuple[Any, ...]) -> BooleanExpression | None:
        """None when no row of the partition can match, else the residual filter of its rows
        (memoised: the files of one partition share both answers)."""
        memo = self._memo
        try:
            if partition in memo:
                return memo[partition]
        except TypeError:  # an unhashable value
            return self._decide(partition)
        found = memo[partition] = self._decide(partition)
        return found


@dataclass
class _Counters:
    manifests_total: int = 0
    manifests_read: int = 0
    data_files_total: int = 0
    skipped_by_partition: int = 0
    skipped_by_metrics: int = 0
    applied: dict[tuple[str, int | None], DeleteFile] = field(default_factory=dict)

    def stats(self, data_files_read: int) -> ScanStats:
        return ScanStats(
            manifests_total=self.manifests_total,
            manifests_read=self.manifests_read,
            manifests_skipped=self.manifests_total - self.manifests_read,
            data_files_total=self.data_files_total,
            data_files_read=data_files_read,
            data_files_skipped_by_partition=self.skipped_by_partition,
            data_files_skipped_by_metrics=self.skipped_by_metrics,
            delete_files_applied=len(self.applied),
        )


class _Planner:
    """State of one planning run."""

    def __init__(
        self,
        metadata: TableMetadata,
        schema: Schema,
        bound: BooleanExpression,
        case_sensitive: bool,
        cache: ManifestCache,
        trust: MetricsTrust,
        whole_files: bool = False,
    ) -> None:
        self.metadata = metadata
        #: list every delete file of a kept data file (:func:`plan_scan`'s ``whole_files``)
        self.whole_files = whole_files
        self.trust = trust
        self.schema = schema
        self.bound = bound
        self.case_sensitive = case_sensitive
        self.cache = cache
        self.specs = metadata.specs_by_id()
        self.match_all = isinstance(bound, AlwaysTrue)
        self.metrics: Callable[[DataFile], bool] | None = (
            None if self.match_all else InclusiveMetricsEvaluator(schema, bound, case_sensitive).may_match
        )
        self._spec_filters: dict[int, SpecFilter] = {}
        self.counters = _Counters()

    def spec_filter(self, spec_id: int, where: str) -> SpecFilter:
        found = self._spec_filters.get(spec_id)
        if found is None:
            spec = self.specs.get(spec_id)
            if spec is None:
                raise CorruptDataError(
                    f"written with partition spec {spec_id}, which the table does not have", where
                )
            found = self._spec_filters[spec_id] = SpecFilter(
                spec, self.schema, self.bound, self.case_sensitive
            )
        return found

    # -- level 1: the manifest list ----------------------------------------------------------

    def may_contain(self, m: ManifestFile) -> bool:
        if not (m.has_added_files() or m.has_existing_files()):
            return False
        if self.match_all or m.partitions is None:
            return True
        return self.spec_filter(m.partition_spec_id, m.manifest_path).manifest_evaluator.may_contain(m)

    def read(self, manifests: list[ManifestFile]) -> list[CachedManifest]:
        """The parsed manifests, in order (uncached ones maybe read in parallel: the cache's
        ``workers``)."""
        self.counters.manifests_read += len(manifests)
        return self.cache.parsed_manifests(manifests, self.specs)

    # -- level 2: entries --------------------------------------------------------------------

    def data_files(self, cm: CachedManifest, kept: _Kept) -> None:
        """Add the live data files of a manifest that may match, with their residuals."""
        c = self.counters
        c.data_files_total += len(cm.tasks)
        if self.match_all:
            kept.tasks.extend(cm.tasks)
            kept.files.extend(cm.files)
            kept.residuals.extend([MATCH_ALL] * len(cm.tasks))
            kept.note_sequence_number(cm.min_sequence_number)
            return
        residual_of = self.spec_filter(cm.spec_id, cm.path).residual
        metrics = self.metrics
        assert metrics is not None
        decided: list[BooleanExpression | None] = []
        skipped: list[int] = []  # by metrics
        for n, (task, file) in enumerate(zip(cm.tasks, cm.files, strict=True)):
            residual = residual_of(task.partition)
            decided.append(residual)
            if residual is None:
                c.skipped_by_partition += 1
            elif not metrics(file):
                skipped.append(n)
        if skipped and self.trust.name_mapped:  # again, with only the metrics of what is read
            trusted = self.trust.trusted([cm.files[n] for n in skipped])  # one footer look-up
            skipped = [n for n, file in zip(skipped, trusted, strict=True) if not metrics(file)]
        c.skipped_by_metrics += len(skipped)
        for n in skipped:
            decided[n] = None
        for task, file, residual in zip(cm.tasks, cm.files, decided, strict=True):
            if residual is not None:
                kept.tasks.append(task)
                kept.files.append(file)
                kept.residuals.append(residual)
                kept.note_sequence_number(task.data_sequence_number)

    def delete_files(self, cm: CachedManifest, min_data_seq: int) -> list[tuple[DeleteFile, DataFile]]:
        """The live delete files of a delete manifest that may apply and match the filter.

        Delete files older than every kept data file cannot apply to any (position deletes
        need a sequence number >= the data file's, equality deletes >): dropped here, as
        Java's ``DeleteFileIndex.Builder.afterSequenceNumber`` does."""
        pairs = [
            (d, f) for d, f in zip(cm.deletes, cm.files, strict=True) if d.sequence_number >= min_data_seq
        ]
        if self.match_all:
            return pairs
        residual_of = self.spec_filter(cm.spec_id, cm.path).residual
        if self.whole_files:  # the partition test matches the data files': kept
            return [(d, f) for d, f in pairs if residual_of(d.partition) is not None]
        metrics = self.metrics
        assert metrics is not None
        return [(d, f) for d, f in pairs if residual_of(d.partition) is not None and metrics(f)]

    # -- the whole plan ----------------------------------------------------------------------

    def plan(self, snapshot: Snapshot) -> tuple[FileScanTask, ...]:
        index = self.cache.snapshot_index(snapshot, self.metadata.format_version)
        c = self.counters
        c.manifests_total = len(index.rows)
        c.data_files_total = index.listed_data_files  # read manifests count their live entries
        if isinstance(self.bound, AlwaysFalse):
            return ()
        kept = _Kept()
        chosen = [m for m in self.data_candidates(index) if self.may_contain(m)]
        deletes = index.deletes
        # the delete manifests the data manifests' own sequence numbers do not rule out are
        # fetched with the first data manifests: in an object store, one round trip for both
        ahead = self.delete_candidates(deletes, min((m.min_sequence_number for m in chosen), default=0))
        with self.cache.prefetched([*chosen[:FETCH_BATCH], *ahead[:FETCH_BATCH]]):
            for start in range(0, len(chosen), FETCH_BATCH):
                batch = chosen[start : start + FETCH_BATCH]
                with self.cache.prefetched(batch) if start else nullcontext():
                    for m, cm in zip(batch, self.read(batch), strict=True):
                        c.data_files_total -= listed_files(m)
                        self.data_files(cm, kept)
            if not kept.tasks:
                return ()
            delete_index = self.delete_index(deletes, kept.min_sequence_number or 0) if deletes else None
        if delete_index is None:
            if self.match_all:
                return tuple(kept.tasks)
            return tuple(
                t if isinstance(r, AlwaysTrue) else _derive(t, residual=r)
                for t, r in zip(kept.tasks, kept.residuals, strict=True)
            )
        return tuple(map(partial(self.attach, delete_index), kept.tasks, kept.files, kept.residuals))

    def data_candidates(self, index: ManifestListIndex) -> list[ManifestFile]:
        """The data manifests worth testing one by one, in list order: those the list's
        index cannot rule out for the filter's projection onto their spec (all of them
        for a filter that requires nothing of an indexed partition field)."""
        if self.match_all:
            return [index.rows[i] for i in index.data]
        required: dict[int, dict[FieldKey, Bounds]] = {}
        for spec_id in index.by_spec:
            if spec_id in self.specs:  # an unknown spec is named when one of its manifests is read
                found = self.spec_filter(spec_id, "").required
                if found:
                    required[spec_id] = found
        return index.data_candidates(required)

    def delete_candidates(self, manifests: Sequence[ManifestFile], min_data_seq: int) -> list[ManifestFile]:
        """The delete manifests that may hold deletes of data files of sequence number
        ``min_data_seq`` or later (a lower ``min_data_seq`` keeps a superset)."""
        # no entry of a manifest is newer than the manifest
        return [m for m in manifests if not 0 <= m.sequence_number < min_data_seq and self.may_contain(m)]

    def delete_index(self, manifests: Sequence[ManifestFile], min_data_seq: int) -> DeleteIndex | None:
        """The deletes that may apply to the kept data files (None when there are none)."""
        chosen = self.delete_candidates(manifests, min_data_seq)
        pairs: list[tuple[DeleteFile, DataFile]] = []
        for cm in self.read(chosen):
            pairs.extend(self.delete_files(cm, min_data_seq))
        if not pairs:
            return None
        others = sorted(
            (s for s in self.metadata.schemas if s.schema_id != self.schema.schema_id),
            key=lambda s: s.schema_id,
            reverse=True,
        )
        return DeleteIndex.build(pairs, self.specs, [self.schema, *others])

    def attach(
        self, index: DeleteIndex, task: FileScanTask, file: DataFile, residual: BooleanExpression
    ) -> FileScanTask:
        dv, positions, equalities = index.for_data_file(
            task.path, task.data_sequence_number, task.spec_id, task.partition, file
        )
        if dv is None and not positions and not equalities:
            return task if isinstance(residual, AlwaysTrue) else _derive(task, residual=residual)
        applied = self.counters.applied
        for d in (dv, *positions, *equalities):
            if d is not None:
                applied[(d.path, d.content_offset)] = d
        return _derive(
            task,
            deletion_vector=dv,
            position_deletes=positions,
            equality_deletes=equalities,
            residual=residual,
        )


@dataclass
class _Kept:
    """The data files kept so far, as parallel lists (cheaper than a tuple per file)."""

    tasks: list[FileScanTask] = field(default_factory=list)
    files: list[DataFile] = field(default_factory=list)
    residuals: list[BooleanExpression] = field(default_factory=list)
    min_sequence_number: int | None = None

    def note_sequence_number(self, seq: int | None) -> None:
        if seq is not None and (self.min_sequence_number is None or seq < self.min_sequence_number):
            self.min_sequence_number = seq


def _derive(task: FileScanTask, **changes: Any) -> FileScanTask:
    """A copy of ``task`` with some fields changed.

    Equivalent to ``dataclasses.replace`` but about three times cheaper: the frozen
    dataclass's ``__init__`` sets every field through ``object.__setattr__``, and planning
    derives one task per kept file. The copy is as immutable as the original.
    """
    state = task.__dict__.copy()
    state.update(changes)
    new = object.__new__(FileScanTask)
    object.__setattr__(new, "__dict__", state)
    return new


def plan_scan(
    metadata: TableMetadata,
    *,
    snapshot: Snapshot | None = CURRENT,
    schema: Schema | None = None,
    row_filter: BooleanExpression = MATCH_ALL,
    case_sensitive: bool = True,
    cache: ManifestCache | None = None,
    field_ids_of: FieldIdsOf | None = None,
    whole_files: bool = False,
) -> ScanPlan:
    """Plan a scan of ``snapshot`` (default: the current one; None: an empty scan).

    ``schema`` is the schema rows are read with (see :func:`iceduck.scan.snapshots.resolve`,
    which picks both); by default the current schema for the current snapshot, else the
    snapshot's own. ``row_filter`` is unbound (column names); it is bound here, so an
    unknown column raises :class:`~iceduck.errors.NotFoundError`. Pass the connection's
    ``cache`` so manifests are parsed once per connection, and a plan is made once per
    snapshot, schema and filter (:mod:`iceduck.scan.plan_cache`): the same arguments then
    return the same (shared, immutable) plan.

    ``field_ids_of`` reads the field ids of data files (their footers through the name
    mapping): on a table with ``schema.name-mapping.default`` a file's metrics prune only
    for the fields it provides (:mod:`iceduck.scan.trusted_metrics`); without it, no metric
    of such a table prunes.

    ``whole_files``: the caller reads every row of the files kept, not only those matching
    ``row_filter`` (a copy-on-write rewrite keeps a file's other rows). Each task then lists
    every delete file that applies to it: an equality delete whose key bounds exclude the
    filter cannot delete a *matching* row, so a query's plan leaves it out, but it still
    deletes rows the rewrite would otherwise copy back.
    """
    if snapshot is CURRENT:
        snapshot = metadata.current_snapshot()
        schema = schema if schema is not None else metadata.schema()
    elif schema is None:
        schema = metadata.schema() if snapshot is None else schema_of_snapshot(metadata, snapshot)
    mapping = name_mapping(metadata)
    if snapshot is None:
        return ScanPlan(schema, None, (), bind(schema, row_filter, case_sensitive), ScanStats(), mapping)
    if cache is None:
        cache = ManifestCache()
        return _plan(metadata, snapshot, schema, row_filter, case_sensitive, cache, field_ids_of, whole_files)
    key = plan_key(metadata, snapshot, schema, row_filter, case_sensitive, mapping, field_ids_of is not None)
    return cache.plan(
        (*key, whole_files),
        lambda: _plan(
            metadata, snapshot, schema, row_filter, case_sensitive, cache, field_ids_of, whole_files
        ),
        _plan_weight,
    )


def _plan_weight(plan: ScanPlan) -> int:
    """What a cached plan counts against the manifest cache's bound (entries): its tasks are
    mostly the cached manifests' own objects, so it costs a reference per task plus the tasks
    derived for residuals and deletes; an eighth of an entry per task."""
    return len(plan.tasks) // 8 + 1


def _plan(
    metadata: TableMetadata,
    snapshot: Snapshot,
    schema: Schema,
    row_filter: BooleanExpression,
    case_sensitive: bool,
    cache: ManifestCache,
    field_ids_of: FieldIdsOf | None,
    whole_files: bool = False,
) -> ScanPlan:
    """The plan of one snapshot, made from the manifest index (see :func:`plan_scan`)."""
    bound = bind(schema, row_filter, case_sensitive)
    mapping = name_mapping(metadata)
    trust = MetricsTrust(mapping is not None, field_ids_of)
    planner = _Planner(metadata, schema, bound, case_sensitive, cache, trust, whole_files)
    tasks = planner.plan(snapshot)
    return ScanPlan(schema, snapshot.snapshot_id, tasks, bound, planner.counters.stats(len(tasks)), mapping)
