"""Pruning never changes an answer: every pruning test query, run with ``SET iceduck.pruning =
false`` (no filter pushed down: every file read, DuckDB alone applies the WHERE) and with
pruning, gives the same rows.

The queries are the WHERE clauses of the pushdown tests (:mod:`tests.sql.test_predicates`:
conversions, clauses not pushed, and the semantic check's list) and of the session's pruning
tests, over tables whose rows each sit in a file of their own (so column metrics decide per
row), unpartitioned and partitioned by ``days(ts)``, ``truncate(1, data)``, ``bucket(4, id)``
and ``identity(flag)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from tests.sql import test_predicates

COLUMNS = (
    "id bigint, data string, ts timestamptz, f double, d date, s struct<a: int>, flag boolean, "
    "dec decimal(9, 2), tsn timestamp, u uuid"
)
PARTITIONINGS = {
    "plain": "",
    "parted": " PARTITIONED BY (days(ts), truncate(1, data), bucket(4, id), flag)",
}


def _literal(v: Any, sql_type: str) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"CAST('{v}' AS DOUBLE)"
    return f"CAST('{v}' AS {sql_type})"


def _row_sql(r: tuple[Any, ...]) -> str:
    id_, data, ts, f, d, a, flag, dec, tsn = r
    return ", ".join(
        [
            str(id_),
            "NULL" if data is None else f"'{data}'",
            _literal(ts, "TIMESTAMPTZ"),
            _literal(f, "DOUBLE"),
            _literal(d, "DATE"),
            "NULL" if a is None else f"{{'a': {a}}}",
            "NULL" if flag is None else str(flag).lower(),
            _literal(dec, "DECIMAL(9, 2)"),
            _literal(tsn, "TIMESTAMP"),
            f"CAST('00000000-0000-0000-0000-00000000000{id_}' AS UUID)",
        ]
    )


def _wheres() -> list[str]:
    found: list[str] = []
    for mark in (*test_predicates.test_conversions.pytestmark, *test_predicates.test_not_pushed.pytestmark):
        for case in mark.args[1]:
            found.append(case[0] if isinstance(case, tuple) else case)
    found.extend(test_predicates.WHERES)
    return [w for w in dict.fromkeys(found) if "?" not in w]


WHERES = _wheres()


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path_factory.mktemp("pruning") / "wh")
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE NAMESPACE ns")
    for name, partitioning in PARTITIONINGS.items():
        con.execute(f"CREATE TABLE ns.{name} ({COLUMNS}){partitioning}")
        for r in test_predicates.ROWS:  # a file per row
            con.execute(f"INSERT INTO ns.{name} VALUES ({_row_sql(r)})")
        con.execute(f"CREATE VIEW ns.{name}_view AS SELECT * FROM ns.{name}")  # filters pass into it
    con.execute("CREATE TABLE ns.dec (d decimal(38, 1), k int)")  # test_session's decimal pruning
    con.execute("INSERT INTO ns.dec VALUES (-99999999999999999999999999999.5, 1)")
    con.execute("INSERT INTO ns.dec VALUES (1.5, 2)")
    yield con
    con.close()


def outcome(con: Connection, sql: str) -> list[tuple[Any, ...]] | str:
    """The rows of ``sql``, sorted; or the kind of error it raises (``data = 5`` cannot
    cast every string: an error either way)."""
    try:
        return sorted(con.execute(sql).fetchall(), key=repr)
    except iceduck.Error as e:
        return type(e).__name__


def both_ways(con: Connection, sql: str) -> tuple[list[tuple[Any, ...]] | str, list[tuple[Any, ...]] | str]:
    """The outcome of ``sql`` with pruning and without."""
    pruned = outcome(con, sql)
    con.execute("SET iceduck.pruning = false")
    try:
        read_all = outcome(con, sql)
    finally:
        con.execute("RESET iceduck.pruning")
    return pruned, read_all


def files_read(con: Connection, sql: str) -> int:
    """How many data files the scan of ``sql`` reads (EXPLAIN's ``data files: N read``)."""
    lines = [r[0] for r in con.execute(f"EXPLAIN {sql}").fetchall()]
    [files] = [line for line in lines if line.strip().startswith("data files:")]
    return int(files.split(":")[1].split()[0])


@pytest.mark.parametrize("table", sorted(PARTITIONINGS))
@pytest.mark.parametrize("where", WHERES)
def test_pruning_does_not_change_the_rows(con: Connection, table: str, where: str) -> None:
    pruned, read_all = both_ways(con, f"SELECT id FROM ns.{table} AS t WHERE {where}")
    assert pruned == read_all


@pytest.mark.parametrize(
    "source", ["ns.parted_view", "(SELECT id, data, ts, f, d, s, flag, dec, tsn, u FROM ns.parted)"]
)
@pytest.mark.parametrize("where", WHERES)
def test_pruning_through_a_view_does_not_change_the_rows(con: Connection, source: str, where: str) -> None:
    """The same WHERE clauses outside a catalog view and a subquery in FROM
    (:mod:`iceduck.sql.derived`)."""
    pruned, read_all = both_ways(con, f"SELECT id FROM {source} AS t WHERE {where}")
    assert pruned == read_all


def test_the_comparison_through_a_view_is_not_vacuous(con: Connection) -> None:
    """Through the view, the files skipped are those skipped on the table itself (but for
    struct fields, ``s.a``, which are not passed into a view)."""
    for where in (w for w in WHERES if "s.a" not in w):
        direct = f"SELECT id FROM ns.parted AS t WHERE {where}"
        if isinstance(outcome(con, direct), list):
            through = f"SELECT id FROM ns.parted_view AS t WHERE {where}"
            assert files_read(con, through) == files_read(con, direct), where


@pytest.mark.parametrize(
    "where", ["d = -99999999999999999999999999999.5", "d < -99999999999999999999999999999.4"]
)
def test_decimal_pruning_does_not_change_the_rows(con: Connection, where: str) -> None:
    pruned, read_all = both_ways(con, f"SELECT k FROM ns.dec WHERE {where}")
    assert pruned == read_all == [(1,)]


def test_the_comparison_is_not_vacuous(con: Connection) -> None:
    """Pruning does skip files for most queries, and the switch turns it off."""
    sql = "SELECT id FROM ns.{} AS t WHERE id = 1"
    assert all(files_read(con, sql.format(t)) == 1 for t in PARTITIONINGS)
    con.execute("SET iceduck.pruning = false")
    try:
        assert all(files_read(con, sql.format(t)) == 5 for t in PARTITIONINGS)
    finally:
        con.execute("RESET iceduck.pruning")
    rows = len(test_predicates.ROWS)
    sql = "SELECT id FROM ns.plain AS t WHERE {}"
    answered = [w for w in WHERES if isinstance(outcome(con, sql.format(w)), list)]
    skipping = [w for w in answered if files_read(con, sql.format(w)) < rows]
    assert len(skipping) >= len(WHERES) // 2


def test_the_switch_takes_true_and_false_only(con: Connection) -> None:
    with pytest.raises(iceduck.ProgrammingError, match="expected true or false"):
        con.execute("SET iceduck.pruning = maybe")
