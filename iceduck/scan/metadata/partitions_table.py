"""``partitions``: per partition, the counts and sizes of its live files in one snapshot.

As Iceberg Java 1.10's ``PartitionsTable``: every live entry of the snapshot's manifests
(data and delete) is grouped by its tuple projected into the table's partition type --
together with how many of that type's fields the file's spec has, so files of different
specs never share a row even when their projected values are equal. Per group:

* data files add to ``record_count``, ``file_count`` and ``total_data_file_size_in_bytes``;
  position-delete files (deletion vectors too) and equality-delete files to their own
  record and file counts;
* ``last_updated_at``/``last_updated_snapshot_id`` come from the latest commit among the
  entries' snapshots (expired snapshots are skipped), and ``spec_id`` from the file of that
  commit (first one seen on a tie; 0 if every snapshot was expired).

An unpartitioned table has one row (when it has files) without ``partition``/``spec_id``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.scan.metadata.partitioning import projectors, table_partition_type
from iceduck.scan.metadata.reader import ManifestSource, snapshot_manifests
from iceduck.spec import values
from iceduck.spec.manifest import DataFile, FileContent
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata

Row = tuple[Any, ...]


@dataclass
class _Partition:
    values: tuple[Any, ...]
    spec_id: int = 0
    record_count: int = 0
    file_count: int = 0
    data_size: int = 0
    pos_delete_records: int = 0
    pos_delete_files: int = 0
    eq_delete_records: int = 0
    eq_delete_files: int = 0
    last_updated_at: int | None = None
    last_updated_snapshot_id: int | None = None

    def update(self, df: DataFile, snapshot: Snapshot | None) -> None:
        if snapshot is not None:
            committed = snapshot.timestamp_ms * 1000
            if self.last_updated_at is None or committed > self.last_updated_at:
                self.spec_id = df.spec_id
                self.last_updated_at = committed
                self.last_updated_snapshot_id = snapshot.snapshot_id
        if df.content is FileContent.DATA:
            self.record_count += df.record_count
            self.file_count += 1
            self.data_size += df.file_size_in_bytes
        elif df.content is FileContent.POSITION_DELETES:
            self.pos_delete_records += df.record_count
            self.pos_delete_files += 1
        else:
            self.eq_delete_records += df.record_count
            self.eq_delete_files += 1

    def counts(self) -> Row:
        return (
            self.record_count,
            self.file_count,
            self.data_size,
            self.pos_delete_records,
            self.pos_delete_files,
            self.eq_delete_records,
            self.eq_delete_files,
            self.last_updated_at,
            self.last_updated_snapshot_id,
        )


def partitions_rows(metadata: TableMetadata, snapshot: Snapshot | None, source: ManifestSource) -> list[Row]:
    """The rows of ``partitions`` for ``snapshot`` (none without one)."""
    if snapshot is None:
        return []
    partition_type = table_partition_type(metadata)
    partitioned = bool(partition_type.fields)
    project = projectors(partition_type, metadata)
    snapshots = {s.snapshot_id: s for s in metadata.snapshots}
    specs = metadata.specs_by_id()
    groups: dict[Any, _Partition] = {}
    for m in snapshot_manifests(snapshot, source, metadata.format_version):
        for entry in source.manifest(m, specs):
            if not entry.is_live:
                continue
            df = entry.data_file
            if partitioned:
                if df.spec_id not in project:
                    raise CorruptDataError(
                        f"file {df.file_path} has partition spec {df.spec_id}, unknown to the table",
                        m.manifest_path,
                    )
                count, tuple_ = project[df.spec_id](df.partition)
                # Java compares keys with Comparators.forType: NaN equals NaN, -0.0 != 0.0.
                key: Any = (count, values.sort_key(partition_type, tuple_))
            else:
                tuple_, key = (), ()
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Partition(tuple_)
            found = snapshots.get(entry.snapshot_id) if entry.snapshot_id is not None else None
            group.update(df, found)
    if not partitioned:
        return [g.counts() for g in groups.values()]
    return [(g.values, g.spec_id, *g.counts()) for g in groups.values()]
