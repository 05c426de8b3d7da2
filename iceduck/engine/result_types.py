"""The Iceberg schema of a query's result: what CREATE TABLE ... AS SELECT creates.

DuckDB describes a result's columns with structured types (``DuckDBPyType``: an ``id``
such as ``struct``/``list``/``decimal`` and its ``children``); each maps to the Iceberg
type DuckDB writes it as (the inverse of :mod:`iceduck.engine.types`), widened where
Iceberg has no narrower type, as Spark's CTAS does (``tinyint``/``smallint`` become
``int``), and coerced where a Spark writer would coerce:

* integers wider than ``long`` (``HUGEINT`` -- what ``sum()`` of integers gives --,
  ``UHUGEINT``, ``UBIGINT``, ``BIGNUM``) become ``long`` when every value of the column fits
  one, else ``decimal(38, 0)`` (``decimal(20, 0)`` for ``UBIGINT``; a ``BIGNUM`` beyond a
  long is refused, as DuckDB casts none to a decimal). The schema is chosen
  before a row is written, so the column's range is computed first: one extra aggregate over
  the query (:func:`_ranges`), run only when such a column exists. Nested inside a
  struct, list or map they become the decimal without a check (a nested ``BIGNUM`` is
  refused) (a value beyond it fails the
  write naming the column). Values beyond ``decimal(38, 0)`` are refused naming the column.
* ``TIMESTAMP_NS`` (pandas' and polars' Parquet) and ``TIMESTAMPTZ_NS`` stay nanoseconds
  on format version 3 and become microseconds below it (rounded as DuckDB's cast rounds);
  ``TIME_NS`` becomes ``time`` (Iceberg's time is microseconds).
* types with no Iceberg counterpart (``INTERVAL``, ``TIME WITH TIME ZONE``, ``BIT``,
  ``UNION``...) are refused naming the column and its type, with the cast to write.

Nested field ids are placeholders (1, 2, ... in order); table creation assigns real ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from typing import TYPE_CHECKING, Any

from iceduck.engine.queries import describe, rows
from iceduck.engine.types import quote_identifier
from iceduck.errors import UnsupportedError, UserError
from iceduck.spec.properties import DEFAULT_FORMAT_VERSION
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
    TimestamptzNanoType,
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
    "time_ns": TimeType(),
    "timestamp": TimestampType(),
    "timestamp_us": TimestampType(),
    "timestamp_ms": TimestampType(),
    "timestamp_s": TimestampType(),
    "timestamp with time zone": TimestamptzType(),
    "varchar": StringType(),
    "blob": BinaryType(),
    "uuid": UUIDType(),
    "variant": VariantType(),
    "null": UnknownType(),
}


#: integer types wider than ``long`` -> the type they take when a value does not fit a long
#: (None: refused -- DuckDB cannot cast a BIGNUM to a decimal)
_WIDE_INTEGERS: dict[str, DecimalType | None] = {
    "hugeint": DecimalType(38, 0),
    "uhugeint": DecimalType(38, 0),
    "ubigint": DecimalType(20, 0),
    "bignum": None,
}
_LONG_RANGE = (-(2**63), 2**63 - 1)

#: DuckDB types with no Iceberg counterpart -> the advice of their refusal
_REFUSED: dict[str, str] = {
    "interval": "Iceberg (like Spark's tables) has no interval type: cast it to a number, "
    "e.g. epoch(x) for seconds, or to VARCHAR",
    "time with time zone": "Iceberg has no time with a time zone: cast it to TIME "
    "(the local time) or VARCHAR",
    "bit": "Iceberg has no bit string: cast it to VARCHAR or BLOB",
    "union": "Iceberg has no union type: cast it to one of its member types or VARCHAR",
    "bignum": "cast it to BIGINT, or HUGEINT (written as decimal(38, 0))",
}


def query_columns(
    con: Duck, query_sql: str, params: Any = None, format_version: int = DEFAULT_FORMAT_VERSION
) -> list[NestedField]:
    """The columns ``query_sql`` yields, as optional Iceberg fields (placeholder ids) of a
    table of ``format_version``.

    The query is bound without computing a row (:func:`~iceduck.engine.queries.describe`);
    duplicate names come back renamed as DuckDB names them (``a``, ``a_1``), as DuckDB's own
    CTAS does. Columns are optional, as in Spark's CTAS: a query's nullability is not a
    table constraint. A column of a wide integer type costs one aggregate over the query,
    to pick ``long`` or a decimal (see the module's docstring).
    """
    description = describe(con, query_sql, params)
    wide = [i for i, (_, kind) in enumerate(description) if str(kind.id).lower() in _WIDE_INTEGERS]
    ranges = _ranges(con, query_sql, len(description), wide, params) if wide else {}
    ids = count(1)
    top_ids = [next(ids) for _ in description]  # siblings first, then nested fields (Java's order)
    fields = []
    for position, (fid, (name, kind)) in enumerate(zip(top_ids, description, strict=True)):
        if position in ranges:
            field_type: IcebergType = _fitted(name, kind, *ranges[position])
        else:
            field_type = iceberg_type(kind, name, ids, format_version)
        fields.append(NestedField(fid, name, field_type, False))
    return fields


def _ranges(
    con: Duck, query_sql: str, width: int, positions: list[int], params: Any
) -> dict[int, tuple[int | None, int | None]]:
    """(min, max) of the columns at ``positions`` of ``query_sql``'s rows (None: no value)."""
    aliases = ", ".join(f"c{i}" for i in range(width))
    items = ", ".join(
        f"min({quote_identifier(f'c{i}')})::VARCHAR, max({quote_identifier(f'c{i}')})::VARCHAR"
        for i in positions
    )
    (row,) = rows(con, f"SELECT {items} FROM ({query_sql}) AS __iceduck_q({aliases})", params)
    found = [None if v is None else int(v) for v in row]
    return {p: (found[2 * n], found[2 * n + 1]) for n, p in enumerate(positions)}


def _fitted(column: str, duck_type: Any, low: int | None, high: int | None) -> IcebergType:
    """``long`` when ``[low, high]`` fits one (or the column has no value), else the wide
    type's decimal; a value beyond the decimal is refused."""
    if low is None or high is None or (_LONG_RANGE[0] <= low and high <= _LONG_RANGE[1]):
        return LongType()
    decimal = _WIDE_INTEGERS[str(duck_type.id).lower()]
    limit = 10**decimal.precision - 1 if decimal is not None else _LONG_RANGE[1]
    beyond = low if low < -limit else high if high > limit else None
    if decimal is None or beyond is not None:
        widest = decimal or "bigint"
        raise UserError(
            f"column {column!r} has DuckDB type {duck_type} and holds {beyond}, beyond "
            f"{widest}: cast it to HUGEINT (written as decimal(38, 0)), DOUBLE or VARCHAR"
        )
    return decimal


def iceberg_type(
    duck_type: Any, column: str, ids: Iterator[int], format_version: int = DEFAULT_FORMAT_VERSION
) -> IcebergType:
    """The Iceberg type of one DuckDB result type for a table of ``format_version``;
    ``ids`` numbers nested fields."""
    kind = str(duck_type.id).lower()
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    if kind == "timestamp_ns":
        return TimestampNanoType() if format_version >= 3 else TimestampType()
    if kind == "timestamptz_ns":
        return TimestamptzNanoType() if format_version >= 3 else TimestamptzType()
    wide = _WIDE_INTEGERS.get(kind)
    if wide is not None:
        return wide
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
                NestedField(fid, name, iceberg_type(child, f"{column}.{name}", ids, format_version), False)
                for fid, (name, child) in zip(field_ids, children, strict=True)
            )
        )
    if kind in ("list", "array"):
        child = dict(duck_type.children)["child"]
        element_id = next(ids)
        return ListType(element_id, iceberg_type(child, f"{column}.element", ids, format_version), False)
    if kind == "map":
        parts = dict(duck_type.children)
        key_id, value_id = next(ids), next(ids)
        key = iceberg_type(parts["key"], f"{column}.key", ids, format_version)
        value = iceberg_type(parts["value"], f"{column}.value", ids, format_version)
        return MapType(key_id, key, value_id, value, False)
    advice = _REFUSED.get(kind, "cast it (for example to BIGINT, DECIMAL(38, 0), VARCHAR or DOUBLE)")
    raise UnsupportedError(
        f"column {column!r} has DuckDB type {duck_type}, which Iceberg cannot store: {advice}"
    )
