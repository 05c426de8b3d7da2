"""The partition statistics file: its schema (with the spec's field ids), writing, reading.

The spec ("Partition Statistics File"): "Statistics information for each unique partition
tuple is stored as a row in any of the data file format of the table (for example, Parquet
or ORC). These rows must be sorted (in ascending manner with NULL FIRST) by ``partition``
field". Its columns, by field id:

====  ==============================  ======  ================================  =========
 id   name                            type    v1/v2                             v3
====  ==============================  ======  ================================  =========
 1    partition                       struct  required                          required
 2    spec_id                         int     required                          required
 3    data_record_count               long    required                          required
 4    data_file_count                 int     required                          required
 5    total_data_file_size_in_bytes   long    required                          required
 6    position_delete_record_count    long    optional                          required
 7    position_delete_file_count      int     optional                          required
 8    equality_delete_record_count    long    optional                          required
 9    equality_delete_file_count      int     optional                          required
 10   total_record_count              long    optional                          optional
 11   last_updated_at                 long    optional                          optional
 12   last_updated_snapshot_id        long    optional                          optional
 13   dv_count                        int     (absent)                          required
====  ==============================  ======  ================================  =========

"partition data tuple's schema is based on the partition spec output using partition field
ids for the struct field ids", the unified partition type of all the table's specs. The
columns are written in Java's order (``PartitionStatsHandler.schema``), which is the field
id order; readers match them by field id. Only Parquet is written (iceduck writes no ORC
or Avro data files either).
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.errors import UnsupportedError
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

_FIELD_ID = b"PARQUET:field_id"

#: (field id, name, type, required on v1/v2, required on v3); dv_count is v3 only
_COLUMNS: tuple[tuple[int, str, IcebergType, bool, bool], ...] = (
    (2, "spec_id", IntegerType(), True, True),
    (3, "data_record_count", LongType(), True, True),
    (4, "data_file_count", IntegerType(), True, True),
    (5, "total_data_file_size_in_bytes", LongType(), True, True),
    (6, "position_delete_record_count", LongType(), False, True),
    (7, "position_delete_file_count", IntegerType(), False, True),
    (8, "equality_delete_record_count", LongType(), False, True),
    (9, "equality_delete_file_count", IntegerType(), False, True),
    (10, "total_record_count", LongType(), False, False),
    (11, "last_updated_at", LongType(), False, False),
    (12, "last_updated_snapshot_id", LongType(), False, False),
)
_DV_COUNT = NestedField(13, "dv_count", IntegerType(), required=True)

#: the count columns of a row after ``partition``, in :func:`stats_schema` order
COLUMN_NAMES: tuple[str, ...] = tuple(name for _, name, _, _, _ in _COLUMNS)


def stats_schema(partition_type: StructType, format_version: int) -> StructType:
    """The file's schema for a table of ``format_version`` (module docstring)."""
    if not partition_type.fields:
        raise UnsupportedError("a partition statistics file needs a partitioned table")
    v3 = format_version >= 3
    fields = [NestedField(1, "partition", partition_type, required=True)]
    fields += [NestedField(i, n, t, required=r3 if v3 else r2) for i, n, t, r2, r3 in _COLUMNS]
    if v3:
        fields.append(_DV_COUNT)
    return StructType(tuple(fields))


def write_stats_file(schema: StructType, rows: Sequence[Sequence[Any]]) -> bytes:
    """The Parquet bytes of ``rows`` (tuples in ``schema``'s field order, the partition a
    tuple of Python partition values), with every column carrying its field id."""
    arrow_schema = pa.schema([_arrow_field(f) for f in schema.fields])
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in schema.fields]
    arrays = [
        pa.array([_convert(f.field_type, v) for v in col], type=af.type)
        for f, af, col in zip(schema.fields, arrow_schema, columns, strict=True)
    ]
    table = pa.Table.from_arrays(arrays, schema=arrow_schema)
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd")
    return out.getvalue()


def read_stats_file(data: bytes) -> pa.Table:
    """A partition statistics file (iceduck's or another writer's) with its columns named as
    the spec names their field ids, whatever the file calls them; a column the file lacks
    (v1/v2 files have no ``dv_count``) is absent."""
    table = pq.read_table(io.BytesIO(data))
    names = {i: n for i, n, _, _, _ in _COLUMNS} | {1: "partition", 13: "dv_count"}
    renamed = []
    for field in table.schema:
        field_id = int((field.metadata or {}).get(_FIELD_ID, b"0"))
        renamed.append(names.get(field_id, field.name))
    return table.rename_columns(renamed)


_PRIMITIVES: dict[type, pa.DataType] = {
    BooleanType: pa.bool_(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    DateType: pa.date32(),
    TimeType: pa.time64("us"),
    TimestampType: pa.timestamp("us"),
    TimestamptzType: pa.timestamp("us", tz="UTC"),
    TimestampNanoType: pa.timestamp("ns"),
    TimestamptzNanoType: pa.timestamp("ns", tz="UTC"),
    StringType: pa.string(),
    BinaryType: pa.binary(),
    UUIDType: pa.binary(16),
}


def _arrow_type(t: IcebergType) -> pa.DataType:
    """Iceberg's Parquet mapping for partition values: a uuid is a 16-byte fixed."""
    if isinstance(t, StructType):
        return pa.struct([_arrow_field(f) for f in t.fields])
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    found = _PRIMITIVES.get(type(t))
    if found is None:
        raise UnsupportedError(f"a partition value of type {t} cannot be written to partition statistics")
    return found


def _arrow_field(f: NestedField) -> pa.Field:
    metadata = {_FIELD_ID: str(f.field_id).encode()}
    return pa.field(f.name, _arrow_type(f.field_type), nullable=not f.required, metadata=metadata)


def _convert(t: IcebergType, value: Any) -> Any:
    """A Python value as pyarrow takes it (partition tuples -> dicts, UUIDs -> bytes)."""
    if value is None:
        return None
    if isinstance(t, StructType):
        return {f.name: _convert(f.field_type, v) for f, v in zip(t.fields, value, strict=True)}
    if isinstance(t, UUIDType) and isinstance(value, uuid.UUID):
        return value.bytes
    return value
