"""CREATE TABLE ... AS SELECT coerces DuckDB-only types as a Spark writer would, or refuses
them naming the column: the created table's Iceberg schema and its rows are checked, the
rows against plain DuckDB casting the same query to the chosen types."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import UnsupportedError, UserError
from iceduck.spec.types import (
    DecimalType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
)


def _types(con: Connection, table: str = "t") -> dict[str, IcebergType]:
    schema = con.session.catalog.load_table(TableIdentifier(("db",), table)).metadata.schema()
    return {f.name: f.field_type for f in schema.fields}


def _same_rows(con: Connection, table: str, query: str) -> None:
    """The table's rows are the query's rows as plain DuckDB computes them."""
    mine = con.execute(f"SELECT * FROM db.{table}").fetchall()
    theirs = duckdb.connect().execute(query).fetchall()
    assert sorted(mine, key=repr) == sorted(theirs, key=repr)


def test_sum_of_integers_is_bigint_when_it_fits(con: Connection) -> None:
    query = "SELECT i % 3 AS k, sum(i) AS s, sum(i::BIGINT) AS b FROM range(100) r(i) GROUP BY 1"
    assert [str(t) for t in duckdb.connect().sql(query).types] == ["BIGINT", "HUGEINT", "HUGEINT"]
    con.execute(f"CREATE TABLE db.t AS {query}")
    assert _types(con) == {"k": LongType(), "s": LongType(), "b": LongType()}
    _same_rows(con, "t", query)


def test_wide_values_become_decimal_38(con: Connection) -> None:
    query = "SELECT * FROM (VALUES (1, 9223372036854775807::HUGEINT * 4), (2, NULL), (3, -7)) v(id, h)"
    con.execute(f"CREATE TABLE db.t AS {query}")
    assert _types(con) == {"id": IntegerType(), "h": DecimalType(38, 0)}
    _same_rows(con, "t", f"SELECT id, h::DECIMAL(38, 0) FROM ({query})")


def test_unsigned_and_bignum(con: Connection) -> None:
    query = (
        "SELECT 1::UTINYINT AS a, 2::USMALLINT AS b, 3::UINTEGER AS c, 4::UBIGINT AS small, "
        "18446744073709551615::UBIGINT AS big, 5::UHUGEINT AS uh, 6::BIGNUM AS n, "
        "'99999999999999999999999'::HUGEINT AS wide_h"
    )
    con.execute(f"CREATE TABLE db.t AS {query}")
    assert _types(con) == {
        "a": IntegerType(),
        "b": IntegerType(),
        "c": LongType(),
        "small": LongType(),
        "big": DecimalType(20, 0),
        "uh": LongType(),
        "n": LongType(),
        "wide_h": DecimalType(38, 0),
    }
    assert con.execute("SELECT big, wide_h FROM db.t").fetchall() == duckdb.connect().execute(
        "SELECT 18446744073709551615::DECIMAL(20, 0), 99999999999999999999999::DECIMAL(38, 0)"
    ).fetchall()


def test_values_beyond_decimal_38_are_refused(con: Connection) -> None:
    beyond = r"column 'h' has DuckDB type HUGEINT and holds -\d+, beyond decimal\(38, 0\)"
    with pytest.raises(UserError, match=beyond):
        con.execute("CREATE TABLE db.t AS SELECT -170141183460469231731687303715884105727::HUGEINT AS h")
    with pytest.raises(UserError, match=r"column 'n' has DuckDB type BIGNUM and holds \d+, beyond bigint"):
        con.execute("CREATE TABLE db.t AS SELECT '99999999999999999999999'::BIGNUM AS n")
    assert not con.session.catalog.table_exists(TableIdentifier(("db",), "t"))


def test_empty_wide_column_is_bigint(con: Connection) -> None:
    con.execute("CREATE TABLE db.t AS SELECT sum(i) AS s FROM range(3) r(i) WHERE false GROUP BY i % 2")
    assert _types(con) == {"s": LongType()}
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(0,)]


def test_nested_wide_integers_are_decimals(con: Connection) -> None:
    query = "SELECT [1::HUGEINT, 2] AS l, {'x': 3::UBIGINT} AS s, MAP {1::INT: 2::HUGEINT} AS m"
    con.execute(f"CREATE TABLE db.t AS {query}")
    types = _types(con)
    assert isinstance(types["l"], ListType) and types["l"].element_type == DecimalType(38, 0)
    assert isinstance(types["s"], StructType) and types["s"].fields[0].field_type == DecimalType(20, 0)
    assert isinstance(types["m"], MapType)
    assert (types["m"].key_type, types["m"].value_type) == (IntegerType(), DecimalType(38, 0))
    _same_rows(
        con,
        "t",
        "SELECT [1, 2]::DECIMAL(38, 0)[] AS l, {'x': 3::DECIMAL(20, 0)} AS s, "
        "MAP {1::INT: 2::DECIMAL(38, 0)} AS m",
    )


NANOS = (
    "SELECT TIMESTAMP_NS '2024-01-01 10:00:00.123456789' AS ts, "
    "'2024-01-01 10:00:00.5+00'::TIMESTAMPTZ_NS AS tz, '12:00:00.123456789'::TIME_NS AS t"
)


def test_nanoseconds_become_micros_below_v3(con: Connection) -> None:
    con.execute(f"CREATE TABLE db.t AS {NANOS}")
    assert _types(con) == {"ts": TimestampType(), "tz": TimestamptzType(), "t": TimeType()}
    (ts, tz, t) = con.execute("SELECT * FROM db.t").fetchone()
    expected = duckdb.connect().execute(
        f"SELECT ts::TIMESTAMP, tz::TIMESTAMPTZ, t::TIME FROM ({NANOS})"
    ).fetchone()
    assert (ts, tz, t) == expected
    assert ts == datetime(2024, 1, 1, 10, 0, 0, 123457)  # DuckDB's cast rounds


def test_nanoseconds_stay_on_v3(con: Connection) -> None:
    con.execute(f"CREATE TABLE db.t TBLPROPERTIES ('format-version'='3') AS {NANOS}")
    assert _types(con) == {"ts": TimestampNanoType(), "tz": TimestamptzNanoType(), "t": TimeType()}
    ns = con.execute("SELECT epoch_ns(ts) FROM db.t").fetchall()
    assert ns == duckdb.connect().execute(f"SELECT epoch_ns(ts) FROM ({NANOS})").fetchall()


def test_replace_coerces_for_the_tables_version(con: Connection) -> None:
    con.execute("CREATE TABLE db.t TBLPROPERTIES ('format-version'='3') AS SELECT 1 AS a")
    con.execute(f"CREATE OR REPLACE TABLE db.t AS {NANOS}")
    assert _types(con)["ts"] == TimestampNanoType()  # the table stays version 3


def test_pandas_parquet_nanoseconds(con: Connection, tmp_path: Path) -> None:
    path = tmp_path / "pandas.parquet"
    table = pa.table({"ts": pa.array([1_700_000_000_123_456_789], pa.timestamp("ns")), "n": [1]})
    pq.write_table(table, path)
    con.execute(f"CREATE TABLE db.t AS SELECT * FROM read_parquet('{path}')")
    assert _types(con) == {"ts": TimestampType(), "n": LongType()}
    _same_rows(con, "t", f"SELECT ts::TIMESTAMP, n FROM read_parquet('{path}')")


def test_second_and_milli_timestamps_are_timestamps(con: Connection) -> None:
    query = "SELECT TIMESTAMP_S '2024-01-01 10:00:01' AS s, TIMESTAMP_MS '2024-01-01 10:00:01.123' AS ms"
    con.execute(f"CREATE TABLE db.t AS {query}")
    assert _types(con) == {"s": TimestampType(), "ms": TimestampType()}
    _same_rows(con, "t", f"SELECT s::TIMESTAMP, ms::TIMESTAMP FROM ({query})")


def test_enum_is_string(con: Connection) -> None:
    con.execute("CREATE TABLE db.t AS SELECT 'b'::ENUM('a', 'b') AS e")
    assert _types(con) == {"e": StringType()}
    assert con.execute("SELECT e FROM db.t").fetchall() == [("b",)]


@pytest.mark.parametrize(
    ("expression", "shown", "advice"),
    [
        ("INTERVAL 3 DAY", "INTERVAL", "no interval type"),
        ("'12:00:00+02'::TIMETZ", "TIME WITH TIME ZONE", "cast it to TIME"),
        ("'0101'::BIT", "BIT", "no bit string"),
        ("union_value(k := 1)", "UNION", "no union type"),
        ("[INTERVAL 1 DAY]", "INTERVAL", "no interval type"),
        ("[1::BIGNUM]", "BIGNUM", "cast it to BIGINT"),
    ],
)
def test_types_without_iceberg_counterpart_are_refused(
    con: Connection, expression: str, shown: str, advice: str
) -> None:
    with pytest.raises(UnsupportedError, match=rf"column 'x(\.element)?' has DuckDB type {shown}.*{advice}"):
        con.execute(f"CREATE TABLE db.t AS SELECT {expression} AS x")
    assert not con.session.catalog.table_exists(TableIdentifier(("db",), "t"))


def test_insert_casts_to_the_tables_types(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (k BIGINT, s BIGINT, d DECIMAL(38, 0), ts TIMESTAMP)")
    query = (
        "SELECT i % 2 AS k, sum(i) AS s, sum(i)::HUGEINT * 1000000000000000000000 AS d, "
        "max(TIMESTAMP_NS '2024-01-01 00:00:00.000001999') AS ts FROM range(10) r(i) GROUP BY 1"
    )
    con.execute(f"INSERT INTO db.t {query}")
    _same_rows(con, "t", f"SELECT k, s::BIGINT, d::DECIMAL(38, 0), ts::TIMESTAMP FROM ({query})")


def test_pandas_dataframe_nanoseconds(con: Connection) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"ts": pd.to_datetime(["2024-01-01 00:00:00.123456789"]), "n": [1]})
    con.register("frame", frame)
    con.execute("CREATE TABLE db.t AS SELECT * FROM frame")
    assert _types(con) == {"ts": TimestampType(), "n": LongType()}
    assert con.execute("SELECT * FROM db.t").fetchall() == duckdb.connect().execute(
        "SELECT ts::TIMESTAMP, n FROM frame"
    ).fetchall()
