"""Small Iceberg tables written with iceduck's own writers, for planner tests and benchmarks.

:class:`TableBuilder` commits snapshots the way Java's fast append and row delta do: each
commit writes its new manifests (entries with null sequence numbers, to be inherited),
then a manifest list holding the parent's manifests plus the new ones, with the next
sequence number. Only metadata is written: data and delete file paths are names, which
is all planning looks at.

:func:`events_table` builds the metadata-indexing post's events table: partitioned by
``day(ts), bucket(8, device_id)``, one manifest per daily append; :func:`late_events_table`
the same when data arrives up to a few days late, so daily manifests overlap in time.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iceduck.formats.manifest_list import assign_first_row_ids, read_manifest_list, write_manifest_list
from iceduck.formats.manifests import write_manifest
from iceduck.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import MAIN_BRANCH, RefType, Snapshot, SnapshotLogEntry, SnapshotRef
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import DoubleType, LongType, NestedField, TimestamptzType

DELETE_FILE_PATH_ID = 2147483546
T0_MS = 1_700_000_000_000


def long_bound(v: int) -> bytes:
    return struct.pack("<q", v)


def double_bound(v: float) -> bytes:
    return struct.pack("<d", v)


def data_file(
    path: str,
    partition: tuple[Any, ...] = (),
    record_count: int = 10,
    *,
    content: FileContent = FileContent.DATA,
    lower: dict[int, bytes] | None = None,
    upper: dict[int, bytes] | None = None,
    value_counts: dict[int, int] | None = None,
    null_counts: dict[int, int] | None = None,
    nan_counts: dict[int, int] | None = None,
    equality_ids: Sequence[int] | None = None,
    referenced_data_file: str | None = None,
    file_format: FileFormat = FileFormat.PARQUET,
    content_offset: int | None = None,
    content_size_in_bytes: int | None = None,
) -> DataFile:
    return DataFile(
        content=content,
        file_path=path,
        file_format=file_format,
        partition=tuple(partition),
        record_count=record_count,
        file_size_in_bytes=100 + record_count,
        value_counts=value_counts,
        null_value_counts=null_counts,
        nan_value_counts=nan_counts,
        lower_bounds=lower,
        upper_bounds=upper,
        equality_ids=list(equality_ids) if equality_ids is not None else None,
        referenced_data_file=referenced_data_file,
        content_offset=content_offset,
        content_size_in_bytes=content_size_in_bytes,
    )


def position_deletes(
    path: str, partition: tuple[Any, ...] = (), *, targets: Sequence[str] = (), record_count: int = 1
) -> DataFile:
    """A position delete file; ``targets`` give the ``file_path`` column's bounds."""
    lower = upper = None
    if targets:
        lower = {DELETE_FILE_PATH_ID: min(t.encode() for t in targets)}
        upper = {DELETE_FILE_PATH_ID: max(t.encode() for t in targets)}
    return data_file(
        path, partition, record_count, content=FileContent.POSITION_DELETES, lower=lower, upper=upper
    )


def deletion_vector(puffin: str, target: str, partition: tuple[Any, ...] = (), offset: int = 4) -> DataFile:
    return data_file(
        puffin,
        partition,
        1,
        content=FileContent.POSITION_DELETES,
        file_format=FileFormat.PUFFIN,
        referenced_data_file=target,
        content_offset=offset,
        content_size_in_bytes=40,
    )


def equality_deletes(
    path: str, partition: tuple[Any, ...] = (), ids: Sequence[int] = (1,), **kw: Any
) -> DataFile:
    return data_file(path, partition, kw.pop("record_count", 1), content=FileContent.EQUALITY_DELETES,
                     equality_ids=ids, **kw)  # fmt: skip


@dataclass
class TableBuilder:
    """Commits snapshots of a table whose metadata lives under ``root``."""

    root: Path
    schema: Schema
    specs: tuple[PartitionSpec, ...] = (PartitionSpec(0, ()),)
    format_version: int = 2
    default_spec_id: int = 0
    schemas: list[Schema] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    snapshot_log: list[SnapshotLogEntry] = field(default_factory=list)
    refs: dict[str, SnapshotRef] = field(default_factory=dict)
    manifests_of: dict[int, list[ManifestFile]] = field(default_factory=dict)
    last_sequence_number: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    next_row_id: int = 0
    _next_id: int = 1000

    def __post_init__(self) -> None:
        if not self.schemas:
            self.schemas = [self.schema]
        (self.root / "metadata").mkdir(parents=True, exist_ok=True)

    def spec(self, spec_id: int | None = None) -> PartitionSpec:
        wanted = self.default_spec_id if spec_id is None else spec_id
        return next(s for s in self.specs if s.spec_id == wanted)

    def _path(self, prefix: str) -> str:
        return str(self.root / "metadata" / f"{prefix}-{uuid.uuid4().hex}.avro")

    def write_manifest(
        self,
        entries: Iterable[ManifestEntry],
        content: ManifestContent = ManifestContent.DATA,
        spec_id: int | None = None,
        snapshot_id: int = -1,
    ) -> ManifestFile:
        path = self._path("m")
        data, mf = write_manifest(
            list(entries),
            self.spec(spec_id),
            self.schema,
            self.format_version,
            content,
            snapshot_id,
            path=path,
        )
        Path(path).write_bytes(data)
        return mf

    def commit(
        self,
        data: Sequence[DataFile] = (),
        deletes: Sequence[DataFile] = (),
        *,
        spec_id: int | None = None,
        branch: str = MAIN_BRANCH,
        extra_manifests: Sequence[ManifestFile] = (),
        replace_manifests: Sequence[ManifestFile] | None = None,
        timestamp_ms: int | None = None,
        schema_id: int | None = None,
        operation: str = "append",
    ) -> Snapshot:
        """One snapshot on ``branch``: a data manifest for ``data``, a delete manifest for
        ``deletes`` (both ADDED, sequence numbers inherited), on top of the branch head's
        manifests (or ``replace_manifests``)."""
        snapshot_id = self._next_id
        self._next_id += 1
        parent = self.refs.get(branch)
        new: list[ManifestFile] = []
        if data:
            entries = [ManifestEntry(EntryStatus.ADDED, None, df) for df in data]
            new.append(self.write_manifest(entries, ManifestContent.DATA, spec_id, snapshot_id))
        if deletes:
            entries = [ManifestEntry(EntryStatus.ADDED, None, df) for df in deletes]
            new.append(self.write_manifest(entries, ManifestContent.DELETES, spec_id, snapshot_id))
        new = [replace(m, added_snapshot_id=snapshot_id) for m in new]
        new.extend(extra_manifests)
        if replace_manifests is not None:
            previous = list(replace_manifests)
        else:
            previous = self.manifests_of[parent.snapshot_id] if parent else []
        seq = self.last_sequence_number + 1
        listing = self._path(f"snap-{snapshot_id}")
        first_row_id = self.next_row_id if self.format_version >= 3 else None
        if first_row_id is not None:
            _, self.next_row_id = assign_first_row_ids(new + previous, first_row_id)
        Path(listing).write_bytes(
            write_manifest_list(
                new + previous,
                self.format_version,
                snapshot_id,
                parent.snapshot_id if parent else None,
                seq,
                first_row_id,
            )
        )
        self.manifests_of[snapshot_id] = read_manifest_list(Path(listing).read_bytes(), listing)
        self.last_sequence_number = seq
        ts = timestamp_ms if timestamp_ms is not None else T0_MS + 1000 * len(self.snapshots)
        snapshot = Snapshot(
            snapshot_id=snapshot_id,
            timestamp_ms=ts,
            summary={"operation": operation},
            parent_snapshot_id=parent.snapshot_id if parent else None,
            sequence_number=seq if self.format_version >= 2 else 0,
            manifest_list=listing,
            schema_id=self.schema.schema_id if schema_id is None else schema_id,
            first_row_id=first_row_id,
            added_rows=None if first_row_id is None else self.next_row_id - first_row_id,
        )
        self.snapshots.append(snapshot)
        self.refs[branch] = SnapshotRef(snapshot_id, RefType.BRANCH)
        if branch == MAIN_BRANCH:
            self.snapshot_log.append(SnapshotLogEntry(ts, snapshot_id))
        return snapshot

    def tag(self, name: str, snapshot_id: int) -> None:
        self.refs[name] = SnapshotRef(snapshot_id, RefType.TAG)

    def set_schema(self, schema: Schema) -> None:
        self.schemas.append(schema)
        self.schema = schema

    @property
    def metadata(self) -> TableMetadata:
        main = self.refs.get(MAIN_BRANCH)
        return TableMetadata(
            format_version=self.format_version,
            table_uuid=str(uuid.UUID(int=1)),
            location=str(self.root),
            last_updated_ms=T0_MS,
            last_column_id=max(s.highest_field_id for s in self.schemas),
            schemas=tuple(self.schemas),
            current_schema_id=self.schema.schema_id,
            partition_specs=tuple(self.specs),
            default_spec_id=self.default_spec_id,
            last_partition_id=max((s.last_assigned_field_id for s in self.specs), default=999),
            sort_orders=(UNSORTED,),
            default_sort_order_id=0,
            last_sequence_number=self.last_sequence_number,
            properties=dict(self.properties),
            current_snapshot_id=main.snapshot_id if main else None,
            snapshots=tuple(self.snapshots),
            snapshot_log=tuple(self.snapshot_log),
            refs=dict(self.refs),
            next_row_id=self.next_row_id if self.format_version >= 3 else None,
        )


# -- the metadata-indexing post's events table -----------------------------------------------

EVENTS_SCHEMA = Schema(
    (
        NestedField(1, "ts", TimestamptzType(), required=False),
        NestedField(2, "device_id", LongType(), required=False),
        NestedField(3, "v", DoubleType(), required=False),
    ),
    schema_id=0,
)
EVENTS_SPEC = PartitionSpec(
    0,
    (
        PartitionField(1, 1000, "ts_day", parse_transform("day")),
        PartitionField(2, 1001, "device_id_bucket", parse_transform("bucket[8]")),
    ),
)
DAY_MICROS = 86_400_000_000
EVENTS_DAY0 = 19_700  # 2023-12-09
EVENTS_DEVICES = 1000


def _devices_by_bucket(buckets: int) -> dict[int, list[int]]:
    bucket = parse_transform(f"bucket[{buckets}]").apply(LongType())
    out: dict[int, list[int]] = {b: [] for b in range(buckets)}
    for device in range(EVENTS_DEVICES):
        out[bucket(device)].append(device)
    return out


def _events_file(root: Path, d: int, b: int, devices: list[int], per_file: int) -> DataFile:
    """The file of day ``EVENTS_DAY0 + d`` and bucket ``b``: ``ts`` bounds span the day,
    ``device_id`` bounds the bucket's devices, ``v`` in [0, 1)."""
    day = EVENTS_DAY0 + d
    start, end = day * DAY_MICROS, (day + 1) * DAY_MICROS - 1
    return data_file(
        f"{root}/data/ts_day={day}/device_id_bucket={b}/{d:05d}-{b}.parquet",
        (day, b),
        per_file,
        lower={1: long_bound(start), 2: long_bound(min(devices)), 3: double_bound(0.0)},
        upper={1: long_bound(end), 2: long_bound(max(devices)), 3: double_bound(0.999)},
        value_counts={1: per_file, 2: per_file, 3: per_file},
        null_counts={1: 0, 2: 0, 3: 0},
        nan_counts={3: 0},
    )


def events_table(
    root: Path, days: int = 30, buckets: int = 8, rows_per_day: int = 16_000, *, history: bool = True
) -> TableBuilder:
    """One append per day, one file per (day, bucket), Spark-like metrics on every column.

    Each file holds one day's events for its bucket's devices. Without ``history`` only
    the last snapshot is written (same manifests, one manifest list: much faster).
    """
    devices = _devices_by_bucket(buckets)
    per_file = rows_per_day // buckets
    commits = [[_events_file(root, d, b, devices[b], per_file) for b in range(buckets)] for d in range(days)]
    return _events_commits(root, commits, history)


def late_events_table(root: Path, days: int = 30, lag: int = 3, buckets: int = 8) -> TableBuilder:
    """The events table when data arrives late: the file of day ``d`` and bucket ``b`` is
    committed ``(7d + 3b) % (lag + 1)`` days late, so each daily manifest spans up to
    ``lag + 1`` days and consecutive manifests overlap in ``ts_day``. One snapshot."""
    devices = _devices_by_bucket(buckets)
    commits: list[list[DataFile]] = [[] for _ in range(days + lag)]
    for d in range(days):
        for b in range(buckets):
            commits[d + (7 * d + 3 * b) % (lag + 1)].append(_events_file(root, d, b, devices[b], 2000))
    return _events_commits(root, [c for c in commits if c], history=False)


def _events_commits(root: Path, commits: list[list[DataFile]], history: bool) -> TableBuilder:
    """One append per list of files (or, without ``history``, their manifests in one snapshot)."""
    table = TableBuilder(root, EVENTS_SCHEMA, (EVENTS_SPEC,))
    manifests: list[ManifestFile] = []
    for d, files in enumerate(commits):
        if history:
            table.commit(files, timestamp_ms=T0_MS + d * 86_400_000)
            continue
        entries = [ManifestEntry(EntryStatus.ADDED, None, f) for f in files]
        mf = table.write_manifest(entries, snapshot_id=1000 + d)
        manifests.append(
            replace(mf, added_snapshot_id=1000 + d, sequence_number=d + 1, min_sequence_number=d + 1)
        )
    if not history:
        table._next_id = 1000 + len(commits)
        table.last_sequence_number = len(commits)
        table.commit(extra_manifests=manifests[::-1], timestamp_ms=T0_MS + len(commits) * 86_400_000)
    return table
