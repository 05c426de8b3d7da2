"""Column names unique without case, as DuckDB names a derived table's columns."""

from __future__ import annotations

import random

import duckdb
import pytest

from iceduck.spec.column_names import sql_names, unique_names
from iceduck.spec.types import IntegerType, NestedField


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["user_id", "uSeR_Id"], ["user_id", "uSeR_Id_1"]),
        (["a", "a_1", "A"], ["a", "a_1", "A_2"]),
        (["a", "A", "a"], ["a", "A_1", "a_2"]),
        (["id", "data"], ["id", "data"]),
    ],
)
def test_unique_names(names: list[str], expected: list[str]) -> None:
    assert unique_names(names) == expected


def test_sql_names_by_field_id() -> None:
    fields = [NestedField(7, "X", IntegerType()), NestedField(3, "x", IntegerType())]
    assert sql_names(fields) == {7: "X", 3: "x_1"}


def test_the_rule_is_duckdbs() -> None:
    """DuckDB itself is the oracle: ``SELECT * FROM (SELECT 1 AS n1, 2 AS n2, ...)``."""
    rng = random.Random(27)
    con = duckdb.connect()
    for _ in range(200):
        names = [rng.choice(["a", "A", "a_1", "A_1", "a_2", "b", "B_1"]) for _ in range(rng.randint(1, 6))]
        items = ", ".join(f'{i} AS "{n}"' for i, n in enumerate(names))
        described = con.execute(f"SELECT * FROM (SELECT {items}) AS t").description
        assert unique_names(names) == [d[0] for d in described], names
