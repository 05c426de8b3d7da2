"""Splicing view names into the statement text (iceduck.sql.rewrite)."""

from __future__ import annotations

import pytest

from iceduck.errors import UserError
from iceduck.sql.parse import parse_statement
from iceduck.sql.references import table_refs
from iceduck.sql.rewrite import quote_identifier, rewrite, splice


def rewritten(sql: str) -> str:
    statement = parse_statement(sql)
    refs = table_refs(statement)
    return rewrite(statement.text, [(r, quote_identifier(f"v{n}")) for n, r in enumerate(refs, start=1)])


def test_names_without_alias_keep_their_table_name_as_alias() -> None:
    assert rewritten("SELECT t.a FROM ns.t WHERE t.a = 1") == 'SELECT t.a FROM "v1" AS "t" WHERE t.a = 1'


def test_explicit_aliases_and_time_travel() -> None:
    sql = (
        "SELECT * FROM ns.t VERSION AS OF 12 AS x "
        "JOIN iceduck.ns.u FOR SYSTEM_TIME AS OF '2024-01-01' y ON x.a = y.a"
    )
    assert rewritten(sql) == 'SELECT * FROM "v1" AS x JOIN "v2" y ON x.a = y.a'


def test_everything_else_is_kept_verbatim() -> None:
    sql = "FROM ns.t /* keep me */ SELECT a::INT, [x * 2 FOR x IN l] AS d, {'k': ?} WHERE a = ? -- end"
    assert rewritten(sql) == (
        'FROM "v1" AS "t" /* keep me */ SELECT a::INT, [x * 2 FOR x IN l] AS d, '
        "{'k': $1} WHERE a = $2 -- end"
    )


def test_metadata_tables_and_table_function() -> None:
    sql = "SELECT * FROM ns.t.snapshots JOIN iceduck_scan('/x/t') ON true"
    assert rewritten(sql) == 'SELECT * FROM "v1" AS "snapshots" JOIN "v2" AS "iceduck_scan" ON true'


def test_quoting() -> None:
    assert quote_identifier('a "b"') == '"a ""b"""'


def test_overlapping_spans_are_refused() -> None:
    with pytest.raises(UserError, match="overlapping"):
        splice("abcdef", [((0, 3), "x"), ((2, 4), "y")])
    assert splice("abcdef", [((4, 6), "Z"), ((0, 1), "A")]) == "AbcdZ"


def test_describe_gets_no_alias() -> None:
    assert rewritten("DESCRIBE ns.t") == 'DESCRIBE "v1"'


def test_derived_tables() -> None:
    statement = parse_statement("SELECT t.a FROM ns.t JOIN ns.u x ON t.a = x.a")
    refs = table_refs(statement)
    relations = [(refs[0], "(SELECT 1 AS a)"), (refs[1], "(SELECT 2 AS a)")]
    assert (
        rewrite(statement.text, relations)
        == 'SELECT t.a FROM (SELECT 1 AS a) AS "t" JOIN (SELECT 2 AS a) x ON t.a = x.a'
    )
