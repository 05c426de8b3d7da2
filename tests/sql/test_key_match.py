"""Conditions that name keys only, and the key rows they give."""

from __future__ import annotations

import duckdb
import pytest

from iceduck.sql.condition import Condition
from iceduck.sql.key_match import key_rows


def _keys(condition: str, keys: list[str]) -> list[tuple] | None:
    sql = key_rows(Condition(condition), keys, "t")
    if sql is None:
        return None
    con = duckdb.connect()
    con.execute("CREATE TABLE feed AS SELECT * FROM (VALUES (3, 'D', 'x'), (4, 'U', 'y')) f(id, op, b)")
    return sorted(con.execute(sql).fetchall())


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("id = 1", [(1,)]),
        ("1 = t.id", [(1,)]),
        ("(ID = 1)", [(1,)]),
        ("id IN (1, 2, 2)", [(1,), (2,), (2,)]),
        ("id = 1 OR id IN (5, 6)", [(1,), (5,), (6,)]),
        ("id IN (SELECT id FROM feed WHERE op = 'D')", [(3,)]),
        ("id = CAST('7' AS INT) + 1", [(8,)]),
    ],
)
def test_single_key(condition: str, expected: list[tuple]) -> None:
    assert _keys(condition, ["id"]) == expected


@pytest.mark.parametrize(
    "condition",
    [
        "id > 1",
        "id = v",
        "id = 1 AND v = 'a'",
        "NOT id = 1",
        "id + 1 = 2",
        "id IN (SELECT id FROM feed) AND v = 1",
        "u.id = 1",
        "id IN (1, v)",
        "id = (SELECT max(id) FROM feed)",
    ],
)
def test_not_by_key(condition: str) -> None:
    assert key_rows(Condition(condition), ["id"], "t") is None


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("a = 1 AND b = 'x'", [(1, "x")]),
        ("b = 'x' AND a = 1 OR (a = 2 AND b = 'y')", [(1, "x"), (2, "y")]),
        ("(b, a) IN (('x', 1), ('y', 2))", [(1, "x"), (2, "y")]),
        ("(b, a) IN (SELECT b, id FROM feed)", [(3, "x"), (4, "y")]),
        ("a = 1", None),
        ("a = 1 AND a = 2", None),
        ("a IN (1, 2)", None),
    ],
)
def test_two_field_key(condition: str, expected: list[tuple] | None) -> None:
    assert _keys(condition, ["a", "b"]) == expected
