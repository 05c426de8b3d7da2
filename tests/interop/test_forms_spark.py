"""Spark 3.5 + Iceberg 1.10 on tables iceduck made: a CTAS whose DuckDB-only types were
coerced (HUGEINT -> bigint / decimal(38, 0), TIMESTAMP_NS -> timestamp on v2) reads the
same in Spark, and SHOW CREATE TABLE / SHOW TBLPROPERTIES print what Spark prints."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING

import pytest

from iceduck.connection import Connection

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NS = "forms_spark"


def test_spark_reads_coerced_ctas_columns(spark: SparkSession, con: Connection) -> None:
    con.execute(
        f"CREATE TABLE {NS}.ctas AS SELECT (i % 3)::INT AS k, sum(i) AS s, "
        "sum(i)::HUGEINT * 10000000000000000000 AS big, "
        "max(TIMESTAMP_NS '2024-05-01 10:00:00.123456789' + to_microseconds(i)) AS ts "
        "FROM range(10) r(i) GROUP BY 1"
    )
    types = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE iceduck.{NS}.ctas").collect()[:4]}
    assert types == {"k": "int", "s": "bigint", "big": "decimal(38,0)", "ts": "timestamp_ntz"}
    theirs = [
        (r.k, r.s, r.big, r.ts_us)
        for r in spark.sql(
            f"SELECT k, s, big, unix_micros(CAST(ts AS TIMESTAMP)) AS ts_us FROM iceduck.{NS}.ctas ORDER BY k"
        ).collect()
    ]
    mine = con.execute(f"SELECT k, s, big, epoch_us(ts) FROM {NS}.ctas ORDER BY k").fetchall()
    assert theirs == mine
    assert mine[0][2] == Decimal(18) * 10**19


def test_show_create_table_and_tblproperties_as_spark_prints_them(
    spark: SparkSession, con: Connection
) -> None:
    con.execute(
        f"CREATE TABLE {NS}.shown (id bigint NOT NULL COMMENT 'key', data string, ts timestamp, "
        "s struct<a: int, b: string>, l array<date>) USING iceberg "
        "PARTITIONED BY (days(ts), truncate(data, 4), id) COMMENT 'shown table' "
        "TBLPROPERTIES ('k' = 'v', 'write.metadata.previous-versions-max' = '7')"
    )
    con.execute(f"INSERT INTO {NS}.shown (id, data) VALUES (1, 'a')")
    spark.catalog.clearCache()
    theirs = spark.sql(f"SHOW CREATE TABLE iceduck.{NS}.shown").collect()[0][0]
    mine = con.execute(f"SHOW CREATE TABLE {NS}.shown").fetchone()[0]
    # Spark adds the properties it derives (which CREATE TABLE refuses); the rest is the same
    derived = r"\n  '(current-snapshot-id|format)' = '[^']*',"
    assert re.sub(derived, "", theirs) == mine
    for asked in ("", "('k')", "('nope')", "(format)"):
        spark_rows = spark.sql(f"SHOW TBLPROPERTIES iceduck.{NS}.shown {asked}").collect()
        mine_rows = con.execute(f"SHOW TBLPROPERTIES {NS}.shown {asked}").fetchall()
        assert [tuple(r) for r in spark_rows] == mine_rows, asked


def test_show_create_table_of_buckets_and_sort_order(spark: SparkSession, con: Connection) -> None:
    con.execute(
        f"CREATE TABLE {NS}.bucketed (id bigint, data string) USING iceberg "
        "PARTITIONED BY (bucket(8, id)) ORDERED BY (data DESC)"
    )
    spark.catalog.clearCache()
    theirs = spark.sql(f"SHOW CREATE TABLE iceduck.{NS}.bucketed").collect()[0][0]
    mine = con.execute(f"SHOW CREATE TABLE {NS}.bucketed").fetchone()[0]
    # Spark shows a bucket as Hive's clause and the order as a property, which neither
    # Spark's nor iceduck's CREATE TABLE turns back into the partition spec and sort order
    assert "USING iceberg\nCLUSTERED BY (id)\nINTO 8 BUCKETS\n" in theirs
    assert "'sort-order' = 'data DESC NULLS LAST'" in theirs
    assert "USING iceberg\nPARTITIONED BY (bucket(8, id))\nORDERED BY (data DESC NULLS LAST)\n" in mine
