"""Repeated queries (:mod:`iceduck.session.prepared`): the second run of the same text with
the same parameters reuses the first run's plan, rewritten text and DuckDB binding, and
never answers from a table version that is no longer current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import iceduck
from iceduck.connection import Connection

QUERY = "SELECT count(*), sum(v) FROM db.t WHERE id >= ?"


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute("CREATE TABLE db.t (id bigint, v bigint) USING iceberg PARTITIONED BY (bucket(4, id))")
        con.execute("INSERT INTO db.t SELECT i, i * 10 FROM range(100) r(i)")
    return tmp_path / "wh"


def _answer(con: Connection, sql: str = QUERY, params: tuple[int, ...] = (90,)) -> tuple[int, int]:
    row = con.cursor().execute(sql, params).fetchone()
    assert row is not None
    return row[0], row[1]


def _kept(con: Connection) -> int:
    return len(con.session.prepared._entries)


def test_a_repeated_query_runs_from_what_its_first_run_kept(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        assert _answer(con) == (10, sum(i * 10 for i in range(90, 100)))
        assert _kept(con) == 1
        planned = con.session.manifests.hits
        assert _answer(con) == (10, sum(i * 10 for i in range(90, 100)))
        # the second run read no manifest, not even from the cache: it was not planned again
        assert con.session.manifests.hits == planned
        # other values are another plan (``id >= ?`` prunes by the value), kept apart
        assert _answer(con, params=(95,)) == _answer(con, params=(95,)) == (5, 950 + 960 + 970 + 980 + 990)
        assert _kept(con) == 2
        assert _answer(con) == (10, sum(i * 10 for i in range(90, 100)))


def test_a_snapshot_committed_by_the_same_connection_is_seen(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        assert _answer(con) == _answer(con) == _answer(con) == (10, 9450)
        assert _kept(con) == 1
        con.execute("INSERT INTO db.t VALUES (1000, 1)")
        assert _answer(con) == _answer(con) == _answer(con) == (11, 9451)
        con.execute("DELETE FROM db.t WHERE id = 99")
        assert _answer(con) == (10, 9451 - 990)


def test_a_snapshot_committed_by_another_connection_is_seen(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con, iceduck.connect(warehouse) as other:
        assert _answer(con) == _answer(con) == _answer(con) == (10, 9450)
        assert _kept(con) == 1
        other.execute("INSERT INTO db.t VALUES (1000, 1)")
        assert _answer(con) == (11, 9451)


def test_a_snapshot_committed_by_another_process_is_seen(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        assert _answer(con) == _answer(con) == _answer(con) == (10, 9450)
        assert _kept(con) == 1
        script = (
            "import iceduck, sys\n"
            "with iceduck.connect(sys.argv[1]) as c:\n"
            "    c.execute('INSERT INTO db.t VALUES (1000, 1), (2000, 2)')\n"
        )
        root = Path(__file__).resolve().parents[2]
        subprocess.run([sys.executable, "-c", script, str(warehouse)], check=True, cwd=root)
        assert _answer(con) == (12, 9453)


def test_a_schema_change_is_seen(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        sql = "SELECT * FROM db.t WHERE id = ?"
        for _ in range(3):
            assert con.execute(sql, (5,)).fetchall() == [(5, 50)]
        con.execute("ALTER TABLE db.t ADD COLUMN w string")
        cursor = con.execute(sql, (5,))
        assert [d[0] for d in cursor.description] == ["id", "v", "w"]
        assert cursor.fetchall() == [(5, 50, None)]


def test_an_open_result_keeps_its_rows_while_the_query_runs_again(warehouse: Path) -> None:
    """A kept query's DuckDB cursor is lent to one result at a time: a second run while the
    first result is open runs on a cursor of its own, and both read all their rows."""
    with iceduck.connect(warehouse) as con:
        sql = "SELECT id FROM db.t WHERE id >= ? ORDER BY id"
        first = con.cursor().execute(sql, (0,))  # kept: its cursor is lent to ``first``
        assert _kept(con) == 1
        assert first.fetchone() == (0,)
        second = con.cursor().execute(sql, (0,))
        third = con.cursor().execute(sql, (0,))
        assert [r[0] for r in second.fetchall()] == list(range(100))
        assert [r[0] for r in third.fetchall()] == list(range(100))
        assert [r[0] for r in first.fetchall()] == list(range(1, 100))
        for cursor in (first, second, third):
            cursor.close()
        again = con.cursor().execute(sql, (0,))
        assert again.fetchmany(2) == [(0,), (1,)]
        assert con.execute(sql, (0,)).fetchall()[-1] == (99,)  # the unread rest dropped


def test_a_repeated_query_streams_as_arrow(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        assert _answer(con) == _answer(con) == (10, 9450)
        table = con.execute(QUERY, (90,)).fetch_arrow_table()
        assert table.to_pylist() == [{"count_star()": 10, "sum(v)": 9450}]
        reader = con.execute(QUERY, (90,)).fetch_record_batch()
        assert isinstance(reader, pa.RecordBatchReader)
        assert reader.read_all().num_rows == 1


def test_a_registered_object_of_the_same_name_outranks_a_kept_query(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        con.execute("USE db")
        sql = "SELECT count(*) FROM t"
        for _ in range(3):
            assert con.execute(sql).fetchall() == [(100,)]
        con.register("t", pa.table({"x": [1, 2]}))
        assert con.execute(sql).fetchall() == [(2,)]
        con.unregister("t")
        assert con.execute(sql).fetchall() == [(100,)]
        cursor = con.cursor()
        cursor.register("t", pa.table({"x": [1, 2, 3]}))
        assert cursor.execute(sql).fetchall() == [(3,)]


def test_use_and_session_views_start_over(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE other")
        con.execute("CREATE TABLE other.t (id bigint, v bigint) USING iceberg")
        con.execute("USE db")
        for _ in range(3):
            assert con.execute("SELECT count(*) FROM t").fetchall() == [(100,)]
        con.execute("USE other")
        assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]


def test_nothing_is_kept_inside_a_transaction(warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        assert _answer(con) == _answer(con) == (10, 9450)
        con.execute("BEGIN")
        con.execute("INSERT INTO db.t VALUES (1000, 1)")
        assert _answer(con) == (11, 9451)  # its own uncommitted write
        con.execute("ROLLBACK")
        assert _answer(con) == (10, 9450)


def test_select_item_names_are_asked_of_duckdb_once_per_text(warehouse: Path) -> None:
    """An unaliased item around a table reference is named as DuckDB names its text, which
    depends on the text alone: a statement run with new parameters, planned afresh, does not
    ask DuckDB for it again."""
    with iceduck.connect(warehouse) as con:
        names = con.session._item_names
        sql = "SELECT (SELECT max(v) FROM db.t WHERE id < ?), 1 + 1"
        for value in (90, 95, 97):
            cursor = con.execute(sql, (value,))
            assert [d[0] for d in cursor.description] == [
                "(SELECT max(v) FROM db.t WHERE (id < $1))",
                "(1 + 1)",
            ]
            assert cursor.fetchone() == ((value - 1) * 10, 2)
        assert names.misses == 1 and names.hits == 2


def test_what_kept_queries_hold_is_bounded(warehouse: Path) -> None:
    """Kept queries are bounded in number and in the data files their plans list; a query
    over more files than the bound alone is not kept, and still answers."""
    with iceduck.connect(warehouse) as con:
        prepared = con.session.prepared
        prepared.max_entries, prepared.max_files = 2, 5
        for value in (0, 10, 20):
            assert _answer(con, params=(value,)) == (100 - value, sum(i * 10 for i in range(value, 100)))
        # each plan lists 4 files (one per bucket): two would hold 8, so each evicts the one before
        assert _kept(con) == 1 and prepared._files == 4
        prepared.max_files = 100
        for value in (0, 10, 20):
            assert _answer(con, params=(value,)) == (100 - value, sum(i * 10 for i in range(value, 100)))
        assert _kept(con) == 2 and prepared._files == 8
        prepared.max_files = 3  # a plan of 4 files is not kept at all
        assert _answer(con, params=(30,)) == (70, sum(i * 10 for i in range(30, 100)))
        assert _answer(con, params=(30,)) == (70, sum(i * 10 for i in range(30, 100)))
        assert _kept(con) == 2 and prepared._files == 8


def test_equal_values_of_another_scale_or_sign_are_another_query(warehouse: Path) -> None:
    """``Decimal('1.0') == Decimal('1.00')`` and ``0.0 == -0.0`` in Python, but DuckDB types and
    prints them differently: a kept query must not answer one with the other's binding."""
    from decimal import Decimal

    sql = "SELECT ? AS x, count(*) FROM db.t WHERE id >= 99"
    with iceduck.connect(warehouse) as con:
        for _ in range(2):
            cur = con.cursor().execute(sql, (Decimal("1.0"),))
            assert cur.fetchall() == [(Decimal("1.0"), 1)]
            assert cur.description[0][1] == "DECIMAL(2,1)"
            cur = con.cursor().execute(sql, (Decimal("1.00"),))
            assert cur.description[0][1] == "DECIMAL(3,2)"
            rows = cur.fetchall()
            assert str(rows[0][0]) == "1.00", rows
            cur = con.cursor().execute(sql, (-0.0,))
            assert str(cur.fetchall()[0][0]) == "-0.0"
            cur = con.cursor().execute(sql, (0.0,))
            assert str(cur.fetchall()[0][0]) == "0.0"
