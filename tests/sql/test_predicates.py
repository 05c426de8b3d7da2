"""WHERE -> Iceberg row filters (iceduck.sql.predicates).

Two kinds of checks: the filters built for typical queries, and a semantic one -- for
many WHERE clauses, every row DuckDB returns must pass the pushed filter (pushing may
keep too much, never too little).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import duckdb
import pytest

from iceduck.spec.datetimes import date_to_days, timestamp_to_micros
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import AlwaysTrue, BooleanExpression
from iceduck.spec.expressions.row_evaluator import compile_row_filter
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    UUIDType,
)
from iceduck.sql.derived import Outer
from iceduck.sql.parse import parse_statement
from iceduck.sql.predicates import pushdown
from iceduck.sql.references import table_refs

SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), True),
        NestedField(2, "data", StringType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "f", DoubleType()),
        NestedField(5, "d", DateType()),
        NestedField(6, "s", StructType((NestedField(7, "a", IntegerType()),))),
        NestedField(8, "flag", BooleanType()),
        NestedField(9, "dec", DecimalType(9, 2)),
        NestedField(10, "tsn", TimestampType()),
        NestedField(11, "u", UUIDType()),
    )
)


def filters(sql: str, params: Any = None, timezone: str = "UTC") -> dict[str, str]:
    statement = parse_statement(sql)
    refs = table_refs(statement, timezone, params)
    found = pushdown(statement.tree, {id(r.node): SCHEMA for r in refs}, params, timezone)
    return {(r.alias or r.parts[-1]): str(found[id(r.node)]) for r in refs}


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("id = 5", "id == 5"),
        ("5 < id", "id > 5"),
        ("id <> 5", "id != 5"),
        ("id IN (1, 2, NULL)", "id in (1, 2)"),
        ("id NOT IN (1, 2)", "id not in (1, 2)"),
        ("id BETWEEN 1 AND 3", "(id >= 1 and id <= 3)"),
        ("data LIKE 'ab%'", "data startsWith 'ab'"),
        ("data NOT LIKE 'ab%'", "data notStartsWith 'ab'"),
        ("data LIKE 'abc'", "data == 'abc'"),
        ("starts_with(data, 'x')", "data startsWith 'x'"),
        ("prefix(data, 'x')", "data startsWith 'x'"),
        ("data IS NULL", "is_null(data)"),
        ("data IS NOT NULL", "not_null(data)"),
        ("data IS NOT DISTINCT FROM 'a'", "data == 'a'"),
        ("flag", "flag == True"),
        ("NOT flag", "flag != True"),
        ("d = DATE '2024-01-02'", "d == 19724"),
        ("d >= '2024-01-02'", "d >= 19724"),
        ("ts >= '2024-01-01'", "ts >= 1704067200000000"),
        ("ts < TIMESTAMP '2024-01-01 00:00:01'", "ts < 1704067201000000"),
        ("ts < '2024-01-01 02:00:00+02'", "ts < 1704067200000000"),
        ("tsn = '2024-01-01 00:00:00.000001'", "tsn == 1704067200000001"),
        ("dec > 1.5", "dec > 1.5"),
        ("dec > 2", "dec > 2"),
        ("s.a = 3", "s.a == 3"),
        ("t.s.a = 3", "s.a == 3"),
        ("isnan(f)", "is_nan(f)"),
        ("f IS NULL", "is_null(f)"),
        ("u = '00000000-0000-0000-0000-000000000001'", "u == 00000000-0000-0000-0000-000000000001"),
        ("ID = 5", "id == 5"),
        ("(id = 1 AND lower(data) = 'x') OR id = 2", "(id == 1 or id == 2)"),
        ("NOT (id = 1 OR lower(data) = 'x')", "id != 1"),
        ("NOT (id = 1 AND lower(data) = 'x')", "true"),
    ],
)
def test_conversions(where: str, expected: str) -> None:
    assert filters(f"SELECT * FROM ns.t WHERE {where}") == {"t": expected}


@pytest.mark.parametrize(
    "where",
    [
        "f > 1",  # NaN sorts above +inf in DuckDB, never in bounds for Iceberg
        "f = 1",
        "id = 1e3",  # a DOUBLE literal: DuckDB compares as floating point
        "id = '5'",  # DuckDB casts; Iceberg would refuse
        "data = 5",
        "data < 1",
        "d = '2024-01-01 10:00'",
        "tsn = '2024-01-01 00:00:00+02'",  # DuckDB would shift through the session zone
        "u < '00000000-0000-0000-0000-000000000001'",  # UUID order differs
        "data LIKE 'a_c%'",
        "data LIKE 'a%c'",
        "data ILIKE 'a%'",
        "lower(data) = 'a'",
        "CAST(id AS INT) = 1",
        "id = NULL",
        "id = (SELECT 1)",
        "id IN (SELECT 1)",
        "data = 'a' COLLATE nocase",
        "id = ?",  # no parameter value given
    ],
)
def test_not_pushed(where: str) -> None:
    assert filters(f"SELECT * FROM ns.t WHERE {where}") == {"t": "true"}


def test_parameters_are_pushed_with_their_values() -> None:
    found = filters(
        "SELECT * FROM ns.t WHERE id = ? AND data = ? AND ts < ? AND d = ?",
        [5, "x", dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.date(2024, 1, 2)],
    )
    assert found == {"t": "(((id == 5 and data == 'x') and ts < 1704067200000000) and d == 19724)"}
    assert filters("SELECT * FROM ns.t WHERE id = $n", {"n": 3}) == {"t": "id == 3"}


def test_session_time_zone_applies_to_literals_without_offset() -> None:
    assert filters("SELECT * FROM ns.t WHERE ts >= '2024-01-01 01:00:00'", timezone="Europe/Paris") == {
        "t": "ts >= 1704067200000000"
    }


def test_join_sides() -> None:
    sql = (
        "SELECT * FROM ns.t a LEFT JOIN ns.u b ON a.id = b.id AND b.data = 'x' AND a.data = 'y' "
        "WHERE b.id IS NULL AND a.id > 3"
    )
    # b is null-supplying: its WHERE condition must not prune it; its ON condition may
    assert filters(sql) == {"a": "id > 3", "b": "data == 'x'"}
    right = "SELECT * FROM ns.t a RIGHT JOIN ns.u b ON a.id = b.id WHERE a.id = 1 AND b.id = 2"
    assert filters(right) == {"a": "true", "b": "id == 2"}
    full = "SELECT * FROM ns.t a FULL JOIN ns.u b ON a.id = b.id WHERE a.id = 1 AND b.id = 2"
    assert filters(full) == {"a": "true", "b": "true"}
    inner = "SELECT * FROM ns.t a JOIN ns.u b ON a.id = b.id AND b.d = DATE '2024-01-02' WHERE a.id = 1"
    assert filters(inner) == {"a": "id == 1", "b": "d == 19724"}
    asof = "SELECT * FROM ns.t a ASOF JOIN ns.u b ON a.ts >= b.ts WHERE a.id = 1"
    assert filters(asof) == {"a": "true", "b": "true"}


def test_disjunction_across_tables_is_not_pushed() -> None:
    sql = "SELECT * FROM ns.t a, ns.u b WHERE (a.id = 1 OR b.id = 2) AND a.data = 'x' AND data = 'ambiguous'"
    assert filters(sql) == {"a": "data == 'x'", "b": "true"}


def test_scopes_do_not_leak() -> None:
    sql = (
        "WITH c AS (SELECT * FROM ns.t WHERE id = 1) "
        "SELECT * FROM c JOIN ns.u ON c.id = u.id "
        "WHERE u.id IN (SELECT id FROM ns.v WHERE v.data = c.data AND v.id > 3) AND c.data = 'q'"
    )
    assert filters(sql) == {"t": "id == 1", "u": "true", "v": "id > 3"}


def test_correlated_names_are_not_taken_for_struct_fields() -> None:
    sql = "SELECT * FROM ns.t s WHERE EXISTS (SELECT 1 FROM ns.u WHERE s.a = 1)"
    assert filters(sql) == {"s": "true", "u": "true"}


# -- semantics: every row DuckDB returns passes the pushed filter ------------------------------------

ROWS = [
    (1, "abc", "2024-01-01 00:00:00+00", 1.5, "2024-01-01", 1, True, "1.50", "2024-01-01 00:00:00"),
    (2, "abd", "2024-01-01 10:00:00+00", float("nan"), "2024-01-02", None, False, "-2.25", None),
    (3, None, None, None, None, 3, None, None, "2023-12-31 23:59:59.999999"),
    (4, "", "1969-12-31 23:59:59+00", -0.0, "1969-12-31", -4, True, "0.00", "1970-01-01 00:00:00"),
    (5, "b", "2024-06-01 12:00:00+00", float("inf"), "2024-06-01", 5, False, "100.00", "2024-06-01 12:00:00"),
]

WHERES = [
    "id = 1",
    "id > 2 AND id <= 4",
    "NOT (id > 2)",
    "id IN (1, 3, NULL)",
    "id NOT IN (1, 3)",
    "data LIKE 'ab%'",
    "data NOT LIKE 'ab%'",
    "data >= 'abd'",
    "data IS NULL OR id = 5",
    "NOT (data IS NULL OR id = 5)",
    "ts >= '2024-01-01 05:00:00'",
    "ts < DATE '2024-01-01'",
    "d BETWEEN '2024-01-01' AND '2024-01-02'",
    "d NOT BETWEEN '2024-01-01' AND '2024-01-02'",
    "s.a > 0",
    "NOT flag",
    "flag IS NOT DISTINCT FROM NULL",
    "dec > 1.4",
    "dec < 0",
    "tsn > '2023-12-31 23:59:59'",
    "f > 1",
    "isnan(f) OR id = 4",
    "NOT (id = 1 AND data = 'x')",
    "NOT (NOT (id = 1))",
    "(id = 1 AND length(data) = 3) OR (id = 2 AND d = '2024-01-02')",
]


@pytest.fixture(scope="module")
def rows() -> tuple[duckdb.DuckDBPyConnection, list[tuple]]:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE SCHEMA ns")
    con.execute(
        "CREATE TABLE ns.t (id BIGINT, data VARCHAR, ts TIMESTAMPTZ, f DOUBLE, d DATE, s STRUCT(a INTEGER), "
        "flag BOOLEAN, dec DECIMAL(9, 2), tsn TIMESTAMP, u UUID)"
    )
    for r in ROWS:
        con.execute(
            "INSERT INTO ns.t VALUES (?, ?, ?::TIMESTAMPTZ, ?, ?::DATE, CASE WHEN ? IS NULL THEN NULL "
            "ELSE {'a': ?} END, ?, ?::DECIMAL(9, 2), ?::TIMESTAMP, NULL)",
            [r[0], r[1], r[2], r[3], r[4], r[5], r[5], r[6], r[7], r[8]],
        )
    # timestamptz fetched as micros: DuckDB's Python conversion of TIMESTAMPTZ needs pytz
    columns = "id, data, epoch_us(ts), f, d, s, flag, dec, tsn, u"
    iceberg_rows = [
        _iceberg_row(r) for r in con.execute(f"SELECT {columns} FROM ns.t ORDER BY id").fetchall()
    ]
    return con, iceberg_rows


def _iceberg_row(row: tuple) -> tuple:
    """A DuckDB row in iceduck's value representation (struct field order)."""
    id_, data, ts, f, d, s, flag, dec, tsn, u = row
    return (
        id_,
        data,
        ts,
        f,
        None if d is None else date_to_days(d),
        None if s is None else (s["a"],),
        flag,
        None if dec is None else Decimal(dec),
        None if tsn is None else timestamp_to_micros(tsn.replace(tzinfo=dt.UTC)),
        u,
    )


@pytest.mark.parametrize("where", WHERES)
def test_every_row_duckdb_returns_passes_the_pushed_filter(rows: tuple, where: str) -> None:
    con, iceberg_rows = rows
    sql = f"SELECT id FROM ns.t WHERE {where}"
    returned = {r[0] for r in con.execute(sql).fetchall()}
    pushed: BooleanExpression = _single_filter(sql)
    accept = compile_row_filter(bind(SCHEMA, pushed))
    for row in iceberg_rows:
        if row[0] in returned:
            assert accept(row), f"{where}: row {row[0]} returned by DuckDB fails the pushed filter {pushed}"


def test_the_semantic_check_is_not_vacuous(rows: tuple) -> None:
    pushed = [
        w for w in WHERES if not isinstance(_single_filter(f"SELECT id FROM ns.t WHERE {w}"), AlwaysTrue)
    ]
    assert len(pushed) >= len(WHERES) - 3


def _single_filter(sql: str) -> BooleanExpression:
    statement = parse_statement(sql)
    [ref] = table_refs(statement)
    return pushdown(statement.tree, {id(ref.node): SCHEMA})[id(ref.node)]


# -- filters of an enclosing query (iceduck.sql.derived) -----------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "SELECT * FROM (SELECT id AS k, data FROM ns.t WHERE data <> 'x') AS v WHERE k = 42",
            {"t": "(data != 'x' and id == 42)"},
        ),
        ("SELECT * FROM (SELECT id, data FROM ns.t) AS v(a, b) WHERE a = 42", {"t": "id == 42"}),
        ("SELECT * FROM (SELECT * FROM ns.t) AS v WHERE v.id = 42", {"t": "id == 42"}),
        ("SELECT * FROM (SELECT * FROM (SELECT id AS k FROM ns.t) x) AS v WHERE k < 3", {"t": "id < 3"}),
        ("SELECT DISTINCT * FROM (SELECT DISTINCT id AS k FROM ns.t) AS v WHERE k = 1", {"t": "id == 1"}),
        (
            "SELECT * FROM ns.u JOIN (SELECT id AS k FROM ns.t) AS v ON v.k = 42 AND u.id = v.k",
            {"u": "true", "t": "id == 42"},
        ),
        (  # a LEFT JOIN's ON reaches its right side: a row failing it is never matched
            "SELECT * FROM ns.u LEFT JOIN (SELECT id AS k FROM ns.t) AS v ON v.k = 42",
            {"u": "true", "t": "id == 42"},
        ),
        (  # inside, only the preserved side of an outer join
            "SELECT * FROM (SELECT a.id AS k FROM ns.t AS a LEFT JOIN ns.t AS b ON a.id = b.id) v"
            " WHERE k = 1",
            {"a": "id == 1", "b": "true"},
        ),
    ],
)
def test_an_outer_filter_reaches_a_derived_table(sql: str, expected: dict[str, str]) -> None:
    assert filters(sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM (SELECT id AS k FROM ns.t GROUP BY id) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k FROM ns.t HAVING count(*) > 0) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k, count(*) OVER () AS n FROM ns.t) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k FROM ns.t QUALIFY row_number() OVER () = 1) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k FROM ns.t LIMIT 3) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k FROM ns.t OFFSET 3) AS v WHERE k = 42",
        "SELECT * FROM (SELECT DISTINCT ON (data) id AS k FROM ns.t) AS v WHERE k = 42",
        "SELECT * FROM (SELECT max(id) AS k FROM ns.t) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k FROM ns.t UNION ALL SELECT id FROM ns.t) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id + 1 AS k FROM ns.t) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k, random() AS r FROM ns.t) AS v WHERE k = 42",
        "SELECT * FROM (SELECT id AS k FROM ns.t WHERE random() < 0.5) AS v WHERE k = 42",
        "SELECT * FROM (SELECT b.id AS k FROM ns.u AS a LEFT JOIN ns.t AS b ON a.id = b.id) v WHERE k = 1",
        "SELECT * FROM ns.u LEFT JOIN (SELECT id AS k FROM ns.t) AS v ON u.id = v.k WHERE v.k = 42",
        "WITH c AS (SELECT id AS k FROM ns.t) SELECT * FROM c AS a, c AS b WHERE a.k = 42",
        "SELECT * FROM ns.u WHERE EXISTS (SELECT * FROM (SELECT id AS k FROM ns.t) v WHERE k = u.id)",
        "SELECT * FROM (SELECT id AS k FROM ns.t) AS v WHERE k = (SELECT 1)",
        "SELECT * FROM (SELECT id AS k FROM ns.t) AS v, ns.u WHERE k = 1 OR u.id = 2",
        "SELECT * FROM (SELECT id AS k FROM ns.t) AS v USING SAMPLE 50% (bernoulli, 7) WHERE k = 1",
        "SELECT * FROM (SELECT id AS k FROM ns.t) AS v TABLESAMPLE 50% WHERE k = 1",
        "SELECT * FROM (SELECT s.* FROM ns.t) AS v WHERE id = 1",  # s.a, not id
    ],
)
def test_an_outer_filter_stops_where_it_could_change_rows(sql: str) -> None:
    assert filters(sql).get("t", filters(sql).get("b")) == "true"


def test_a_catalog_view_column_of_another_type_gets_nothing() -> None:
    statement = parse_statement("SELECT id, data FROM ns.t")
    [ref] = table_refs(statement)
    where = parse_statement("SELECT 1 WHERE a = 1 AND b = 'x'").tree.args["where"].this
    conditions = (where.left, where.right)
    same = Outer(conditions, ("a", "b"), (LongType(), StringType()))
    other = Outer(conditions, ("a", "b"), (IntegerType(), StringType()))  # a is cast to int
    schemas = {id(ref.node): SCHEMA}
    assert str(pushdown(statement.tree, schemas, outer=same)[id(ref.node)]) == "(id == 1 and data == 'x')"
    assert str(pushdown(statement.tree, schemas, outer=other)[id(ref.node)]) == "data == 'x'"


def test_a_declared_type_follows_the_column_into_a_derived_table() -> None:
    statement = parse_statement("SELECT k FROM (SELECT id AS k FROM ns.t) AS s")
    [ref] = table_refs(statement)
    condition = parse_statement("SELECT 1 WHERE k = 1").tree.args["where"].this
    schemas = {id(ref.node): SCHEMA}
    same = pushdown(statement.tree, schemas, outer=Outer((condition,), ("k",), (LongType(),)))
    other = pushdown(statement.tree, schemas, outer=Outer((condition,), ("k",), (IntegerType(),)))
    assert (str(same[id(ref.node)]), str(other[id(ref.node)])) == ("id == 1", "true")
