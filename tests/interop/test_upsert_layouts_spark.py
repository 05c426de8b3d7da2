"""iceduck's upserts (``INSERT OR REPLACE``, and ``INSERT`` with ``write.upsert.enabled``)
read by Spark 3.5 + Iceberg 1.10 at every snapshot, then written over by Spark (MERGE,
UPDATE, DELETE; merge-on-read and copy-on-write) and compacted by Spark's and iceduck's
``rewrite_data_files``, iceduck reading back the same rows.

An upsert writes equality delete files (``equality_ids`` = the identifier fields) plus the
new rows in one snapshot; Spark applies the deletes by the spec's rule ("an equality delete
file must be applied to a data file when [...] the data file's data sequence number is
strictly less than the delete's" and, partitioned, in the same partition).

Tables live in namespace ``ops_upsert`` of the Spark warehouse (dropped first), which
Spark sees through its ``iceduck`` JDBC catalog.
"""

from __future__ import annotations

from typing import Any

import pytest

from iceduck.connection import Connection
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

pytestmark = pytest.mark.spark

NS = "ops_upsert"

#: (table, format version, partition clause, key columns)
SHAPES = [
    ("flat_v2", 2, "", "id"),
    ("ident_v2", 2, " PARTITIONED BY (id)", "id"),
    ("bucket_v3", 3, " PARTITIONED BY (bucket(4, id))", "id"),
    ("two_key_v2", 2, " PARTITIONED BY (bucket(4, id), k)", "id, k"),
    ("two_key_v3", 3, "", "id, k"),
]


def same_rows(spark: Any, con: Connection, table: str, version: int | None = None) -> None:
    at = "" if version is None else f" VERSION AS OF {version}"
    query = f"SELECT * FROM {NS}.{table}{at}"
    assert_same(query, iceduck_rows(con, query), spark_rows(spark, f"SELECT * FROM iceduck.{NS}.{table}{at}"))


def snapshot_ids(con: Connection, table: str) -> list[int]:
    rows = con.execute(f"SELECT snapshot_id FROM {NS}.{table}.snapshots ORDER BY committed_at").fetchall()
    return [r[0] for r in rows]


def equality_deletes(con: Connection, table: str) -> int:
    """Equality delete files live in the current snapshot (content 2)."""
    rows = con.execute(f"SELECT count(*) FROM {NS}.{table}.delete_files WHERE content = 2").fetchall()
    return int(rows[0][0])


def applying_equality_deletes(con: Connection, table: str) -> list[tuple[int, Any]]:
    """Live equality delete files that still apply to a live data file: a data file of the same
    partition with a smaller data sequence number (spec, "Scan Planning")."""
    rows = con.execute(
        f"SELECT sequence_number, data_file.content, data_file.partition FROM {NS}.{table}.entries "
        "WHERE status <> 2"
    ).fetchall()
    data = [(seq, part) for seq, content, part in rows if content == 0]
    return [
        (seq, part)
        for seq, content, part in rows
        if content == 2 and any(d_seq < seq and d_part == part for d_seq, d_part in data)
    ]


def spark_equality_deletes(spark: Any, table: str) -> int:
    rows = spark.sql(f"SELECT count(*) FROM iceduck.{NS}.{table}.delete_files WHERE content = 2").collect()
    return int(rows[0][0])


def upsert_batches(con: Connection, table: str) -> None:
    """Three upserts: new keys, a mix of new and replaced keys with a duplicate (last wins),
    and a plain INSERT once ``write.upsert.enabled`` is set."""
    t = f"{NS}.{table}"
    con.execute(f"INSERT OR REPLACE INTO {t} SELECT i, i % 3, 'a' || i FROM range(0, 40) r(i)")
    con.execute(
        f"INSERT OR REPLACE INTO {t} SELECT i, i % 3, 'b' || i FROM range(30, 60) r(i) "
        "UNION ALL SELECT 5, 2, 'five'"
    )
    con.execute(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.upsert.enabled' = 'true')")
    con.execute(
        f"INSERT INTO {t} VALUES (5, 2, 'five-again'), (7, 1, 'first'), (1000, 0, 'new'), (7, 1, 'seven')"
    )


def create(con: Connection, table: str, version: int, partition: str, key: str, mode: str) -> None:
    con.execute(
        f"CREATE TABLE {NS}.{table} (id bigint NOT NULL, k int NOT NULL, v string) USING iceberg{partition} "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = '{mode}', "
        f"'write.update.mode' = '{mode}', 'write.merge.mode' = '{mode}')"
    )
    con.execute(f"ALTER TABLE {NS}.{table} SET IDENTIFIER FIELDS {key}")


@pytest.mark.parametrize(("table", "version", "partition", "key"), SHAPES)
@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_spark_reads_upserts_and_writes_over_them(
    spark: Any, con: Connection, table: str, version: int, partition: str, key: str, mode: str
) -> None:
    table = f"{table}_{mode.split('-')[0]}"
    create(con, table, version, partition, key, mode)
    upsert_batches(con, table)
    assert equality_deletes(con, table) > 0
    assert spark_equality_deletes(spark, table) == equality_deletes(con, table)
    for snapshot in snapshot_ids(con, table):
        same_rows(spark, con, table, snapshot)
    rows = dict(((r[0], r[1]), r[2]) for r in con.execute(f"SELECT * FROM {NS}.{table}").fetchall())
    assert (
        rows[(5, 2)] == "five-again"
        and rows[(31, 1)] == "b31"
        and rows[(7, 1)] == "seven"
        and rows[(1000, 0)] == "new"
    )
    assert len(rows) == 61

    name = f"iceduck.{NS}.{table}"
    spark.sql(
        f"MERGE INTO {name} t USING (SELECT id, k, 'spark-merge' AS v FROM {name} WHERE id % 9 = 0 "
        "UNION ALL SELECT 2000, 1, 'spark-new') s ON t.id = s.id AND t.k = s.k "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
    )
    same_rows(spark, con, table)
    spark.sql(f"UPDATE {name} SET v = 'spark-update' WHERE id % 7 = 3")
    spark.sql(f"DELETE FROM {name} WHERE id % 11 = 4")
    same_rows(spark, con, table)
    # iceduck upserts again over Spark's deletes and rows, Spark reads it
    con.execute(f"INSERT OR REPLACE INTO {NS}.{table} VALUES (3, 0, 'ice-again'), (2000, 1, 'ice-2000')")
    same_rows(spark, con, table)
    got = con.execute(f"SELECT v FROM {NS}.{table} WHERE id IN (3, 2000) ORDER BY id").fetchall()
    assert got == [("ice-again",), ("ice-2000",)]


@pytest.mark.parametrize("version", [2, 3])
def test_upserts_into_a_table_spark_created_and_wrote(spark: Any, con: Connection, version: int) -> None:
    table = f"spark_first_v{version}"
    name = f"iceduck.{NS}.{table}"
    spark.sql(
        f"CREATE TABLE {name} (id bigint NOT NULL, k int NOT NULL, v string) USING iceberg "
        f"PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('format-version' = '{version}', "
        "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"
    )
    spark.sql(f"ALTER TABLE {name} SET IDENTIFIER FIELDS id")
    spark.sql(f"INSERT INTO {name} SELECT id, CAST(id % 3 AS INT), concat('s', id) FROM range(0, 50)")
    spark.sql(f"DELETE FROM {name} WHERE id % 10 = 0")
    upsert_batches(con, table)
    for snapshot in snapshot_ids(con, table):
        same_rows(spark, con, table, snapshot)
    spark.sql(f"UPDATE {name} SET v = 'spark' WHERE id % 4 = 0")
    same_rows(spark, con, table)


def upserted_table(con: Connection, table: str, version: int) -> list[tuple[Any, ...]]:
    create(con, table, version, " PARTITIONED BY (bucket(4, id))", "id, k", "merge-on-read")
    upsert_batches(con, table)
    con.execute(f"DELETE FROM {NS}.{table} WHERE id % 13 = 2")  # position deletes / DVs too
    return sorted(con.execute(f"SELECT * FROM {NS}.{table}").fetchall())


@pytest.mark.parametrize("version", [2, 3])
def test_spark_compacts_upserted_tables(spark: Any, con: Connection, version: int) -> None:
    """Spark's rewrite_data_files (every file with a delete) and rewrite_position_delete_files
    keep the rows; the equality deletes left afterwards are recorded in the assertion."""
    table = f"spark_compacts_v{version}"
    before = upserted_table(con, table, version)
    name = f"{NS}.{table}"
    if version == 2:
        spark.sql(f"CALL iceduck.system.rewrite_position_delete_files(table => '{name}')")
        assert sorted(con.execute(f"SELECT * FROM {name}").fetchall()) == before
        same_rows(spark, con, table)
    spark.sql(
        f"CALL iceduck.system.rewrite_data_files(table => '{name}', "
        "options => map('delete-file-threshold', '1'))"
    )
    assert sorted(con.execute(f"SELECT * FROM {name}").fetchall()) == before
    same_rows(spark, con, table)
    # Spark's compaction applies the equality deletes to the files it rewrites but keeps some
    # or all of the delete files (seen: v2 removed 6 of 10, v3 none): they live on, applying
    # to no data file (the rewritten files keep the sequence number the compaction read)
    assert equality_deletes(con, table) == spark_equality_deletes(spark, table)
    assert applying_equality_deletes(con, table) == []
    con.execute(f"INSERT OR REPLACE INTO {name} VALUES (1, 1, 'after')")
    same_rows(spark, con, table)


@pytest.mark.parametrize("version", [2, 3])
def test_iceduck_compaction_drops_the_equality_deletes(spark: Any, con: Connection, version: int) -> None:
    table = f"ice_compacts_v{version}"
    before = upserted_table(con, table, version)
    name = f"{NS}.{table}"
    con.execute(
        f"CALL system.rewrite_data_files(table => '{name}', options => map('delete-file-threshold', '1'))"
    )
    assert sorted(con.execute(f"SELECT * FROM {name}").fetchall()) == before
    # no delete applies any more; iceduck drops the ones that applied only to rewritten files,
    # and keeps those that already applied to no file (the first upsert's into the empty
    # table, say): they match nothing, and Spark counts the same files
    assert applying_equality_deletes(con, table) == []
    assert con.execute(f"SELECT count(*) FROM {name}.delete_files WHERE content = 1").fetchall() == [(0,)]
    assert spark_equality_deletes(spark, table) == equality_deletes(con, table)
    same_rows(spark, con, table)
