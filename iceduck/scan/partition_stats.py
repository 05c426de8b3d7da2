"""Per-partition counts of one snapshot, from its manifests alone (no data file is read).

What a partition statistics file holds, computed in full as Iceberg Java 1.10's
``PartitionStatsHandler`` does when no earlier statistics file exists (iceduck always
computes in full; Java may instead update an earlier snapshot's file incrementally, with
the same result):

* every entry of the snapshot's manifests (data and delete) is grouped by its spec id and
  its partition tuple projected into the table's unified partition type (the spec: "a
  struct containing all fields that have ever been a part of any spec in the table and
  sorted by the field ids in ascending order");
* a live entry adds to its group's counts: a data file to ``data_record_count``,
  ``data_file_count`` and ``total_data_file_size_in_bytes``; a position-delete file's
  records to ``position_delete_record_count`` ("Count of records in position delete files
  and deletion vectors") and to ``dv_count`` when it is a deletion vector (Puffin), else to
  ``position_delete_file_count`` ("ignoring deletion vectors"); an equality-delete file to
  the equality counts;
* a live or DELETED entry moves ``last_updated_at``/``last_updated_snapshot_id`` to its
  snapshot when that snapshot is newer (an expired snapshot is skipped). So, as in Java, a
  partition whose last files this snapshot removed still has a row, with zero counts;
* ``total_record_count`` -- "Accurate count of records in a partition after applying
  deletes" -- is always NULL, as Java writes it ("implementations may omit this field and
  must write NULL"). The spec encourages filling it in for partitions without deletes, but
  Java 1.10's incremental computation carries an earlier file's value forward without
  adding the records of newer files (probed with Spark: iceduck's 10 stayed 10 after an
  insert made it 11), so a value iceduck wrote would become a wrong one in the next file
  Spark computes from it.

Rows are sorted by partition, nulls first (the spec's order), then spec id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.scan.metadata.partitioning import projectors, table_partition_type
from iceduck.scan.metadata.reader import ManifestSource, snapshot_manifests
from iceduck.spec import values
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import StructType


@dataclass
class PartitionStats:
    """One row of a partition statistics file."""

    partition: tuple[Any, ...]
    spec_id: int
    data_record_count: int = 0
    data_file_count: int = 0
    total_data_file_size_in_bytes: int = 0
    position_delete_record_count: int = 0
    position_delete_file_count: int = 0
    equality_delete_record_count: int = 0
    equality_delete_file_count: int = 0
    last_updated_at: int | None = None
    last_updated_snapshot_id: int | None = None
    dv_count: int = 0

    def add_live(self, df: DataFile) -> None:
        if df.content is FileContent.DATA:
            self.data_record_count += df.record_count
            self.data_file_count += 1
            self.total_data_file_size_in_bytes += df.file_size_in_bytes
        elif df.content is FileContent.POSITION_DELETES:
            self.position_delete_record_count += df.record_count
            if df.file_format is FileFormat.PUFFIN:
                self.dv_count += 1
            else:
                self.position_delete_file_count += 1
        else:
            self.equality_delete_record_count += df.record_count
            self.equality_delete_file_count += 1

    def touched_by(self, snapshot: Snapshot) -> None:
        if self.last_updated_at is None or snapshot.timestamp_ms > self.last_updated_at:
            self.last_updated_at = snapshot.timestamp_ms
            self.last_updated_snapshot_id = snapshot.snapshot_id

    def row(self, format_version: int) -> tuple[Any, ...]:
        """The row in the file's column order (:func:`~iceduck.formats.partition_stats_file.stats_schema`)."""
        counts = (
            self.partition,
            self.spec_id,
            self.data_record_count,
            self.data_file_count,
            self.total_data_file_size_in_bytes,
            self.position_delete_record_count,
            self.position_delete_file_count,
            self.equality_delete_record_count,
            self.equality_delete_file_count,
            None,  # total_record_count (module docstring)
            self.last_updated_at,
            self.last_updated_snapshot_id,
        )
        return (*counts, self.dv_count) if format_version >= 3 else counts


def is_partitioned(metadata: TableMetadata) -> bool:
    """Whether any spec of the table partitions (Java's ``Partitioning.isPartitioned``)."""
    return any(not spec.is_unpartitioned for spec in metadata.partition_specs)


def partition_stats(
    metadata: TableMetadata, snapshot: Snapshot, source: ManifestSource
) -> tuple[StructType, list[PartitionStats]]:
    """The unified partition type and the sorted per-partition statistics of ``snapshot``
    (module docstring); UnsupportedError for a table that was never partitioned."""
    if not is_partitioned(metadata):
        raise UnsupportedError("partition statistics need a partitioned table: it has no partition field")
    partition_type = table_partition_type(metadata)
    project = projectors(partition_type, metadata)
    snapshots = {s.snapshot_id: s for s in metadata.snapshots}
    specs = metadata.specs_by_id()
    groups: dict[Any, PartitionStats] = {}
    for manifest in snapshot_manifests(snapshot, source, metadata.format_version):
        for entry in source.manifest(manifest, specs):
            df = entry.data_file
            projection = project.get(df.spec_id)
            if projection is None:
                raise CorruptDataError(
                    f"file {df.file_path} has partition spec {df.spec_id}, unknown to the table",
                    manifest.manifest_path,
                )
            _, tuple_ = projection(df.partition)
            # Java keys by Comparators.forType: NaN equals NaN, -0.0 differs from 0.0
            key = (df.spec_id, values.sort_key(partition_type, tuple_))
            group = groups.get(key)
            if group is None:
                group = groups[key] = PartitionStats(tuple_, df.spec_id)
            if entry.is_live:
                group.add_live(df)
            found = snapshots.get(entry.snapshot_id) if entry.snapshot_id is not None else None
            if found is not None:
                group.touched_by(found)
    ordered = sorted(groups.items(), key=lambda item: (item[0][1], item[0][0]))
    return partition_type, [group for _, group in ordered]
