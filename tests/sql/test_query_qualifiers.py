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


MORE_QUERIES = [
    "SELECT db.u.k FROM db.u WHERE EXISTS (SELECT 1 FROM db.t WHERE db.t.k = db.u.k) ORDER BY 1",
    "SELECT iceduck.db.t.s.a, db.t.k FROM db.t WHERE db.t.k = (SELECT max(db.t.k) FROM db.t)",
    "WITH c AS (SELECT db.t.k FROM db.t) SELECT c.k FROM c ORDER BY 1",
]


@pytest.mark.parametrize("sql", MORE_QUERIES)
def test_full_names_in_subqueries(both: tuple[Connection, duckdb.DuckDBPyConnection], sql: str) -> None:
    ice, ref = both
    assert ice.execute(sql).fetchall() == ref.execute(sql).fetchall()


def test_full_names_in_write_statements(both: tuple[Connection, duckdb.DuckDBPyConnection]) -> None:
    ice, ref = both
    for sql in [
        "INSERT INTO db.u SELECT db.t.k * 10 FROM db.t WHERE db.t.s.a = 20",
        "UPDATE db.t SET s = {'a': db.t.s.a + 1} WHERE db.t.k IN (SELECT db.u.k FROM db.u)",
        "DELETE FROM db.u WHERE db.u.k > 25",
        "MERGE INTO db.t USING db.u ON db.t.k = db.u.k WHEN NOT MATCHED THEN INSERT (k) VALUES (db.u.k)",
    ]:
        assert ice.execute(sql).rowcount == ref.execute(sql).fetchone()[0], sql
    for table in ("db.t", "db.u"):
        query = f"SELECT * FROM {table} ORDER BY ALL"
        assert ice.execute(query).fetchall() == ref.execute(query).fetchall()
    ice.execute("CREATE TABLE db.c AS SELECT db.t.k FROM db.t WHERE db.t.k < 3")
    ref.execute("CREATE TABLE db.c AS SELECT db.t.k FROM db.t WHERE db.t.k < 3")
    assert ice.execute("SELECT * FROM db.c ORDER BY 1").fetchall() == ref.execute(
        "SELECT * FROM db.c ORDER BY 1"
    ).fetchall()


WRONG = [
    "SELECT db.t.nosuch FROM db.t",
    "SELECT t.nosuch FROM db.t",
    "SELECT nosuch FROM db.t",
    "SELECT db.t.k FROM (SELECT * FROM db.t)",
    "SELECT db.t.k FROM db.t AS x",
    "DELETE FROM db.t WHERE db.t.nosuch = 2",
    "DELETE FROM db.t WHERE nosuch = 2",
    "UPDATE db.t SET k = nosuch",
    "UPDATE db.t SET k = 1 WHERE db.t.nosuch = 1",
    "INSERT INTO db.u SELECT nosuch FROM db.t",
    "CREATE TABLE db.c AS SELECT nosuch FROM db.t",
    "INSERT INTO db.u SELECT db.t.nosuch FROM db.t",
    "MERGE INTO db.t USING db.u ON db.t.k = db.u.nosuch WHEN MATCHED THEN DELETE",
    "MERGE INTO db.t USING db.u src ON db.t.k = src.k WHEN MATCHED THEN UPDATE SET k = src.nosuch",
]


@pytest.mark.parametrize("sql", WRONG)
def test_binder_errors_speak_of_the_users_text(
    both: tuple[Connection, duckdb.DuckDBPyConnection], sql: str
) -> None:
    """A wrong column gets DuckDB's own first line, never iceduck's rewritten text (its
    ``__iceduck`` names, helper columns or a ``LINE`` excerpt of it)."""
    ice, ref = both
    with pytest.raises(duckdb.Error) as theirs:
        ref.execute(sql)
    with pytest.raises(iceduck.Error) as mine:
        ice.execute(sql)
    message = str(mine.value)
    assert message.splitlines()[0] == str(theirs.value).splitlines()[0]
    assert "__iceduck" not in message and "LINE" not in message and '"_pos"' not in message
