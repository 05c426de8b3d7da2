"""INSERT / DELETE / UPDATE / MERGE / TRUNCATE parsing (iceduck.sql.dml)."""

from __future__ import annotations

import re

import duckdb
import pytest

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.condition import Condition
from iceduck.sql.ddl import parse_write
from iceduck.sql.statements import (
    Delete,
    Insert,
    Merge,
    MergeAction,
    MergeClause,
    MergeMatch,
    Update,
)

T = ("db", "t")


def test_insert_values_keeps_placeholders_numbered() -> None:
    statement = parse_write("INSERT INTO db.t VALUES (?, 'a?'), (?, ?)")
    assert statement == Insert(T, "VALUES ($1, 'a?'), ($2, $3)")
    # the text runs on DuckDB with positional parameters
    assert duckdb.execute(statement.query, [1, 2, "x"]).fetchall() == [(1, "a?"), (2, "x")]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("INSERT INTO db.t SELECT * FROM src", Insert(T, "SELECT * FROM src")),
        ("INSERT INTO TABLE db.t (a, `b c`) VALUES (1, 2)", Insert(T, "VALUES (1, 2)", ("a", "b c"))),
        ("INSERT INTO db.t (SELECT 1)", Insert(T, "(SELECT 1)")),
        ("INSERT OR REPLACE INTO db.t VALUES (1)", Insert(T, "VALUES (1)", replace=True)),
        (
            "insert or replace into db.t by name select 1 as a",
            Insert(T, "select 1 as a", by_name=True, replace=True),
        ),
        (
            "INSERT INTO db.t ((SELECT 1) UNION ALL (SELECT 2))",
            Insert(T, "((SELECT 1) UNION ALL (SELECT 2))"),
        ),
        ("INSERT INTO db.t BY NAME SELECT 1 AS a", Insert(T, "SELECT 1 AS a", by_name=True)),
        ("INSERT INTO db.t BY POSITION FROM src", Insert(T, "FROM src")),
        (
            "INSERT INTO db.t WITH c AS (SELECT 1) SELECT * FROM c",
            Insert(T, "WITH c AS (SELECT 1) SELECT * FROM c"),
        ),
        ("INSERT OVERWRITE db.t SELECT * FROM src", Insert(T, "SELECT * FROM src", overwrite=True)),
        (
            "INSERT OVERWRITE TABLE db.t PARTITION (p = 'a', d = DATE '2024-01-01', q) SELECT x FROM src",
            Insert(
                T,
                "SELECT x FROM src",
                overwrite=True,
                static_partition={"p": "'a'", "d": "DATE '2024-01-01'"},
            ),
        ),
        (
            "INSERT INTO db.t PARTITION (p = ?) VALUES (?)",
            Insert(T, "VALUES ($2)", static_partition={"p": "$1"}),
        ),
        ("INSERT INTO db.t.branch_dev VALUES (1);", Insert(("db", "t", "branch_dev"), "VALUES (1)")),
    ],
)
def test_insert_forms(sql: str, expected: Insert) -> None:
    assert parse_write(sql) == expected


def test_delete_and_truncate() -> None:
    assert parse_write("DELETE FROM db.t") == Delete(T)
    assert parse_write("DELETE FROM db.t WHERE id = ? AND data <> 'x'") == Delete(
        T, None, Condition("id = $1 AND data <> 'x'")
    )
    assert parse_write("DELETE FROM db.t AS x WHERE x.id IN (SELECT id FROM s)") == Delete(
        T, "x", Condition("x.id IN (SELECT id FROM s)")
    )
    assert parse_write("DELETE FROM `db`.`t` y WHERE `y`.`a b` = 1") == Delete(
        T, "y", Condition('"y"."a b" = 1')
    )
    assert parse_write("TRUNCATE TABLE db.t") == Delete(T)
    assert parse_write("TRUNCATE db.t") == Delete(T)


def test_update() -> None:
    assert parse_write("UPDATE db.t SET a = a + 1, b = 'x' WHERE id = 3") == Update(
        T, ((("a",), "a + 1"), (("b",), "'x'")), where=Condition("id = 3")
    )
    assert parse_write(
        "UPDATE db.t AS x SET x.v = CASE WHEN x.v > 1 THEN 2 ELSE f(x.v, 3) END, p.y = s.y "
        "FROM src s WHERE x.id = s.id"
    ) == Update(
        T,
        ((("v",), "CASE WHEN x.v > 1 THEN 2 ELSE f(x.v, 3) END"), (("p", "y"), "s.y")),
        alias="x",
        where=Condition("x.id = s.id"),
        from_="src s",
    )
    # without an alias the table's own name qualifies
    assert parse_write("UPDATE db.t SET t.a = ?") == Update(T, ((("a",), "$1"),))


def test_merge_spark_form() -> None:
    sql = (
        "MERGE INTO db.t t USING (SELECT * FROM updates WHERE x = ?) s ON t.id = s.id "
        "WHEN MATCHED AND s.op = 'delete' THEN DELETE "
        "WHEN MATCHED AND t.count IS NULL AND s.op = 'increment' THEN UPDATE SET t.count = 0 "
        "WHEN MATCHED AND s.op = 'increment' THEN UPDATE SET t.count = t.count + 1, t.v = CASE WHEN s.v > 0 "
        "THEN s.v END "
        "WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED AND s.x > 0 THEN INSERT * "
        "WHEN NOT MATCHED BY TARGET THEN INSERT (id, count) VALUES (s.id, coalesce(s.c, 1)) "
        "WHEN NOT MATCHED BY SOURCE AND t.ts < '2024-01-01' THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET stale = true"
    )
    assert parse_write(sql) == Merge(
        T,
        "(SELECT * FROM updates WHERE x = $1)",
        Condition("t.id = s.id"),
        (
            MergeClause(MergeMatch.MATCHED, MergeAction.DELETE, "s.op = 'delete'"),
            MergeClause(
                MergeMatch.MATCHED,
                MergeAction.UPDATE,
                "t.count IS NULL AND s.op = 'increment'",
                assignments=((("count",), "0"),),
            ),
            MergeClause(
                MergeMatch.MATCHED,
                MergeAction.UPDATE,
                "s.op = 'increment'",
                assignments=((("count",), "t.count + 1"), (("v",), "CASE WHEN s.v > 0 THEN s.v END")),
            ),
            MergeClause(MergeMatch.MATCHED, MergeAction.UPDATE_ALL),
            MergeClause(MergeMatch.NOT_MATCHED, MergeAction.INSERT_ALL, "s.x > 0"),
            MergeClause(
                MergeMatch.NOT_MATCHED,
                MergeAction.INSERT,
                insert_columns=("id", "count"),
                insert_values=("s.id", "coalesce(s.c, 1)"),
            ),
            MergeClause(MergeMatch.NOT_MATCHED_BY_SOURCE, MergeAction.DELETE, "t.ts < '2024-01-01'"),
            MergeClause(
                MergeMatch.NOT_MATCHED_BY_SOURCE, MergeAction.UPDATE, assignments=((("stale",), "true"),)
            ),
        ),
        alias="t",
        source_alias="s",
    )


def test_merge_duckdb_form_and_plain_source() -> None:
    sql = (
        "MERGE INTO db.t USING db.src AS s ON (t.id = s.id AND CASE WHEN s.x THEN 1 ELSE 0 END = 1) "
        "WHEN MATCHED THEN UPDATE WHEN NOT MATCHED THEN INSERT BY NAME"
    )
    assert parse_write(sql) == Merge(
        T,
        "db.src",
        Condition("(t.id = s.id AND CASE WHEN s.x THEN 1 ELSE 0 END = 1)"),
        (
            MergeClause(MergeMatch.MATCHED, MergeAction.UPDATE_ALL),
            MergeClause(MergeMatch.NOT_MATCHED, MergeAction.INSERT_ALL),
        ),
        source_alias="s",
    )
    plain = parse_write(
        "MERGE INTO db.t USING src ON t.id = src.id WHEN NOT MATCHED THEN INSERT VALUES (src.id)"
    )
    assert isinstance(plain, Merge) and plain.source == "src" and plain.source_alias is None
    assert plain.clauses == (
        MergeClause(MergeMatch.NOT_MATCHED, MergeAction.INSERT, insert_values=("src.id",)),
    )


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("INSERT garbage", UserError, "expected INTO"),
        ("INSERT INTO db.t", UserError, "a query or VALUES"),
        ("INSERT INTO db.t (a, a) VALUES (1, 2)", UserError, "listed twice"),
        ("INSERT INTO db.t (a) BY NAME SELECT 1", UserError, "BY NAME"),
        ("INSERT OR IGNORE INTO db.t VALUES (1)", UnsupportedError, "INSERT OR REPLACE replaces rows"),
        ("INSERT OR REPLACE OVERWRITE db.t VALUES (1)", UserError, "cannot OVERWRITE"),
        ("INSERT INTO db.t DEFAULT VALUES", UnsupportedError, "DEFAULT VALUES"),
        ("INSERT INTO db.t VALUES (1) RETURNING *", UnsupportedError, "RETURNING"),
        ("INSERT INTO db.t VALUES (1) ON CONFLICT DO NOTHING", UnsupportedError, "ON"),
        ("INSERT INTO db.t PARTITION (p = 1, p = 2) VALUES (1)", UserError, "given twice"),
        ("DELETE db.t", UserError, "expected FROM"),
        ("DELETE FROM db.t WHERE", UserError, "a condition after WHERE"),
        ("DELETE FROM db.t USING s WHERE t.id = s.id", UnsupportedError, "DELETE ... USING"),
        ("DELETE FROM db.t WHERE a = 1 RETURNING a", UnsupportedError, "RETURNING"),
        ("UPDATE db.t", UserError, "expected SET"),
        ("UPDATE db.t SET a = 1, a = 2", UserError, "assigned twice"),
        ("UPDATE db.t SET a", UserError, "="),
        ("MERGE INTO db.t USING s ON a = b", UserError, "WHEN"),
        ("MERGE INTO db.t USING s ON a = b WHEN foo", UserError, "MATCHED or NOT MATCHED"),
        ("MERGE INTO db.t USING s ON a = b WHEN MATCHED THEN INSERT *", UserError, "take UPDATE or DELETE"),
        ("MERGE INTO db.t USING s ON a = b WHEN NOT MATCHED THEN DELETE", UserError, "take INSERT"),
        (
            "MERGE INTO db.t USING s ON a = b WHEN NOT MATCHED BY SOURCE THEN UPDATE SET *",
            UserError,
            "no source",
        ),
        ("MERGE INTO db.t USING s ON a = b WHEN MATCHED THEN DO NOTHING", UnsupportedError, "DO"),
        (
            "MERGE INTO db.t USING s ON a = b WHEN NOT MATCHED THEN INSERT (a, b) VALUES (1)",
            UserError,
            "2 columns",
        ),
    ],
)
def test_errors(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_write(sql)


@pytest.mark.parametrize(
    ("clauses", "kind"),
    [
        ("WHEN MATCHED THEN UPDATE SET v = 1 WHEN MATCHED AND s.x > 1 THEN DELETE", "MATCHED"),
        ("WHEN MATCHED THEN DELETE WHEN MATCHED THEN UPDATE SET v = 1", "MATCHED"),
        (
            "WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED BY TARGET AND s.x > 1 THEN INSERT *",
            r"NOT MATCHED \[BY TARGET\]",
        ),
        (
            "WHEN NOT MATCHED BY SOURCE THEN DELETE WHEN NOT MATCHED BY SOURCE AND t.v > 1 "
            "THEN UPDATE SET v = 0",
            "NOT MATCHED BY SOURCE",
        ),
        # the other kinds in between do not make the first unconditional clause the last
        (
            "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT * WHEN MATCHED AND s.x > 1 THEN DELETE",
            "MATCHED",
        ),
    ],
)
def test_merge_only_the_last_clause_of_a_kind_may_omit_its_condition(clauses: str, kind: str) -> None:
    with pytest.raises(UserError, match="only the last one may omit its condition") as raised:
        parse_write(f"MERGE INTO db.t USING s ON t.k = s.k {clauses}")
    assert re.search(f"WHEN {kind} clause", str(raised.value))


def test_merge_unconditional_last_clauses_of_each_kind_are_fine() -> None:
    statement = parse_write(
        "MERGE INTO db.t USING s ON t.k = s.k WHEN MATCHED AND s.x = 1 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN DELETE WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED AND s.x = 2 THEN INSERT * WHEN NOT MATCHED THEN INSERT *"
    )
    assert isinstance(statement, Merge)
    assert [c.condition for c in statement.clauses] == ["s.x = 1", None, None, "s.x = 2", None]


def test_merge_source_with_time_travel() -> None:
    statement = parse_write(
        "MERGE INTO db.t USING db.src VERSION AS OF 123 AS s ON t.id = s.id WHEN MATCHED THEN DELETE"
    )
    assert isinstance(statement, Merge)
    assert (statement.source, statement.source_alias) == ("db.src VERSION AS OF 123", "s")
    statement = parse_write(
        "MERGE INTO db.t USING db.src FOR TIMESTAMP AS OF '2024-01-01' s ON t.id = s.id "
        "WHEN MATCHED THEN DELETE"
    )
    assert isinstance(statement, Merge)
    assert (statement.source, statement.source_alias) == ("db.src FOR TIMESTAMP AS OF '2024-01-01'", "s")


@pytest.mark.parametrize(
    ("using", "source", "alias"),
    [
        ("read_parquet('f', hive_partitioning = 1) s", "read_parquet('f', hive_partitioning = 1)", "s"),
        ("main.read_csv('f.csv') AS s", "main.read_csv('f.csv')", "s"),
        ("duckdb_tables() d", "duckdb_tables()", "d"),
        ("range(3) r(id)", 'range(3) AS "r"("id")', "r"),
        ("(VALUES (1, 'a')) AS v(id, x)", '(VALUES (1, \'a\')) AS "v"("id", "x")', "v"),
    ],
)
def test_merge_source_table_function_and_column_aliases(using: str, source: str, alias: str) -> None:
    statement = parse_write(f"MERGE INTO db.t USING {using} ON t.id = {alias}.id WHEN MATCHED THEN DELETE")
    assert isinstance(statement, Merge)
    assert (statement.source, statement.source_alias) == (source, alias)


def test_merge_source_function_needs_closed_arguments() -> None:
    with pytest.raises(UserError, match=r"\) after the function's arguments"):
        parse_write("MERGE INTO db.t USING read_parquet('f' ON t.id = s.id WHEN MATCHED THEN DELETE")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("WITH c AS (SELECT 1) INSERT INTO db.t SELECT * FROM c", "WITH before INSERT"),
        ("WITH c AS (SELECT 1) DELETE FROM db.t WHERE id IN (SELECT * FROM c)", "WITH before DELETE"),
        ("INSERT INTO db.t REPLACE WHERE id = 1 SELECT 1", "REPLACE WHERE"),
    ],
)
def test_unsupported_spellings(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedError, match=message):
        parse_write(sql)


def test_with_queries_mentioning_write_words_are_reads() -> None:
    assert parse_write("WITH c AS (SELECT 'INSERT' AS x) SELECT x AS update FROM c") is None
    assert parse_write('WITH c AS (SELECT 1 AS "delete") SELECT * FROM c') is None
