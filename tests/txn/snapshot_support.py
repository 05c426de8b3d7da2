"""Small real tables for the snapshot producer's tests: Parquet data files with field ids
(written by pyarrow), position delete files and deletion vectors, table metadata in a
temporary folder, and reading rows back through the planner and the engine."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.engine.read import scan_to_arrow
from iceduck.formats.puffin import write_deletion_vectors
from iceduck.io.fileio import to_local_path
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import plan_scan
from iceduck.spec.deletion_vector import DeletionVector
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import LongType, NestedField, StringType
from iceduck.txn.snapshot import SnapshotChanges, produce

SCHEMA = Schema(
    (NestedField(1, "id", LongType(), required=False), NestedField(2, "s", StringType(), required=False)),
    schema_id=0,
)
UNPARTITIONED = PartitionSpec(0, ())
BY_S = PartitionSpec(0, (PartitionField(2, 1000, "s", parse_transform("identity")),))
DELETE_FILE_PATH_ID = 2147483546
DELETE_POS_ID = 2147483545


def new_table(root: Path, format_version: int = 2, partitioned: bool = False) -> TableMetadata:
    """Empty table metadata located at ``root`` (as Java's newTableMetadata would build it)."""
    spec = BY_S if partitioned else UNPARTITIONED
    (root / "data").mkdir(parents=True, exist_ok=True)
    return TableMetadata(
        format_version=format_version,
        table_uuid=str(uuid.uuid4()),
        location=str(root),
        last_updated_ms=1_700_000_000_000,
        last_column_id=2,
        schemas=(SCHEMA,),
        current_schema_id=0,
        partition_specs=(spec,),
        default_spec_id=0,
        last_partition_id=1000 if partitioned else 999,
        sort_orders=(UNSORTED,),
        default_sort_order_id=0,
        next_row_id=0 if format_version >= 3 else None,
    )


def _field(name: str, typ: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, typ, nullable=True, metadata={"PARQUET:field_id": str(fid)})


def write_data(md: TableMetadata, ids: list[int], s: str) -> DataFile:
    """A Parquet data file of rows ``(id, s)``; partitioned tables get partition ``(s,)``."""
    path = f"{md.location}/data/{uuid.uuid4().hex}.parquet"
    schema = pa.schema([_field("id", pa.int64(), 1), _field("s", pa.string(), 2)])
    pq.write_table(pa.table({"id": ids, "s": [s] * len(ids)}, schema=schema), path)
    spec = md.spec()
    return DataFile(
        content=FileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=(s,) if spec.fields else (),
        record_count=len(ids),
        file_size_in_bytes=Path(to_local_path(path)).stat().st_size,  # a file: location too
        spec_id=spec.spec_id,
    )


def write_position_deletes(md: TableMetadata, target: DataFile, positions: list[int]) -> DataFile:
    """A v2 position delete file for one data file (``referenced_data_file`` set)."""
    path = f"{md.location}/data/{uuid.uuid4().hex}-deletes.parquet"
    schema = pa.schema(
        [_field("file_path", pa.string(), DELETE_FILE_PATH_ID), _field("pos", pa.int64(), DELETE_POS_ID)]
    )
    table = pa.table({"file_path": [target.file_path] * len(positions), "pos": positions}, schema=schema)
    pq.write_table(table, path)
    bound = target.file_path.encode()
    return DataFile(
        content=FileContent.POSITION_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=target.partition,
        record_count=len(positions),
        file_size_in_bytes=Path(to_local_path(path)).stat().st_size,  # a file: location too
        lower_bounds={DELETE_FILE_PATH_ID: bound},
        upper_bounds={DELETE_FILE_PATH_ID: bound},
        referenced_data_file=target.file_path,
        spec_id=target.spec_id,
    )


def write_dvs(md: TableMetadata, targets: dict[str, tuple[DataFile, list[int]]]) -> list[DataFile]:
    """One Puffin file with a DV per target (name -> (data file, deleted positions))."""
    path = f"{md.location}/data/{uuid.uuid4().hex}-deletes.puffin"
    pairs = [(f.file_path, DeletionVector(positions)) for f, positions in targets.values()]
    data, blobs = write_deletion_vectors(pairs, created_by="iceduck tests")
    Path(path).write_bytes(data)
    out = []
    for (f, _), blob in zip(targets.values(), blobs, strict=True):
        out.append(
            DataFile(
                content=FileContent.POSITION_DELETES,
                file_path=path,
                file_format=FileFormat.PUFFIN,
                partition=f.partition,
                record_count=int(blob.properties["cardinality"]),
                file_size_in_bytes=len(data),
                referenced_data_file=f.file_path,
                content_offset=blob.offset,
                content_size_in_bytes=blob.length,
                spec_id=f.spec_id,
            )
        )
    return out


def commit(md: TableMetadata, changes: SnapshotChanges, cache: ManifestCache, **kw: Any) -> TableMetadata:
    return produce(md, changes, table_location=md.location, cache=cache, **kw).metadata


def rows(
    md: TableMetadata, cache: ManifestCache, snapshot: Snapshot | None = None, extra_ids: tuple[int, ...] = ()
) -> list[tuple[Any, ...]]:
    """Sorted rows of the current (or given) snapshot, read by the planner and the engine."""
    plan = plan_scan(md, cache=cache) if snapshot is None else plan_scan(md, snapshot=snapshot, cache=cache)
    con = duckdb.connect()
    try:
        table = scan_to_arrow(con, plan, field_ids=[1, 2, *extra_ids])
    finally:
        con.close()
    return sorted(zip(*(table.column(i).to_pylist() for i in range(table.num_columns)), strict=True))
