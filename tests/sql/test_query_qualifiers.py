"""Queries naming columns by the full name of a table they read without an alias
(``SELECT db.t.k FROM db.t``, ``iceduck.db.t.k``), as DuckDB accepts for its own tables:
iceduck's answers equal DuckDB's on the same rows; with an alias the name is hidden in both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import iceduck
from iceduck.connection import Connection

QUERIES = [
    "SELECT db.t.k, db.t.s.a FROM db.t ORDER BY 1",
    "SELECT iceduck.db.t.k FROM iceduck.db.t WHERE iceduck.db.t.k > 1 ORDER BY 1",
    "SELECT db.t.k FROM db.t WHERE db.t.s.a = 20",
    "SELECT count(*) FROM db.t JOIN db.u ON db.t.k = db.u.k",
    "SELECT db.u.k FROM db.t JOIN db.u USING (k) WHERE db.t.k IN (SELECT db.u.k FROM db.u) ORDER BY 1",
    "SELECT max(db.t.k) FROM db.t GROUP BY db.t.s.a ORDER BY 1",
]


@pytest.fixture
def both(tmp_path: Path) -> Iterator[tuple[Connection, duckdb.DuckDBPyConnection]]:
    ice = iceduck.connect(tmp_path / "wh")
    ref = duckdb.connect()
    ice.execute("CREATE NAMESPACE db")
    ref.execute("ATTACH ':memory:' AS iceduck")
    ref.execute("USE iceduck")
    ref.execute("CREATE SCHEMA db")
    for con in (ice, ref):
        con.execute("CREATE TABLE db.t (k int, s struct(a int))")
        con.execute("CREATE TABLE db.u (k int)")
        con.execute("INSERT INTO db.t VALUES (1, {'a': 10}), (2, {'a': 20}), (3, {'a': 20})")
        con.execute("INSERT INTO db.u VALUES (2), (3), (4)")
    yield ice, ref
    ice.close()


@pytest.mark.parametrize("sql", QUERIES)
def test_full_names_qualify_columns_as_in_duckdb(
    both: tuple[Connection, duckdb.DuckDBPyConnection], sql: str
) -> None:
    ice, ref = both
    assert ice.execute(sql).fetchall() == ref.execute(sql).fetchall()


def test_an_alias_hides_the_full_name_in_both(both: tuple[Connection, duckdb.DuckDBPyConnection]) -> None:
    ice, ref = both
    sql = "SELECT db.t.k FROM db.t x"
    with pytest.raises(duckdb.BinderException):
        ref.execute(sql)
    with pytest.raises(iceduck.Error, match=r'"db\.t" not found'):
        ice.execute(sql)
