"""Scans output only the columns a query can name (:mod:`iceduck.sql.columns`): the rule,
and the rows of queries that use columns without naming them, which must see them all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlglot

import iceduck
from iceduck.sql.columns import columns_used, names_used


def used(sql: str) -> frozenset[str] | None:
    return names_used(sqlglot.parse_one(sql, read="duckdb"))


def test_identifiers_anywhere_are_kept_case_insensitively() -> None:
    names = used(
        "SELECT A, s.x FROM db.t JOIN db.u USING (K) WHERE EXISTS (SELECT 1 FROM db.v WHERE v.B = t.C)"
    )
    assert names is not None
    assert {"a", "s", "x", "k", "b", "c"} <= names


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM db.t",
        "FROM db.t",
        "SELECT t.* FROM db.t",
        "SELECT * EXCLUDE (a) FROM db.t",
        "SELECT COLUMNS('a.*') FROM db.t",
        "SELECT a FROM db.t NATURAL JOIN db.u",
        "PIVOT db.t ON a USING sum(b)",
        "UNPIVOT db.t ON a, b INTO NAME k VALUE v",
        "SELECT t FROM db.t AS t",
        "SELECT to_json(x) FROM db.t x",
        "SELECT a FROM db.t WHERE k IN (SELECT * FROM db.u)",
    ],
)
def test_nothing_pruned_where_columns_are_used_unnamed(sql: str) -> None:
    assert used(sql) is None


def test_count_star_names_no_column() -> None:
    assert used("SELECT count(*) FROM db.t") == frozenset({"db", "t"})


@pytest.fixture
def con(tmp_path: Path) -> Any:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (k bigint, a string, b double, s struct<x: int, y: string>, z int)")
    con.execute("INSERT INTO db.t VALUES (1, 'one', 1.5, {'x': 10, 'y': 'p'}, 7), (2, 'two', 2.5, NULL, 8)")
    con.execute("CREATE TABLE db.u (k bigint, a string, c int)")
    con.execute("INSERT INTO db.u VALUES (1, 'one', 100), (2, 'zwei', 200)")
    return con


def scanned(con: Any, sql: str) -> str:
    cur = con.cursor()
    cur.execute(sql)
    cur.fetchall()
    return cur.result.statement


def test_a_scan_outputs_the_named_columns_only(con: Any) -> None:
    text = scanned(con, "SELECT K, s.x FROM db.t WHERE z > 7")
    assert '"k"' in text and '"s"' in text and '"z"' in text
    assert '"a"' not in text and '"b"' not in text
    assert con.execute("SELECT K, s.x FROM db.t WHERE z > 6 ORDER BY k").fetchall() == [(1, 10), (2, None)]
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(2,)]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM db.t NATURAL JOIN db.u ORDER BY k", [(1, "one", 1.5, {"x": 10, "y": "p"}, 7, 100)]),
        ("SELECT k, c FROM db.t JOIN db.u USING (k, a) ORDER BY k", [(1, 100)]),
        ("SELECT t FROM db.t AS t WHERE k = 2", [({"k": 2, "a": "two", "b": 2.5, "s": None, "z": 8},)]),
        ("SELECT COLUMNS('^[kz]$') FROM db.t ORDER BY k", [(1, 7), (2, 8)]),
        ("SELECT k FROM db.t WHERE a IN (SELECT a FROM db.u WHERE u.c > 50) ORDER BY k", [(1,)]),
        ("SELECT max(COLUMNS(* EXCLUDE (s, a))) FROM db.t", [(2, 2.5, 8)]),
    ],
)
def test_queries_that_use_columns_unnamed_see_them_all(con: Any, sql: str, expected: list[Any]) -> None:
    assert con.execute(sql).fetchall() == expected


def tables_named(tree: Any, *names: str) -> set[int]:
    return {id(t) for t in tree.find_all(sqlglot.exp.Table) if t.name in names}


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM (SELECT a FROM db.t) AS x",
        "WITH c AS (SELECT a FROM db.t) SELECT * FROM c",
        "SELECT k FROM db.t WHERE EXISTS (SELECT * FROM db.u WHERE u.k = t.k)",
        "SELECT * FROM (SELECT a FROM db.t) AS x, (SELECT count(*) AS n FROM db.u) AS y",
    ],
)
def test_a_star_over_derived_tables_prunes_the_tables_below(sql: str) -> None:
    tree = sqlglot.parse_one(sql, read="duckdb")
    found = columns_used(tree, tables_named(tree, "t", "u"))
    assert found.names is not None and not found.whole


def test_a_star_reads_whole_only_the_tables_of_its_own_select() -> None:
    tree = sqlglot.parse_one(
        "SELECT x.a, u.c FROM (SELECT *, a AS b FROM db.t) AS x JOIN db.u ON x.k = u.k", read="duckdb"
    )
    found = columns_used(tree, tables_named(tree, "t", "u"))
    assert found.whole == tables_named(tree, "t")
    assert found.names is not None and {"a", "c", "k"} <= found.names


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM (SELECT k, a FROM db.t) AS x ORDER BY k", [(1, "one"), (2, "two")]),
        ("SELECT * FROM (SELECT *, a AS n FROM db.t) AS x JOIN db.u USING (k) ORDER BY k", None),
        ("SELECT k FROM db.t WHERE EXISTS (SELECT * FROM db.u WHERE u.c > 150 AND u.k = t.k)", [(2,)]),
    ],
)
def test_stars_over_scans_see_every_column(con: Any, sql: str, expected: list[Any] | None) -> None:
    rows = con.execute(sql).fetchall()
    if expected is None:  # the inner star sees all of db.t: k, a, b, s, z, n, then u's a, c
        assert rows[0][:6] == (1, "one", 1.5, {"x": 10, "y": "p"}, 7, "one") and len(rows[0]) == 8
    else:
        assert rows == expected


def test_a_star_over_a_derived_table_prunes_the_scan_below(con: Any) -> None:
    text = scanned(con, "SELECT * FROM (SELECT k, a FROM db.t) AS x")
    assert '"k"' in text and '"a"' in text
    assert '"b"' not in text and '"z"' not in text
