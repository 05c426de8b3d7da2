"""Store ``fixed(L)`` columns as Parquet ``fixed_len_byte_array(L)`` (spec, Appendix A:
"fixed(L) | fixed_len_byte_array[L]").

DuckDB has no fixed-length byte type and writes such columns as ``binary``. Iceberg Java's
row reader accepts that, but Spark's vectorised reader does not (it fails with
``FixedSizeBinaryVector cannot be cast to BaseVariableWidthVector``, checked), so a file
DuckDB wrote for a table with fixed columns is rewritten here with pyarrow, row group by
row group, the fixed columns cast to ``fixed_size_binary(L)``. Field ids, key-value
metadata, uuid annotations and every other column are kept.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.spec.schema import Schema
from iceduck.spec.types import FixedType, IcebergType, ListType, MapType, StructType

_FIELD_ID = b"PARQUET:field_id"


def has_fixed(t: IcebergType | Schema) -> bool:
    """Whether a fixed type appears anywhere in ``t``."""
    if isinstance(t, Schema):
        return any(has_fixed(f.field_type) for f in t.fields)
    if isinstance(t, FixedType):
        return True
    if isinstance(t, StructType | ListType | MapType):
        return any(has_fixed(f.field_type) for f in t.fields)
    return False


def _retyped(field: pa.Field, schema: Schema) -> pa.Field:
    fid = int(field.metadata[_FIELD_ID]) if field.metadata and _FIELD_ID in field.metadata else None
    iceberg = schema.find_field_or_none(fid) if fid is not None else None
    t = field.type
    if iceberg is not None and isinstance(iceberg.field_type, FixedType):
        return field.with_type(pa.binary(iceberg.field_type.length))
    if pa.types.is_struct(t):
        return field.with_type(pa.struct([_retyped(t.field(i), schema) for i in range(t.num_fields)]))
    if pa.types.is_map(t):
        key, item = _retyped(t.key_field, schema), _retyped(t.item_field, schema)
        return field.with_type(pa.map_(key, item))
    if pa.types.is_list(t):
        return field.with_type(pa.list_(_retyped(t.value_field, schema)))
    return field


def rewrite_fixed_columns(path: str, schema: Schema, compression: str) -> None:
    """Rewrite the Parquet file at local ``path`` with its fixed columns as
    ``fixed_len_byte_array``; ``compression`` is a pyarrow codec name."""
    source = pq.ParquetFile(path)
    arrow = source.schema_arrow
    target = pa.schema([_retyped(f, schema) for f in arrow], metadata=arrow.metadata)
    tmp = f"{path}.fixed.tmp"
    try:
        with pq.ParquetWriter(
            tmp, target, compression=compression, store_schema=False, store_decimal_as_integer=True
        ) as writer:
            for i in range(source.num_row_groups):
                writer.write_table(source.read_row_group(i).cast(target), row_group_size=None)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
