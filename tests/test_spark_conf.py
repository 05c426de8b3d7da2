"""``iceduck.spark_conf`` opens, in Spark, the catalog iceduck writes.

The test harness's SparkSession (tests/support/spark_session.py) is built from
``iceduck.spark_conf`` plus the harness's class path, so this checks the product's settings:
a table iceduck creates and fills is read by Spark, and a row Spark appends is read back.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection

NAMESPACE = "spark_conf"


@pytest.fixture
def shared(spark: Any, spark_warehouse_path: Path) -> Iterator[tuple[Any, Connection]]:
    with iceduck.connect(spark_warehouse_path) as con:
        con.execute(f"CREATE NAMESPACE IF NOT EXISTS {NAMESPACE}")
        con.execute(f"DROP TABLE IF EXISTS {NAMESPACE}.events")
        yield spark, con
        con.execute(f"DROP TABLE IF EXISTS {NAMESPACE}.events")
        con.execute(f"DROP NAMESPACE IF EXISTS {NAMESPACE}")


def test_the_spark_session_is_configured_by_spark_conf(spark: Any, spark_warehouse_path: Path) -> None:
    conf = spark.sparkContext.getConf()
    for key, value in iceduck.spark_conf(spark_warehouse_path).items():
        assert conf.get(key) == value, key


def test_spark_reads_and_appends_to_a_table_iceduck_created(shared: tuple[Any, Connection]) -> None:
    spark, con = shared
    con.execute(f"CREATE TABLE {NAMESPACE}.events (id bigint, kind string) PARTITIONED BY (kind)")
    con.executemany(f"INSERT INTO {NAMESPACE}.events VALUES (?, ?)", [(1, "a"), (2, "b"), (3, "a")])
    rows = spark.sql(f"SELECT id, kind FROM iceduck.{NAMESPACE}.events ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, "a"), (2, "b"), (3, "a")]
    spark.sql(f"INSERT INTO iceduck.{NAMESPACE}.events VALUES (4, 'c')")
    assert con.execute(f"SELECT count(*), max(id) FROM {NAMESPACE}.events").fetchone() == (4, 4)
