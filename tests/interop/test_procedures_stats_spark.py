"""compute_table_stats between iceduck and Spark 3.5 + Iceberg 1.10.

* Spark computes statistics of a v3 table it wrote (deletion vectors); iceduck copies the
  table's rows into a v2 twin with position deletes and computes its statistics: the ``ndv``
  of every column is the same, and so are the sketches themselves (below 4096 distinct
  values a theta sketch is exact and deterministic), byte for byte (a one-value column
  included: Java's single-item layout);
* iceduck reads Spark's Puffin file (footer, zstd blobs, sketches whose estimate is the
  ``ndv`` property) and computes the same sketches on Spark's table;
* Spark reads the twin after iceduck's statistics commit (same rows, the statistics entry
  iceduck registered) and replaces it with its own, of the same ``ndv``.

Tables live in namespace ``proc_stats`` of the Spark test warehouse (dropped first).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.formats.puffin import read_blob, read_puffin_footer
from iceduck.formats.theta_sketch import THETA_BLOB_TYPE, sketch_estimate
from iceduck.io.fileio import to_local_path
from iceduck.spec.snapshot import StatisticsFile
from tests.ops.harness import Iceduck
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

pytestmark = pytest.mark.spark

NS = "proc_stats"
COLUMNS = (
    "id bigint, n int, s string, d decimal(10, 2), dt date, ts timestamp, f double, b boolean, bin binary, "
    "one int"
)


@pytest.fixture(scope="module")
def ice(spark: Any, spark_warehouse_path: Path) -> Iterator[Iceduck]:
    engine = Iceduck(spark_warehouse_path)
    drop_namespace_with_tables(engine.con.session.catalog, NS)
    engine.execute(f"CREATE NAMESPACE {NS}")
    yield engine
    engine.close()


def statistics(ice: Iceduck, table: str) -> tuple[StatisticsFile, ...]:
    return ice.con.session.catalog.load_table(TableIdentifier((NS,), table)).metadata.statistics


def ndv_by_name(ice: Iceduck, table: str, entry: StatisticsFile) -> dict[str, int]:
    schema = ice.con.session.catalog.load_table(TableIdentifier((NS,), table)).metadata.schema()
    found = {}
    for blob in entry.blob_metadata:
        assert blob.type == THETA_BLOB_TYPE
        name = schema.column_name(blob.fields[0])
        assert name is not None and blob.properties is not None
        found[name] = int(blob.properties["ndv"])
    return found


def sketches_by_name(ice: Iceduck, table: str, entry: StatisticsFile) -> dict[str, bytes]:
    """Each column's sketch as read back from the Puffin file (checked against its ``ndv``)."""
    schema = ice.con.session.catalog.load_table(TableIdentifier((NS,), table)).metadata.schema()
    path = to_local_path(entry.statistics_path)
    footer = read_puffin_footer(path)
    assert footer.file_size == entry.file_size_in_bytes
    assert footer.footer_size == entry.file_footer_size_in_bytes
    found = {}
    for blob in footer.blobs:
        assert blob.compression_codec == "zstd"  # as Java's Spark action writes them
        data = read_blob(path, blob)
        assert int(sketch_estimate(data)) == int(blob.properties["ndv"])
        name = schema.column_name(blob.fields[0])
        assert name is not None
        found[name] = data
    return found


def test_spark_and_iceduck_statistics_agree(spark: Any, ice: Iceduck) -> None:
    spark_t = f"iceduck.{NS}.spark_t"
    spark.sql(
        f"CREATE TABLE {spark_t} ({COLUMNS}) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    for part in range(3):
        spark.sql(
            f"INSERT INTO {spark_t} SELECT id, CAST(id % 17 AS INT), concat('s', id % 23), "
            "CAST(id / 7 AS DECIMAL(10, 2)), date_add(DATE '2024-01-01', CAST(id % 40 AS INT)), "
            "timestamp_seconds(1700000000 + (id % 50) * 3600), CAST(id % 9 AS DOUBLE) / 4, id % 2 = 0, "
            f"CAST(concat('b', id % 31) AS BINARY), 1 FROM range({part * 300}, {part * 300 + 300})"
        )
    spark.sql(f"INSERT INTO {spark_t} SELECT 5000, {', '.join(['NULL'] * 9)}")  # nulls are not counted
    spark.sql(f"DELETE FROM {spark_t} WHERE id % 10 = 3")
    [(spark_file,)] = spark.sql(f"CALL iceduck.system.compute_table_stats(table => '{NS}.spark_t')").collect()
    [spark_entry] = statistics(ice, "spark_t")
    assert spark_entry.statistics_path == spark_file
    spark_ndv = ndv_by_name(ice, "spark_t", spark_entry)
    expected = ice.con.execute(
        "SELECT count(DISTINCT id), count(DISTINCT n), count(DISTINCT s), count(DISTINCT d), "
        "count(DISTINCT dt), count(DISTINCT ts), count(DISTINCT f), count(DISTINCT b), "
        f"count(DISTINCT bin), count(DISTINCT one) FROM {NS}.spark_t"
    ).fetchone()
    names = ["id", "n", "s", "d", "dt", "ts", "f", "b", "bin", "one"]
    assert spark_ndv == dict(zip(names, expected, strict=True))
    spark_sketches = sketches_by_name(ice, "spark_t", spark_entry)

    # the twin: the same rows, written by iceduck into a v2 table with position deletes
    ice.execute(
        f"CREATE TABLE {NS}.ice_t ({COLUMNS}) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    ice.execute(f"INSERT INTO {NS}.ice_t SELECT * FROM {NS}.spark_t")
    ice.execute(f"INSERT INTO {NS}.ice_t SELECT id + 100000, * EXCLUDE (id) FROM {NS}.spark_t")
    ice.execute(f"DELETE FROM {NS}.ice_t WHERE id >= 100000")
    [(ice_file,)] = ice.con.execute(f"CALL system.compute_table_stats('{NS}.ice_t')").fetchall()
    [ice_entry] = statistics(ice, "ice_t")
    assert ice_entry.statistics_path == ice_file
    assert ndv_by_name(ice, "ice_t", ice_entry) == spark_ndv
    assert sketches_by_name(ice, "ice_t", ice_entry) == spark_sketches

    # iceduck on Spark's table: the same sketches again, replacing Spark's entry
    ice.con.execute(f"CALL system.compute_table_stats('{NS}.spark_t')")
    [replaced] = statistics(ice, "spark_t")
    assert replaced.statistics_path != spark_file
    assert sketches_by_name(ice, "spark_t", replaced) == spark_sketches

    # Spark reads the twin after iceduck's commit, sees its entry, and replaces it
    query = f"SELECT * FROM {NS}.ice_t"
    assert_same(query, iceduck_rows(ice.con, query), spark_rows(spark, f"SELECT * FROM iceduck.{NS}.ice_t"))
    spark.sql(f"REFRESH TABLE iceduck.{NS}.ice_t")
    [(spark_on_ice,)] = spark.sql(
        f"CALL iceduck.system.compute_table_stats(table => '{NS}.ice_t', columns => array('s', 'ts'))"
    ).collect()
    [entry] = statistics(ice, "ice_t")
    assert entry.statistics_path == spark_on_ice
    assert ndv_by_name(ice, "ice_t", entry) == {"s": spark_ndv["s"], "ts": spark_ndv["ts"]}
