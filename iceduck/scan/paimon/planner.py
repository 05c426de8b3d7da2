"""Plan a Paimon table scan: the live data files of a snapshot, pruned, in splits.

Follows Paimon's own readers (Java ``FileStoreScan``, ``KeyValueFileStoreScan``,
``AppendOnlyFileStoreScan``, ``MergeTreeSplitGenerator``; pypaimon ``read/scanner``):

* the files of a snapshot are the entries of its base manifest list then its delta
  manifest list, ADD and DELETE "in an orderly manner ... The last version should be
  read" (seed 004): :func:`~iceduck.spec.paimon.manifest.merge_entries`;
* a manifest is skipped when its ``_PARTITION_STATS`` ("beneficial for skipping certain
  manifest files during queries") rule the filter out, an entry when its partition value
  does, a data file when its ``_KEY_STATS`` or ``_VALUE_STATS`` do (:mod:`.stats`);
* on a primary-key table a value-column condition may only prune when the scan leaves
  level-0 files out (``KeyValueFileStoreScan``: with level 0 present, dropping the file
  holding a key's newest version would resurrect an older one); otherwise only the
  conditions on partition and key fields prune;
* a primary-key batch scan leaves level-0 files out when deletion vectors are enabled
  (unless ``deletion-vectors.merge-on-read``) or the merge engine is ``first-row``
  (``CoreOptions.batchScanSkipLevel0``);
* a table in postpone bucket mode (``bucket`` -2) keeps new files in bucket -2 until a
  compaction moves them; batch scans read only the real buckets (``onlyReadRealBuckets``);
* deletion vectors come from the snapshot's index manifest (``DELETION_VECTORS``
  entries per partition and bucket, a range of one index file per data file);
* splits are per (partition, bucket); a primary-key split is read raw (no merge) when
  every file sits above level 0 with no delete rows and either deletion vectors are
  enabled, the merge engine is ``first-row``, or all files share one level
  (``MergeTreeSplitGenerator``'s "raw convertible" rule); append-only splits are raw.

An entry is also skipped when the filter pins the bucket key to values that hash to
other buckets (``BucketSelectConverter``; :mod:`.buckets`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from iceduck.formats.paimon.manifests import read_index_manifest, read_manifest, read_manifest_list
from iceduck.formats.paimon.paths import data_file_path, index_file_path
from iceduck.formats.paimon.table_files import read_schema
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.paimon.buckets import bucket_selector
from iceduck.scan.paimon.filters import restrict_filter
from iceduck.scan.paimon.stats import exact_metrics, stats_metrics, value_stats_fields
from iceduck.scan.paimon.tasks import (
    MATCH_ALL,
    DeletionVector,
    PaimonFile,
    PaimonScanPlan,
    PaimonScanStats,
    PaimonSplit,
)
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.metrics_evaluator import InclusiveMetricsEvaluator
from iceduck.spec.expressions.predicates import AlwaysTrue, BooleanExpression, rewrite_not
from iceduck.spec.paimon.binary_row import decode_row
from iceduck.spec.paimon.iceberg_bridge import iceberg_schema
from iceduck.spec.paimon.manifest import ManifestEntry, ManifestFileMeta, live_files, merge_index_entries
from iceduck.spec.paimon.schema import DataField, TableSchema
from iceduck.spec.paimon.snapshot import Snapshot
from iceduck.spec.schema import Schema

T = TypeVar("T")

DELETION_VECTORS_INDEX = "DELETION_VECTORS"
#: ``bucket`` = -2, Paimon's postpone bucket mode
POSTPONE_BUCKET = -2


def plan_paimon_scan(
    table: str,
    snapshot: Snapshot | None,
    schema: TableSchema,
    row_filter: BooleanExpression = MATCH_ALL,
    cache: ManifestCache | None = None,
) -> PaimonScanPlan:
    """Plan reading ``table`` (its folder) at ``snapshot`` (None: the table is empty)
    with ``schema`` (the snapshot's schema, whose columns the rows get), pruning with
    ``row_filter`` (an Iceberg expression over :func:`iceberg_schema` of ``schema``).
    ``cache`` keeps parsed manifests and schemas for the next scans of the session."""
    if snapshot is None:
        return PaimonScanPlan(table, schema, None, (), {schema.id: schema}, row_filter)
    return PaimonPlanner(table, schema, row_filter, cache).plan(snapshot)


@dataclass
class _Counts:
    manifests_total: int = 0
    manifests_skipped: int = 0
    files_total: int = 0
    by_partition: int = 0
    by_bucket: int = 0
    by_stats: int = 0
    level0: int = 0
    postponed: int = 0


@dataclass
class PaimonPlanner:
    """One scan's planning: the snapshot's manifests read, entries merged and pruned
    (:meth:`entry_may_match`), splits cut per partition and bucket, each marked
    :meth:`raw_convertible` or to be merged; :attr:`counts` says what was skipped by what."""

    table: str
    schema: TableSchema
    row_filter: BooleanExpression
    cache: ManifestCache | None
    counts: _Counts = field(default_factory=_Counts)
    schemas: dict[int, TableSchema] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = self.schema
        self.schemas[s.id] = s
        self.ice: Schema = iceberg_schema(s)
        self.read_fields = {f.field_id: f for f in self.ice.fields}
        by_name = {f.name: f for f in s.fields}
        self.partition_fields: list[DataField] = list(s.partition_fields)
        self.is_pk = bool(s.primary_keys)
        engine = s.merge_engine
        dv = s.deletion_vectors_enabled
        merge_on_read = s.options.get("deletion-vectors.merge-on-read", "false").lower() == "true"
        self.dv_enabled = dv
        self.first_row = engine == "first-row"
        self.skip_level0 = self.is_pk and ((dv and not merge_on_read) or self.first_row)
        #: ``bucket`` -2: new files wait in bucket -2 until compaction moves them to real buckets
        self.postpone = s.bucket == POSTPONE_BUCKET
        bound = rewrite_not(bind(self.ice, self.row_filter))
        part_ids = {f.id for f in self.partition_fields}
        key_ids = {by_name[k].id for k in s.primary_keys if k in by_name}
        self.partition_eval = _evaluator(self.ice, restrict_filter(bound, part_ids))
        self.key_eval = (
            _evaluator(self.ice, restrict_filter(bound, key_ids | part_ids)) if self.is_pk else None
        )
        value_filter = bound if (not self.is_pk or self.skip_level0) else MATCH_ALL
        self.value_eval = _evaluator(self.ice, value_filter)
        self.buckets = bucket_selector(s, bound)
        self._partitions: dict[bytes, tuple[Any, ...]] = {}

    # -- cached reads ------------------------------------------------------------------------

    def _cached(self, key: tuple[Any, ...], load: Callable[[], T], weight: Callable[[T], int]) -> T:
        if self.cache is None:
            return load()
        return self.cache.get_or_load(("paimon", self.table, *key), load, weight)

    def _manifest_list(self, name: str) -> list[ManifestFileMeta]:
        return self._cached(("list", name), lambda: read_manifest_list(self.table, name), len)

    def _manifest(self, name: str) -> list[ManifestEntry]:
        return self._cached(("manifest", name), lambda: read_manifest(self.table, name), len)

    def file_schema(self, schema_id: int) -> TableSchema:
        found = self.schemas.get(schema_id)
        if found is None:
            found = self._cached(
                ("schema", schema_id), lambda: read_schema(self.table, schema_id), lambda _: 1
            )
            self.schemas[schema_id] = found
        return found

    def _manifest_path(self, name: str) -> str:
        return posixpath.join(self.table, "manifest", name)

    # -- planning ----------------------------------------------------------------------------

    def plan(self, snapshot: Snapshot) -> PaimonScanPlan:
        metas = [
            *self._manifest_list(snapshot.base_manifest_list),
            *self._manifest_list(snapshot.delta_manifest_list),
        ]
        c = self.counts
        c.manifests_total = len(metas)
        entries: list[ManifestEntry] = []
        for meta in metas:
            if not self._manifest_may_match(meta):
                c.manifests_skipped += 1
                continue
            entries.extend(self._manifest(meta.file_name))
        live = live_files(entries, self.table)
        c.files_total = len(live)
        kept = [e for e in live if self.entry_may_match(e)]
        vectors = self._deletion_vectors(snapshot)
        splits = self._splits(kept, vectors)
        stats = PaimonScanStats(
            manifests_total=c.manifests_total,
            manifests_read=c.manifests_total - c.manifests_skipped,
            manifests_skipped=c.manifests_skipped,
            files_total=c.files_total,
            files_read=sum(len(s.files) for s in splits),
            files_skipped_by_partition=c.by_partition,
            files_skipped_by_bucket=c.by_bucket,
            files_skipped_by_stats=c.by_stats,
            level0_files_skipped=c.level0,
            postponed_files_skipped=c.postponed,
            deletion_vectors_applied=sum(1 for s in splits for f in s.files if f.deletion_vector is not None),
            splits_merged=sum(1 for s in splits if not s.raw),
            splits_raw=sum(1 for s in splits if s.raw),
        )
        return PaimonScanPlan(
            self.table, self.schema, snapshot.id, tuple(splits), dict(self.schemas), self.row_filter, stats
        )

    def _manifest_may_match(self, meta: ManifestFileMeta) -> bool:
        if self.partition_eval is None or not self.partition_fields:
            return True
        files = meta.num_added_files + meta.num_deleted_files
        metrics = stats_metrics(
            meta.partition_stats,
            self.partition_fields,
            self.read_fields,
            max(files, 1),
            self._manifest_path(meta.file_name),
            value_counts=False,
        )
        return self.partition_eval.may_match(metrics)

    def partition(self, data: bytes, path: str) -> tuple[Any, ...]:
        found = self._partitions.get(data)
        if found is None:
            types = [f.type for f in self.partition_fields]
            found = self._partitions[data] = tuple(decode_row(data, types, path)) if types else ()
        return found

    def entry_may_match(self, e: ManifestEntry) -> bool:
        """Whether ``e``'s file may hold rows the filter keeps (counted by why not)."""
        c, f = self.counts, e.file
        if self.skip_level0 and f.level == 0:
            c.level0 += 1
            return False
        if self.postpone and e.bucket < 0:
            c.postponed += 1
            return False
        path = self.table
        if self.partition_eval is not None and self.partition_fields:
            values = self.partition(e.partition, path)
            if not self.partition_eval.may_match(
                exact_metrics(self.partition_fields, values, self.read_fields, path)
            ):
                c.by_partition += 1
                return False
        if self.buckets is not None and not self.buckets.may_contain(e.bucket, e.total_buckets):
            c.by_bucket += 1
            return False
        file_schema = self.file_schema(f.schema_id)
        if self.key_eval is not None:
            keys = file_schema.trimmed_primary_key_fields  # the "_KEY_<k>" columns _KEY_STATS describe
            metrics = stats_metrics(f.key_stats, keys, self.read_fields, f.row_count, f.file_name)
            if not self.key_eval.may_match(metrics):
                c.by_stats += 1
                return False
        if self.value_eval is not None:
            cols = (
                f.value_stats_cols if f.value_stats_cols is not None or f.write_cols is None else f.write_cols
            )
            stat_fields = value_stats_fields(file_schema.fields, cols, f.file_name)
            metrics = stats_metrics(f.value_stats, stat_fields, self.read_fields, f.row_count, f.file_name)
            if not self.value_eval.may_match(metrics):
                c.by_stats += 1
                return False
        return True

    def _deletion_vectors(self, snapshot: Snapshot) -> dict[tuple[bytes, int], dict[str, DeletionVector]]:
        """(partition bytes, bucket) -> data file name -> its deletion vector, from the
        index manifest's live ``DELETION_VECTORS`` entries (ADD/DELETE in order)."""
        if not snapshot.index_manifest:
            return {}
        name = snapshot.index_manifest
        entries = self._cached(("index", name), lambda: read_index_manifest(self.table, name), len)
        out: dict[tuple[bytes, int], dict[str, DeletionVector]] = {}
        for e in merge_index_entries(entries):
            if e.index_type != DELETION_VECTORS_INDEX:
                continue
            # beside the data files under index-file-in-data-file-dir: the partition's folder
            location = index_file_path(self.table, e, self.schema, self.partition(e.partition, self.table))
            files = out.setdefault((e.partition, e.bucket), {})
            for r in e.dv_ranges or ():
                files[r.data_file] = DeletionVector(location, r)
        return out

    def _splits(
        self, entries: Sequence[ManifestEntry], vectors: dict[tuple[bytes, int], dict[str, DeletionVector]]
    ) -> list[PaimonSplit]:
        groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e)
        splits = []
        for (partition_bytes, bucket), group in groups.items():
            partition = self.partition(partition_bytes, self.table)
            dvs = vectors.get((partition_bytes, bucket), {})
            files = tuple(
                PaimonFile(
                    path=data_file_path(self.table, self.schema, partition, bucket, e.file),
                    file_name=e.file.file_name,
                    schema_id=e.file.schema_id,
                    level=e.file.level,
                    row_count=e.file.row_count,
                    file_size=e.file.file_size,
                    min_sequence_number=e.file.min_sequence_number,
                    max_sequence_number=e.file.max_sequence_number,
                    delete_row_count=e.file.delete_row_count,
                    file_format=_file_format(e.file.file_name),
                    deletion_vector=dvs.get(e.file.file_name),
                )
                for e in group
            )
            splits.append(PaimonSplit(partition, bucket, files, self.raw_convertible(files)))
        return splits

    def raw_convertible(self, files: Sequence[PaimonFile]) -> bool:
        """Paimon's "raw convertible" split (``MergeTreeSplitGenerator``): no merge needed."""
        if not self.is_pk:
            return True
        # "withoutDeleteRow": an unrecorded delete count may hide deletes
        convertible = all(f.level != 0 and f.delete_row_count == 0 for f in files)
        one_level = len({f.level for f in files}) == 1
        return convertible and (self.dv_enabled or self.first_row or one_level)


def _evaluator(schema: Schema, expr: BooleanExpression) -> InclusiveMetricsEvaluator | None:
    return None if isinstance(expr, AlwaysTrue) else InclusiveMetricsEvaluator(schema, expr)


def _file_format(file_name: str) -> str:
    """``data-<uuid>-<n>.<format>``: Paimon names data files with their format's extension."""
    _, dot, ext = file_name.rpartition(".")
    return ext.lower() if dot else "parquet"
