"""What a statement is, read once by the one parser its leading keyword calls for
(iceduck.sql.classify), and the conditions write statements carry (iceduck.sql.condition)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

import iceduck
from iceduck.errors import UnsupportedError, UserError
from iceduck.sql import classify as classify_module
from iceduck.sql import condition as condition_module
from iceduck.sql import ddl
from iceduck.sql.call import CallStatement
from iceduck.sql.classify import WRITE_KEYWORDS, Show, Use, classify, dotted_name, parse_query
from iceduck.sql.condition import Condition
from iceduck.sql.parse import Statement
from iceduck.sql.qualifiers import requalify_condition
from iceduck.sql.spark_describe import COLUMNS, EXTENDED, PARTITIONS, TableInfo
from iceduck.sql.statements import CreateNamespace, Delete, ExplainWrite, Insert, Merge, Update
from iceduck.sql.transaction import TransactionStatement

T = TypeVar("T")


def test_every_write_keyword_has_a_parser() -> None:
    assert set(ddl.STATEMENTS) == WRITE_KEYWORDS


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'INSERT INTO t VALUES (1)' AS delete",
        "SELECT * FROM updates WHERE merge = 1",
        "-- DELETE FROM t\nSELECT 1",
        "/* UPDATE t SET a = 1 */ SELECT 1",
        "WITH c AS (SELECT 'INSERT' AS x) SELECT x AS update FROM c",
        "(SELECT 1) UNION ALL (SELECT 2)",
        "VALUES ('CREATE TABLE x (a int)')",
        "FROM ns.t SELECT 'DROP TABLE t'",
    ],
)
def test_queries_that_mention_write_words_are_queries(sql: str) -> None:
    statement = classify(sql)
    assert isinstance(statement, Statement) and statement.kind == "SELECT"


def test_write_statements_go_to_the_write_grammar() -> None:
    assert classify("  -- make it\n CREATE NAMESPACE a.b") == CreateNamespace(("a", "b"))
    assert isinstance(classify("insert into db.t select 'SHOW TABLES'"), Insert)
    assert classify("DELETE FROM db.t WHERE s = 'SELECT'") == Delete(
        ("db", "t"), None, Condition("s = 'SELECT'")
    )
    assert isinstance(classify("/* c */ UPDATE db.t SET a = 1"), Update)
    assert isinstance(classify("MERGE INTO db.t USING s ON t.k = s.k WHEN MATCHED THEN DELETE"), Merge)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SHOW TABLES", Show("TABLES")),
        ("show tables in a.b", Show("TABLES", ("a", "b"))),
        ("SHOW TABLES FROM `ns`", None),  # a backquoted name is not a namespace name here
        ("SHOW NAMESPACES", Show("NAMESPACES")),
        ("SHOW SCHEMAS IN a", Show("NAMESPACES", ("a",))),
        ("SHOW DATABASES", Show("NAMESPACES")),
    ],
)
def test_show(sql: str, expected: Show | None) -> None:
    if expected is None:
        with pytest.raises(UserError):
            classify(sql)
    else:
        assert classify(sql) == expected


def test_other_show_statements_are_refused_by_name_naming_those_iceduck_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Not "SHOW is not supported yet: iceduck runs queries (..., SHOW)", which contradicted
    itself, nor sqlglot's "Falling back to parsing as a 'Command'" warning on stderr."""
    shows = [("SHOW USERS", "SHOW USERS"), ("show functions in db", "SHOW FUNCTIONS"), ("SHOW", "SHOW")]
    for sql, shown in shows:
        with pytest.raises(UnsupportedError) as refused:
            classify(sql)
        message = str(refused.value)
        assert message.startswith(f"{shown} is not supported: iceduck runs SHOW TABLES, ")
        assert "SHOW COLUMNS, SHOW PARTITIONS" in message
    assert caplog.records == []


def test_statements_sqlglot_reads_as_commands_warn_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """sqlglot logs "'LOAD httpfs' contains unsupported syntax. Falling back to parsing as a
    'Command'" (on stderr, outside pytest); the refusal already says it."""
    for sql in ("LOAD httpfs", "GRANT x TO y"):
        with pytest.raises(UnsupportedError, match="is not supported yet"):
            classify(sql)
    assert caplog.records == []


def test_spark_introspection_statements() -> None:
    assert classify("DESCRIBE EXTENDED ns.t") == TableInfo(EXTENDED, ("ns", "t"))
    assert classify("desc table formatted `ns`.`t`;") == TableInfo(EXTENDED, ("ns", "t"))
    assert classify("SHOW COLUMNS IN t") == TableInfo(COLUMNS, ("t",))
    assert classify("SHOW COLUMNS FROM t IN a.b") == TableInfo(COLUMNS, ("a", "b", "t"))
    assert classify("SHOW COLUMNS FROM ns.t IN NS") == TableInfo(COLUMNS, ("ns", "t"))
    assert classify("SHOW PARTITIONS ns.t") == TableInfo(PARTITIONS, ("ns", "t"))
    with pytest.raises(UserError, match=r"^SHOW COLUMNS with conflicting namespaces: other != ns$"):
        classify("SHOW COLUMNS FROM ns.t IN other")
    assert classify("SHOW COLUMNS FROM ns.t IN iceduck.ns") == TableInfo(COLUMNS, ("ns", "t"))
    assert classify("SHOW COLUMNS FROM iceduck.ns.t IN ns") == TableInfo(COLUMNS, ("iceduck", "ns", "t"))
    with pytest.raises(UnsupportedError, match="DESCRIBE EXTENDED of a column"):
        classify("DESCRIBE EXTENDED ns.t id")
    with pytest.raises(UserError, match="expected the end of the statement"):
        classify("DESCRIBE EXTENDED ns.t VERSION AS OF 1")
    with pytest.raises(UnsupportedError, match=r"SHOW PARTITIONS \.\.\. PARTITION"):
        classify("SHOW PARTITIONS ns.t PARTITION (cat = 'a')")
    with pytest.raises(UserError, match="expected FROM or IN after SHOW COLUMNS"):
        classify("SHOW COLUMNS ns.t")
    # EXTENDED is a keyword after DESCRIBE (as in Spark): a table named so is quoted
    with pytest.raises(UserError, match="expected a table name after EXTENDED"):
        classify("DESCRIBE extended")
    described = classify('DESCRIBE "extended"')
    assert isinstance(described, Statement) and described.kind == "DESCRIBE"


def test_explain_and_describe_are_read_by_sqlglot() -> None:
    explained = classify("EXPLAIN ANALYZE SELECT 'DELETE'")
    assert isinstance(explained, Statement) and (explained.explain, explained.analyze) == (True, True)
    described = classify("DESCRIBE ns.t")
    assert isinstance(described, Statement) and described.kind == "DESCRIBE"
    explained_write = classify("EXPLAIN INSERT OR REPLACE INTO ns.t VALUES (1)")
    assert isinstance(explained_write, ExplainWrite)
    assert explained_write.statement == Insert(("ns", "t"), "VALUES (1)", replace=True)
    with pytest.raises(UnsupportedError, match=r"^EXPLAIN CREATE TABLE is not supported yet: only queries"):
        classify("EXPLAIN CREATE TABLE ns.t (a int)")


def test_call_is_read_as_a_procedure_call() -> None:
    call = classify("CALL iceduck.system.expire_snapshots('t')")
    assert isinstance(call, CallStatement) and call.procedure == "expire_snapshots"


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c", UnsupportedError, "WITH before INSERT"),
        ("SET threads = 1", UnsupportedError, "^SET is not supported yet: iceduck runs queries"),
        ("CREATE MATERIALIZED VIEW v AS SELECT 1", UnsupportedError, "materialized views are not supported"),
        ("SELEC 1", UserError, "syntax error"),
    ],
)
def test_refusals(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        classify(sql)


def test_a_query_inside_a_write_statement_is_a_query_only() -> None:
    assert parse_query("VALUES (1)").kind == "SELECT"
    with pytest.raises(UnsupportedError, match=r"^INSERT is not supported yet"):
        parse_query("INSERT INTO t VALUES (1)")
    with pytest.raises(UserError, match="EXPLAIN cannot be part of a write statement"):
        parse_query("EXPLAIN SELECT 1")


def test_a_condition_is_parsed_once_and_kept() -> None:
    statement = classify("DELETE FROM db.t WHERE db.t.id = ? AND s <> 'db.t.x'")
    assert isinstance(statement, Delete) and statement.where is not None
    condition = statement.where
    assert condition.text == "db.t.id = $1 AND s <> 'db.t.x'"
    assert condition.tree is condition.tree  # parsed on first use, then kept
    moved = requalify_condition(condition, (("db", "t"),), "t")
    assert moved == Condition("\"t\".id = $1 AND s <> 'db.t.x'")
    unchanged = Condition("id = 1")
    assert requalify_condition(unchanged, (("db", "t"),), "t") is unchanged


def test_an_unreadable_condition_is_a_user_error_when_read() -> None:
    condition = Condition("id = = 1")  # the statement parses; the tree is read when needed
    with pytest.raises(UserError, match="cannot read the condition"):
        _ = condition.tree
    assert requalify_condition(condition, (("db", "t"),), "t") is condition  # DuckDB judges it


def test_a_session_runs_queries_that_look_like_writes_as_queries(tmp_path: Path) -> None:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint, s string) USING iceberg")
    con.execute("INSERT INTO db.t VALUES (1, 'DELETE FROM db.t')")
    assert con.execute("SELECT s FROM db.t WHERE s LIKE 'DELETE%'").fetchall() == [("DELETE FROM db.t",)]
    assert con.execute("-- DELETE FROM db.t\nSELECT count(*) FROM db.t").fetchall() == [(1,)]
    assert con.execute("WITH d AS (SELECT 'UPDATE' AS merge) SELECT merge FROM d").fetchall() == [("UPDATE",)]
    assert con.execute("SHOW TABLES IN db").fetchall() == [("db", "t")]
    con.close()


def test_a_repeated_statement_and_its_condition_are_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint, s string) USING iceberg")
    con.execute("INSERT INTO db.t SELECT i, 'x' FROM range(10) r(i)")
    parsed: list[str] = []

    def counted(parse: Callable[..., T]) -> Callable[..., T]:
        def run(text: str, *args: Any, **kwargs: Any) -> T:
            parsed.append(text)
            return parse(text, *args, **kwargs)

        return run

    monkeypatch.setattr(classify_module, "parse_statement", counted(classify_module.parse_statement))
    monkeypatch.setattr(condition_module, "parse_condition", counted(condition_module.parse_condition))
    for i in range(3):
        assert con.execute("SELECT s FROM db.t WHERE id = ?", [i]).fetchall() == [("x",)]
        con.execute("DELETE FROM db.t WHERE id = ?", [i])
    assert parsed.count("SELECT s FROM db.t WHERE id = ?") == 1
    assert parsed.count("id = $1") == 1
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(7,)]
    con.close()


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("BEGIN", TransactionStatement.BEGIN),
        ("begin transaction;", TransactionStatement.BEGIN),
        ("START TRANSACTION", TransactionStatement.BEGIN),
        ("COMMIT WORK", TransactionStatement.COMMIT),
        ("END", TransactionStatement.COMMIT),
        ("ROLLBACK", TransactionStatement.ROLLBACK),
        ("/* x */ ABORT TRANSACTION", TransactionStatement.ROLLBACK),
    ],
)
def test_a_transaction_statement_is_read_as_one(text, kind):
    assert classify(text) is kind


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("BEGIN ISOLATION LEVEL SERIALIZABLE", UnsupportedError, "no modes or savepoints"),
        ("ROLLBACK TO SAVEPOINT s", UnsupportedError, "no modes or savepoints"),
        ("START", UserError, "START TRANSACTION"),
        ("COMMIT now", UserError, 'syntax error at or near "NOW"'),
    ],
)
def test_transaction_modes_and_bad_spellings_are_refused(text, error, message):
    with pytest.raises(error, match=re.escape(message)):
        classify(text)
    with pytest.raises(UnsupportedError, match="BEGIN is not a query"):
        parse_query("BEGIN")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("USE shop", ("shop",)),
        ("use namespace shop;", ("shop",)),
        ("USE SCHEMA iceduck.deep.er", ("iceduck", "deep", "er")),
        ("USE DATABASE db", ("db",)),
        ("USE namespace", ("namespace",)),  # a namespace named namespace
        ('USE "my ns".x', ("my ns", "x")),
    ],
)
def test_use(sql: str, expected: tuple[str, ...]) -> None:
    assert classify(sql) == Use(expected)


@pytest.mark.parametrize("sql", ["USE", "USE ;", "USE a b", "USE a..b", "USE a.", "USE 1 + 2", "USE `db`"])
def test_use_needs_one_dotted_name(sql: str) -> None:
    with pytest.raises(UserError, match="USE takes a namespace"):
        classify(sql)


def test_dotted_name_names_what_took_it() -> None:
    assert dotted_name(" a.b ") == ("a", "b")
    with pytest.raises(UserError, match="--namespace takes a namespace name, got 'a b'"):
        dotted_name("a b", "--namespace")
