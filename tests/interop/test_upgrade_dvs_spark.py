"""v2 tables with position deletes upgraded to v3, shared with Spark 3.5 + Iceberg 1.10:
the DVs iceduck's next DELETE/UPDATE/MERGE writes (merging the old positions, dropping
the position delete files they replace) read the same in Spark at every step; Spark's
own upgrade-then-delete sequence reads the same in iceduck; and
``rewrite_position_delete_files`` turns legacy position delete files into DVs on both.

Tables live in namespace ``ops_upgrade_dvs`` of the test warehouse (dropped first), which
Spark sees through its ``iceduck`` JDBC catalog."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

pytestmark = pytest.mark.spark

NS = "ops_upgrade_dvs"
MOR = ", ".join(f"'write.{op}.mode' = 'merge-on-read'" for op in ("delete", "update", "merge"))


@pytest.fixture(scope="module")
def con(spark: Any, spark_warehouse_path: Path) -> Iterator[Connection]:
    connection = iceduck.connect(spark_warehouse_path)
    drop_namespace_with_tables(connection.session.catalog, NS)
    connection.execute(f"CREATE NAMESPACE {NS}")
    yield connection
    connection.close()


def same_rows(spark: Any, con: Connection, table: str) -> list[Any]:
    query = f"SELECT * FROM {NS}.{table}"
    mine = iceduck_rows(con, query)
    assert_same(query, mine, spark_rows(spark, f"SELECT * FROM iceduck.{NS}.{table}"))
    return con.execute(f"{query} ORDER BY id").fetchall()


def delete_formats(con: Connection, table: str) -> list[tuple[str, bool]]:
    """(format, scoped to one data file) of the live delete files, as iceduck lists them."""
    return sorted(
        con.execute(
            f"SELECT file_format, referenced_data_file IS NOT NULL FROM {NS}.{table}.delete_files"
        ).fetchall()
    )


def spark_delete_formats(spark: Any, table: str) -> list[tuple[str, bool]]:
    frame = spark.sql(
        f"SELECT file_format, referenced_data_file IS NOT NULL FROM iceduck.{NS}.{table}.delete_files"
    )
    return sorted((r[0], bool(r[1])) for r in frame.collect())


def create_v2(run: Any, table: str) -> None:
    """Two files in partition p=1 (ids 0-9 and 10-19), one in p=0 (``table`` qualified as
    the engine running ``run`` names it)."""
    run(
        f"CREATE TABLE {table} (id bigint, p int, s string) USING iceberg PARTITIONED BY (p) "
        f"TBLPROPERTIES ('format-version' = '2', {MOR})"
    )
    run(f"INSERT INTO {table} VALUES " + ", ".join(f"({i}, 1, 'a{i}')" for i in range(10)))
    run(f"INSERT INTO {table} VALUES " + ", ".join(f"({i}, 1, 'b{i}')" for i in range(10, 20)))
    run(f"INSERT INTO {table} VALUES " + ", ".join(f"({i}, 0, 'c{i}')" for i in range(20, 30)))


def test_iceduck_upgrade_then_writes_read_alike_in_spark(spark: Any, con: Connection) -> None:
    create_v2(con.execute, f"{NS}.ice")
    con.execute(f"DELETE FROM {NS}.ice WHERE id IN (1, 11, 21)")
    con.execute(f"DELETE FROM {NS}.ice WHERE id = 3")
    same_rows(spark, con, "ice")
    con.execute(f"ALTER TABLE {NS}.ice SET TBLPROPERTIES ('format-version' = '3')")
    assert all(f == "PARQUET" for f, _ in delete_formats(con, "ice"))
    steps = [
        f"DELETE FROM {NS}.ice WHERE id = 5",
        f"UPDATE {NS}.ice SET s = 'u' WHERE id = 15",
        f"MERGE INTO {NS}.ice USING (SELECT 25 AS id, 'm' AS s) AS src ON {NS}.ice.id = src.id "
        "WHEN MATCHED THEN UPDATE SET s = src.s",
    ]
    for step in steps:
        con.execute(step)
        rows = same_rows(spark, con, "ice")
        assert delete_formats(con, "ice") == spark_delete_formats(spark, "ice")
    # every data file touched now has one DV; no Parquet delete file is left
    assert delete_formats(con, "ice") == [("PUFFIN", True)] * 3
    assert [r[0] for r in rows] == [i for i in range(30) if i not in (1, 3, 5, 11, 21)]
    assert (15, 1, "u") in rows and (25, 0, "m") in rows


def test_spark_upgrade_then_writes_read_alike_in_iceduck(spark: Any, con: Connection) -> None:
    create_v2(spark.sql, f"iceduck.{NS}.sp")
    spark.sql(f"DELETE FROM iceduck.{NS}.sp WHERE id IN (1, 11, 21)")
    spark.sql(f"DELETE FROM iceduck.{NS}.sp WHERE id = 3")
    spark.sql(f"ALTER TABLE iceduck.{NS}.sp SET TBLPROPERTIES ('format-version' = '3')")
    spark.sql(f"DELETE FROM iceduck.{NS}.sp WHERE id = 5")
    rows = same_rows(spark, con, "sp")
    assert [r[0] for r in rows] == [i for i in range(30) if i not in (1, 3, 5, 11, 21)]
    assert ("PUFFIN", True) in spark_delete_formats(spark, "sp")
    # iceduck continues the sequence on the Spark-written table
    con.execute(f"UPDATE {NS}.sp SET s = 'u' WHERE id = 15")
    con.execute(f"DELETE FROM {NS}.sp WHERE id = 25")
    rows = same_rows(spark, con, "sp")
    assert (15, 1, "u") in rows and 25 not in [r[0] for r in rows]
    assert all(f == "PUFFIN" for f, _ in delete_formats(con, "sp"))


def test_rewrite_position_delete_files_on_v3_alike(spark: Any, con: Connection) -> None:
    for table in ("rw_ice", "rw_spark"):
        create_v2(con.execute, f"{NS}.{table}")
        for ids in ("1, 11", "2", "21", "4, 14"):
            con.execute(f"DELETE FROM {NS}.{table} WHERE id IN ({ids})")
        con.execute(f"ALTER TABLE {NS}.{table} SET TBLPROPERTIES ('format-version' = '3')")
    before = same_rows(spark, con, "rw_ice")
    options = "map('rewrite-all', 'true')"
    mine = con.execute(f"CALL system.rewrite_position_delete_files('{NS}.rw_ice', {options})").fetchone()
    (theirs,) = spark.sql(
        f"CALL iceduck.system.rewrite_position_delete_files('{NS}.rw_spark', {options})"
    ).collect()
    assert mine[:2] == tuple(theirs)[:2]
    assert same_rows(spark, con, "rw_ice") == before
    assert same_rows(spark, con, "rw_spark") == before
    assert delete_formats(con, "rw_ice") == delete_formats(con, "rw_spark")
    assert all(f == "PUFFIN" for f, _ in delete_formats(con, "rw_ice"))
