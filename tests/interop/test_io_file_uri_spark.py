"""Spark's tables at a ``file:`` location with escaped partition folders, changed by iceduck.

Spark (Iceberg 1.10) writes ``file:/.../data/s=a%2Fb/...`` for the folder literally named
``s=a%2Fb``; deletion vectors and position deletes included. iceduck reads, deletes and
updates those rows, and Spark reads the result back (see test_file_uri_tables.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

NS = "file_uri"
VALUES = ["a/b", "é", "50%", "x y", "k=v:w"]


@pytest.fixture(scope="module")
def ice(spark: Any, spark_warehouse_path: Path) -> Iterator[iceduck.Connection]:
    con = iceduck.connect(spark_warehouse_path)
    catalog = con.session.catalog
    drop_namespace_with_tables(catalog, NS)
    con.execute(f"CREATE NAMESPACE {NS}")
    yield con
    con.close()


def _same(spark: Any, ice: iceduck.Connection, table: str) -> None:
    query = f"SELECT * FROM {NS}.{table}"
    assert_same(query, iceduck_rows(ice, query), spark_rows(spark, f"SELECT * FROM iceduck.{NS}.{table}"))


@pytest.mark.parametrize("version", [2, 3])
def test_iceduck_changes_spark_rows_under_escaped_folders(
    spark: Any, ice: iceduck.Connection, spark_warehouse_path: Path, version: int
) -> None:
    table = f"t{version}"
    location = f"file:{spark_warehouse_path}/{NS}_locations/{table}"
    spark.sql(
        f"CREATE TABLE iceduck.{NS}.{table} (id INT, s STRING, ts TIMESTAMP_NTZ) USING iceberg "
        f"PARTITIONED BY (s, ts) LOCATION '{location}' TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    rows = ", ".join(
        f"({i * 10 + j}, '{v}', TIMESTAMP_NTZ '2024-01-01 10:00:00')"
        for i, v in enumerate(VALUES)
        for j in range(3)
    )
    spark.sql(f"INSERT INTO iceduck.{NS}.{table} VALUES {rows}")
    spark.sql(f"DELETE FROM iceduck.{NS}.{table} WHERE id % 10 = 0")  # Spark's DVs / position deletes
    paths = [p for (p,) in ice.execute(f"SELECT file_path FROM {NS}.{table}.all_files").fetchall()]
    assert any(p.startswith("file:") and "%2F" in p for p in paths), paths
    _same(spark, ice, table)

    ice.execute(f"DELETE FROM {NS}.{table} WHERE id % 10 = 1")
    ice.execute(f"UPDATE {NS}.{table} SET id = -id WHERE s = '50%'")
    ice.execute(f"ALTER TABLE {NS}.{table} SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')")
    ice.execute(f"DELETE FROM {NS}.{table} WHERE s = 'é' AND id = 12")
    _same(spark, ice, table)
    assert ice.execute(f"SELECT count(*) FROM {NS}.{table}").fetchall() == [(4,)]
