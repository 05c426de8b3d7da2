"""DuckDB-typed SQL literals and their Iceberg values (iceduck.sql.literals)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
import sqlglot

from iceduck.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    UUIDType,
)
from iceduck.sql.literals import (
    Kind,
    Moment,
    SqlLiteral,
    iceberg_value,
    literal_of,
    parse_date,
    parse_timestamp,
    python_literal,
    utc_nanos,
)

S = 1_000_000_000


def lit(sql: str, params: object = None) -> SqlLiteral | None:
    return literal_of(sqlglot.parse_one(f"SELECT {sql}", read="duckdb").expressions[0], params)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("5", SqlLiteral(Kind.INTEGER, 5)),
        ("-5", SqlLiteral(Kind.INTEGER, -5)),
        ("(5)", SqlLiteral(Kind.INTEGER, 5)),
        ("1.50", SqlLiteral(Kind.DECIMAL, Decimal("1.50"))),
        (".5", SqlLiteral(Kind.DECIMAL, Decimal("0.5"))),
        ("1e3", SqlLiteral(Kind.DOUBLE, 1000.0)),
        ("'x'", SqlLiteral(Kind.STRING, "x")),
        ("TRUE", SqlLiteral(Kind.BOOLEAN, True)),
        ("NULL", SqlLiteral(Kind.NULL, None)),
        ("DATE '1970-01-02'", SqlLiteral(Kind.DATE, 1)),
        ("'1970-01-02'::DATE", SqlLiteral(Kind.DATE, 1)),
        ("TIMESTAMP '1970-01-01 00:00:01'", SqlLiteral(Kind.TIMESTAMP, Moment(S))),
        ("TIMESTAMPTZ '1970-01-01 00:00:01+01'", SqlLiteral(Kind.TIMESTAMPTZ, Moment(S, 3600))),
        ("CAST('1970-01-01 00:00:01+01' AS TIMESTAMPTZ_NS)", SqlLiteral(Kind.TIMESTAMPTZ, Moment(S, 3600))),
        ("'1970-01-01 00:00:00.000000001'::timestamptz_ns", SqlLiteral(Kind.TIMESTAMPTZ, Moment(1))),
        ("TIMESTAMP_NS '1970-01-01 00:00:00.000000001'", SqlLiteral(Kind.TIMESTAMP, Moment(1))),
        ("TIMESTAMP '1970-01-01 00:00:00.000001'", SqlLiteral(Kind.TIMESTAMP, Moment(1000))),
        ("CAST(7 AS BIGINT)", SqlLiteral(Kind.INTEGER, 7)),
        ("CAST('a' AS VARCHAR)", SqlLiteral(Kind.STRING, "a")),
        ("$1", SqlLiteral(Kind.INTEGER, 9)),
    ],
)
def test_literal_of(sql: str, expected: SqlLiteral) -> None:
    assert lit(sql, [9]) == expected


@pytest.mark.parametrize(
    "sql", ["a", "1 + 1", "TRY_CAST('1' AS INT)", "TIMESTAMP '2024-01-01 00:00:00+02'", "$1"]
)
def test_not_literals(sql: str) -> None:
    assert lit(sql) is None


@pytest.mark.parametrize(
    "sql",
    [
        "TIMESTAMP '1970-01-01 00:00:00.000000001'",
        "TIMESTAMPTZ '1970-01-01 00:00:00.0000015+00'",
        "CAST(TIMESTAMP_NS '1970-01-01 00:00:00.000000001' AS TIMESTAMP)",
        "TIMESTAMP_MS '1970-01-01 00:00:00.0001'",
        "TIMESTAMP_S '1970-01-01 00:00:00.9'",
    ],
)
def test_digits_finer_than_the_type_are_no_literal(sql: str) -> None:
    """DuckDB drops the digits its type cannot hold (truncating or rounding, by type):
    such a literal is not pushed, or a file holding the value DuckDB compares with would
    be pruned (``c = TIMESTAMP '...00.000000001'`` is ``c = ...00.000000`` to DuckDB)."""
    assert lit(sql) is None


NEW_YORK = "America/New_York"
NS_1H = 3600 * S


@pytest.mark.parametrize(
    ("literal", "timezone", "value"),
    [
        # strings and zoned literals: the instant DuckDB casts them to (session zone if no offset)
        (SqlLiteral(Kind.STRING, "1970-01-01 00:00:00.000000001"), NEW_YORK, 5 * NS_1H + 1),
        (SqlLiteral(Kind.STRING, "1970-01-01 00:00:00+01"), NEW_YORK, -NS_1H),
        (SqlLiteral(Kind.TIMESTAMPTZ, Moment(1, 0)), NEW_YORK, 1),
        # DuckDB 2.0.1 casts DATE and TIMESTAMP to TIMESTAMPTZ_NS as UTC wall clocks (to
        # TIMESTAMPTZ in the session zone): pushed only where the two agree
        (SqlLiteral(Kind.TIMESTAMP, Moment(NS_1H)), NEW_YORK, None),
        (SqlLiteral(Kind.DATE, 1), NEW_YORK, None),
        (SqlLiteral(Kind.TIMESTAMP, Moment(NS_1H)), "UTC", NS_1H),
        (SqlLiteral(Kind.DATE, 1), "UTC", 24 * NS_1H),
    ],
)
def test_zoned_nanosecond_column_values(literal: SqlLiteral, timezone: str, value: object) -> None:
    assert iceberg_value(literal, TimestamptzNanoType(), timezone) == value


def test_a_decimal_with_too_many_digits_is_a_double_as_in_duckdb() -> None:
    assert lit("0." + "1" * 39).kind is Kind.DOUBLE


def test_python_parameters() -> None:
    assert python_literal(dt.date(1970, 1, 3)) == SqlLiteral(Kind.DATE, 2)
    assert python_literal(dt.datetime(1970, 1, 1, 0, 0, 1)) == SqlLiteral(Kind.TIMESTAMP, Moment(S))
    aware = dt.datetime(1970, 1, 1, 1, 0, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert python_literal(aware) == SqlLiteral(Kind.TIMESTAMPTZ, Moment(3601 * S, 3600))
    assert python_literal(True) == SqlLiteral(Kind.BOOLEAN, True)
    assert python_literal(1.5).kind is Kind.DOUBLE


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("1970-01-01", Moment(0)),
        ("1970-01-01 00:00:01.5", Moment(S + S // 2)),
        ("1970-01-01T00:00:01.123456789", Moment(S + 123456789)),
        ("1970-01-01 01:00:00+01", Moment(3600 * S, 3600)),
        ("1970-01-01 01:00:00-0130", Moment(3600 * S, -5400)),
        ("1970-01-01 00:00:00Z", Moment(0, 0)),
        ("1970-01-01 00:00:00 UTC", Moment(0, 0)),
    ],
)
def test_parse_timestamp(text: str, moment: Moment) -> None:
    assert parse_timestamp(text) == moment


@pytest.mark.parametrize("text", ["1970-13-01", "1970-02-30", "yesterday", "1970-01-01 25:00", "infinity"])
def test_parse_timestamp_rejects(text: str) -> None:
    assert parse_timestamp(text) is None


def test_parse_date() -> None:
    assert parse_date("2024-01-02") == 19724
    assert parse_date("2024-01-02 00:00") is None


def test_utc_nanos_reads_naive_moments_in_the_zone() -> None:
    assert utc_nanos(Moment(3600 * S), "Europe/Paris") == 0
    assert utc_nanos(Moment(3600 * S, 0), "Europe/Paris") == 3600 * S
    assert utc_nanos(Moment(0), "UTC") == 0
    assert utc_nanos(Moment(0), "No/Such_Zone") is None


@pytest.mark.parametrize(
    ("literal", "t", "value"),
    [
        (SqlLiteral(Kind.INTEGER, 5), LongType(), 5),
        (SqlLiteral(Kind.DECIMAL, Decimal("1.5")), IntegerType(), Decimal("1.5")),
        (SqlLiteral(Kind.DOUBLE, 5.0), LongType(), None),
        (SqlLiteral(Kind.INTEGER, 5), DecimalType(9, 2), 5),
        (SqlLiteral(Kind.INTEGER, 5), DoubleType(), None),
        (SqlLiteral(Kind.STRING, "5"), LongType(), None),
        (SqlLiteral(Kind.STRING, "x"), StringType(), "x"),
        (SqlLiteral(Kind.BOOLEAN, True), BooleanType(), True),
        (SqlLiteral(Kind.INTEGER, 1), BooleanType(), None),
        (SqlLiteral(Kind.STRING, "1970-01-02"), DateType(), 1),
        (SqlLiteral(Kind.DATE, 1), TimestampType(), 86_400_000_000),
        (SqlLiteral(Kind.STRING, "1970-01-01 00:00:01"), TimestamptzType(), 1_000_000),
        (SqlLiteral(Kind.STRING, "1970-01-01 00:00:00.000000001"), TimestampType(), None),
        (SqlLiteral(Kind.STRING, "1970-01-01 00:00:00.000000001"), TimestampNanoType(), 1),
        (SqlLiteral(Kind.TIMESTAMPTZ, Moment(0, 3600)), TimestampType(), None),
        (SqlLiteral(Kind.STRING, "00000000-0000-0000-0000-000000000001"), UUIDType(), uuid.UUID(int=1)),
        (SqlLiteral(Kind.STRING, "nope"), UUIDType(), None),
    ],
)
def test_iceberg_value(literal: SqlLiteral, t: object, value: object) -> None:
    assert iceberg_value(literal, t) == value


def test_negative_decimals_keep_every_digit() -> None:
    """``-Decimal`` rounds to Python's 28-digit context: a pushed filter on a negative
    decimal(38, s) value must carry the exact value, or pruning skips the matching file."""
    assert lit("-99999999999999999999999999999.5") == SqlLiteral(
        Kind.DECIMAL, Decimal("-99999999999999999999999999999.5")
    )
    assert lit(f"-{'9' * 38}") == SqlLiteral(Kind.INTEGER, -int("9" * 38))
