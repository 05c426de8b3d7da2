"""Splitting, normalising and parsing statements (iceduck.sql.parse)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.parse import (
    QUERY_KINDS,
    normalise,
    parse,
    parse_statement,
    require_supported,
    require_valid_parameters,
    split_statements,
)


def test_split_ignores_semicolons_in_strings_and_comments() -> None:
    sql = "SELECT 'a;b' AS x; -- c;\n SELECT 2 /* ; */ ;;  "
    assert split_statements(sql) == ["SELECT 'a;b' AS x", "-- c;\n SELECT 2 /* ; */"]


def test_qmark_placeholders_are_numbered_in_text_order() -> None:
    text = normalise("SELECT ? FROM t WHERE a = ? AND b = '?'")
    assert text == "SELECT $1 FROM t WHERE a = $2 AND b = '?'"


def test_a_placeholder_cast_with_double_colons_is_numbered() -> None:
    # sqlglot reads ``?::`` as one token: DuckDB's cast of a parameter still gets its number
    assert normalise("SELECT ?::INT, ? :: INT, '?::'") == "SELECT $1::INT, $2 :: INT, '?::'"


def test_mixing_placeholder_styles_is_refused() -> None:
    with pytest.raises(UserError, match="cannot mix"):
        normalise("SELECT ? + $1")


def test_system_version_becomes_version() -> None:
    assert (
        normalise("SELECT * FROM ns.t FOR SYSTEM_VERSION AS OF 5") == "SELECT * FROM ns.t FOR VERSION AS OF 5"
    )
    # only in the clause: a column of that name stays
    assert normalise("SELECT system_version FROM t") == "SELECT system_version FROM t"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM ns.t",
        "FROM ns.t",
        "WITH c AS (SELECT 1 AS x) SELECT * FROM c",
        "SELECT 1 UNION ALL SELECT 2",
        "VALUES (1), (2)",
        "SELECT a, sum(b) OVER (PARTITION BY c ORDER BY d) FROM ns.t GROUP BY ALL",
    ],
)
def test_queries_are_select(sql: str) -> None:
    statement = parse_statement(sql)
    assert statement.kind == "SELECT"
    require_supported(statement, QUERY_KINDS)


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("INSERT INTO ns.t VALUES (1)", "INSERT"),
        ("DELETE FROM ns.t", "DELETE"),
        ("UPDATE ns.t SET a = 1", "UPDATE"),
        ("CREATE TABLE ns.t (a INT)", "CREATE TABLE"),
        ("DROP TABLE ns.t", "DROP TABLE"),
        ("SET threads = 1", "SET"),
    ],
)
def test_other_statements_are_refused_by_name(sql: str, kind: str) -> None:
    statement = parse_statement(sql)
    assert statement.kind == kind
    with pytest.raises(UnsupportedError, match=f"^{kind} is not supported yet"):
        require_supported(statement, QUERY_KINDS)


def test_explain_is_recognised_and_parses_the_query() -> None:
    statement = parse_statement("  -- why\n EXPLAIN ANALYZE SELECT * FROM ns.t")
    assert (statement.explain, statement.analyze, statement.kind) == (True, True, "SELECT")
    assert statement.text == "SELECT * FROM ns.t"
    assert isinstance(statement.tree, exp.Select)
    plain = parse_statement("explain select 1")
    assert (plain.explain, plain.analyze) == (True, False)


def test_syntax_errors_are_user_errors_with_a_position_and_no_escapes() -> None:
    with pytest.raises(UserError) as info:
        parse_statement("SELECT * FROM")
    message = str(info.value)
    assert message == "syntax error at end of input: expected a table name after FROM"
    assert "\x1b" not in message


def test_unterminated_string_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"unterminated quoted string at line 1, column 8: 'abc$"):
        parse("SELECT 'abc")


def test_empty_input_is_a_user_error() -> None:
    with pytest.raises(UserError, match="no SQL statement"):
        parse(" ; ;")


def test_tokens_index_the_normalised_text() -> None:
    statement = parse_statement("SELECT ? , ?")
    assert [statement.text[t.start : t.end + 1] for t in statement.tokens] == [
        "SELECT",
        "$",
        "1",
        ",",
        "$",
        "2",
    ]


def test_a_lone_surrogate_is_named_by_position() -> None:
    with pytest.raises(
        UserError, match=r"the SQL text is not valid Unicode: unpaired surrogate U\+DC80 at position 10"
    ):
        split_statements("SELECT 'ab\udc80'")
    split_statements("SELECT '😀'")  # a real astral character is fine


def test_parameters_with_lone_surrogates_are_named() -> None:
    require_valid_parameters([1, "ok", ["x", "😀"]])
    require_valid_parameters({"name": b"\xff"})  # bytes are bytes
    with pytest.raises(UserError, match=r"parameter 2 is not valid Unicode: unpaired surrogate U\+D800"):
        require_valid_parameters(["fine", ["a", "\ud800"]])
    with pytest.raises(UserError, match=r"parameter \$who is not valid Unicode"):
        require_valid_parameters({"who": {"k": "\udfff"}})


def test_nesting_too_deep_for_the_parser_is_a_user_error() -> None:
    with pytest.raises(UserError, match="nested too deeply"):
        parse_statement("SELECT " + "(" * 3000 + "1" + ")" * 3000)
    assert parse_statement("SELECT " + "(" * 20 + "1" + ")" * 20).kind == "SELECT"
