"""Build the benchmark's events table: the shape of the metadata-indexing post, as a real Iceberg v2 table.

The post's table is written by a streaming job, one commit per period, partitioned by
``days(event_time), bucket(N, device_id)``. Here: ``shape.days`` daily appends of
``shape.rows_per_day`` rows, partitioned by ``day(ts), bucket(8, device_id)``; each append
is one snapshot adding one manifest of 8 data files (one per bucket), so the full shape has
250 manifests and 2,000 data files, and the current manifest list carries all 250.

iceduck cannot write tables yet, so the table is assembled from iceduck's step-1 writers:

* Parquet data files written by DuckDB with Iceberg field ids (``FIELD_IDS``), one
  ``COPY ... PARTITION_BY`` for the whole table (one file per day and bucket; the partition
  columns are derived values, not table columns, so the files hold only table columns);
* column metrics (value/null counts, column sizes, lower/upper bounds serialized with
  ``iceduck.spec.values.to_bytes``) read from each Parquet footer with pyarrow;
* partition tuples from ``iceduck.spec.transforms`` (the bucket hash is Iceberg's/Spark's);
* ``write_manifest`` / ``write_manifest_list`` / ``write_table_metadata``;
* a row in the SQLite catalog ``<warehouse>/catalog.db`` (Spark's JDBC catalog layout,
  catalog name ``iceduck``), so iceduck, Spark and PyIceberg's SQL catalog find ``bench.events``.

The build is cached: ``<warehouse>/bench-events.json`` records the shape and the files; a
second :func:`build` with the same shape returns at once.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import sqlite3
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from iceduck.formats.manifest_list import write_manifest_list
from iceduck.formats.manifest_writer import write_manifest
from iceduck.formats.metadata_json import metadata_file_name, write_table_metadata
from iceduck.spec import values
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
from iceduck.spec.snapshot import (
    MAIN_BRANCH,
    RefType,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
)
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import BucketTransform, DayTransform
from iceduck.spec.types import (
    DoubleType,
    LongType,
    NestedField,
    PrimitiveType,
    StringType,
    TimestamptzType,
)

CATALOG_NAME = "iceduck"
NAMESPACE = "bench"
TABLE = "events"
MARKER = "bench-events.json"
#: bump when the generated data or metadata changes, so cached tables are rebuilt
GENERATOR_VERSION = 1
EVENT_TYPES = ("click", "view", "purchase", "error", "heartbeat")
MICROS_PER_DAY = 86_400_000_000

#: (field id, name, type) of the table's columns, all optional (as Spark creates them)
COLUMNS: tuple[tuple[int, str, PrimitiveType], ...] = (
    (1, "device_id", LongType()),
    (2, "ts", TimestamptzType()),
    (3, "v", DoubleType()),
    (4, "event_type", StringType()),
)
SCHEMA = Schema(tuple(NestedField(fid, name, ftype) for fid, name, ftype in COLUMNS))
COLUMN_TYPES: dict[str, tuple[int, PrimitiveType]] = {name: (fid, ftype) for fid, name, ftype in COLUMNS}
TYPES_BY_ID: dict[int, PrimitiveType] = {fid: ftype for fid, _, ftype in COLUMNS}

#: Spark's JDBC catalog tables (``jdbc.schema-version=V1``), as in Spark-written catalog.db files
CATALOG_DDL = (
    "CREATE TABLE IF NOT EXISTS iceberg_tables(catalog_name VARCHAR(255) NOT NULL,"
    "table_namespace VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,"
    "metadata_location VARCHAR(1000),previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5),"
    "PRIMARY KEY (catalog_name, table_namespace, table_name))",
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL,"
    "namespace VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, namespace, property_key))",
)


@dataclass(frozen=True)
class EventsShape:
    """How big the table is: ``days`` appends of ``rows_per_day`` rows from ``devices`` devices."""

    days: int = 250
    rows_per_day: int = 16_000
    buckets: int = 8
    devices: int = 1_000
    first_day: str = "2024-01-01"

    @property
    def first_epoch_day(self) -> int:
        return (date.fromisoformat(self.first_day) - date(1970, 1, 1)).days

    def spec(self) -> PartitionSpec:
        return PartitionSpec(
            0,
            (
                PartitionField(2, 1000, "ts_day", DayTransform()),
                PartitionField(1, 1001, "device_id_bucket", BucketTransform(self.buckets)),
            ),
        )


SCALES = {
    "full": EventsShape(),
    # 10x the metadata of "full" (2,500 manifests, 20,000 files) with about as many rows, so the
    # planner's scaling is measured rather than the data read; --rows-per-day raises it
    "10x": EventsShape(days=2_500, rows_per_day=2_000),
    "small": EventsShape(days=25, rows_per_day=1_600, devices=100),
}


@dataclass(frozen=True)
class EventsTable:
    """A built table: where it is and which file holds each (epoch day, bucket) partition."""

    warehouse: Path
    shape: EventsShape
    metadata_location: str
    #: ``"<epoch day>/<bucket>"`` -> data file path
    files: dict[str, str]

    @property
    def identifier(self) -> str:
        return f"{NAMESPACE}.{TABLE}"

    def file_for(self, epoch_day: int, bucket: int) -> str:
        return self.files[f"{epoch_day}/{bucket}"]

    def all_files(self) -> list[str]:
        return sorted(self.files.values())


def bucket_of(device_id: int, buckets: int) -> int:
    """The ``bucket(N, device_id)`` partition value (Iceberg's murmur3 bucket, as Spark computes it)."""
    return BucketTransform(buckets).apply(LongType())(device_id)


def build(
    warehouse: str | Path, shape: EventsShape, *, force: bool = False, quiet: bool = False
) -> EventsTable:
    """Create ``bench.events`` of ``shape`` under ``warehouse`` unless it is already there."""
    warehouse = Path(warehouse).resolve()
    cached = None if force else load(warehouse, shape)
    if cached is not None:
        return cached
    started = time.perf_counter()
    table_dir = warehouse / NAMESPACE / TABLE
    if table_dir.exists():
        shutil.rmtree(table_dir)
    (table_dir / "metadata").mkdir(parents=True)
    files = _write_data_files(table_dir / "data", shape)
    metadata_location = _write_metadata(table_dir, shape, files)
    _register(warehouse / "catalog.db", metadata_location)
    table = EventsTable(
        warehouse, shape, metadata_location, {f"{d}/{b}": p for (d, b), p in sorted(files.items())}
    )
    marker = {
        "generator": GENERATOR_VERSION,
        "shape": dataclasses.asdict(shape),
        "metadata_location": metadata_location,
        "files": table.files,
    }
    (warehouse / MARKER).write_text(json.dumps(marker, indent=1))
    if not quiet:
        print(f"built {table.identifier} ({shape}) in {time.perf_counter() - started:.1f} s")
    return table


def load(warehouse: str | Path, shape: EventsShape) -> EventsTable | None:
    """The table built earlier with exactly this shape, or None."""
    warehouse = Path(warehouse).resolve()
    try:
        marker = json.loads((warehouse / MARKER).read_text())
    except (OSError, ValueError):
        return None
    if marker.get("generator") != GENERATOR_VERSION or marker.get("shape") != dataclasses.asdict(shape):
        return None
    if not Path(marker["metadata_location"]).exists():
        return None
    return EventsTable(warehouse, shape, marker["metadata_location"], marker["files"])


# -- data files ------------------------------------------------------------------------------


def _write_data_files(data_dir: Path, shape: EventsShape) -> dict[tuple[int, int], str]:
    """Write every row with one partitioned COPY; returns (epoch day, bucket) -> file path.

    Rows are deterministic: row ``i`` of day ``d`` comes from device ``i % devices`` at a
    pseudo-random time of day, so every device has ``rows_per_day / devices`` events a day.
    """
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    # one file per partition: never close a partition's file early
    con.execute("SET partitioned_write_max_open_files = 1000000")
    buckets = [(d, bucket_of(d, shape.buckets)) for d in range(shape.devices)]
    con.execute("CREATE TEMP TABLE buckets(device_id BIGINT, device_id_bucket INTEGER)")
    con.executemany("INSERT INTO buckets VALUES (?, ?)", buckets)
    first = shape.first_epoch_day
    types = ", ".join(f"'{t}'" for t in EVENT_TYPES)
    field_ids = ", ".join(f"{name}: {fid}" for name, (fid, _) in COLUMN_TYPES.items())
    con.execute(
        f"""
        COPY (
            SELECT device_id, ts, v, event_type, strftime(ts, '%Y-%m-%d') AS ts_day, device_id_bucket
            FROM (
                SELECT (i % {shape.devices})::BIGINT AS device_id,
                       make_timestamp(d * {MICROS_PER_DAY}
                                      + (i * 2654435761 + d * 40503) % {MICROS_PER_DAY})::TIMESTAMPTZ AS ts,
                       ((i * 7919 + d * 104729) % 100000) / 100.0 AS v,
                       ([{types}])[1 + (i * 31 + d) % {len(EVENT_TYPES)}] AS event_type
                FROM range({first}, {first + shape.days}) r(d), range({shape.rows_per_day}) s(i)
            ) JOIN buckets USING (device_id)
            ORDER BY ts_day, device_id_bucket, ts
        ) TO '{data_dir}' (FORMAT parquet, PARTITION_BY (ts_day, device_id_bucket),
                           FILENAME_PATTERN '{{uuid}}', FIELD_IDS {{{field_ids}}})
        """
    )
    con.close()
    files: dict[tuple[int, int], str] = {}
    for path in sorted(data_dir.glob("ts_day=*/device_id_bucket=*/*.parquet")):
        day = (date.fromisoformat(path.parent.parent.name.split("=", 1)[1]) - date(1970, 1, 1)).days
        bucket = int(path.parent.name.split("=", 1)[1])
        if (day, bucket) in files:
            raise RuntimeError(f"DuckDB wrote two files for partition {day}/{bucket}")
        files[(day, bucket)] = str(path)
    return files


def data_file(path: str, epoch_day: int, bucket: int) -> DataFile:
    """The ``data_file`` of a Parquet file, with metrics from its footer (Iceberg's default
    ``truncate(16)`` metrics mode: bounds of strings cut to 16 characters)."""
    meta = pq.read_metadata(path)
    sizes: dict[int, int] = {}
    value_counts: dict[int, int] = {}
    null_counts: dict[int, int] = {}
    lower: dict[int, Any] = {}
    upper: dict[int, Any] = {}
    for rg_index in range(meta.num_row_groups):
        rg = meta.row_group(rg_index)
        for c in range(rg.num_columns):
            col = rg.column(c)
            field_id, ftype = COLUMN_TYPES[col.path_in_schema]
            sizes[field_id] = sizes.get(field_id, 0) + col.total_compressed_size
            value_counts[field_id] = value_counts.get(field_id, 0) + rg.num_rows
            stats = col.statistics
            if stats is None:
                continue
            null_counts[field_id] = null_counts.get(field_id, 0) + stats.null_count
            if stats.has_min_max:
                lo, hi = _physical(ftype, stats.min_raw), _physical(ftype, stats.max_raw)
                if field_id not in lower or values.compare(ftype, lo, lower[field_id]) < 0:
                    lower[field_id] = lo
                if field_id not in upper or values.compare(ftype, hi, upper[field_id]) > 0:
                    upper[field_id] = hi
    lower_bytes = {}
    upper_bytes = {}
    for field_id, lo in lower.items():
        ftype = TYPES_BY_ID[field_id]
        lower_bytes[field_id] = values.to_bytes(ftype, values.truncate_lower_bound(ftype, lo))
        hi = values.truncate_upper_bound(ftype, upper[field_id])
        if hi is not None:
            upper_bytes[field_id] = values.to_bytes(ftype, hi)
    return DataFile(
        content=FileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=(epoch_day, bucket),
        record_count=meta.num_rows,
        file_size_in_bytes=Path(path).stat().st_size,
        column_sizes=sizes,
        value_counts=value_counts,
        null_value_counts=null_counts,
        lower_bounds=lower_bytes,
        upper_bounds=upper_bytes,
        split_offsets=[meta.row_group(i).column(0).data_page_offset for i in range(meta.num_row_groups)],
    )


def _physical(ftype: PrimitiveType, raw: Any) -> Any:
    """A Parquet statistic in the physical type -> iceduck's value for ``ftype``."""
    if isinstance(ftype, StringType):
        return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    return raw


# -- metadata --------------------------------------------------------------------------------


def _write_metadata(table_dir: Path, shape: EventsShape, files: dict[tuple[int, int], str]) -> str:
    """One snapshot per day: a manifest of that day's files, and a manifest list carrying
    every earlier manifest plus the new one (newest first, as Java writes them)."""
    spec = shape.spec()
    rng = random.Random(f"{shape}")
    metadata_dir = table_dir / "metadata"
    snapshots: list[Snapshot] = []
    manifests: list[ManifestFile] = []
    parent: int | None = None
    total_records = total_size = total_files = 0
    for index in range(shape.days):
        epoch_day = shape.first_epoch_day + index
        sequence_number = index + 1
        snapshot_id = rng.getrandbits(63) or 1
        day_files = [
            data_file(files[(epoch_day, b)], epoch_day, b)
            for b in range(shape.buckets)
            if (epoch_day, b) in files
        ]
        entries = [ManifestEntry(EntryStatus.ADDED, snapshot_id, df) for df in day_files]
        manifest_uuid = uuid.UUID(int=rng.getrandbits(128), version=4)
        manifest_path = str(metadata_dir / f"{manifest_uuid}-m0.avro")
        data, row = write_manifest(
            entries, spec, SCHEMA, 2, ManifestContent.DATA, snapshot_id, path=manifest_path
        )
        Path(manifest_path).write_bytes(data)
        manifests.insert(0, row)
        list_path = str(metadata_dir / f"snap-{snapshot_id}-1-{manifest_uuid}.avro")
        Path(list_path).write_bytes(write_manifest_list(manifests, 2, snapshot_id, parent, sequence_number))
        manifests[0] = dataclasses.replace(
            row, sequence_number=sequence_number, min_sequence_number=sequence_number
        )
        added_records = sum(df.record_count for df in day_files)
        added_size = sum(df.file_size_in_bytes for df in day_files)
        total_records += added_records
        total_size += added_size
        total_files += len(day_files)
        summary = {
            "operation": "append",
            "added-data-files": str(len(day_files)),
            "added-records": str(added_records),
            "added-files-size": str(added_size),
            "changed-partition-count": str(len(day_files)),
            "total-records": str(total_records),
            "total-files-size": str(total_size),
            "total-data-files": str(total_files),
            "total-delete-files": "0",
            "total-position-deletes": "0",
            "total-equality-deletes": "0",
        }
        # committed five minutes after the day ends, as a daily batch would be
        timestamp_ms = (epoch_day + 1) * 86_400_000 + 300_000
        snapshots.append(
            Snapshot(snapshot_id, timestamp_ms, summary, parent, sequence_number, list_path, schema_id=0)
        )
        parent = snapshot_id
    return _write_table_metadata(table_dir, shape, spec, snapshots, rng)


def _write_table_metadata(
    table_dir: Path, shape: EventsShape, spec: PartitionSpec, snapshots: list[Snapshot], rng: random.Random
) -> str:
    last = snapshots[-1]
    md = TableMetadata(
        format_version=2,
        table_uuid=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        location=str(table_dir),
        last_updated_ms=last.timestamp_ms,
        last_column_id=SCHEMA.highest_field_id,
        schemas=(SCHEMA,),
        current_schema_id=0,
        partition_specs=(spec,),
        default_spec_id=0,
        last_partition_id=spec.last_assigned_field_id,
        sort_orders=(UNSORTED,),
        default_sort_order_id=0,
        last_sequence_number=last.sequence_number,
        properties={"write.parquet.compression-codec": "snappy", "created-by": "iceduck bench/events.py"},
        current_snapshot_id=last.snapshot_id,
        snapshots=tuple(snapshots),
        snapshot_log=tuple(SnapshotLogEntry(s.timestamp_ms, s.snapshot_id) for s in snapshots),
        refs={MAIN_BRANCH: SnapshotRef(last.snapshot_id, RefType.BRANCH)},
    )
    name = metadata_file_name(shape.days, file_uuid=str(uuid.UUID(int=rng.getrandbits(128), version=4)))
    path = table_dir / "metadata" / name
    path.write_bytes(write_table_metadata(md))
    return str(path)


def _register(catalog_db: Path, metadata_location: str) -> None:
    """Point ``iceduck.bench.events`` at ``metadata_location`` in the shared SQLite catalog."""
    con = sqlite3.connect(catalog_db)
    try:
        with con:
            for ddl in CATALOG_DDL:
                con.execute(ddl)
            con.execute(
                "INSERT OR REPLACE INTO iceberg_namespace_properties VALUES (?, ?, 'exists', 'true')",
                (CATALOG_NAME, NAMESPACE),
            )
            con.execute(
                "INSERT OR REPLACE INTO iceberg_tables VALUES (?, ?, ?, ?, NULL, 'TABLE')",
                (CATALOG_NAME, NAMESPACE, TABLE, metadata_location),
            )
    finally:
        con.close()


# -- query parameters --------------------------------------------------------------------------


@dataclass(frozen=True)
class PointQuery:
    """One device over ten hours of one day (the post's debugging query)."""

    device_id: int
    epoch_day: int
    start_us: int
    end_us: int

    @property
    def start_text(self) -> str:
        return _ts_text(self.start_us)

    @property
    def end_text(self) -> str:
        return _ts_text(self.end_us)


def point_query(shape: EventsShape) -> PointQuery:
    """Device 74 (the post's) from 10:00 to 20:00 UTC on a day four fifths into the table."""
    epoch_day = shape.first_epoch_day + (shape.days * 4) // 5
    start = epoch_day * MICROS_PER_DAY + 10 * 3_600_000_000
    return PointQuery(74 % shape.devices, epoch_day, start, start + 10 * 3_600_000_000)


def _ts_text(micros: int) -> str:
    """A timestamptz literal in UTC, as DuckDB, Spark and sqlglot parse it."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f+00:00")
