"""``iceduck.spark_conf`` opens, in Spark, the catalog iceduck writes.

The test harness's SparkSession (tests/support/spark_session.py) is built from
``iceduck.spark_conf`` and the class path of ``spark_conf(..., jars=True)`` (only its shim
cache is the harness's), so this checks the product's settings: a table iceduck creates and
fills is read by Spark, and a row Spark appends is read back.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.spark_jars import spark_jar_conf
from tests.support.spark_jars import cache_dir

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


def test_jars_adds_the_class_path_to_the_catalog_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICEDUCK_CACHE", str(tmp_path / "cache"))
    plain = iceduck.spark_conf(tmp_path / "wh")
    assert not any("extraClassPath" in key or "extraJavaOptions" in key for key in plain)
    assert plain["spark.sql.catalog.iceduck.warehouse"] == str((tmp_path / "wh").resolve())
    with_jars = iceduck.spark_conf(tmp_path / "wh", jars=True)
    assert with_jars == {**plain, **spark_jar_conf()}
    assert str(tmp_path / "cache" / "jars") in with_jars["spark.driver.extraClassPath"]


def test_the_spark_session_runs_with_the_jars_spark_conf_assembles(spark: Any) -> None:
    conf = spark.sparkContext.getConf()
    for key, value in spark_jar_conf(cache_dir()).items():
        if key.endswith("JavaOptions"):  # Spark adds its JVM flags, the harness -Duser.timezone=UTC
            assert value in conf.get(key), key
        else:
            assert conf.get(key) == value, key


def test_spark_reads_and_appends_to_a_table_iceduck_created(shared: tuple[Any, Connection]) -> None:
    spark, con = shared
    con.execute(f"CREATE TABLE {NAMESPACE}.events (id bigint, kind string) PARTITIONED BY (kind)")
    con.executemany(f"INSERT INTO {NAMESPACE}.events VALUES (?, ?)", [(1, "a"), (2, "b"), (3, "a")])
    rows = spark.sql(f"SELECT id, kind FROM iceduck.{NAMESPACE}.events ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, "a"), (2, "b"), (3, "a")]
    spark.sql(f"INSERT INTO iceduck.{NAMESPACE}.events VALUES (4, 'c')")
    assert con.execute(f"SELECT count(*), max(id) FROM {NAMESPACE}.events").fetchone() == (4, 4)
