"""Paimon types and schemas as Iceberg ones, so the Iceberg machinery (predicate pushdown,
metrics pruning, the engine's type mapping) serves Paimon tables unchanged.

Top-level fields keep their Paimon ids and names: Paimon ids are stable across schema
evolution just like Iceberg's (they start at 0, which Iceberg allows). Nested children
(ROW fields, ARRAY elements, MAP keys and values) get fresh ids above the schema's
``highestFieldId``, in depth-first order, so they never collide with a top-level id.
``NOT NULL`` becomes ``required``.

Mapping (Paimon -> Iceberg): BOOLEAN -> boolean; TINYINT, SMALLINT, INT -> int; BIGINT ->
long; FLOAT -> float; DOUBLE -> double; DECIMAL(p, s) -> decimal(p, s); CHAR, VARCHAR ->
string; BINARY, VARBINARY -> binary; DATE -> date; TIME -> time; TIMESTAMP(0-6) ->
timestamp, TIMESTAMP(7-9) -> timestamp_ns, the WITH LOCAL TIME ZONE variants -> timestamptz
(_ns); ARRAY, VECTOR -> list; MULTISET<T> -> map<T, int> (Paimon stores a multiset as a map
from element to count); MAP -> map; ROW -> struct; VARIANT -> variant. BLOB (kept in
separate blob files) is not supported.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from iceduck.errors import UnsupportedError
from iceduck.spec.paimon.schema import TableSchema
from iceduck.spec.paimon.types import PaimonType
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    VariantType,
)

_ATOMIC: dict[str, PrimitiveType] = {
    "BOOLEAN": BooleanType(),
    "TINYINT": IntegerType(),
    "SMALLINT": IntegerType(),
    "INT": IntegerType(),
    "BIGINT": LongType(),
    "FLOAT": FloatType(),
    "DOUBLE": DoubleType(),
    "CHAR": StringType(),
    "VARCHAR": StringType(),
    "BINARY": BinaryType(),
    "VARBINARY": BinaryType(),
    "DATE": DateType(),
    "TIME": TimeType(),
    "VARIANT": VariantType(),
}


def iceberg_type(t: PaimonType, ids: Iterator[int] | None = None) -> IcebergType:
    """The Iceberg type of ``t``; nested children take their ids from ``ids`` (by default
    1, 2, 3, ...; :func:`iceberg_schema` passes ids above the schema's highest field id)."""
    next_ids = ids if ids is not None else itertools.count(1)
    atomic = _ATOMIC.get(t.root)
    if atomic is not None:
        return atomic
    if t.root == "DECIMAL":
        if t.precision is None or not 0 < t.precision <= 38:
            raise UnsupportedError(f"Paimon {t} has a precision Iceberg cannot hold (1 to 38)")
        return DecimalType(t.precision, t.scale or 0)
    if t.root in ("TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        nanos = (t.precision if t.precision is not None else 6) > 6
        if t.root == "TIMESTAMP":
            return TimestampNanoType() if nanos else TimestampType()
        return TimestamptzNanoType() if nanos else TimestamptzType()
    if t.root in ("ARRAY", "VECTOR") and t.element is not None:
        element_id = next(next_ids)
        return ListType(element_id, iceberg_type(t.element, next_ids), not t.element.nullable)
    if t.root == "MULTISET" and t.element is not None:
        key_id, value_id = next(next_ids), next(next_ids)
        return MapType(key_id, iceberg_type(t.element, next_ids), value_id, IntegerType(), True)
    if t.root == "MAP" and t.key is not None and t.value is not None:
        key_id, value_id = next(next_ids), next(next_ids)
        key = iceberg_type(t.key, next_ids)
        return MapType(key_id, key, value_id, iceberg_type(t.value, next_ids), not t.value.nullable)
    if t.root == "ROW":
        child_ids = [next(next_ids) for _ in t.fields]
        return StructType(
            tuple(
                NestedField(cid, f.name, iceberg_type(f.type, next_ids), not f.type.nullable, f.description)
                for cid, f in zip(child_ids, t.fields, strict=True)
            )
        )
    raise UnsupportedError(f"Paimon {t.root} columns are not supported")


def iceberg_schema(schema: TableSchema) -> Schema:
    """The Iceberg schema of a Paimon schema: same top-level ids, names and order; the
    primary keys (NOT NULL in Paimon) are the identifier fields."""
    ids = itertools.count(max(schema.highest_field_id, max((f.id for f in schema.fields), default=0)) + 1)
    fields = tuple(
        NestedField(f.id, f.name, iceberg_type(f.type, ids), not f.type.nullable, f.description)
        for f in schema.fields
    )
    identifiers = tuple(f.id for f in schema.primary_key_fields if not f.type.nullable)
    return Schema(fields, schema_id=schema.id, identifier_field_ids=identifiers)
