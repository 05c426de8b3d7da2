"""Column names and binder errors are DuckDB's for the user's own text.

The oracle is plain DuckDB: the same rows in a DuckDB table ``shop.orders`` and the same
query text. iceduck must head every column as DuckDB heads it there and refuse a wrong
column with DuckDB's words, never with the text it rewrote the query into (``read_parquet``,
``c0``, ``__r1``) or with only the columns it chose to read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest

import iceduck

ROWS = "SELECT i AS id, 'c' || (i % 3) AS customer, (i % 7)::DECIMAL(10, 2) AS amount FROM range(20) r(i)"


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    con = iceduck.connect(tmp_path_factory.mktemp("names"))
    cur = con.cursor()
    cur.execute("CREATE NAMESPACE shop")
    cur.execute("CREATE TABLE shop.orders (id bigint, customer string, amount decimal(10,2))")
    cur.execute(f"INSERT INTO shop.orders {ROWS}")
    duck = duckdb.connect()
    duck.execute("CREATE SCHEMA shop")
    duck.execute(f"CREATE TABLE shop.orders AS {ROWS}")
    yield cur, duck
    con.close()


QUERIES = [
    "SELECT (SELECT max(id) FROM shop.orders)",
    "SELECT (SELECT max(id) FROM shop.orders) + 1, 2",
    "SELECT * FROM (SELECT (SELECT min(amount) FROM shop.orders))",
    "SELECT id, (SELECT count(*) FROM shop.orders AS o WHERE o.id < x.id) FROM shop.orders AS x ORDER BY id",
    "SELECT EXISTS (SELECT 1 FROM shop.orders WHERE id = 3), 5 IN (SELECT id FROM shop.orders)",
    "SELECT coalesce((SELECT sum(amount) FROM shop.orders WHERE customer = 'c1'), 0)",
    "SELECT 1 UNION ALL SELECT (SELECT count(*) FROM shop.orders)",
    "SELECT max(id), count(*), customer FROM shop.orders GROUP BY customer ORDER BY customer",
    "SELECT DISTINCT ON (customer) customer, (SELECT max(id) FROM shop.orders) FROM shop.orders ORDER BY 1",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_names_are_duckdbs_for_the_users_text(peers: tuple[Any, Any], sql: str) -> None:
    cur, duck = peers
    expected = duck.execute(sql)
    names = [d[0] for d in expected.description]
    rows = expected.fetchall()
    cur.execute(sql)
    assert [d[0] for d in cur.description] == names
    assert cur.fetchall() == rows


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT custmer FROM shop.orders",
        "SELECT id FROM shop.orders WHERE amout > 1",
    ],
)
def test_a_wrong_column_gets_duckdbs_candidates(peers: tuple[Any, Any], sql: str) -> None:
    cur, duck = peers
    with pytest.raises(duckdb.BinderException) as expected:
        duck.execute(sql)
    candidates = next(line for line in str(expected.value).splitlines() if "Candidate" in line)
    with pytest.raises(iceduck.ProgrammingError) as got:
        cur.execute(sql)
    assert candidates in str(got.value)
    assert "read_parquet" not in str(got.value) and '"c0"' not in str(got.value)


def test_duckdbs_plan_names_the_users_columns(peers: tuple[Any, Any]) -> None:
    """Files read by a ``schema = MAP`` (one lacks a column added later) and with deleted
    rows: DuckDB's part of EXPLAIN shows the columns' names, not the scan's helpers."""
    cur, _ = peers
    cur.execute(
        "CREATE TABLE shop.evolved (id bigint, customer string, amount decimal(10,2)) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    cur.execute("INSERT INTO shop.evolved SELECT * FROM shop.orders")
    cur.execute("DELETE FROM shop.evolved WHERE id % 7 = 0")
    cur.execute("ALTER TABLE shop.evolved ADD COLUMN note string")
    cur.execute("INSERT INTO shop.evolved VALUES (100, 'c9', 50, 'late')")
    cur.execute("EXPLAIN SELECT customer, note FROM shop.evolved WHERE amount > 3")
    plan = "\n".join(r[0] for r in cur.fetchall())
    duck = plan[plan.index("DuckDB plan:") :]
    assert "customer" in duck and "amount" in duck
    assert "__r" not in duck and not re.search(r"\bc\d+\b", duck)
    cur.execute("SELECT customer, note FROM shop.evolved WHERE amount > 5 ORDER BY id")
    assert cur.fetchall() == [("c0", None), ("c1", None), ("c9", "late")]  # ids 6, 13, 100


def test_a_column_named_like_duckdbs_virtual_columns(peers: tuple[Any, Any]) -> None:
    """A column called ``file_row_number`` next to deleted rows (which the scan finds by
    DuckDB's virtual column of that name) keeps its own values."""
    cur, _ = peers
    cur.execute(
        "CREATE TABLE shop.virtual (id int, file_row_number int, filename string) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    cur.execute("INSERT INTO shop.virtual SELECT i, 100 - i, 'f' || i FROM range(10) r(i)")
    cur.execute("DELETE FROM shop.virtual WHERE id IN (1, 2)")
    cur.execute("SELECT * FROM shop.virtual WHERE file_row_number > 92 ORDER BY id")
    assert cur.fetchall() == [(i, 100 - i, f"f{i}") for i in (0, 3, 4, 5, 6, 7)]
