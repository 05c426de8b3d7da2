"""A multi-table transaction read by Spark 3.5 + Iceberg 1.10: before COMMIT Spark sees
neither table changed, after it both, with one snapshot per statement and the history
Spark's own ``snapshots`` table agrees with. Tables live in namespace ``txn_spark`` of the
test warehouse (dropped first), which Spark reads through its ``iceduck`` JDBC catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import iceduck
from tests.support.namespaces import drop_namespace_with_tables

pytestmark = pytest.mark.spark

NS = "txn_spark"


def spark_ids(spark: Any, table: str) -> list[int]:
    spark.sql(f"REFRESH TABLE iceduck.{NS}.{table}")
    return sorted(r[0] for r in spark.sql(f"SELECT id FROM iceduck.{NS}.{table}").collect())


def test_spark_sees_both_tables_after_commit(spark: Any, spark_warehouse_path: Path) -> None:
    con = iceduck.connect(spark_warehouse_path)
    try:
        drop_namespace_with_tables(con.session.catalog, NS)
        con.execute(f"CREATE NAMESPACE {NS}")
        con.execute(f"CREATE TABLE {NS}.staging (id BIGINT, v STRING)")
        con.execute(f"CREATE TABLE {NS}.target (id BIGINT, v STRING)")
        con.execute(f"INSERT INTO {NS}.staging VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        con.execute("BEGIN")  # move the rows from staging into target
        con.execute(f"INSERT INTO {NS}.target SELECT * FROM {NS}.staging WHERE id < 3")
        con.execute(f"DELETE FROM {NS}.staging WHERE id < 3")
        con.execute(f"UPDATE {NS}.target SET v = upper(v)")
        assert spark_ids(spark, "staging") == [1, 2, 3] and spark_ids(spark, "target") == []
        con.execute("COMMIT")
        assert spark_ids(spark, "staging") == [3] and spark_ids(spark, "target") == [1, 2]
        rows = spark.sql(f"SELECT id, v FROM iceduck.{NS}.target ORDER BY id").collect()
        assert [(r[0], r[1]) for r in rows] == [(1, "A"), (2, "B")]
        history = spark.sql(f"SELECT operation FROM iceduck.{NS}.target.snapshots ORDER BY committed_at")
        assert len(history.collect()) == 2  # one snapshot per statement
        spark.sql(f"INSERT INTO iceduck.{NS}.target VALUES (4, 'd')")  # Spark writes on top
        assert [r[0] for r in con.execute(f"SELECT id FROM {NS}.target ORDER BY id").fetchall()] == [1, 2, 4]
    finally:
        con.close()
