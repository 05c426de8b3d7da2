"""Finding DuckDB's catalog sources in a query, what of them needs metadata, the names a
WHERE keeps, and the listing statements (iceduck.sql.introspection)."""

from __future__ import annotations

import pytest

from iceduck.errors import UserError
from iceduck.sql.classify import classify
from iceduck.sql.introspection import (
    SHOW_ALL_TABLES,
    NameFilter,
    ShowTables,
    SystemRef,
    parse_introspection,
    show_tables_query,
    system_refs,
)
from iceduck.sql.parse import Statement, parse_statement


def found(sql: str, params: object = None) -> list[SystemRef]:
    return system_refs(parse_statement(sql), params)


def test_views_and_table_functions_are_found_with_their_spans() -> None:
    sql = (
        "SELECT * FROM information_schema.tables t JOIN system.information_schema.columns USING (x), "
        "duckdb_tables() AS d, duckdb_columns, pragma_table_info('ns.t') p, duckdb_schemas()"
    )
    statement = parse_statement(sql)
    refs = system_refs(statement)
    assert [(r.kind, r.own, r.argument) for r in refs] == [
        ("tables", "information_schema.tables", None),
        ("columns", "system.information_schema.columns", None),
        ("duckdb_tables", "duckdb_tables()", None),
        ("duckdb_columns", "duckdb_columns", None),
        ("pragma_table_info", "pragma_table_info('ns.t')", "ns.t"),
        ("duckdb_schemas", "duckdb_schemas()", None),
    ]
    assert all(statement.text[r.ref.span[0] : r.ref.span[1]] == r.own for r in refs)
    assert [r.ref.alias for r in refs] == ["t", None, "d", None, "p", None]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM ns.tables",
        "SELECT * FROM information_schema.key_column_usage",
        "SELECT * FROM other.information_schema.tables",
        "WITH duckdb_tables AS (SELECT 1 AS x) SELECT * FROM duckdb_tables",
        "SELECT * FROM read_parquet('information_schema.parquet')",
        "SELECT 'duckdb_tables()'",
        "DESCRIBE information_schema.tables",
    ],
)
def test_other_names_are_not_catalog_sources(sql: str) -> None:
    assert found(sql) == []


def test_pragma_table_info_takes_a_string() -> None:
    with pytest.raises(UserError, match="pragma_table_info"):
        found("SELECT * FROM pragma_table_info(1)")


@pytest.mark.parametrize(
    ("sql", "needs"),
    [
        ("SELECT table_schema, table_name FROM information_schema.tables", False),
        ("SELECT count(*) FROM information_schema.tables", False),
        ("SELECT * FROM information_schema.tables", True),  # TABLE_COMMENT is in the star
        ("SELECT table_name, table_comment FROM information_schema.tables", True),
        ("SELECT * FROM information_schema.schemata", False),
        ("SELECT * FROM duckdb_schemas()", False),
        ("SELECT * FROM duckdb_databases()", False),
        ("SELECT database_name, table_name, temporary FROM duckdb_tables()", False),
        ("SELECT table_name, column_count FROM duckdb_tables()", True),
        ("SELECT table_name FROM duckdb_tables() WHERE estimated_size > 0", True),
        ("SELECT t FROM duckdb_tables() AS t", True),  # the row as a value
        ("SELECT table_name FROM information_schema.columns", True),  # a row per column
        ("SELECT 1 FROM duckdb_columns()", True),
        ("SELECT * FROM pragma_table_info('t')", True),
    ],
)
def test_metadata_is_needed_only_for_the_columns_that_need_it(sql: str, needs: bool) -> None:
    (ref,) = found(sql)
    assert ref.needs_metadata is needs


@pytest.mark.parametrize(
    ("sql", "params", "expected"),
    [
        ("SELECT * FROM information_schema.tables", None, NameFilter()),
        (
            "SELECT * FROM information_schema.tables WHERE table_schema = 'a' AND table_name IN ('x', 'y')",
            None,
            NameFilter(frozenset({"a"}), frozenset({"x", "y"})),
        ),
        (
            "SELECT * FROM information_schema.columns c "
            "WHERE 'x' = c.table_name AND (c.table_name IN ('x', 'y'))",
            None,
            NameFilter(None, frozenset({"x"})),
        ),
        ("SELECT * FROM duckdb_tables() WHERE table_name = ?", ["t"], NameFilter(None, frozenset({"t"}))),
        ("SELECT * FROM duckdb_schemas() WHERE schema_name = $1", ["s"], NameFilter(frozenset({"s"}))),
        # what cannot be read as a set of names keeps everything
        (
            "SELECT * FROM information_schema.tables WHERE table_name = 'a' OR table_name = 'b'",
            None,
            NameFilter(),
        ),
        ("SELECT * FROM information_schema.tables WHERE lower(table_name) = 'a'", None, NameFilter()),
        ("SELECT * FROM information_schema.tables WHERE table_name LIKE 'a%'", None, NameFilter()),
        ("SELECT * FROM information_schema.tables WHERE table_name = 1", None, NameFilter()),
        ("SELECT * FROM information_schema.tables WHERE other.table_name = 'a'", None, NameFilter()),
        ("SELECT * FROM information_schema.tables t, x WHERE t.table_name = 'a'", None, NameFilter()),
        ("SELECT * FROM information_schema.schemata WHERE table_name = 'a'", None, NameFilter()),
        ("SELECT * FROM information_schema.tables WHERE table_name IN (SELECT 'a')", None, NameFilter()),
    ],
)
def test_the_names_a_where_keeps(sql: str, params: object, expected: NameFilter) -> None:
    (ref,) = found(sql, params)
    assert ref.filter == expected


def test_a_filter_in_a_subquery_applies_to_its_own_source() -> None:
    sql = (
        "SELECT * FROM information_schema.tables AS t WHERE t.table_name IN "
        "(SELECT table_name FROM information_schema.columns WHERE table_name = 'x')"
    )
    outer, inner = found(sql)
    assert outer.filter == NameFilter()
    assert inner.filter == NameFilter(None, frozenset({"x"}))


def test_listing_statements_are_duckdbs_queries() -> None:
    show_all = parse_introspection("show all tables;")
    assert isinstance(show_all, Statement) and show_all.text == SHOW_ALL_TABLES
    info = parse_introspection("PRAGMA table_info('ns.t')")
    assert isinstance(info, Statement) and info.text == "SELECT * FROM pragma_table_info('ns.t')"
    assert parse_introspection("PRAGMA show_tables") == ShowTables()
    assert parse_introspection("PRAGMA version") is None
    assert parse_introspection("SHOW TABLES") is None  # iceduck's, Spark's meaning
    assert isinstance(classify("SHOW ALL TABLES"), Statement)
    assert classify("pragma show_tables") == ShowTables()


def test_show_tables_query_adds_the_current_namespace() -> None:
    assert "database_name =" not in show_tables_query("iceduck", None)
    query = show_tables_query("iceduck", "it's")
    assert "database_name = 'iceduck' AND schema_name = 'it''s'" in query
    assert [r.kind for r in system_refs(parse_statement(query))] == ["duckdb_tables"]


def test_the_views_sources_are_catalog_sources_filtered_by_name() -> None:
    """``information_schema.views`` and ``duckdb_views()`` list the catalog's views too; a
    WHERE on their name columns limits what is listed, as for tables."""
    refs = system_refs(
        parse_statement(
            "SELECT table_name FROM information_schema.views WHERE table_schema = 'ns' "
            "UNION ALL SELECT sql FROM duckdb_views() WHERE view_name IN ('a', 'b')"
        )
    )
    assert [(r.kind, r.needs_metadata) for r in refs] == [("views", False), ("duckdb_views", True)]
    assert refs[0].filter == NameFilter(frozenset({"ns"}), None)
    assert refs[1].filter == NameFilter(None, frozenset({"a", "b"}))
