"""Iceberg types and values -> Arrow, the way Spark 3.5 shows Iceberg metadata tables.

A metadata table is described, as in Iceberg Java, by an Iceberg struct (field names,
required/optional, types); this module turns that struct into a ``pyarrow.Schema`` and
rows of Python values (the representation of :mod:`iceduck.spec.types`) into a
``pyarrow.Table``. Required fields become non-nullable Arrow fields, as Spark's schema
marks them ``nullable = false``.

Type mapping (Spark's ``SparkSchemaUtil`` conversion, then Spark's Arrow conversion):

=====================  =====================================  ===========================
Iceberg                Spark 3.5                              Arrow
=====================  =====================================  ===========================
timestamptz            TimestampType (session time zone)      ``timestamp('us', 'UTC')``
timestamp              TimestampNTZType                       ``timestamp('us')``
uuid                   StringType                             ``string``
fixed(L), binary       BinaryType                             ``binary``
date                   DateType                               ``date32``
list<T>                ArrayType                              ``list<element: T>``
map<K, V>              MapType                                ``map<K, V>``
=====================  =====================================  ===========================

Types Spark cannot show (time, the nanosecond timestamps, geometry/geography, unknown)
get their natural Arrow types: ``time64('us')``, ``timestamp('ns'[, 'UTC'])``, ``binary``
(WKB) and ``null``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from iceduck.errors import UnsupportedError
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

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
    UUIDType: pa.string(),
    BinaryType: pa.binary(),
    FixedType: pa.binary(),
    GeometryType: pa.binary(),
    GeographyType: pa.binary(),
    UnknownType: pa.null(),
}

#: a function from a Python value (never None) to what ``pyarrow.array`` accepts
Converter = Callable[[Any], Any]


def arrow_type(t: IcebergType) -> pa.DataType:
    """The Arrow type Spark's schema of an Iceberg type maps to (module docstring)."""
    if isinstance(t, StructType):
        return pa.struct([arrow_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(arrow_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(arrow_type(t.key_type), arrow_field(t.value_field))
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    found = _PRIMITIVES.get(type(t))
    if found is None:
        raise UnsupportedError(f"type {t} cannot be shown in a metadata table")
    return found


def arrow_field(f: NestedField) -> pa.Field:
    return pa.field(f.name, arrow_type(f.field_type), nullable=not f.required)


def arrow_schema(struct: StructType) -> pa.Schema:
    return pa.schema([arrow_field(f) for f in struct.fields])


def converter(t: IcebergType) -> Converter | None:
    """How to hand a value of ``t`` to pyarrow; None when it takes the value as it is.

    Ints already are Arrow's physical timestamp/date/time units; only UUIDs (shown as
    strings, as Spark does) and nested values that contain them or maps (dicts -> pairs)
    and structs (tuples whose children need converting) need work.
    """
    if isinstance(t, UUIDType):
        return str
    if isinstance(t, StructType):
        children = [converter(f.field_type) for f in t.fields]
        if all(c is None for c in children):
            return None
        return lambda value: tuple(
            v if v is None or c is None else c(v) for v, c in zip(value, children, strict=True)
        )
    if isinstance(t, ListType):
        element = converter(t.element_type)
        if element is None:
            return None
        return lambda value: [None if v is None else element(v) for v in value]
    if isinstance(t, MapType):
        key = converter(t.key_type) or _identity
        item = converter(t.value_type) or _identity
        return lambda value: [(key(k), None if v is None else item(v)) for k, v in value.items()]
    return None


def _identity(value: Any) -> Any:
    return value


def column(t: IcebergType, values: Sequence[Any]) -> pa.Array:
    """One Arrow column of type ``t`` from Python values (None = null)."""
    convert = converter(t)
    data = values if convert is None else [None if v is None else convert(v) for v in values]
    return pa.array(data, type=arrow_type(t))


def build_table(struct: StructType, rows: Sequence[Sequence[Any]]) -> pa.Table:
    """A table of schema ``struct`` from row tuples in field order."""
    schema = arrow_schema(struct)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in struct.fields]
    arrays = [column(f.field_type, col) for f, col in zip(struct.fields, columns, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)
