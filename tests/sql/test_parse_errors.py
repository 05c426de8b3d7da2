"""Bad SQL -> the message a user reads: where the error is, in SQL terms, and what was expected.

Every statement goes through :func:`iceduck.sql.classify.classify`, the one entry a session
uses, so queries (sqlglot) and write statements (iceduck's own grammar) are both covered.
Messages are compared whole: a message naming a parser class or an internal key
(``Required keyword: 'this' missing for <class ...>``) fails here.
"""

from __future__ import annotations

import re

import pytest

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.classify import classify, parse_query

CASES = [
    # queries (sqlglot)
    ("SELECT count(*) FROM t WHERE", "syntax error at end of input: expected a condition after WHERE"),
    ("SELECT * FROM", "syntax error at end of input: expected a table name after FROM"),
    ("SELECT * FROM t LIMIT", "syntax error at end of input: expected a number after LIMIT"),
    ("SELECT * FROM t WHERE a = 1 AND", "syntax error at end of input: expected a condition after AND"),
    ("SELECT * FROM t WHERE a =", "syntax error at end of input: expected an expression after ="),
    ("DESCRIBE", "syntax error at end of input: expected a table name after DESCRIBE"),
    (
        "SELECT (1 + 2 FROM t",
        'syntax error at or near "FROM" (line 1, column 15): expected ) to close the ( at line 1, column 8',
    ),
    (
        "SELECT * FROM t WHERE a IN (1, 2",
        "syntax error at end of input: expected ) to close the ( at line 1, column 28",
    ),
    ("SELECT 1 + 2) FROM t", 'syntax error at or near ")" (line 1, column 13): this ) has no matching ('),
    ("SELEC 1", 'syntax error at or near "SELEC" (line 1, column 1): did you mean SELECT?'),
    ("  -- a comment\n  selec 1", 'syntax error at or near "selec" (line 2, column 3): did you mean SELECT?'),
    (
        "/* foo */ -- foo\nfoo 1",
        'syntax error at or near "foo" (line 2, column 1): not the start of a SQL statement',
    ),
    (
        "EXPLAIN SELECT * FROM t WHRE a = 1",
        'syntax error at or near "WHRE" (line 1, column 25): did you mean WHERE?',
    ),
    ("EXPLAIN SELECT 'x", "syntax error: unterminated quoted string at line 1, column 16: 'x"),
    ("FOO BAR", 'syntax error at or near "FOO" (line 1, column 1): not the start of a SQL statement'),
    ("SELECT * FORM t", 'syntax error at or near "FORM" (line 1, column 10): did you mean FROM?'),
    (
        "SELECT a\nFROM t\nWHRE a = 1",
        'syntax error at or near "WHRE" (line 3, column 1): did you mean WHERE?',
    ),
    (
        "WITH x AS (SELECT 1) SELEC * FROM x",
        'syntax error at or near "SELEC" (line 1, column 22): did you mean SELECT?',
    ),
    ("SELECT * FROM t WHERE a = 1 1", 'syntax error at or near "1" (line 1, column 29)'),
    ("SELECT 'abc FROM t", "syntax error: unterminated quoted string at line 1, column 8: 'abc FROM t"),
    ('SELECT "abc FROM t', 'syntax error: unterminated quoted name at line 1, column 8: "abc FROM t'),
    ("SELECT 1 /* no end", "syntax error: unterminated /* comment at line 1, column 10: /* no end"),
    ("EXPLAIN", "EXPLAIN needs a query to explain"),
    # write statements (iceduck's grammar)
    ("CREATE TABLE db.t", "CREATE TABLE db.t needs a column list or AS <query>"),
    ("CREATE TABLE db.t ()", 'syntax error at or near ")" (line 1, column 20): expected a column name'),
    (
        "CREATE TABLE db.t (id)",
        'syntax error at or near ")" (line 1, column 22): '
        "expected a column type (bigint, string, decimal(10, 2), timestamp, ...)",
    ),
    ("CREATE TABLE db.t (id bigint", "syntax error at end of input: expected , or ) in the column list"),
    (
        "CREATE TABLE db.t (id bigint) junk",
        'syntax error at or near "junk" (line 1, column 31): expected USING, '
        "PARTITIONED BY, COMMENT, LOCATION, TBLPROPERTIES or AS <query>",
    ),
    ("CREATE", "syntax error at end of input: expected TABLE, NAMESPACE or SCHEMA after CREATE"),
    ("INSERT INTO db.t", "syntax error at end of input: expected a query or VALUES after INSERT"),
    ("INSERT INTO db.t (a, b)", "syntax error at end of input: expected a query or VALUES after INSERT"),
    (
        "INSERT INTO db.t VALUES",
        "syntax error at end of input: expected rows after VALUES: VALUES (1, 'a'), (2, 'b')",
    ),
    ("INSERT db.t VALUES (1)", 'syntax error at or near "db" (line 1, column 8): expected INTO after INSERT'),
    (
        "ALTER TABLE db.t gibberish",
        'syntax error at or near "gibberish" (line 1, column 18): '
        "expected an ALTER TABLE action (ADD, DROP, RENAME, ALTER COLUMN, SET, UNSET, WRITE, ...)",
    ),
    ("ALTER TABLE", "syntax error at end of input: expected a table name"),
    ("ALTER", "syntax error at end of input: expected TABLE or VIEW after ALTER"),
    (
        "DROP TABLE db.t CASCADE",
        'syntax error at or near "CASCADE" (line 1, column 17): expected the end of the statement',
    ),
    ("DELETE db.t", 'syntax error at or near "db" (line 1, column 8): expected FROM after DELETE'),
    ("DELETE FROM db.t WHERE", "syntax error at end of input: expected a condition after WHERE"),
    ("UPDATE db.t SET", "syntax error at end of input: expected a column to assign"),
    ("MERGE INTO db.t USING", "syntax error at end of input: expected the source table"),
    ("MERGE INTO db.t tgt", "syntax error at end of input: expected USING after tgt"),
]


@pytest.mark.parametrize(("sql", "message"), CASES, ids=[sql for sql, _ in CASES])
def test_bad_sql_is_told_in_sql_terms(sql: str, message: str) -> None:
    with pytest.raises(UserError) as info:
        classify(sql)
    assert str(info.value) == message
    assert not re.search(r"<class|Token|Required keyword|'this'|sqlglot|\x1b", str(info.value))


def test_a_query_inside_a_write_statement_counts_its_own_lines() -> None:
    """The query of ``INSERT ... VALUES (...)`` is parsed on its own when the statement runs:
    its positions say they count from the query's start."""
    with pytest.raises(UserError) as info:
        parse_query("VALUES (1, 'a'")
    assert (
        str(info.value)
        == "syntax error at end of input: expected ) to close the ( at line 1, column 8 of the query"
    )


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SET threads = 1", "SET is not supported yet: iceduck runs queries"),
        ("PRAGMA version", "PRAGMA is not supported yet: iceduck runs queries"),
        ("CREATE MATERIALIZED VIEW v AS SELECT 1", "materialized views are not supported"),
    ],
)
def test_real_statements_iceduck_does_not_run_are_not_syntax_errors(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedError, match=f"^{re.escape(message)}"):
        classify(sql)
