"""``compute_partition_stats`` next to Spark 3.5 + Iceberg 1.10's own.

The twins share everything: the second table is ``register_table`` of the first one's
metadata file, so both have the same snapshots (ids, timestamps) and files, and the two
engines' statistics files must hold the same rows, read back by field id. Then Java
builds on iceduck's file: Spark's call for a later snapshot of the first table computes
incrementally from the file iceduck registered (Java's ``PartitionStatsHandler`` reads
it), and must again equal iceduck's full computation. Spark's call for a snapshot that
already has iceduck's file returns that file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.formats.partition_stats_file import read_stats_file
from iceduck.io.fileio import read_bytes, to_local_path
from tests.ops.procedures.partition_stats_support import read_by_field_id
from tests.support.faults import add_equality_deletes

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NS = "procedures_pstats"


def build(con: Connection, name: str, version: int) -> None:
    """An unpartitioned first spec (a data file, an equality-delete file), then by ``p``:
    small inserts, a merge-on-read delete (position deletes on v2, a DV on v3) and a
    delete that empties partition 2."""
    table = f"{NS}.{name}"
    con.execute(
        f"CREATE TABLE {table} (id bigint, p int) USING iceberg TBLPROPERTIES "
        f"('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read')"
    )
    con.execute(f"INSERT INTO {table} VALUES (1, 0), (2, 1)")
    add_equality_deletes(con, NS, name, "id", [1])
    con.execute(f"ALTER TABLE {table} ADD PARTITION FIELD p")
    for k in range(3):
        con.execute(f"INSERT INTO {table} SELECT i, i % 3 FROM range(?, ?) r(i)", [10 * k + 10, 10 * k + 20])
    con.execute(f"DELETE FROM {table} WHERE id = 13")
    con.execute(f"DELETE FROM {table} WHERE p = 2")


def current_metadata_file(con: Connection, table: str) -> str:
    return str(
        con.execute(f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC").fetchone()[0]
    )


def read(path: str) -> list[dict[str, Any]]:
    return read_by_field_id(path)[1]


def assert_same_rows(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    """Equal rows, in the same order."""
    assert len(ours) == len(theirs) > 0
    assert ours == theirs


def spark_call(spark: SparkSession, table: str, snapshot_id: int | None = None) -> list[str]:
    spark.sql(f"REFRESH TABLE iceduck.{table}")
    args = f"table => '{table}'" + ("" if snapshot_id is None else f", snapshot_id => {snapshot_id}L")
    return [r[0] for r in spark.sql(f"CALL iceduck.system.compute_partition_stats({args})").collect()]


def registered(con: Connection, table: str) -> dict[int, str]:
    ns, name = table.split(".")
    metadata = con.session.catalog.load_table(TableIdentifier((ns,), name)).metadata
    return {s.snapshot_id: s.statistics_path for s in metadata.partition_statistics}


@pytest.mark.parametrize("version", [2, 3])
def test_spark_and_iceduck_write_the_same_statistics(
    spark: SparkSession, con: Connection, version: int
) -> None:
    ours, theirs, later = (f"{NS}.{n}_v{version}" for n in ("ours", "theirs", "later"))
    build(con, ours.split(".")[1], version)
    con.execute("CALL system.register_table(?, ?)", [theirs, current_metadata_file(con, ours)])
    snapshot = con.execute(f"SELECT snapshot_id FROM {ours}.snapshots ORDER BY committed_at DESC").fetchone()[
        0
    ]
    rows = con.execute(f"SELECT * FROM {ours} ORDER BY id").fetchall()

    [our_file] = [r[0] for r in con.execute(f"CALL system.compute_partition_stats('{ours}')").fetchall()]
    [their_file] = spark_call(spark, theirs)
    assert_same_rows(read(our_file), read(their_file))
    # each registered where its engine wrote it; iceduck reads Spark's registration
    assert registered(con, ours) == {snapshot: our_file}
    assert {k: to_local_path(v) for k, v in registered(con, theirs).items()} == {
        snapshot: to_local_path(their_file)
    }
    # Java reads iceduck's registration: the snapshot has a file, Spark returns it
    assert [to_local_path(p) for p in spark_call(spark, ours)] == [to_local_path(our_file)]
    spark.sql(f"REFRESH TABLE iceduck.{ours}")
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM iceduck.{ours} ORDER BY id").collect()] == rows

    # a later snapshot: Spark starts from iceduck's file (incremental), iceduck computes in
    # full on a registered copy of the same metadata
    con.execute(f"INSERT INTO {ours} VALUES (100, 0), (101, 5)")
    con.execute("CALL system.register_table(?, ?)", [later, current_metadata_file(con, ours)])
    [incremental] = spark_call(spark, ours)
    [full] = [r[0] for r in con.execute(f"CALL system.compute_partition_stats('{later}')").fetchall()]
    assert_same_rows(read(full), read(incremental))
    assert [r["partition"]["p"] for r in read(full)] == [None, 0, 1, 2, 5]


def test_iceduck_computes_what_spark_does_on_a_spark_table(spark: SparkSession, con: Connection) -> None:
    """A v3 table Spark wrote (deletion vectors, a bucket field added later): iceduck's file
    on it equals Spark's on a registered twin."""
    table, twin = f"{NS}.spark_v3", f"{NS}.spark_v3_twin"
    spark.sql(
        f"CREATE TABLE iceduck.{table} (id bigint, p int) USING iceberg PARTITIONED BY (p) "
        "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"
    )
    spark.sql(f"INSERT INTO iceduck.{table} SELECT id, CAST(id % 3 AS int) FROM range(30)")
    spark.sql(f"DELETE FROM iceduck.{table} WHERE id IN (4, 5)")
    spark.sql(f"ALTER TABLE iceduck.{table} ADD PARTITION FIELD bucket(4, id)")
    spark.sql(f"INSERT INTO iceduck.{table} SELECT id, CAST(id % 2 AS int) FROM range(30, 40)")
    con.execute("CALL system.register_table(?, ?)", [twin, current_metadata_file(con, table)])
    [ours] = [r[0] for r in con.execute(f"CALL system.compute_partition_stats('{table}')").fetchall()]
    [theirs] = spark_call(spark, twin)
    rows = read(ours)
    assert_same_rows(rows, read(theirs))
    # iceduck's reader takes Spark's file as it takes its own
    for path in (ours, theirs):
        assert read_stats_file(read_bytes(to_local_path(path))).to_pylist() == rows
    assert sum(r["dv_count"] for r in rows) == 2
    assert {r["spec_id"] for r in rows} == {0, 1}
