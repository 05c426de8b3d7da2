"""Iceberg types as DuckDB types, Iceberg values as DuckDB literals (checked by DuckDB)."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

import pytest

from iceduck.engine.connection import open_database
from iceduck.engine.types import (
    contains_struct,
    duckdb_type,
    quote_identifier,
    quote_string,
    sql_literal,
)
from iceduck.errors import UnsupportedError, ValidationError
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


@pytest.fixture(scope="module")
def con() -> Any:
    database = open_database(threads=1)
    yield database
    database.close()


POINT = StructType((NestedField(1, "x", IntegerType(), initial_default=0), NestedField(2, "y", StringType())))


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        (BooleanType(), "BOOLEAN"),
        (IntegerType(), "INTEGER"),
        (LongType(), "BIGINT"),
        (FloatType(), "FLOAT"),
        (DoubleType(), "DOUBLE"),
        (DecimalType(38, 10), "DECIMAL(38,10)"),
        (DateType(), "DATE"),
        (TimeType(), "TIME"),
        (TimestampType(), "TIMESTAMP"),
        (TimestamptzType(), "TIMESTAMP WITH TIME ZONE"),
        (TimestampNanoType(), "TIMESTAMP_NS"),
        (TimestamptzNanoType(), "TIMESTAMPTZ_NS"),
        (StringType(), "VARCHAR"),
        (UUIDType(), "UUID"),
        (FixedType(4), "BLOB"),
        (BinaryType(), "BLOB"),
        (VariantType(), "VARIANT"),
        (POINT, "STRUCT(x INTEGER, y VARCHAR)"),
        (ListType(3, ListType(4, LongType())), "BIGINT[][]"),
        (MapType(5, StringType(), 6, POINT), "MAP(VARCHAR, STRUCT(x INTEGER, y VARCHAR))"),
    ],
)
def test_duckdb_types(con: Any, t: IcebergType, expected: str) -> None:
    assert con.execute(f"SELECT typeof(CAST(NULL AS {duckdb_type(t)}))").fetchall() == [(expected,)]


def test_unknown_is_the_null_type(con: Any) -> None:
    assert con.execute(f"SELECT typeof({sql_literal(UnknownType(), None)})").fetchall() == [('"NULL"',)]


@pytest.mark.parametrize(
    ("t", "value", "expected"),
    [
        (BooleanType(), True, True),
        (IntegerType(), -(2**31), -(2**31)),
        (LongType(), 2**63 - 1, 2**63 - 1),
        (FloatType(), 1.5, 1.5),
        (FloatType(), float("-inf"), float("-inf")),
        (DoubleType(), -0.0, -0.0),
        (DoubleType(), 5e-324, 5e-324),
        (DecimalType(38, 0), Decimal("9" * 38), Decimal("9" * 38)),
        (DecimalType(9, 2), Decimal("-0.01"), Decimal("-0.01")),
        (DateType(), -719162, dt.date(1, 1, 1)),  # 0001-01-01
        (DateType(), 2932896, dt.date(9999, 12, 31)),
        (TimeType(), 86_399_999_999, dt.time(23, 59, 59, 999999)),
        (TimestampType(), -1, dt.datetime(1969, 12, 31, 23, 59, 59, 999999)),
        (TimestamptzType(), 1_700_000_000_000_001, dt.datetime(2023, 11, 14, 22, 13, 20, 1, tzinfo=dt.UTC)),
        (TimestampNanoType(), 1_500, dt.datetime(1970, 1, 1, 0, 0, 0, 1)),  # Python datetimes stop at micros
        (StringType(), "it's ü 😀", "it's ü 😀"),
        (StringType(), "nul\x00inside", "nul\x00inside"),
        (
            UUIDType(),
            uuid.UUID("8c7a3b2e-5f1d-4c3b-9a2e-0123456789ab"),
            uuid.UUID("8c7a3b2e-5f1d-4c3b-9a2e-0123456789ab"),
        ),
        (FixedType(2), b"\x00\xff", b"\x00\xff"),
        (BinaryType(), b"", b""),
        (ListType(1, IntegerType()), [1, None], [1, None]),
        (ListType(1, IntegerType()), [], []),
        (MapType(1, StringType(), 2, LongType()), {"a": 1}, {"a": 1}),
        (POINT, {}, {"x": 0, "y": None}),  # "{}": each member takes its own default
        (POINT, {2: "b"}, {"x": 0, "y": "b"}),
        (POINT, (5, "t"), {"x": 5, "y": "t"}),
    ],
)
def test_literals_evaluate_to_the_value_and_type(con: Any, t: IcebergType, value: Any, expected: Any) -> None:
    literal = sql_literal(t, value)
    got, typ = con.execute(f"SELECT {literal}, typeof({literal})").fetchall()[0]
    assert typ == con.execute(f"SELECT typeof(CAST(NULL AS {duckdb_type(t)}))").fetchall()[0][0]
    if isinstance(expected, float) and expected == 0:
        assert math.copysign(1, got) == math.copysign(1, expected)
    assert got == expected


def test_nan_literal(con: Any) -> None:
    assert math.isnan(con.execute(f"SELECT {sql_literal(DoubleType(), math.nan)}").fetchall()[0][0])


def test_nanosecond_literal_keeps_nanoseconds(con: Any) -> None:
    assert con.execute(f"SELECT epoch_ns({sql_literal(TimestamptzNanoType(), 1_500)})").fetchall() == [
        (1500,)
    ]


def test_zoned_nanosecond_literal_is_an_instant_whatever_the_session_zone() -> None:
    """A ``timestamptz_ns`` value is nanoseconds from the UTC epoch: its literal is a
    TIMESTAMPTZ_NS equal to the zoned literal of the same instant, also in a session whose
    zone would shift a wall-clock reading by hours."""
    database = open_database(threads=1)
    try:
        database.execute("SET TimeZone = 'America/New_York'")
        literal = sql_literal(TimestamptzNanoType(), 1_704_067_200_123_456_789)
        got = database.execute(
            f"SELECT typeof({literal}), epoch_ns({literal}), "
            f"{literal} = '2023-12-31 19:00:00.123456789-05'::TIMESTAMPTZ_NS"
        ).fetchall()
        assert got == [("TIMESTAMPTZ_NS", 1_704_067_200_123_456_789, True)]
    finally:
        database.close()


def test_null_literals_are_typed(con: Any) -> None:
    assert con.execute(f"SELECT typeof({sql_literal(DecimalType(20, 2), None)})").fetchall() == [
        ("DECIMAL(20,2)",)
    ]


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValidationError):
        sql_literal(IntegerType(), "x")


def test_unsupported_types() -> None:
    with pytest.raises(UnsupportedError):
        duckdb_type(StructType(()))


def test_quoting(con: Any) -> None:
    assert quote_identifier('a "b"') == '"a ""b"""'
    assert con.execute(
        f"SELECT {quote_string(chr(39) + 'x')} AS {quote_identifier('we ird')}"
    ).fetchall() == [("'x",)]


def test_contains_struct() -> None:
    assert contains_struct(ListType(1, MapType(2, StringType(), 3, POINT)))
    assert not contains_struct(MapType(2, StringType(), 3, ListType(4, LongType())))
