"""iceduck's PEP 249 surface beyond what the public suite checks (tests/test_dbapi_compliance.py).

Type codes against the type objects, rowcount of DML, both parameter styles, the one-commit
``executemany`` of INSERT ... VALUES, error classes, closed objects, and a cheap import.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UserError
from iceduck.session.batch_insert import batch_insert


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute("CREATE TABLE db.t (id bigint, name string, price decimal(10, 2), day date)")
        yield con


def snapshots(con: Connection, table: str = "db.t") -> int:
    return con.execute(f"SELECT count(*) FROM {table}.snapshots").fetchone()[0]


def test_type_codes_compare_equal_to_their_type_objects(con: Connection) -> None:
    cur = con.execute(
        "SELECT 1::BIGINT a, 'x' b, 1.5::DECIMAL(10,2) c, now() d, DATE '2024-01-01' e, "
        "'x'::BLOB f, [1, 2] g, uuid() h, true i"
    )
    codes = {d[0]: d[1] for d in cur.description}
    assert all(len(d) == 7 for d in cur.description)
    assert codes["a"] == iceduck.NUMBER and codes["c"] == iceduck.NUMBER and codes["i"] == iceduck.NUMBER
    assert codes["b"] == iceduck.STRING and codes["h"] == iceduck.STRING
    assert codes["d"] == iceduck.DATETIME and codes["e"] == iceduck.DATETIME
    assert codes["f"] == iceduck.BINARY
    assert codes["g"] == "INTEGER[]"
    assert all(codes["g"] != t for t in (iceduck.NUMBER, iceduck.STRING, iceduck.DATETIME, iceduck.BINARY))
    assert codes["b"] != iceduck.NUMBER and codes["a"] != iceduck.STRING
    assert all(code != iceduck.ROWID for code in codes.values())
    assert cur.description[2] == ("c", "DECIMAL(10,2)", None, None, 10, 2, None)


def test_nanosecond_type_codes_of_a_v3_table_are_datetimes(con: Connection) -> None:
    """A ``timestamptz_ns`` column's type code names its zone (not TIMESTAMP_NS) and, like
    DuckDB's other nanosecond date-times, is a DATETIME."""
    con.execute(
        "CREATE TABLE db.ns (tz TIMESTAMPTZ_NS, ts TIMESTAMP_NS) TBLPROPERTIES ('format-version'='3')"
    )
    con.execute("INSERT INTO db.ns VALUES ('2024-01-01 00:00:00.5+00', '2024-01-01 00:00:00.5')")
    cur = con.execute("SELECT tz, ts, '12:00:00.123456789'::TIME_NS AS t FROM db.ns")
    assert [d[1] for d in cur.description] == ["TIMESTAMPTZ_NS", "TIMESTAMP_NS", "TIME_NS"]
    assert all(d[1] == iceduck.DATETIME for d in cur.description)


def test_constructors() -> None:
    assert iceduck.Date(2024, 1, 2) == dt.date(2024, 1, 2)
    assert iceduck.Timestamp(2024, 1, 2, 3, 4, 5) == dt.datetime(2024, 1, 2, 3, 4, 5)
    ticks = dt.datetime(2024, 1, 2, 3, 4, 5).timestamp()  # local time, as PEP 249's ticks are
    assert iceduck.TimestampFromTicks(ticks) == dt.datetime(2024, 1, 2, 3, 4, 5)
    assert iceduck.DateFromTicks(ticks) == dt.date(2024, 1, 2)
    assert iceduck.TimeFromTicks(ticks) == dt.time(3, 4, 5)
    assert iceduck.Binary(b"ab") == b"ab"


def test_rowcount_of_dml_ddl_and_queries(con: Connection) -> None:
    cur = con.cursor()
    assert cur.rowcount == -1 and cur.description is None
    cur.execute("INSERT INTO db.t VALUES (1, 'a', 1.5, DATE '2024-01-01'), (2, 'b', 2, NULL)")
    assert cur.rowcount == 2
    cur.execute("UPDATE db.t SET name = 'z' WHERE id = 2")
    assert cur.rowcount == 1
    cur.execute("SELECT * FROM db.t")
    assert cur.rowcount == -1
    cur.execute("DELETE FROM db.t WHERE id > 0")
    assert cur.rowcount == 2
    cur.execute("ALTER TABLE db.t ADD COLUMN extra int")
    assert cur.rowcount == -1 and cur.description == [("Success", "BOOLEAN", None, None, None, None, None)]


def test_a_write_fetches_duckdbs_answer(con: Connection) -> None:
    """As ``duckdb.connect().execute(...)``: DML (and CREATE TABLE AS) fetch one ``Count``
    BIGINT row, the rows changed; CREATE describes ``Count`` and fetches nothing; other DDL
    ``Success`` BOOLEAN, nothing. Checked against DuckDB itself, statement by statement."""
    import duckdb

    duck = duckdb.connect()
    statements = [
        "CREATE TABLE db.w (id bigint, s string)",
        "INSERT INTO db.w VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        "UPDATE db.w SET s = 'z' WHERE id < 3",
        "DELETE FROM db.w WHERE id = 3",
        "MERGE INTO db.w USING (SELECT 1 AS id UNION ALL SELECT 9) s ON w.id = s.id "
        "WHEN MATCHED THEN UPDATE SET s = 'm' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'n')",
        "CREATE TABLE db.w2 AS SELECT * FROM db.w",
        "ALTER TABLE db.w ADD COLUMN x int",
        "DROP TABLE db.w2",
    ]
    pairs = [(sql, sql.replace("db.", "")) for sql in statements]
    for ours_sql, duck_sql in pairs:
        ours, theirs = con.execute(ours_sql), duck.execute(duck_sql)
        described = [(d[0], str(d[1])) for d in theirs.description]
        assert [(d[0], d[1]) for d in ours.description] == described, ours_sql
        assert ours.rowcount == theirs.rowcount, ours_sql
        assert ours.fetchall() == theirs.fetchall(), ours_sql
        assert ours.fetchall() == [] and ours.fetchone() is None
    cur = con.execute("INSERT INTO db.w (id) VALUES (5), (6)")
    assert cur.fetchone() == (2,) and cur.fetchone() is None


def test_qmark_and_named_parameters_in_reads_and_writes(con: Connection) -> None:
    con.execute("INSERT INTO db.t VALUES (?, ?, ?, ?)", [1, "a", Decimal("1.25"), dt.date(2024, 1, 1)])
    con.execute(
        "INSERT INTO db.t VALUES ($id, $name, $price, $day)",
        {"id": 2, "name": "b", "price": Decimal("2.50"), "day": None},
    )
    assert con.execute("SELECT name FROM db.t WHERE id = ?", [2]).fetchall() == [("b",)]
    assert con.execute("SELECT id FROM db.t WHERE name = $n", {"n": "a"}).fetchall() == [(1,)]
    assert con.execute("SELECT price, day FROM db.t WHERE id = 1").fetchone() == (
        Decimal("1.25"),
        dt.date(2024, 1, 1),
    )


def test_executemany_insert_is_one_commit(con: Connection) -> None:
    rows = [(i, f"n{i}", Decimal(i) / 4, dt.date(2024, 1, 1 + i % 28)) for i in range(2000)]
    rows[7] = (7, None, None, None)
    cur = con.cursor()
    cur.executemany("INSERT INTO db.t VALUES (?, ?, ?, ?)", rows)
    assert cur.rowcount == 2000
    assert snapshots(con) == 1
    assert con.execute("SELECT * FROM db.t ORDER BY id").fetchall() == rows


def test_executemany_named_with_column_list_is_one_commit(con: Connection) -> None:
    cur = con.cursor()
    params = [{"name": f"n{i}", "id": i, "unused": 0} for i in range(5)]
    cur.executemany('INSERT INTO "db"."t" (id, name) VALUES ($id, $name);', params)
    assert cur.rowcount == 5
    assert snapshots(con) == 1
    assert con.execute("SELECT id, name, price FROM db.t ORDER BY id").fetchall() == [
        (i, f"n{i}", None) for i in range(5)
    ]


def test_executemany_of_other_statements_runs_each_and_sums_rowcounts(con: Connection) -> None:
    con.executemany("INSERT INTO db.t (id, name) VALUES (?, ?)", [(i, "x") for i in range(6)])
    cur = con.cursor()
    cur.executemany("UPDATE db.t SET name = ? WHERE id < ?", [("y", 2), ("z", 5)])
    assert cur.rowcount == 2 + 5
    assert snapshots(con) == 3
    assert [r[0] for r in con.execute("SELECT name FROM db.t ORDER BY id").fetchall()] == [
        "z",
        "z",
        "z",
        "z",
        "z",
        "x",
    ]
    cur.executemany("INSERT INTO db.t (id, name) VALUES (?, ?)", [])
    assert cur.rowcount == 0


def test_executemany_with_a_bad_row_writes_nothing(con: Connection) -> None:
    with pytest.raises(iceduck.Error):
        con.executemany("INSERT INTO db.t (id, day) VALUES (?, ?)", [(1, "2024-01-01"), (2, "not a date")])
    assert snapshots(con) == 0


def test_batch_insert_rewrites_only_marker_rows() -> None:
    batch = batch_insert("insert into ns.t (a, b) values (?, ?)", [(1, "x"), (2, "y")])
    assert batch is not None
    assert batch.sql == "insert into ns.t (a, b) SELECT unnest($1), unnest($2)"
    assert batch.parameters == [[1, 2], ["x", "y"]]
    numbered = batch_insert("INSERT INTO t VALUES ($2, $1)", [(1, "x")])
    assert numbered is not None and numbered.parameters == [[1], ["x"]]
    assert batch_insert("INSERT INTO ns.t VALUES (?, ? + 1)", [(1, 2)]) is None
    assert batch_insert("INSERT OVERWRITE ns.t VALUES (?)", [(1,)]) is None
    assert batch_insert("INSERT INTO ns.t VALUES (?, ?)", [(1, 2), (3,)]) is None  # rows of unequal size
    assert batch_insert("INSERT INTO ns.t VALUES (?, $a)", [(1, 2)]) is None


def test_fetchmany_arraysize_and_iteration(con: Connection) -> None:
    con.executemany("INSERT INTO db.t (id) VALUES (?)", [(i,) for i in range(7)])
    cur = con.execute("SELECT id FROM db.t ORDER BY id")
    assert cur.fetchmany() == [(0,)]
    cur.arraysize = 3
    assert cur.fetchmany() == [(1,), (2,), (3,)]
    assert cur.fetchmany(2) == [(4,), (5,)]
    assert list(cur) == [(6,)]
    assert cur.fetchone() is None and cur.fetchall() == [] and cur.fetchmany() == []


def test_errors_are_pep249_classes_and_iceduck_kinds(con: Connection) -> None:
    with pytest.raises(iceduck.ProgrammingError) as missing:
        con.execute("SELECT * FROM db.nope")
    assert isinstance(missing.value, NotFoundError)
    with pytest.raises(iceduck.ProgrammingError) as syntax:
        con.execute("SELEC 1")
    assert isinstance(syntax.value, UserError)
    assert con.execute("INSERT INTO db.t (id) VALUES (1)").fetchone() == (1,)  # DuckDB's Count
    with pytest.raises(iceduck.ProgrammingError, match="no statement"):
        con.cursor().fetchall()
    assert con.Error is iceduck.Error and con.NotSupportedError is iceduck.NotSupportedError


def test_closed_connection_and_cursor(tmp_path: Path) -> None:
    with iceduck.connect(tmp_path / "wh") as con:
        cur = con.cursor()
        with cur:
            cur.execute("SELECT 1")
        with pytest.raises(iceduck.InterfaceError, match="cursor is closed"):
            cur.execute("SELECT 1")
        other = con.cursor()
        con.commit()
        con.rollback()  # autocommit: nothing to undo, and no error
    assert con.closed
    for call in (con.cursor, con.commit, con.rollback, con.close, lambda: other.execute("SELECT 1")):
        with pytest.raises(iceduck.InterfaceError):
            call()


def test_import_is_cheap() -> None:
    code = "import sys, iceduck; print('duckdb' in sys.modules, 'sqlglot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# -- results read lazily: each query runs at its first fetch ---------------------------------------


def test_description_and_rowcount_before_any_fetch(con: Connection) -> None:
    cur = con.execute("SELECT id, name FROM db.t WHERE id > ?", [0])
    assert [d[0] for d in cur.description] == ["id", "name"] and cur.rowcount == -1
    with pytest.raises(UserError, match="nosuch"):  # a wrong name still fails at execute
        con.execute("SELECT nosuch FROM db.t")
    cur.fetch_arrow_table()
    assert [d[0] for d in cur.description] == ["id", "name"]  # unchanged once read


def test_several_open_results_read_in_turn(con: Connection) -> None:
    con.executemany("INSERT INTO db.t (id, name) VALUES (?, ?)", [(i, f"n{i}") for i in range(5000)])
    query = "SELECT id FROM db.t WHERE id % ? = 0 ORDER BY id"
    rows = con.execute(query, [2])
    reader = con.execute(query, [3]).fetch_record_batch(100)
    table = con.execute(query, [5])
    got_rows: list[int] = []
    got_reader: list[int] = []
    while chunk := rows.fetchmany(100):  # one chunk of rows, then one batch of the stream
        got_rows.extend(r[0] for r in chunk)
        try:
            got_reader.extend(reader.read_next_batch()["id"].to_pylist())
        except StopIteration:
            pass
    assert got_rows == list(range(0, 5000, 2)) and got_reader == list(range(0, 5000, 3))
    assert table.fetch_arrow_table()["id"].to_pylist() == list(range(0, 5000, 5))


def test_closing_an_unread_result(con: Connection) -> None:
    cur = con.execute("SELECT * FROM range(100000000) t(i)")
    cur.close()
    reader = con.execute("SELECT * FROM range(100000000) t(i)").fetch_record_batch(10)
    reader.read_next_batch()
    reader.close()  # the rest is never computed
    assert con.execute("SELECT count(*) FROM db.t").fetchone() == (0,)


#: minutes of work, bound at once and run at the first fetch
SLOW = "SELECT a.i * b.i AS x FROM range(100000000) a(i), range(1000) b(i)"


@pytest.mark.parametrize(
    ("query", "form"),
    [
        (f"SELECT sum(x) FROM ({SLOW})", "fetchall"),
        (f"SELECT sum(x) FROM ({SLOW})", "fetch_arrow_table"),
        (f"SELECT sum(x) FROM ({SLOW})", "fetch_record_batch"),
        (f"SUMMARIZE {SLOW}", "fetchall"),  # a session statement answering rows
    ],
)
def test_interrupt_stops_a_running_fetch(con: Connection, query: str, form: str) -> None:
    cur = con.execute(query)
    outcome: list[BaseException | object] = []

    def read() -> None:
        try:
            result = getattr(cur, form)()
            outcome.append(result.read_all() if form == "fetch_record_batch" else result)
        except BaseException as e:
            outcome.append(e)

    worker = threading.Thread(target=read)
    worker.start()
    deadline = time.monotonic() + 60
    while worker.is_alive() and time.monotonic() < deadline:
        con.interrupt()
        worker.join(0.05)
    assert not worker.is_alive()
    assert isinstance(outcome[0], UserError) and "interrupted" in str(outcome[0])
    assert con.execute("SELECT 42").fetchone() == (42,)  # the connection goes on
