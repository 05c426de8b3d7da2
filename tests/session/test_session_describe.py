"""DESCRIBE end to end: what a table's columns are as declared (NOT NULL, DEFAULT, COMMENT),
as of a snapshot under time travel, on iceduck-written and Spark-written tables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.errors import NotFoundError, UserError
from tests.fixtures.spark.tables import linked_root

COLUMNS = ["column_name", "column_type", "null", "key", "default", "extra", "comment"]


@pytest.fixture(scope="module")
def cur(tmp_path_factory: pytest.TempPathFactory) -> Iterator[iceduck.Cursor]:
    con = iceduck.connect(str(tmp_path_factory.mktemp("describe")))
    cursor = con.cursor()
    cursor.execute("CREATE NAMESPACE ns")
    cursor.execute(
        """CREATE TABLE ns.t (
            id bigint NOT NULL COMMENT 'the key',
            v double DEFAULT 0.0,
            s varchar DEFAULT 'x' COMMENT 'it''s',
            d date NOT NULL DEFAULT DATE '2024-01-01',
            n decimal(10, 2) DEFAULT 1.5,
            st struct<a: int, b: string>
        ) TBLPROPERTIES ('format-version' = '3')"""
    )
    cursor.execute("INSERT INTO ns.t (id) VALUES (1)")
    yield cursor
    con.close()


def described(cur: iceduck.Cursor, sql: str) -> list[tuple[Any, ...]]:
    cur.execute(sql)
    assert cur.description is not None
    assert [d[0] for d in cur.description] == COLUMNS
    return cur.fetchall()


def test_describe_shows_the_declared_schema(cur: iceduck.Cursor) -> None:
    assert described(cur, "DESCRIBE ns.t") == [
        ("id", "BIGINT", "NO", None, None, None, "the key"),
        ("v", "DOUBLE", "YES", None, "0.0", None, None),
        ("s", "VARCHAR", "YES", None, "'x'", None, "it's"),
        ("d", "DATE", "NO", None, "DATE '2024-01-01'", None, None),
        ("n", "DECIMAL(10,2)", "YES", None, "1.50", None, None),
        ("st", "STRUCT(a INTEGER, b VARCHAR)", "YES", None, None, None, None),
    ]


def test_the_defaults_shown_are_the_ones_an_insert_uses(cur: iceduck.Cursor) -> None:
    row = cur.execute("SELECT v, s, d, n FROM ns.t WHERE id = 1").fetchone()
    shown = {r[0]: r[4] for r in described(cur, "DESCRIBE ns.t")}
    assert row is not None
    assert cur.execute(f"SELECT {shown['v']}, {shown['s']}, {shown['d']}, {shown['n']}").fetchone() == row


def test_every_spelling_describes_the_table(cur: iceduck.Cursor) -> None:
    expected = described(cur, "DESCRIBE ns.t")
    for sql in (
        "DESCRIBE TABLE ns.t",
        "DESC ns.t",
        "describe iceduck.ns.t",
        "DESCRIBE FROM ns.t",
        "DESCRIBE ns.t.branch_main",
        "DESCRIBE NS.T",
    ):
        assert described(cur, sql) == expected, sql


def test_time_travel_describes_that_snapshot_s_schema(tmp_path: Path) -> None:
    with iceduck.connect(str(tmp_path)) as con:
        cur = con.cursor()
        cur.execute("CREATE NAMESPACE ns")
        cur.execute("CREATE TABLE ns.e (id int NOT NULL, v double) TBLPROPERTIES ('format-version' = '3')")
        cur.execute("INSERT INTO ns.e VALUES (1, 0.5)")
        first = cur.execute("SELECT snapshot_id FROM ns.e.snapshots").fetchone()
        assert first is not None
        cur.execute("ALTER TABLE ns.e ADD COLUMN note string DEFAULT 'n/a' COMMENT 'added later'")
        cur.execute("ALTER TABLE ns.e ALTER COLUMN v COMMENT 'a value'")
        cur.execute("ALTER TABLE ns.e ALTER COLUMN id DROP NOT NULL")
        cur.execute("INSERT INTO ns.e (id) VALUES (2)")
        assert described(cur, "DESCRIBE ns.e") == [
            ("id", "INTEGER", "YES", None, None, None, None),
            ("v", "DOUBLE", "YES", None, None, None, "a value"),
            ("note", "VARCHAR", "YES", None, "'n/a'", None, "added later"),
        ]
        then = [
            ("id", "INTEGER", "NO", None, None, None, None),
            ("v", "DOUBLE", "YES", None, None, None, None),
        ]
        for sql in (
            f"DESCRIBE ns.e VERSION AS OF {first[0]}",
            f"DESCRIBE TABLE ns.e FOR SYSTEM_VERSION AS OF {first[0]}",
            f"DESCRIBE ns.e.snapshot_id_{first[0]}",
        ):
            assert described(cur, sql) == then, sql
        with pytest.raises(NotFoundError, match="no snapshot with id 1"):
            cur.execute("DESCRIBE ns.e VERSION AS OF 1")


def test_describe_of_a_query_keeps_not_null_of_required_columns(cur: iceduck.Cursor) -> None:
    cur.execute("DESCRIBE SELECT id, d, v, id + 1 AS next FROM ns.t")
    nullable = [(r[0], r[2]) for r in cur.fetchall()]
    assert nullable == [("id", "NO"), ("d", "NO"), ("v", "YES"), ("next", "YES")]
    cur.execute("DESCRIBE FROM ns.t WHERE id > 0")
    assert [(r[0], r[2]) for r in cur.fetchall()][:2] == [("id", "NO"), ("v", "YES")]
    assert cur.execute("SELECT count(*) FROM ns.t").fetchone() == (1,)  # nothing left behind


def test_errors_name_the_user_s_table(cur: iceduck.Cursor) -> None:
    with pytest.raises(NotFoundError, match=r"ns\.nope"):
        cur.execute("DESCRIBE ns.nope")
    with pytest.raises(UserError, match='"nope"'):
        cur.execute("DESCRIBE SELECT nope FROM ns.t")
    with pytest.raises(UserError, match="syntax error"):
        cur.execute("DESCRIBE ns.t VERSION")


def test_metadata_tables_show_their_required_columns(cur: iceduck.Cursor) -> None:
    """As Spark's schema of the metadata table marks them ``nullable = false``."""
    assert described(cur, "DESCRIBE ns.t.history") == [
        ("made_current_at", "TIMESTAMP WITH TIME ZONE", "NO", None, None, None, None),
        ("snapshot_id", "BIGINT", "NO", None, None, None, None),
        ("parent_id", "BIGINT", "YES", None, None, None, None),
        ("is_current_ancestor", "BOOLEAN", "NO", None, None, None, None),
    ]
    assert [r[:3] for r in described(cur, "DESCRIBE ns.t.files")][1:3] == [
        ("file_path", "VARCHAR", "NO"),
        ("file_format", "VARCHAR", "NO"),
    ]


def test_duckdb_relations_are_duckdb_s_to_describe(cur: iceduck.Cursor) -> None:
    cur.execute("DESCRIBE SELECT 1 AS one")
    assert cur.fetchall() == [("one", "INTEGER", "YES", None, None, None)]
    cur.execute("DESCRIBE range(2)")
    assert [r[0] for r in cur.fetchall()] == ["range"]


@pytest.fixture(scope="module")
def spark_root() -> Path:
    found = linked_root()
    if found is None:
        pytest.skip("/tmp/iceduck-spark-fixtures is taken by something other than these fixtures")
    return found


def test_spark_written_required_field(cur: iceduck.Cursor, spark_root: Path) -> None:
    table = spark_root / "deletes" / "dv_v3"
    assert described(cur, f"DESCRIBE iceduck_scan('{table}')") == [
        ("id", "BIGINT", "NO", None, None, None, None),
        ("data", "VARCHAR", "YES", None, None, None, None),
    ]


def test_spark_written_schema_evolution_as_of_each_snapshot(cur: iceduck.Cursor, spark_root: Path) -> None:
    """The first snapshot was written before Spark promoted, renamed, dropped and added columns."""
    table = spark_root / "evolve" / "schema_v2"
    first, last = 4228221576402703877, 4967280294569223090
    then = described(cur, f"DESCRIBE iceduck_scan('{table}') VERSION AS OF {first}")
    assert [(r[0], r[1]) for r in then] == [
        ("id", "INTEGER"),
        ("f", "FLOAT"),
        ("dec", "DECIMAL(10,2)"),
        ("name", "VARCHAR"),
        ("dropped", "VARCHAR"),
        ("s", "STRUCT(a INTEGER, b VARCHAR)"),
    ]
    now = described(cur, f"DESCRIBE iceduck_scan('{table}')")
    assert described(cur, f"DESCRIBE iceduck_scan('{table}') VERSION AS OF {last}") == now
    assert [(r[0], r[1]) for r in now][:4] == [
        ("id", "BIGINT"),
        ("f", "DOUBLE"),
        ("dec", "DECIMAL(20,2)"),
        ("full_name", "VARCHAR"),
    ]
