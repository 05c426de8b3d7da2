"""Reading the statements on a session's own objects (:mod:`iceduck.sql.session_statements`)."""

from __future__ import annotations

import pytest

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.session_statements import (
    DropView,
    DuckStatement,
    Setting,
    ViewDefinition,
    session_statement,
    written_table,
)

TABLES = frozenset({"tmp"})


def duck(text: str, tables: frozenset[str] = TABLES) -> DuckStatement:
    statement = session_statement(text, tables)
    assert isinstance(statement, DuckStatement)
    return statement


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM tmp",
        "CREATE TABLE ns.t (a int)",
        "CREATE TABLE t AS SELECT 1",  # no TEMP: an Iceberg table in the current namespace
        "INSERT INTO ns.t VALUES (1)",
        "INSERT INTO other VALUES (1)",
        "DELETE FROM ns.tmp WHERE a = 1",  # two parts: Iceberg
        "DROP TABLE ns.t",
        "ALTER TABLE other ADD COLUMN b int",
        "ALTER VIEW v AS SELECT 1",
        "SHOW TABLES",
    ],
)
def test_iceberg_statements_and_queries_are_no_session_statements(text: str) -> None:
    assert session_statement(text, TABLES) is None


def test_writes_to_a_session_table() -> None:
    for text, kind in [
        ("INSERT INTO tmp SELECT * FROM ns.t", "INSERT"),
        ("insert or replace into TMP values (1)", "INSERT"),
        ("UPDATE tmp SET a = 1", "UPDATE"),
        ("DELETE FROM tmp", "DELETE"),
        ("TRUNCATE TABLE tmp", "TRUNCATE"),
        ("ALTER TABLE tmp ADD COLUMN b int", "ALTER"),
        ("DROP TABLE IF EXISTS tmp", "DROP TABLE"),
        ("MERGE INTO tmp USING ns.t AS s ON tmp.a = s.a WHEN MATCHED THEN DELETE", "MERGE"),
        ("COPY tmp FROM 'f.csv'", "COPY"),
    ]:
        statement = duck(text)
        assert (statement.kind, statement.target) == (kind, "tmp")
        written = written_table(statement.statement)
        assert written is not None and written.name.lower() == "tmp"
    assert session_statement("INSERT INTO tmp VALUES (1)", frozenset()) is None


def test_temporary_tables_and_macros_lose_the_temp_keyword() -> None:
    created = duck("CREATE OR REPLACE TEMP TABLE IF NOT EXISTS x AS SELECT * FROM ns.t")
    assert created.kind == "CREATE TABLE" and created.target == "x"
    assert "TEMP" not in created.statement.text
    macro = duck("CREATE TEMPORARY MACRO Add1(a) AS a + 1")
    assert (macro.kind, macro.target, macro.pure) == ("CREATE MACRO", "add1", True)
    assert macro.statement.text == "CREATE MACRO Add1(a) AS a + 1"
    # sqlglot cannot read a macro's default: a command, its body read for the tables it reads
    defaulted = duck("CREATE MACRO m(a, b := 1) AS TABLE SELECT * FROM ns.t WHERE x = a + b")
    assert defaulted.body is not None and defaulted.body.text == "SELECT * FROM ns.t WHERE x = a + b"
    dropped = duck("DROP MACRO TABLE m")
    assert (dropped.kind, dropped.target) == ("DROP MACRO", "m")
    with pytest.raises(UserError, match="one-part name"):
        session_statement("CREATE TEMP TABLE ns.x (a int)", TABLES)


def test_views() -> None:
    assert session_statement("CREATE VIEW v AS SELECT 1", TABLES) == ViewDefinition("v", "SELECT 1")
    assert session_statement(
        'CREATE OR REPLACE GLOBAL TEMPORARY VIEW "My View" (a, "B") AS\n  SELECT 1, 2;', TABLES
    ) == ViewDefinition("My View", "SELECT 1, 2", ("a", "B"), replace=True)
    assert session_statement("create view if not exists v as from t", TABLES) == ViewDefinition(
        "v", "from t", if_not_exists=True
    )
    assert session_statement("DROP VIEW IF EXISTS v", TABLES) == DropView("v", True)
    # a dotted name, or any name while a namespace is in use: an Iceberg view (classify reads it)
    assert session_statement("CREATE VIEW ns.v AS SELECT 1", TABLES) is None
    assert session_statement("CREATE OR REPLACE VIEW v AS SELECT 1", TABLES, namespace_in_use=True) is None
    assert session_statement("DROP VIEW ns.v", TABLES) is None
    assert session_statement("DROP VIEW v", TABLES, namespace_in_use=True) is None
    # TEMPORARY, and a session view's name when dropped, stay the session's
    assert session_statement(
        "CREATE TEMP VIEW v AS SELECT 1", TABLES, namespace_in_use=True
    ) == ViewDefinition("v", "SELECT 1")
    assert session_statement("DROP VIEW v", TABLES, frozenset({"v"}), namespace_in_use=True) == DropView("v")
    with pytest.raises(UnsupportedError, match="CREATE TEMPORARY VIEW takes a one-part name"):
        session_statement("CREATE TEMP VIEW ns.v AS SELECT 1", TABLES)
    with pytest.raises(UserError, match="expected AS and a query"):
        session_statement("CREATE VIEW v SELECT 1", TABLES)
    with pytest.raises(UserError, match="list of column names"):
        session_statement("CREATE VIEW v (a, AS SELECT 1", TABLES)


def test_settings() -> None:
    assert session_statement("SET memory_limit = '1GB'", TABLES) == Setting("memory_limit", "'1GB'")
    assert session_statement("SET GLOBAL threads TO 4;", TABLES) == Setting("threads", "4")
    assert session_statement("SET SESSION \"TimeZone\" = 'UTC'", TABLES) == Setting("TimeZone", "'UTC'")
    assert session_statement("RESET threads", TABLES) == Setting("threads", None)
    assert session_statement("SET VARIABLE x = [1, 2]", TABLES) == Setting("x", "[1, 2]", variable=True)
    assert session_statement("RESET VARIABLE x", TABLES) == Setting("x", None, variable=True)
    with pytest.raises(UserError, match="SET name = value"):
        session_statement("SET threads", TABLES)
    with pytest.raises(UnsupportedError, match="not a parameter"):
        session_statement("SET threads = ?", TABLES)


def test_copy_summarize_and_pivot() -> None:
    to = duck("COPY ns.t (a, b) TO 'f.csv' (HEADER)")
    assert to.statement.text == "COPY (SELECT a, b FROM ns.t) TO 'f.csv' (HEADER)"
    assert written_table(to.statement) is None
    assert duck("COPY (SELECT 1) TO 'f.parquet'").statement.text == "COPY (SELECT 1) TO 'f.parquet'"
    with pytest.raises(UnsupportedError, match=r"INSERT INTO ns\.t SELECT \* FROM read_csv"):
        session_statement("COPY ns.t FROM 'f.csv'", TABLES)
    assert duck("SUMMARIZE ns.t").statement.text == "SUMMARIZE SELECT * FROM ns.t"
    assert duck("SUMMARIZE SELECT a FROM ns.t").rows
    pivot = duck("PIVOT ns.t ON g USING sum(a)")
    assert pivot.rows and pivot.kind == "PIVOT"
