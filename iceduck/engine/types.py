"""Iceberg types and values as DuckDB SQL: type names, typed literals, quoting.

Type mapping (spec, "Schemas and Data Types" and Appendix A's Parquet mapping), chosen so
DuckDB reads each Parquet physical/logical type to the same logical value:

=================  ===============================  ============================================
Iceberg            DuckDB                           why
=================  ===============================  ============================================
boolean            BOOLEAN
int / long         INTEGER / BIGINT                 int32 / int64
float / double     FLOAT / DOUBLE
decimal(P, S)      DECIMAL(P, S)                    P <= 38 fits DuckDB's HUGEINT decimals
date               DATE                             "days from 1970-01-01"
time               TIME                             TIME_MICROS, adjustToUtc=false
timestamp          TIMESTAMP                        wall-clock micros, no zone
timestamptz        TIMESTAMPTZ                      micros from the UTC epoch
timestamp_ns       TIMESTAMP_NS                     wall-clock nanos, no zone
timestamptz_ns     TIMESTAMPTZ_NS                   nanos from the UTC epoch (Parquet
                                                    ``isAdjustedToUTC=true``), an instant:
                                                    compared, cast and fetched as one
string             VARCHAR
uuid               UUID                             fixed[16] with the UUID annotation
fixed(L), binary   BLOB
struct             STRUCT("name" T, ...)
list               T[]
map                MAP(K, V)
variant            VARIANT
geometry/geog.     BLOB                             WKB, as the spec stores it
unknown            "NULL"                           "any corresponding column must be ignored
                                                    and replaced with null values"
=================  ===============================  ============================================

Literals (:func:`sql_literal`) build a DuckDB value of exactly the mapped type from the
Python value representation of :mod:`iceduck.spec.types`, with integer arithmetic for
dates and timestamps so any year in Iceberg's range works and no session time zone is
involved.
"""

from __future__ import annotations

import math
import uuid
from decimal import Decimal
from typing import Any

from iceduck.errors import UnsupportedError, ValidationError
from iceduck.spec.datetimes import micros_to_iso_time
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
    VariantType,
)

_SIMPLE: dict[type, str] = {
    BooleanType: "BOOLEAN",
    IntegerType: "INTEGER",
    LongType: "BIGINT",
    FloatType: "FLOAT",
    DoubleType: "DOUBLE",
    DateType: "DATE",
    TimeType: "TIME",
    TimestampType: "TIMESTAMP",
    TimestamptzType: "TIMESTAMPTZ",
    TimestampNanoType: "TIMESTAMP_NS",
    TimestamptzNanoType: "TIMESTAMPTZ_NS",
    StringType: "VARCHAR",
    UUIDType: "UUID",
    FixedType: "BLOB",
    BinaryType: "BLOB",
    GeometryType: "BLOB",
    GeographyType: "BLOB",
    VariantType: "VARIANT",
    UnknownType: '"NULL"',
}


def quote_identifier(name: str) -> str:
    """A DuckDB identifier: ``"name"`` with embedded quotes doubled (never a bare word)."""
    return '"' + name.replace('"', '""') + '"'


def quote_string(text: str) -> str:
    """A DuckDB string literal. SQL strings know no backslash escapes, only ``''``; a NUL
    character cannot appear in SQL text, so it is spliced in with ``chr(0)``."""
    if "\x00" in text:
        return "(" + " || chr(0) || ".join(quote_string(part) for part in text.split("\x00")) + ")"
    return "'" + text.replace("'", "''") + "'"


def duckdb_type(t: IcebergType) -> str:
    """The DuckDB type name an Iceberg type is read as (table in the module docstring)."""
    simple = _SIMPLE.get(type(t))
    if simple is not None:
        return simple
    if isinstance(t, DecimalType):
        return f"DECIMAL({t.precision}, {t.scale})"
    if isinstance(t, StructType):
        return struct_type(t.fields)
    if isinstance(t, ListType):
        return f"{duckdb_type(t.element_type)}[]"
    if isinstance(t, MapType):
        return f"MAP({duckdb_type(t.key_type)}, {duckdb_type(t.value_type)})"
    raise UnsupportedError(f"Iceberg type {t} has no DuckDB mapping")


def struct_type(fields: tuple[NestedField, ...] | list[NestedField]) -> str:
    """``STRUCT("a" INTEGER, ...)``; DuckDB has no empty struct, so none may be asked for."""
    if not fields:
        raise UnsupportedError("a struct without fields cannot be read by DuckDB")
    return (
        "STRUCT(" + ", ".join(f"{quote_identifier(f.name)} {duckdb_type(f.field_type)}" for f in fields) + ")"
    )


def contains_struct(t: IcebergType) -> bool:
    """Whether a struct appears anywhere in ``t`` (DuckDB matches struct members by name)."""
    if isinstance(t, StructType):
        return True
    if isinstance(t, ListType):
        return contains_struct(t.element_type)
    if isinstance(t, MapType):
        return contains_struct(t.key_type) or contains_struct(t.value_type)
    return False


def cast_sql(expr: str, t: IcebergType) -> str:
    """``expr`` (DuckDB SQL) cast to the DuckDB type of ``t``; a failed conversion fails
    the statement."""
    return f"CAST(({expr}) AS {duckdb_type(t)})"


def try_cast_sql(expr: str, t: IcebergType) -> str:
    """``expr`` cast to the DuckDB type of ``t``, null where the value does not convert."""
    return f"TRY_CAST(({expr}) AS {duckdb_type(t)})"


def typed_null(t: IcebergType) -> str:
    return "NULL" if isinstance(t, UnknownType) else f"CAST(NULL AS {duckdb_type(t)})"


def sql_literal(t: IcebergType, value: Any) -> str:
    """A DuckDB expression of type ``duckdb_type(t)`` whose value is ``value``.

    Struct values are dicts by field id (or tuples in field order); a field missing from
    a struct value takes its own ``initial-default``: "The effective default value is
    produced by setting each fields' default in a new struct" (spec, "Default values").
    """
    if value is None:
        return typed_null(t)
    try:
        return _literal(t, value)
    except (TypeError, ValueError, OverflowError, AttributeError) as e:
        raise ValidationError(f"{value!r} is not a {t} value") from e


def _cast(text: str, t: IcebergType) -> str:
    return f"CAST({quote_string(text)} AS {duckdb_type(t)})"


def _literal(t: IcebergType, value: Any) -> str:
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if isinstance(t, IntegerType | LongType):
        return f"CAST({int(value)} AS {duckdb_type(t)})"
    if isinstance(t, FloatType | DoubleType):
        f = float(value)
        text = "nan" if math.isnan(f) else repr(f)  # 'inf', '-inf', '-0.0', '1e+300' all cast
        return _cast(text, t)
    if isinstance(t, DecimalType):
        return _cast(format(Decimal(value), "f"), t)
    if isinstance(t, DateType):
        return f"CAST(DATE '1970-01-01' + CAST({int(value)} AS INTEGER) AS DATE)"
    if isinstance(t, TimeType):
        return _cast(micros_to_iso_time(int(value)), t)
    if isinstance(t, TimestampType):
        return f"make_timestamp(CAST({int(value)} AS BIGINT))"
    if isinstance(t, TimestamptzType):
        return f"timezone('UTC', make_timestamp(CAST({int(value)} AS BIGINT)))"
    if isinstance(t, TimestampNanoType):
        return f"make_timestamp_ns(CAST({int(value)} AS BIGINT))"
    if isinstance(t, TimestamptzNanoType):
        return f"timezone('UTC', make_timestamp_ns(CAST({int(value)} AS BIGINT)))"
    if isinstance(t, StringType):
        return quote_string(str(value))
    if isinstance(t, UUIDType):
        return _cast(str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))), t)
    if isinstance(t, FixedType | BinaryType | GeometryType | GeographyType):
        data = bytes(value)
        return f"unhex('{data.hex()}')" if data else "CAST('' AS BLOB)"
    if isinstance(t, StructType):
        return _struct_literal(t, value)
    if isinstance(t, ListType):
        items = ", ".join(sql_literal(t.element_type, v) for v in value)
        return f"CAST([{items}] AS {duckdb_type(t)})"
    if isinstance(t, MapType):
        pairs = ", ".join(
            f"{sql_literal(t.key_type, k)}: {sql_literal(t.value_type, v)}" for k, v in value.items()
        )
        return f"CAST(MAP {{{pairs}}} AS {duckdb_type(t)})"
    raise UnsupportedError(f"cannot write a DuckDB literal of Iceberg type {t}")


def _struct_literal(t: StructType, value: Any) -> str:
    if isinstance(value, dict):
        by_id = value
    else:
        by_id = {f.field_id: v for f, v in zip(t.fields, tuple(value), strict=True)}
    parts = []
    for f in t.fields:
        child = by_id[f.field_id] if f.field_id in by_id else f.initial_default
        parts.append(f"{quote_identifier(f.name)} := {sql_literal(f.field_type, child)}")
    return "struct_pack(" + ", ".join(parts) + ")"


def default_literal(f: NestedField) -> str:
    """The value a file that lacks ``f`` reads: its ``initial-default``, else null."""
    return sql_literal(f.field_type, f.initial_default)
