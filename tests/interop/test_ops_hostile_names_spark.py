"""Unusual but folder-safe names are shared with Spark 3.5 + Iceberg 1.10 both ways, and a
name iceduck refuses to create, once Spark created it, is still read and written by iceduck.

Tables live in namespace ``ops_names`` of the fixture warehouse (dropped first).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import ValidationError

NS = "ops_names"

#: names iceduck creates and Spark must read: spaces, quotes, %, unicode, emoji
NAMES = ["with space", "ünï©ødé 表", "emoji🧊🦆", "per%cent 20%", 'dq"uote', "a.b"]


def backticks(name: str) -> str:
    """A Spark SQL quoted identifier (backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@pytest.fixture(scope="module")
def con(spark: Any, spark_warehouse_path: Path) -> Iterator[Connection]:
    connection = iceduck.connect(spark_warehouse_path)
    # iceduck first: Spark's JDBC catalog refuses CASCADE on a namespace a reused warehouse
    # still fills (NamespaceNotEmptyException)
    connection.execute(f"DROP NAMESPACE IF EXISTS {NS} CASCADE")
    spark.sql(f"DROP NAMESPACE IF EXISTS iceduck.{NS} CASCADE")
    connection.execute(f"CREATE NAMESPACE {NS}")
    yield connection
    connection.close()


def rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(sql).collect()]


@pytest.mark.parametrize("name", NAMES)
def test_spark_reads_and_writes_tables_iceduck_named(
    spark: Any, con: Connection, spark_warehouse_path: Path, name: str
) -> None:
    ours, theirs = f"{NS}.{quote(name)}", f"iceduck.{NS}.{backticks(name)}"
    con.execute(f"CREATE TABLE {ours} (id bigint, s string) PARTITIONED BY (s)")
    con.execute(f"INSERT INTO {ours} VALUES (1, 'ü'), (2, 'x y')")
    assert (spark_warehouse_path / NS / name / "metadata").is_dir()
    assert rows(spark, f"SELECT id, s FROM {theirs} ORDER BY id") == [(1, "ü"), (2, "x y")]
    spark.sql(f"INSERT INTO {theirs} VALUES (3, '%')")
    assert con.execute(f"SELECT id, s FROM {ours} ORDER BY id").fetchall() == [(1, "ü"), (2, "x y"), (3, "%")]
    assert (name,) in [tuple(r)[1:2] for r in spark.sql(f"SHOW TABLES IN iceduck.{NS}").collect()]


def test_a_name_spark_created_and_iceduck_refuses_keeps_working(
    spark: Any, con: Connection, spark_warehouse_path: Path
) -> None:
    """Java joins the raw name into the location (``JdbcCatalog.defaultWarehouseLocation``):
    Spark puts table ``a/b`` in the nested folder ``ops_names/a/b``. iceduck will not
    create that name, but reads and writes the table Spark made."""
    spark.sql(f"CREATE TABLE iceduck.{NS}.`a/b` (id bigint) USING iceberg")
    spark.sql(f"INSERT INTO iceduck.{NS}.`a/b` VALUES (1)")
    assert (spark_warehouse_path / NS / "a" / "b" / "metadata").is_dir()
    con.execute(f'INSERT INTO {NS}."a/b" VALUES (2)')
    assert con.execute(f'SELECT id FROM {NS}."a/b" ORDER BY id').fetchall() == [(1,), (2,)]
    assert rows(spark, f"SELECT id FROM iceduck.{NS}.`a/b` ORDER BY id") == [(1,), (2,)]
    with pytest.raises(ValidationError, match="table names become folder names"):
        con.execute(f'CREATE TABLE {NS}."c/d" (id bigint)')
