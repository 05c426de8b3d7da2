"""The Iceberg schema of a query's result: what CREATE TABLE ... AS SELECT creates.

DuckDB describes a result's columns with structured types (``DuckDBPyType``: an ``id``
such as ``struct``/``list``/``decimal`` and its ``children``); each maps to the Iceberg
type DuckDB writes it as (the inverse of :mod:`iceduck.engine.types`), widened where
Iceberg has no narrower type, as Spark's CTAS does (``tinyint``/``smallint`` become
``int``). Types Iceberg cannot hold exactly (``HUGEINT``, unsigned 64-bit, ``INTERVAL``,
unions...) are refused naming the column, so the user casts instead of losing values.

Nested field ids are placeholders (1, 2, ... in order); table creation assigns real ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from typing import TYPE_CHECKING, Any

from iceduck.engine.queries import describe
from iceduck.errors import UnsupportedError
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
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

_PRIMITIVES: dict[str, IcebergType] = {
    "boolean": BooleanType(),
    "tinyint": IntegerType(),
    "smallint": IntegerType(),
    "integer": IntegerType(),
    "utinyint": IntegerType(),
    "usmallint": IntegerType(),
    "uinteger": LongType(),
    "bigint": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "date": DateType(),
    "time": TimeType(),
    "timestamp": TimestampType(),
    "timestamp_us": TimestampType(),
    "timestamp_ms": TimestampType(),
    "timestamp_s": TimestampType(),
    "timestamp with time zone": TimestamptzType(),
    "timestamp_ns": TimestampNanoType(),
    "varchar": StringType(),
    "blob": BinaryType(),
    "uuid": UUIDType(),
    "variant": VariantType(),
    "null": UnknownType(),
}


def query_columns(con: Duck, query_sql: str, params: Any = None) -> list[NestedField]:
    """The columns ``query_sql`` yields, as optional Iceberg fields (placeholder ids).

    The query is bound without computing a row (:func:`~iceduck.engine.queries.describe`);
    duplicate names come back renamed as DuckDB names them (``a``, ``a_1``), as DuckDB's own
    CTAS does. Columns are optional, as in Spark's CTAS: a query's nullability is not a
    table constraint.
    """
    description = describe(con, query_sql, params)
    ids = count(1)
    top_ids = [next(ids) for _ in description]  # siblings first, then nested fields (Java's order)
    return [
        NestedField(fid, name, iceberg_type(kind, name, ids), False)
        for fid, (name, kind) in zip(top_ids, description, strict=True)
    ]


def iceberg_type(duck_type: Any, column: str, ids: Iterator[int]) -> IcebergType:
    """The Iceberg type of one DuckDB result type; ``ids`` numbers nested fields."""
    kind = str(duck_type.id).lower()
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    if kind == "decimal":
        params = dict(duck_type.children)
        return DecimalType(int(params["precision"]), int(params["scale"]))
    if kind == "enum":
        return StringType()
    if kind == "struct":
        children = list(duck_type.children)
        field_ids = [next(ids) for _ in children]
        return StructType(
            tuple(
                NestedField(fid, name, iceberg_type(child, f"{column}.{name}", ids), False)
                for fid, (name, child) in zip(field_ids, children, strict=True)
            )
        )
    if kind in ("list", "array"):
        child = dict(duck_type.children)["child"]
        element_id = next(ids)
        return ListType(element_id, iceberg_type(child, f"{column}.element", ids), False)
    if kind == "map":
        parts = dict(duck_type.children)
        key_id, value_id = next(ids), next(ids)
        key = iceberg_type(parts["key"], f"{column}.key", ids)
        value = iceberg_type(parts["value"], f"{column}.value", ids)
        return MapType(key_id, key, value_id, value, False)
    raise UnsupportedError(
        f"column {column!r} has DuckDB type {duck_type}, which Iceberg cannot store exactly: "
        "cast it (for example to BIGINT, DECIMAL(38, 0), VARCHAR or DOUBLE)"
    )
