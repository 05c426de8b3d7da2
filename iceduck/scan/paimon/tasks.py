"""The plain-data contract between the Paimon scan planner and the engine.

Planning (:mod:`iceduck.scan.paimon.planner`) reads a snapshot's manifests and ends here:
a :class:`PaimonScanPlan` of :class:`PaimonSplit` rows, one per (partition, bucket), each
a list of :class:`PaimonFile` to read and whether they must be merged by primary key.
The engine (:mod:`iceduck.engine.paimon_read`) turns the plan into one DuckDB SELECT and
never reads a manifest; the planner never imports DuckDB. Everything is immutable data,
so a plan can be printed by EXPLAIN and compared in tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iceduck.spec.expressions.predicates import AlwaysTrue, BooleanExpression
from iceduck.spec.paimon.manifest import DeletionVectorRange
from iceduck.spec.paimon.schema import TableSchema

#: frozen, so one instance serves as every default
MATCH_ALL: BooleanExpression = AlwaysTrue()


@dataclass(frozen=True)
class DeletionVector:
    """One data file's deletion vector: where it lies in a deletion-vector index file."""

    index_path: str
    range: DeletionVectorRange


@dataclass(frozen=True)
class PaimonFile:
    """One data file to read, with what reading it correctly needs."""

    path: str
    file_name: str
    #: the schema version the file was written with (``_SCHEMA_ID``): its columns are
    #: matched by name in that version, then mapped to the read schema by field id
    schema_id: int
    level: int
    row_count: int
    file_size: int
    min_sequence_number: int
    max_sequence_number: int
    #: ``_DELETE_ROW_COUNT``; None when the writer did not record it (older writers)
    delete_row_count: int | None
    #: the file format, from the file name's extension (``data-<uuid>-0.parquet``)
    file_format: str
    deletion_vector: DeletionVector | None = None


@dataclass(frozen=True)
class PaimonSplit:
    """The files of one (partition, bucket) that a scan reads together.

    ``raw`` splits are read file by file as they are (Paimon's "raw convertible"
    splits); the others are merged by primary key with the table's merge engine.
    """

    partition: tuple[Any, ...]
    bucket: int
    files: tuple[PaimonFile, ...]
    raw: bool


@dataclass(frozen=True)
class PaimonScanStats:
    """Planning counters, shown by EXPLAIN."""

    manifests_total: int = 0
    manifests_read: int = 0
    manifests_skipped: int = 0
    files_total: int = 0
    files_read: int = 0
    files_skipped_by_partition: int = 0
    #: files of buckets the filter's bucket-key values do not hash to
    files_skipped_by_bucket: int = 0
    files_skipped_by_stats: int = 0
    #: level-0 files a primary-key table's batch scan leaves out (deletion vectors
    #: enabled, or the first-row merge engine: Paimon's ``batchScanSkipLevel0``)
    level0_files_skipped: int = 0
    #: files a ``bucket`` = -2 (postpone) table holds in its not yet compacted bucket -2,
    #: which Paimon's batch scans do not read (``onlyReadRealBuckets``)
    postponed_files_skipped: int = 0
    deletion_vectors_applied: int = 0
    splits_merged: int = 0
    splits_raw: int = 0


@dataclass(frozen=True)
class PaimonScanPlan:
    """The result of planning one Paimon table scan."""

    #: the table's folder
    table: str
    #: the schema rows are read with (the snapshot's for time travel): output columns
    schema: TableSchema
    snapshot_id: int | None
    splits: tuple[PaimonSplit, ...]
    #: every schema version a planned file was written with, by id
    file_schemas: dict[int, TableSchema] = field(default_factory=dict, hash=False)
    row_filter: BooleanExpression = MATCH_ALL
    stats: PaimonScanStats = PaimonScanStats()

    @property
    def files(self) -> tuple[PaimonFile, ...]:
        return tuple(f for s in self.splits for f in s.files)

    def explain_lines(self, max_files: int = 10) -> list[str]:
        """What planning read and skipped, in the form of the Iceberg EXPLAIN lines."""
        s = self.stats
        kind = "primary-key" if self.schema.primary_keys else "append-only"
        lines = [f"Paimon scan of {self.table} ({kind})"]
        snapshot = (
            "none (the table has no snapshot: empty)" if self.snapshot_id is None else str(self.snapshot_id)
        )
        lines.append(f"  snapshot: {snapshot}")
        lines.append(f"  schema id: {self.schema.id}")
        pushed = "none" if isinstance(self.row_filter, AlwaysTrue) else str(self.row_filter)
        lines.append(f"  pushed filter: {pushed}")
        lines.append(
            f"  manifests: {s.manifests_total} total, {s.manifests_read} read, {s.manifests_skipped} skipped"
        )
        skipped = (
            s.files_skipped_by_partition
            + s.files_skipped_by_bucket
            + s.files_skipped_by_stats
            + s.level0_files_skipped
            + s.postponed_files_skipped
        )
        reasons = [
            f"{s.files_skipped_by_partition} by partition",
            f"{s.files_skipped_by_bucket} by bucket",
            f"{s.files_skipped_by_stats} by key/value stats",
            f"{s.level0_files_skipped} at level 0",
        ]
        if s.postponed_files_skipped:
            reasons.append(f"{s.postponed_files_skipped} postponed")
        lines.append(f"  data files: {s.files_read} read, {skipped} skipped ({', '.join(reasons)})")
        files = self.files
        lines.append(f"  rows in files read: {sum(f.row_count for f in files)}")
        lines.append(f"  deletion vectors applied: {s.deletion_vectors_applied}")
        lines.append(f"  splits: {s.splits_merged} merged, {s.splits_raw} read raw")
        if 0 < len(files) <= max_files:
            lines.append("  files read:")
            for f in files:
                dv = ", deletion vector" if f.deletion_vector is not None else ""
                lines.append(f"    {f.path} (level {f.level}, {f.row_count} rows{dv})")
        return lines
