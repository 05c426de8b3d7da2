"""expire_snapshots and remove_orphan_files between iceduck and Spark 3.5 + Iceberg 1.10.

* iceduck expires snapshots of a table it wrote: Spark reads the same rows, the tag and a
  retained snapshot, and the folder holds exactly the referenced files;
* iceduck expires snapshots of a Spark-written v3 table (deletion vectors, a statistics
  file from Spark's ``compute_table_stats``), then removes a planted orphan from it: the
  statistics file is counted and deleted, no Hadoop ``.crc`` is left without its file,
  ``file:`` locations compare equal to listed paths, and both engines read the same rows;
* Spark's ``expire_snapshots`` on an iceduck-written table leaves a table iceduck reads.

Tables live in namespace ``proc_expire`` of the Spark test warehouse (dropped first).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ops.harness import Iceduck
from tests.ops.procedures.expire_support import (
    FUTURE,
    age_files,
    disk_files,
    referenced_files,
    snapshot_ids,
    table_dir,
)
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

pytestmark = pytest.mark.spark

NS = "proc_expire"


@pytest.fixture(scope="module")
def ice(spark: Any, spark_warehouse_path: Path) -> Iterator[Iceduck]:
    engine = Iceduck(spark_warehouse_path)
    drop_namespace_with_tables(engine.con.session.catalog, NS)
    engine.execute(f"CREATE NAMESPACE {NS}")
    yield engine
    engine.close()


def same_rows(spark: Any, ice: Iceduck, table: str, version: int | str | None = None) -> None:
    as_of = (
        ""
        if version is None
        else f" VERSION AS OF {version!r}"
        if isinstance(version, str)
        else f" VERSION AS OF {version}"
    )
    query = f"SELECT * FROM {NS}.{table}{as_of}"
    assert_same(
        query, iceduck_rows(ice.con, query), spark_rows(spark, f"SELECT * FROM iceduck.{NS}.{table}{as_of}")
    )


def folder(ice: Iceduck, table: str) -> Path:
    return table_dir(ice.con, NS, table)


def assert_exact(ice: Iceduck, table: str) -> None:
    assert disk_files(folder(ice, table)) == referenced_files(ice.con, f"{NS}.{table}")


def no_lonely_checksums(root: Path) -> None:
    """Every Hadoop checksum ``.<name>.crc`` still has its ``<name>``."""
    for path_folder, _, files in os.walk(root):
        for name in files:
            if name.startswith(".") and name.endswith(".crc"):
                assert os.path.exists(os.path.join(path_folder, name[1 : -len(".crc")])), name


def test_spark_reads_a_table_iceduck_expired(spark: Any, ice: Iceduck) -> None:
    ice.execute(
        f"CREATE TABLE {NS}.ice_t (id bigint, s string) PARTITIONED BY (bucket(2, id)) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    for i in range(4):
        ice.execute(f"INSERT INTO {NS}.ice_t VALUES ({i}, 'a{i}'), ({i + 10}, 'b{i}')")
    first = snapshot_ids(ice.con, f"{NS}.ice_t")[0]
    ice.execute(f"ALTER TABLE {NS}.ice_t CREATE TAG first AS OF VERSION {first}")
    ice.execute(f"DELETE FROM {NS}.ice_t WHERE id IN (1, 12)")
    ice.execute(f"INSERT INTO {NS}.ice_t VALUES (99, 'last')")
    ice.execute(f"CALL system.expire_snapshots('{NS}.ice_t', {FUTURE}, 2)")
    kept = snapshot_ids(ice.con, f"{NS}.ice_t")
    assert len(kept) == 3 and first in kept
    spark.sql(f"REFRESH TABLE iceduck.{NS}.ice_t")
    spark_ids = {r[0] for r in spark.sql(f"SELECT snapshot_id FROM iceduck.{NS}.ice_t.snapshots").collect()}
    assert spark_ids == set(kept)
    same_rows(spark, ice, "ice_t")
    same_rows(spark, ice, "ice_t", "first")
    same_rows(spark, ice, "ice_t", kept[1])
    assert_exact(ice, "ice_t")


def test_iceduck_expires_and_cleans_a_spark_written_table(spark: Any, ice: Iceduck) -> None:
    name = f"iceduck.{NS}.spark_t"
    spark.sql(
        f"CREATE TABLE {name} (id bigint, s string) USING iceberg PARTITIONED BY (bucket(2, id)) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    for i in range(3):
        spark.sql(f"INSERT INTO {name} VALUES ({i}, 'a{i}'), ({i + 10}, 'b{i}')")
    spark.sql(f"DELETE FROM {name} WHERE id = 1")
    spark.sql(f"CALL iceduck.system.compute_table_stats(table => '{NS}.spark_t')")
    spark.sql(f"INSERT OVERWRITE {name} SELECT * FROM {name}")
    spark.sql(f"INSERT INTO {name} VALUES (50, 'late')")
    expected = spark_rows(spark, f"SELECT * FROM {name}")
    counts = ice.con.execute(f"CALL system.expire_snapshots('{NS}.spark_t', {FUTURE})").fetchall()[0]
    data, positions, equalities, manifests, lists, statistics = counts
    assert data > 0 and positions > 0 and equalities == 0 and manifests > 0 and lists > 0
    assert statistics == 1  # compute_table_stats wrote one for a snapshot that is gone now
    root = folder(ice, "spark_t")
    assert_exact(ice, "spark_t")
    no_lonely_checksums(root)
    spark.sql(f"REFRESH TABLE {name}")
    assert_same("after expiry", spark_rows(spark, f"SELECT * FROM {name}"), expected)
    same_rows(spark, ice, "spark_t")

    orphan = root / "data" / "orphan.parquet"
    orphan.write_text("left by a failed write")
    age_files(root)
    found = ice.con.execute(f"CALL system.remove_orphan_files('{NS}.spark_t')").fetchall()
    assert found == [(str(orphan),)]  # Spark's file: locations matched the listed paths
    assert_exact(ice, "spark_t")
    same_rows(spark, ice, "spark_t")


def test_spark_expires_a_table_iceduck_wrote(spark: Any, ice: Iceduck) -> None:
    ice.execute(
        f"CREATE TABLE {NS}.ice_v3 (id bigint, s string) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    for i in range(4):
        ice.execute(f"INSERT INTO {NS}.ice_v3 VALUES ({i}, 's{i}')")
    ice.execute(f"DELETE FROM {NS}.ice_v3 WHERE id = 2")
    ice.execute(f"UPDATE {NS}.ice_v3 SET s = 'u' WHERE id = 3")
    spark.sql(f"REFRESH TABLE iceduck.{NS}.ice_v3")
    row = spark.sql(
        f"CALL iceduck.system.expire_snapshots(table => '{NS}.ice_v3', "
        f"older_than => {FUTURE}, retain_last => 1)"
    ).collect()[0]
    assert row["deleted_manifest_lists_count"] == 5
    assert len(snapshot_ids(ice.con, f"{NS}.ice_v3")) == 1
    same_rows(spark, ice, "ice_v3")
    assert sorted(ice.fetch(f"SELECT * FROM {NS}.ice_v3")) == [(0, "s0"), (1, "s1"), (3, "u")]
    assert_exact(ice, "ice_v3")
    # and iceduck takes it from there
    ice.execute(f"INSERT INTO {NS}.ice_v3 VALUES (7, 'after')")
    ice.execute(f"CALL system.expire_snapshots('{NS}.ice_v3', {FUTURE})")
    spark.sql(f"REFRESH TABLE iceduck.{NS}.ice_v3")
    same_rows(spark, ice, "ice_v3")
    assert_exact(ice, "ice_v3")


def test_spark_and_iceduck_find_the_same_orphans(spark: Any, ice: Iceduck) -> None:
    ice.execute(
        f"CREATE TABLE {NS}.orphans (id bigint, s string) PARTITIONED BY (bucket(2, id)) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    for i in range(3):
        ice.execute(f"INSERT INTO {NS}.orphans VALUES ({i}, 'a'), ({i + 10}, 'b')")
    ice.execute(f"DELETE FROM {NS}.orphans WHERE id = 11")
    ice.execute(f"CALL system.expire_snapshots('{NS}.orphans', {FUTURE}, 2)")
    root = folder(ice, "orphans")
    planted = {root / "data" / "stray.parquet", root / "metadata" / "stray.avro", root / "x" / "y.txt"}
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("orphan")
    age_files(root)
    spark.sql(f"REFRESH TABLE iceduck.{NS}.orphans")
    by_spark = spark.sql(f"CALL iceduck.system.remove_orphan_files(table => '{NS}.orphans', dry_run => true)")
    spark_found = {r[0].removeprefix("file:") for r in by_spark.collect()}
    found = {
        r[0] for r in ice.fetch(f"CALL system.remove_orphan_files(table => '{NS}.orphans', dry_run => true)")
    }
    assert found == spark_found == {str(p) for p in planted}
    # the warehouse is the session's: tests that read every metadata/*.avro of it must not meet these
    ice.execute(f"CALL system.remove_orphan_files(table => '{NS}.orphans')")
    assert not any(p.exists() for p in planted)
