"""Row filters of DELETE/UPDATE/MERGE conditions and their exactness (iceduck.sql.filters).

The semantic check runs each condition on DuckDB over rows with nulls, NaN and edge
values: an *exact* filter must accept exactly the rows DuckDB's WHERE keeps (files may be
dropped or kept whole on its word); an inexact one must accept at least those.
"""

from __future__ import annotations

from typing import Any

import pytest

from iceduck.errors import UserError
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import AlwaysFalse, AlwaysTrue
from iceduck.spec.expressions.row_evaluator import compile_row_filter
from iceduck.sql.condition import Condition
from iceduck.sql.ddl import parse_write
from iceduck.sql.filters import row_filter
from iceduck.sql.statements import Delete
from tests.sql.test_predicates import SCHEMA, WHERES, rows  # noqa: F401  (rows is a fixture)

MORE_WHERES = [
    "data <> 'abc'",
    "NOT (data = 'abc')",
    "NOT (s.a > 0)",
    "NOT (id IN (1, NULL))",
    "data IS DISTINCT FROM 'abc'",
    "NOT (data IS NOT DISTINCT FROM 'abc')",
    "data IS NOT DISTINCT FROM 'abc'",
    "flag",
    "NOT (ts < '2024-01-01')",
    "dec <> 0",
    "tsn IS NOT NULL AND NOT (tsn > '2024-01-01')",
    "NOT (data LIKE 'ab%' OR d < '2024-01-02')",
    "t.id = 1 OR t.data IS NULL",
    "id = $1",
    "NOT (id <> $1)",
    "data IN ('abc', 'b')",
    "lower(data) = 'abc'",
    "NOT (lower(data) = 'abc' OR id = 1)",
    "true",
    "NOT true",
]


def filter_of(where: str, params: Any = None) -> tuple[Any, bool]:
    return row_filter(Condition(where), SCHEMA, params, "UTC", "t")


@pytest.mark.parametrize("where", WHERES + MORE_WHERES)
def test_exact_filters_accept_exactly_the_rows_duckdb_keeps(rows: tuple, where: str) -> None:  # noqa: F811
    con, iceberg_rows = rows
    params = [2] if "$1" in where else None
    kept = {r[0] for r in con.execute(f"SELECT id FROM ns.t WHERE {where}", params).fetchall()}
    found, exact = filter_of(where, params)
    accept = compile_row_filter(bind(SCHEMA, found))
    accepted = {row[0] for row in iceberg_rows if accept(row)}
    if exact:
        assert accepted == kept, f"{where}: exact filter {found} accepts {accepted}, DuckDB keeps {kept}"
    else:
        assert kept <= accepted, f"{where}: filter {found} rejects rows DuckDB keeps"


def test_most_conditions_are_exact() -> None:
    exact = [w for w in WHERES + MORE_WHERES if filter_of(w, [2])[1]]
    assert len(exact) >= len(WHERES + MORE_WHERES) - 8


@pytest.mark.parametrize(
    ("where", "expected", "exact"),
    [
        ("id = 1", "id == 1", True),  # a required column needs no null guard
        ("data <> 'x'", "(not_null(data) and data != 'x')", True),
        ("NOT (id > 2)", "id <= 2", True),
        ("t.data IS NULL", "is_null(data)", True),
        ("NOT (id IN (1, NULL))", "false", True),
        ("id = 1 AND length(data) = 3", "id == 1", False),
        ("id IN (SELECT 1)", "true", False),
    ],
)
def test_filters(where: str, expected: str, exact: bool) -> None:
    found, is_exact = filter_of(where)
    assert (str(found), is_exact) == (expected, exact)


def test_alias_and_table_name_qualify_columns() -> None:
    assert str(row_filter(Condition("x.id = 1"), SCHEMA, None, "UTC", "x")[0]) == "id == 1"
    assert row_filter(Condition("y.id = 1"), SCHEMA, None, "UTC", "x") == (AlwaysTrue(), False)
    assert str(row_filter(Condition("id = 1"), SCHEMA, None, "UTC")[0]) == "id == 1"
    assert row_filter(Condition("false"), SCHEMA, None, "UTC") == (AlwaysFalse(), True)


def test_parsed_delete_feeds_row_filter() -> None:
    statement = parse_write("DELETE FROM ns.t AS q WHERE q.id = ? AND data LIKE 'ab%'")
    assert isinstance(statement, Delete) and statement.where is not None
    found, exact = row_filter(statement.where, SCHEMA, [4], "UTC", statement.alias)
    assert exact and str(found) == "(id == 4 and (not_null(data) and data startsWith 'ab'))"


def test_malformed_condition() -> None:
    with pytest.raises(UserError, match="cannot read the condition"):
        row_filter(Condition("id = = 1"), SCHEMA, None, "UTC")


def test_other_sources_are_not_struct_columns() -> None:
    # SCHEMA has a struct column `s` with a field `a`
    assert (
        str(row_filter(Condition("s.a = 1"), SCHEMA, None, "UTC", "t")[0]) == "(not_null(s.a) and s.a == 1)"
    )
    found, exact = row_filter(
        Condition("s.a = 1 AND t.id = 2"), SCHEMA, None, "UTC", "t", other_sources=["s"]
    )
    assert (str(found), exact) == ("id == 2", False)
