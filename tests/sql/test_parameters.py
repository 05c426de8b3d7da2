"""Parameters of a piece of a statement, found by the tokenizer (iceduck.sql.parameters),
and write statements whose strings and comments look like parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.sql.parameters import parameter_names, parameters_used


def test_parameters_are_tokens_not_text() -> None:
    sql = "SELECT $1, $name, '$2' -- $3\n /* $4 */ FROM t WHERE a = $$x$5$$ AND b = $select"
    assert parameter_names(sql) == {"1", "name", "select"}
    assert parameter_names("SELECT 'no $ here', 2") == frozenset()
    assert parameter_names("SELECT 1") == frozenset()


def test_parameters_used_picks_the_subset_a_piece_names() -> None:
    assert parameters_used("SELECT $2 FROM t WHERE s = '$1'", [10, 20]) == {"2": 20}
    assert parameters_used("SELECT $a WHERE s = '$b'", {"a": 1, "b": 2}) == {"a": 1}
    assert parameters_used("SELECT $3", [1]) == {}  # out of range: DuckDB names what is missing
    assert parameters_used("SELECT '$1'", [1]) is None
    assert parameters_used("SELECT $1", None) is None


def test_unreadable_text_names_no_parameters() -> None:
    assert parameter_names("SELECT '$1") == frozenset()  # DuckDB reports the open string itself


@pytest.fixture
def con(tmp_path: Path) -> Connection:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint, s string) USING iceberg")
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, '$1')")
    return con


def rows(con: Connection) -> list[tuple[Any, ...]]:
    return sorted(con.execute("SELECT id, s FROM db.t").fetchall())


@pytest.mark.parametrize(
    ("sql", "params", "expected"),
    [
        (
            "UPDATE db.t SET s = 'costs $1' WHERE id = $2",
            [0, 1],
            [(1, "costs $1"), (2, "b"), (3, "$1")],
        ),
        (
            "UPDATE db.t SET s = $s WHERE id = $id AND s <> '$other' -- $other",
            {"s": "z", "id": 2, "other": 0},
            [(1, "a"), (2, "z"), (3, "$1")],
        ),
        ("UPDATE db.t SET s = '?' WHERE id = ?", [1], [(1, "?"), (2, "b"), (3, "$1")]),
        ("DELETE FROM db.t WHERE s = '$1' /* $2 */ AND id = $2", [0, 3], [(1, "a"), (2, "b")]),
        ("DELETE FROM db.t WHERE s <> '?' AND id = ? -- ?", [2], [(1, "a"), (3, "$1")]),
        ("INSERT INTO db.t SELECT $2, '$1'", [0, 9], [(1, "a"), (2, "b"), (3, "$1"), (9, "$1")]),
        ("INSERT INTO db.t SELECT ?, '?' /* ? */", [9], [(1, "a"), (2, "b"), (3, "$1"), (9, "?")]),
    ],
)
def test_strings_and_comments_hold_no_parameters(
    con: Connection, sql: str, params: Any, expected: list[tuple[Any, ...]]
) -> None:
    cur = con.cursor()
    cur.execute(sql, params)
    assert cur.rowcount == 1
    assert rows(con) == expected
