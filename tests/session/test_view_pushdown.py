"""A filter outside a view prunes the files of the tables inside it (iceduck.sql.derived):
through a catalog view, a session view and a subquery in FROM, EXPLAIN shows the table's
files skipped, and the rows equal those with pruning off and those of the query written
over the table directly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path_factory.mktemp("view_pushdown") / "wh")
    con.execute("CREATE NAMESPACE ns")
    con.execute("CREATE TABLE ns.t (id bigint, name string, amount double) PARTITIONED BY (bucket(4, id))")
    for i in range(8):  # a file per row at least
        con.execute(f"INSERT INTO ns.t VALUES ({i}, 'n{i}', {i * 1.5})")
    con.execute("CREATE VIEW ns.v (k, label) AS SELECT id, name FROM ns.t WHERE amount >= 0")
    con.execute("CREATE VIEW ns.star AS SELECT * FROM ns.t")
    con.execute("CREATE VIEW ns.grouped (k, n) AS SELECT id, count(*) FROM ns.t GROUP BY id")
    con.execute("CREATE TABLE ns.w (id int, name string) PARTITIONED BY (bucket(4, id))")
    for i in range(8):
        con.execute(f"INSERT INTO ns.w VALUES ({i}, 'n{i}')")
    con.execute("CREATE VIEW ns.retyped (k) AS SELECT id FROM ns.w")
    con.execute("ALTER TABLE ns.w ALTER COLUMN id TYPE bigint")  # the view's k stays int
    con.execute("CREATE TEMP VIEW tv AS SELECT id AS k, name FROM ns.t")
    yield con
    con.close()


def files(con: Connection, sql: str) -> tuple[int, int]:
    """(read, skipped) of EXPLAIN's ``data files: N read, M skipped`` (one scan)."""
    lines = [r[0] for r in con.execute(f"EXPLAIN {sql}").fetchall()]
    [line] = [x for x in lines if x.strip().startswith("data files:")]
    words = line.split(":")[1].replace(",", "").split()
    return int(words[0]), int(words[2])


def rows(con: Connection, sql: str, pruning: bool = True) -> list[tuple[Any, ...]]:
    if not pruning:
        con.execute("SET iceduck.pruning = false")
    try:
        return sorted(con.execute(sql).fetchall(), key=repr)
    finally:
        con.execute("RESET iceduck.pruning")


VIEWS = [
    ("SELECT * FROM ns.v WHERE k = 5", "SELECT id, name FROM ns.t WHERE amount >= 0 AND id = 5"),
    ("SELECT label FROM ns.v AS x WHERE x.k IN (1, 5)", "SELECT name FROM ns.t WHERE id IN (1, 5)"),
    ("SELECT * FROM ns.star WHERE id = 5", "SELECT * FROM ns.t WHERE id = 5"),
    ("SELECT * FROM tv WHERE k = 5", "SELECT id, name FROM ns.t WHERE id = 5"),
    ("SELECT * FROM (SELECT id AS k FROM ns.t) s WHERE k = 5", "SELECT id FROM ns.t WHERE id = 5"),
]


@pytest.mark.parametrize(("sql", "direct"), VIEWS)
def test_a_filter_outside_a_view_skips_files(con: Connection, sql: str, direct: str) -> None:
    read, skipped = files(con, sql)
    assert skipped > 0
    assert read == files(con, direct)[0] < files(con, "SELECT * FROM ns.t")[0]
    assert rows(con, sql) == rows(con, sql, pruning=False) == rows(con, direct)
    assert rows(con, sql) != []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM ns.grouped WHERE k = 5",  # an aggregate inside
        "SELECT * FROM ns.retyped WHERE k = 5",  # the view's type is not the column's
        "SELECT * FROM (SELECT id AS k FROM ns.t LIMIT 100) s WHERE k = 5",
        "SELECT * FROM (SELECT id + 0 AS k FROM ns.t) s WHERE k = 5",
        "SELECT * FROM (SELECT 1 AS one) o LEFT JOIN tv ON o.one = 1 WHERE tv.k = 5",
    ],
)
def test_nothing_is_pushed_where_it_could_change_rows(con: Connection, sql: str) -> None:
    read, skipped = files(con, sql)
    assert (read, skipped) == (8, 0)
    assert rows(con, sql) == rows(con, sql, pruning=False)
