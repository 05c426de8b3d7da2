"""``rewrite_data_files`` shared with Spark 3.5 + Iceberg 1.10: Spark reads what iceduck's
compaction wrote, Spark's and iceduck's compactions of the same table agree, and iceduck
compacts Spark-written merge-on-read tables (position deletes, deletion vectors) to the
rows Spark saw.

Tables live in namespace ``ops_rewrite`` of the test warehouse (dropped first), which
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

NS = "ops_rewrite"


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
    return list(mine)


def create_iceduck_table(con: Connection, table: str, version: int, partitioned: bool) -> None:
    partition = " PARTITIONED BY (bucket(3, id))" if partitioned else ""
    con.execute(
        f"CREATE TABLE {NS}.{table} (id bigint, data string, cat string) USING iceberg{partition} "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read', "
        "'write.update.mode' = 'merge-on-read')"
    )
    for i in range(6):
        con.execute(
            f"INSERT INTO {NS}.{table} SELECT i, 'd' || i, CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END "
            f"FROM range({i * 50}, {(i + 1) * 50}) r(i)"
        )
    con.execute(f"DELETE FROM {NS}.{table} WHERE id % 10 = 3")
    con.execute(f"UPDATE {NS}.{table} SET data = 'u' WHERE id % 11 = 0")


def spark_files(spark: Any, table: str, kind: str) -> int:
    return int(spark.sql(f"SELECT count(*) FROM iceduck.{NS}.{table}.{kind}").collect()[0][0])


@pytest.mark.parametrize(("version", "partitioned"), [(2, True), (3, False), (3, True)])
def test_spark_and_iceduck_compact_the_same_table_alike(
    spark: Any, con: Connection, version: int, partitioned: bool
) -> None:
    mine, theirs = f"ice_v{version}_{int(partitioned)}", f"spark_v{version}_{int(partitioned)}"
    for table in (mine, theirs):
        create_iceduck_table(con, table, version, partitioned)
    before = same_rows(spark, con, mine)
    deletes = spark_files(spark, mine, "delete_files")

    (ice_result,) = con.execute(f"CALL system.rewrite_data_files('{NS}.{mine}')").fetchall()
    frame = spark.sql(f"CALL iceduck.system.rewrite_data_files('{NS}.{theirs}')")
    (spark_result,) = frame.collect()

    # same columns and types as Spark's procedure
    names = [d[0] for d in con.execute(f"CALL system.rewrite_data_files('{NS}.{mine}')").description]
    assert names == frame.columns
    assert [f.dataType.simpleString() for f in frame.schema.fields] == ["int", "int", "bigint", "int", "int"]
    # the same files chosen, the same number of new files
    assert ice_result[:4] == spark_result[:4]
    # iceduck drops every delete file that applied only to rewritten files. Java drops the
    # DVs of rewritten files (v3) but keeps v2 position delete files: their sequence number
    # is not below the new files' (the starting one), so even remove-dangling-deletes keeps
    # them, though they can match no row of the new files
    assert ice_result[4] == deletes and spark_files(spark, mine, "delete_files") == 0
    if version >= 3:
        assert spark_result[4] == deletes and spark_files(spark, theirs, "delete_files") == 0
    for table in (mine, theirs):
        assert same_rows(spark, con, table) == before
        operation = spark.sql(
            f"SELECT operation FROM iceduck.{NS}.{table}.snapshots ORDER BY committed_at DESC LIMIT 1"
        ).collect()[0][0]
        assert operation == "replace"
    if version >= 3:  # row lineage survives both compactions alike
        lineage = "SELECT id, _row_id FROM iceduck.{}.{} ORDER BY id"
        assert (
            spark.sql(lineage.format(NS, mine)).collect() == spark.sql(lineage.format(NS, theirs)).collect()
        )


@pytest.mark.parametrize("version", [2, 3])
def test_iceduck_compacts_a_spark_written_merge_on_read_table(
    spark: Any, con: Connection, version: int
) -> None:
    table = f"spark_mor_v{version}"
    name = f"iceduck.{NS}.{table}"
    spark.sql(
        f"CREATE TABLE {name} (id bigint, data string, day date) USING iceberg PARTITIONED BY (day) "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read', "
        "'write.update.mode' = 'merge-on-read')"
    )
    for i in range(5):
        spark.sql(
            f"INSERT INTO {name} SELECT id, concat('d', id), "
            f"date_add(DATE '2024-01-01', CAST(id % 2 AS int)) FROM range({i * 40}, {(i + 1) * 40})"
        )
    spark.sql(f"DELETE FROM {name} WHERE id % 9 = 4")
    spark.sql(f"UPDATE {name} SET data = 'changed' WHERE id % 13 = 0")
    before = same_rows(spark, con, table)
    deletes = spark_files(spark, table, "delete_files")
    files = spark_files(spark, table, "data_files")
    assert deletes > 0

    rewritten, added, _, failed, removed = con.execute(
        f"CALL system.rewrite_data_files(table => '{NS}.{table}', options => map('min-input-files', '2'))"
    ).fetchall()[0]

    assert rewritten == files
    assert (added, failed, removed) == (2, 0, deletes)
    assert same_rows(spark, con, table) == before
    assert spark_files(spark, table, "delete_files") == 0
    assert spark_files(spark, table, "data_files") == 2
    # Spark keeps writing to the compacted table
    spark.sql(f"DELETE FROM {name} WHERE id = 1")
    assert 1 not in {r[0] for r in same_rows(spark, con, table)}
