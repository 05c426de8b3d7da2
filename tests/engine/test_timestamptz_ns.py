"""Iceberg v3 ``timestamptz_ns`` end to end: DuckDB's TIMESTAMPTZ_NS, an instant.

"timestamptz_ns: Stores nanoseconds from 1970-01-01 00:00:00.000000000 UTC" (spec, Appendix
D), in Parquet as ``TIMESTAMP_NANOS`` with ``adjustToUtc=true`` (Appendix A). Every test runs
in a New York session: the instants sit on both sides of midnight there, so reading them as
wall clocks (what a zone-less TIMESTAMP_NS would do) moves them by five hours and across a
day, an hour partition and a file's bounds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import iceduck
from iceduck.connection import Connection

ZONE = "America/New_York"
#: (id, instant as written, nanoseconds from the UTC epoch)
ROWS = [
    (1, "2024-01-01 00:30:00.123456789+00", 1_704_069_000_123_456_789),  # Dec 31, 19:30 in New York
    (2, "2024-01-01 04:59:59.999999999+00", 1_704_085_199_999_999_999),  # Dec 31, 23:59:59.999999999
    (3, "2024-01-01 05:00:00.000000001+00", 1_704_085_200_000_000_001),  # Jan 1, 00:00:00.000000001
    (4, "2024-01-02 12:00:00.000000500+00", 1_704_196_800_000_000_500),
]
EPOCH_NS = {i: ns for i, _, ns in ROWS}
VALUES = ", ".join(f"({i}, '{text}')" for i, text, _ in ROWS)


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    c = iceduck.connect(tmp_path / "wh")
    c.execute("CREATE NAMESPACE db")
    c.execute(f"SET TimeZone = '{ZONE}'")
    yield c
    c.close()


def _v3(con: Connection, partitioning: str = "") -> None:
    """``db.t (id, c timestamptz_ns)`` on v3 holding :data:`ROWS`, one file per row."""
    con.execute(
        f"CREATE TABLE db.t (id INT, c TIMESTAMPTZ_NS) {partitioning} TBLPROPERTIES ('format-version'='3')"
    )
    for i, text, _ in ROWS:
        con.execute(f"INSERT INTO db.t VALUES ({i}, '{text}')")


def _epochs(con: Connection, table: str = "db.t") -> dict[int, int]:
    return dict(con.execute(f"SELECT id, epoch_ns(c) FROM {table}").fetchall())


def _column_type(con: Connection, table: str, column: str = "c") -> str:
    rows = con.execute(f"DESCRIBE {table}").fetchall()
    return next(r[1] for r in rows if r[0] == column)


def test_describe_says_timestamptz_ns(con: Connection) -> None:
    _v3(con)
    assert _column_type(con, "db.t") == "TIMESTAMPTZ_NS"
    assert con.execute("SELECT typeof(c) FROM db.t LIMIT 1").fetchall() == [("TIMESTAMPTZ_NS",)]


def test_insert_values_read_back_as_the_same_instants(con: Connection) -> None:
    _v3(con)
    assert _epochs(con) == EPOCH_NS


def test_ctas_and_insert_select_of_timestamptz_ns_expressions(con: Connection) -> None:
    query = f"SELECT id, c::TIMESTAMPTZ_NS AS c FROM (VALUES {VALUES}) v(id, c)"
    con.execute(f"CREATE TABLE db.s TBLPROPERTIES ('format-version'='3') AS {query}")
    assert _column_type(con, "db.s") == "TIMESTAMPTZ_NS"
    assert _epochs(con, "db.s") == EPOCH_NS
    _v3(con)
    con.execute("CREATE TABLE db.u (id INT, c TIMESTAMPTZ_NS) TBLPROPERTIES ('format-version'='3')")
    con.execute("INSERT INTO db.u SELECT * FROM db.t")
    assert _epochs(con, "db.u") == EPOCH_NS


def test_rewritten_rows_keep_their_instants(con: Connection) -> None:
    """A copy-on-write UPDATE reads the file's other rows and writes them again."""
    con.execute(
        "CREATE TABLE db.t (id INT, c TIMESTAMPTZ_NS) "
        "TBLPROPERTIES ('format-version'='3', 'write.update.mode'='copy-on-write')"
    )
    con.execute(f"INSERT INTO db.t VALUES {VALUES}")
    con.execute("UPDATE db.t SET id = id + 10 WHERE id = 1")
    assert _epochs(con) == {(i + 10 if i == 1 else i): ns for i, ns in EPOCH_NS.items()}


@pytest.mark.parametrize(
    ("condition", "ids"),
    [
        ("c = '2024-01-01 05:00:00.000000001+00'", [3]),
        ("c = CAST('2024-01-01 00:00:00.000000001-05' AS TIMESTAMPTZ_NS)", [3]),
        ("c < TIMESTAMPTZ '2024-01-01 00:00:00-05'", [1, 2]),
        ("c >= '2024-01-01 00:00:00'", [3, 4]),  # no offset: the session's midnight
    ],
)
def test_comparisons_with_zoned_literals(con: Connection, condition: str, ids: list[int]) -> None:
    _v3(con)
    assert [r[0] for r in con.execute(f"SELECT id FROM db.t WHERE {condition} ORDER BY id").fetchall()] == ids


#: predicates whose pruning (by partition and by file bounds) must not change the rows
PREDICATES = [
    "c = '2024-01-01 05:00:00.000000001+00'",
    "c = '2024-01-01 05:00:00.000000001'",
    "c >= '2024-01-01'",
    "c < '2024-01-01 00:00:00'",
    "c <= CAST('2024-01-01 04:59:59.999999999+00' AS TIMESTAMPTZ_NS)",
    "c > TIMESTAMPTZ '2023-12-31 23:59:59.999999-05'",
    "c IN ('2024-01-01 00:30:00.123456789+00', '2024-01-02 07:00:00.0000005-05')",
    # DuckDB 2.0.1 casts TIMESTAMP and DATE to TIMESTAMPTZ_NS as UTC wall clocks
    "c < TIMESTAMP '2024-01-01 01:00:00'",
    "c >= DATE '2024-01-01'",
    "c = TIMESTAMP '2024-01-01 00:30:00.123456789'",  # DuckDB compares with .123456
    "c BETWEEN '2023-12-31 19:30:00.123456789' AND '2024-01-01 00:00:00'",
]


@pytest.mark.parametrize("partitioning", ["", "PARTITIONED BY (hour(c))", "PARTITIONED BY (day(c))"])
def test_pruning_agrees_with_duckdb_over_every_row(con: Connection, partitioning: str) -> None:
    """The rows iceduck returns (after pruning files by partition values and bounds) are
    the rows DuckDB keeps when it filters all of them itself, in the same session zone."""
    _v3(con, partitioning)
    plain = duckdb.connect()
    plain.execute(f"SET TimeZone = '{ZONE}'")
    plain.execute(f"CREATE TABLE t AS SELECT id, c::TIMESTAMPTZ_NS AS c FROM (VALUES {VALUES}) v(id, c)")
    pruned = 0
    for predicate in PREDICATES:
        mine = con.execute(f"SELECT id FROM db.t WHERE {predicate} ORDER BY id").fetchall()
        theirs = plain.execute(f"SELECT id FROM t WHERE {predicate} ORDER BY id").fetchall()
        assert mine == theirs, predicate
        plan = con.execute(f"EXPLAIN SELECT id FROM db.t WHERE {predicate}").fetchall()
        explained = "\n".join(r[0] for r in plan)
        pruned += " 0 skipped (" not in explained
    assert pruned > 0  # some predicate did prune files


def test_parquet_of_another_writer(con: Connection, tmp_path: Path) -> None:
    """A file pyarrow wrote (``timestamp[ns, tz=UTC]``: ``isAdjustedToUTC=true``), added
    with its footer's bounds, reads and prunes as the same instants."""
    source = tmp_path / "src"
    source.mkdir()
    for i, _, ns in ROWS:
        table = pa.table({"id": pa.array([i], pa.int32()), "c": pa.array([ns], pa.timestamp("ns", tz="UTC"))})
        pq.write_table(table, source / f"part-{i}.parquet")
    con.execute("CREATE TABLE db.t (id INT, c TIMESTAMPTZ_NS) TBLPROPERTIES ('format-version'='3')")
    con.execute(f"CALL iceduck.system.add_files(table => 'db.t', source_table => '`parquet`.`{source}`')")
    assert _epochs(con) == EPOCH_NS
    assert con.execute("SELECT id FROM db.t WHERE c >= '2024-01-01 00:00:00' ORDER BY id").fetchall() == [
        (3,),
        (4,),
    ]


def test_python_arrow_and_pandas_values_are_instants(con: Connection) -> None:
    _v3(con)
    query = "SELECT c FROM db.t WHERE id = 3"
    (value,) = con.execute(query).fetchone() or (None,)
    assert value == dt.datetime(2024, 1, 1, 5, 0, tzinfo=dt.UTC)  # Python stops at micros
    assert value.utcoffset() is not None
    arrow = con.execute(query).to_arrow_table()
    assert arrow.schema.field("c").type.tz is not None
    assert arrow.column("c").cast(pa.int64()).to_pylist() == [EPOCH_NS[3]]
    frame = con.execute(query).df()
    assert str(frame["c"].dt.tz) == ZONE  # as DuckDB zones a TIMESTAMPTZ column
    assert frame["c"].iloc[0].value == EPOCH_NS[3]
    assert frame["c"].iloc[0].tz_convert("UTC").to_pydatetime(warn=False) == value.astimezone(ZoneInfo("UTC"))


def test_below_v3_declared_nanoseconds_are_refused_and_values_become_micros(con: Connection) -> None:
    """The spec: "nanosecond-precision timestamps are part of the v3 spec; using v3 types in
    v1 or v2 tables can break forward compatibility". A v1/v2 table refuses the type, as it refuses
    ``timestamp_ns``; a TIMESTAMPTZ_NS value written to it (INSERT, CTAS) lands in a
    ``timestamptz`` column as the same instant in microseconds (DuckDB's cast rounds)."""
    with pytest.raises(iceduck.Error, match="format-version 3"):
        con.execute("CREATE TABLE db.v2 (c TIMESTAMPTZ_NS)")
    con.execute("CREATE TABLE db.v2 (id INT, c TIMESTAMPTZ)")
    con.execute(f"INSERT INTO db.v2 SELECT id, c::TIMESTAMPTZ_NS FROM (VALUES {VALUES}) v(id, c)")
    con.execute(f"CREATE TABLE db.ctas AS SELECT id, c::TIMESTAMPTZ_NS AS c FROM (VALUES {VALUES}) v(id, c)")
    expected = {i: (ns + 500) // 1000 * 1000 for i, ns in EPOCH_NS.items()}
    assert _epochs(con, "db.v2") == expected
    assert _epochs(con, "db.ctas") == expected
    assert _column_type(con, "db.ctas") == "TIMESTAMP WITH TIME ZONE"
