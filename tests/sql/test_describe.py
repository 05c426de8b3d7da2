"""DESCRIBE's reading and its rows: which DESCRIBE names a table, and defaults as SQL literals."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.spec.datetimes import date_to_days
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
    UUIDType,
)
from iceduck.sql.classify import classify
from iceduck.sql.ddl_terms import typed_default
from iceduck.sql.describe import (
    COLUMNS,
    default_sql,
    describe_columns,
    described_table,
    parse_describe,
    plain_columns,
)
from iceduck.sql.literals import literal_of
from iceduck.sql.parse import Statement

MICROS = 1_000_000
EPOCH = dt.datetime(1970, 1, 1)


def _micros(moment: dt.datetime) -> int:
    return (moment - EPOCH) // dt.timedelta(microseconds=1)


def _table(sql: str) -> str | None:
    table = described_table(parse_describe(sql))
    return None if table is None else table.sql(dialect="duckdb")


@pytest.mark.parametrize(
    ("sql", "table"),
    [
        ("DESCRIBE ns.t", "ns.t"),
        ("describe table ns.t", "ns.t"),
        ("DESC ns.t", "ns.t"),
        ('DESCRIBE "my ns"."T"', '"my ns"."T"'),
        ("DESCRIBE FROM ns.t", "ns.t"),
        ("DESCRIBE ns.t VERSION AS OF 123", "ns.t FOR VERSION AS OF 123"),
        ("DESCRIBE TABLE ns.t FOR SYSTEM_VERSION AS OF 'tag1'", "ns.t FOR VERSION AS OF 'tag1'"),
        ("DESCRIBE ns.t TIMESTAMP AS OF '2024-01-01'", "ns.t FOR TIMESTAMP AS OF '2024-01-01'"),
        ("DESCRIBE iceduck_scan('a/b')", "ICEDUCK_SCAN('a/b')"),
        ("DESCRIBE SELECT * FROM ns.t", None),
        ("DESCRIBE SELECT id FROM ns.t", None),
        ("DESCRIBE FROM ns.t WHERE id > 1", None),
        ("DESCRIBE FROM ns.t a JOIN ns.u b USING (id)", None),
        ("DESCRIBE FROM ns.t LIMIT 1", None),
        ("DESCRIBE FROM ns.t a, ns.u b", None),
        ("DESCRIBE FROM ns.t a", "ns.t AS a"),
    ],
)
def test_which_describe_names_a_table(sql: str, table: str | None) -> None:
    assert _table(sql) == table


def test_time_travel_stays_on_the_described_table() -> None:
    statement = parse_describe("DESCRIBE ns.t VERSION AS OF 123")
    table = described_table(statement)
    assert isinstance(table, exp.Table) and isinstance(table.args.get("version"), exp.Version)
    assert statement.kind == "DESCRIBE" and statement.text == "DESCRIBE FROM ns.t VERSION AS OF 123"


def test_classify_reads_describe_through_parse_describe() -> None:
    statement = classify("DESCRIBE TABLE ns.t VERSION AS OF 1")
    assert isinstance(statement, Statement) and described_table(statement) is not None


def test_a_bad_describe_is_a_syntax_error() -> None:
    from iceduck.errors import UserError

    for sql in ("DESCRIBE", "DESCRIBE ns.t FOR", "DESCRIBE ns.t VERSION"):
        with pytest.raises(UserError, match="syntax error"):
            parse_describe(sql)


def test_columns_follow_the_schema() -> None:
    fields = (
        NestedField(1, "id", LongType(), required=True, doc="the key"),
        NestedField(2, "v", DoubleType(), write_default=0.0),
        NestedField(3, "s", StringType(), doc="it's", write_default="x"),
    )
    rows = describe_columns(fields, ["BIGINT", "DOUBLE", "VARCHAR"])
    assert tuple(rows) == COLUMNS
    assert list(zip(*rows.values(), strict=True)) == [
        ("id", "BIGINT", "NO", None, None, None, "the key"),
        ("v", "DOUBLE", "YES", None, "0.0", None, None),
        ("s", "VARCHAR", "YES", None, "'x'", None, "it's"),
    ]


def test_columns_refuse_types_that_do_not_match_the_schema() -> None:
    fields = (NestedField(1, "id", LongType()),)
    with pytest.raises(CorruptDataError, match="2 columns of a relation with 1"):
        describe_columns(fields, ["BIGINT", "VARCHAR"])
    with pytest.raises(CorruptDataError, match="1 columns of a relation with 2"):
        plain_columns(["a", "b"], ["BIGINT"], [True, False])


def test_plain_columns_have_only_nullability() -> None:
    rows = plain_columns(["a", "b"], ["BIGINT", "VARCHAR"], [True, False])
    assert list(zip(*rows.values(), strict=True)) == [
        ("a", "BIGINT", "NO", None, None, None, None),
        ("b", "VARCHAR", "YES", None, None, None, None),
    ]


STRUCT = StructType((NestedField(10, "a", IntegerType()), NestedField(11, "b", StringType())))


@pytest.mark.parametrize(
    ("t", "value", "text"),
    [
        (BooleanType(), True, "true"),
        (BooleanType(), False, "false"),
        (IntegerType(), -7, "-7"),
        (LongType(), 2**62, str(2**62)),
        (FloatType(), 0.1, "0.1"),
        (FloatType(), 3.0, "3.0"),
        (FloatType(), 10.0, "10.0"),  # not 1e+01
        (FloatType(), 1e30, "1e+30"),
        (DoubleType(), 0.0, "0.0"),
        (DoubleType(), -2.5e-300, "-2.5e-300"),
        (DecimalType(10, 2), Decimal("1.50"), "1.50"),
        (DecimalType(38, 0), Decimal(10**37), str(10**37)),
        (StringType(), "it's", "'it''s'"),
        (StringType(), "", "''"),
        (DateType(), date_to_days(dt.date(2024, 1, 1)), "DATE '2024-01-01'"),
        (TimeType(), 10 * 3600 * MICROS, "TIME '10:00:00'"),
        (TimeType(), 10 * 3600 * MICROS + 5, "TIME '10:00:00.000005'"),
        (TimestampType(), _micros(dt.datetime(2024, 5, 1, 12, 30)), "TIMESTAMP '2024-05-01 12:30:00'"),
        (
            TimestamptzType(),
            _micros(dt.datetime(2024, 5, 1, 12, 30, 0, 250000)),
            "TIMESTAMPTZ '2024-05-01 12:30:00.25+00:00'",
        ),
        (
            TimestampNanoType(),
            _micros(dt.datetime(2024, 5, 1)) * 1000 + 1,
            "TIMESTAMP_NS '2024-05-01 00:00:00.000000001'",
        ),
        (
            TimestamptzNanoType(),
            _micros(dt.datetime(2024, 5, 1)) * 1000 + 1,
            "CAST('2024-05-01 00:00:00.000000001+00:00' AS TIMESTAMPTZ_NS)",
        ),
        (UUIDType(), uuid.UUID(int=1), "UUID '00000000-0000-0000-0000-000000000001'"),
        (BinaryType(), b"\x01\xab", "X'01AB'"),
        (FixedType(2), b"\x00\xff", "X'00FF'"),
        (STRUCT, {10: 1, 11: "x"}, "{'a': 1, 'b': 'x'}"),
        (STRUCT, {10: 1}, "{'a': 1, 'b': NULL}"),
        (ListType(20, LongType()), [1, 2], "[1, 2]"),
        (MapType(30, StringType(), 31, IntegerType()), {"k": 1}, "MAP {'k': 1}"),
    ],
)
def test_defaults_are_written_as_sql_literals(t: IcebergType, value: Any, text: str) -> None:
    assert default_sql(t, value) == text


@pytest.mark.parametrize(
    ("t", "value"),
    [
        (DoubleType(), -2.5e-300),
        (FloatType(), 0.1),
        (DecimalType(10, 2), Decimal("1.50")),
        (StringType(), "it's"),
        (DateType(), date_to_days(dt.date(2024, 1, 1))),
        (TimeType(), 10 * 3600 * MICROS + 5),
        (TimestampType(), _micros(dt.datetime(2024, 5, 1, 12, 30))),
        (TimestamptzType(), _micros(dt.datetime(2024, 5, 1, 12, 30, 0, 250000))),
        (UUIDType(), uuid.UUID(int=1)),
        (BinaryType(), b"\x01\xab"),
    ],
)
def test_a_default_literal_reads_back_as_its_value(t: IcebergType, value: Any) -> None:
    """DuckDB reads each literal back to the value it was made from (in UTC)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    got = con.execute(f"SELECT {default_sql(t, value)}").fetchone()
    assert got is not None
    expected: Any = value
    if isinstance(t, DateType):
        expected = dt.date(1970, 1, 1) + dt.timedelta(days=value)
    elif isinstance(t, TimeType):
        expected = (dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=value)).time()
    elif isinstance(t, TimestampType):
        expected = EPOCH + dt.timedelta(microseconds=value)
    elif isinstance(t, TimestamptzType):
        expected = (EPOCH + dt.timedelta(microseconds=value)).replace(tzinfo=dt.UTC)
    if isinstance(t, FloatType):
        assert float(got[0]) == pytest.approx(value, rel=1e-7)
    else:
        assert got[0] == expected


def test_a_zoned_nanosecond_default_reads_back_as_its_instant() -> None:
    """A ``timestamptz_ns`` default (SHOW CREATE TABLE prints it) is the same instant to
    DuckDB in any session zone and to iceduck's own DEFAULT reading (sqlglot knows no
    ``TIMESTAMPTZ_NS '...'`` literal, hence the cast)."""
    t, value = TimestamptzNanoType(), _micros(dt.datetime(2024, 5, 1, 23, 30)) * 1000 + 7
    text = default_sql(t, value)
    assert text is not None
    con = duckdb.connect()
    con.execute("SET TimeZone = 'America/New_York'")
    assert con.execute(f"SELECT epoch_ns({text}), typeof({text})").fetchone() == (value, "TIMESTAMPTZ_NS")
    literal = literal_of(sqlglot.parse_one(text, read="duckdb"))
    assert literal is not None
    assert typed_default(literal, "c", t) == value


def test_no_default_is_none_and_a_bad_value_is_refused() -> None:
    assert default_sql(LongType(), None) is None
    with pytest.raises(ValidationError):
        default_sql(IntegerType(), 2**40)
