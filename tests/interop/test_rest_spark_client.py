"""Spark and iceduck both as REST clients of one ``iceduck serve``: Spark 3.5 + Iceberg
1.10.2's ``RESTCatalog`` (catalog ``rest``) and ``iceduck.connect(catalog_uri=...)``.

Full result sets, sorted, are compared both ways after every step: Spark's row-level
writes (v2 position deletes, v3 deletion vectors) read by iceduck's client, iceduck's
client's writes (INSERT, DELETE, UPDATE, MERGE, copy-on-write and merge-on-read) read by
Spark. Then the two race on one table: appends each land exactly once and interleave
(Spark retries on the server's 409, iceduck's client re-applies its statement on fresh
metadata), and a serializable DELETE sent by iceduck's client, held until Spark's INSERT
into the same partition has committed, fails cleanly instead of hiding that row.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import CommitConflictError
from tests.support.rest_race import held_groups, together, wait_for
from tests.support.rest_spark import REST, Served, iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "cl"
MODES = {"cow": "copy-on-write", "mor": "merge-on-read"}
CASES = [(2, "mor"), (3, "mor"), (3, "cow")]
RETRIES = "'commit.retry.num-retries' = '30', 'commit.retry.min-wait-ms' = '20'"


@pytest.fixture(scope="module")
def lake(spark: SparkSession) -> Iterator[tuple[SparkSession, Served, Connection]]:
    rest = served(spark)
    con = rest.connect_rest()
    con.execute(f"CREATE NAMESPACE {NS}")
    yield spark, rest, con
    con.close()
    assert rest.log.server_errors() == []


def _same(spark: SparkSession, con: Connection, table: str) -> list[tuple[Any, ...]]:
    by_iceduck = iceduck_rows(con, f"SELECT * FROM {table}")
    assert spark_rows(spark, f"SELECT * FROM {REST}.{table}") == by_iceduck
    return by_iceduck


def _modes(mode: str) -> str:
    return ", ".join(f"'write.{op}.mode' = '{MODES[mode]}'" for op in ("delete", "update", "merge"))


@pytest.mark.parametrize(("version", "mode"), CASES, ids=[f"v{v}-{m}" for v, m in CASES])
def test_spark_writes_iceduck_client_reads(
    lake: tuple[SparkSession, Served, Connection], version: int, mode: str
) -> None:
    spark, _, con = lake
    table = f"{NS}.by_spark_v{version}_{mode}"
    spark.sql(
        f"CREATE TABLE {REST}.{table} (id bigint, who string, ts timestamp) USING iceberg "
        f"PARTITIONED BY (who, days(ts)) TBLPROPERTIES ('format-version' = '{version}', {_modes(mode)})"
    )
    spark.sql(
        f"INSERT INTO {REST}.{table} SELECT id, concat('c', id % 3), "
        "timestamp '2024-05-01 00:00:00' + make_interval(0, 0, 0, 0, id * 5, 0, 0) FROM range(10)"
    )
    spark.sql(f"DELETE FROM {REST}.{table} WHERE id IN (1, 7)")
    spark.sql(f"UPDATE {REST}.{table} SET who = 'upd' WHERE id = 4")
    rows = _same(spark, con, table)
    assert sorted(r[0] for r in rows) == [0, 2, 3, 4, 5, 6, 8, 9]
    assert iceduck_rows(con, f"SELECT file_path, record_count FROM {table}.files") == spark_rows(
        spark, f"SELECT file_path, record_count FROM {REST}.{table}.files"
    )


@pytest.mark.parametrize(("version", "mode"), CASES, ids=[f"v{v}-{m}" for v, m in CASES])
def test_iceduck_client_writes_spark_reads(
    lake: tuple[SparkSession, Served, Connection], version: int, mode: str
) -> None:
    spark, _, con = lake
    table = f"{NS}.by_iceduck_v{version}_{mode}"
    con.execute(
        f"CREATE TABLE {table} (id bigint, who string, amount decimal(10,2)) PARTITIONED BY (bucket(4, id)) "
        f"TBLPROPERTIES ('format-version' = '{version}', {_modes(mode)})"
    )
    con.execute(f"INSERT INTO {table} SELECT i, 'c' || (i % 3), i * 1.5 FROM range(10) r(i)")
    assert len(_same(spark, con, table)) == 10
    con.execute(f"DELETE FROM {table} WHERE id IN (2, 5)")
    con.execute(f"UPDATE {table} SET amount = 0 WHERE id = 9")
    con.execute(
        f"MERGE INTO {table} t USING (SELECT i AS id FROM range(8, 12) r(i)) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET who = 'merged' "
        "WHEN NOT MATCHED THEN INSERT (id, who, amount) VALUES (s.id, 'new', 1)"
    )
    rows = _same(spark, con, table)
    assert sorted(r[0] for r in rows) == [0, 1, 3, 4, 6, 7, 8, 9, 10, 11]
    kinds = {r[0] for r in spark_rows(spark, f"SELECT content FROM {REST}.{table}.files")}
    assert kinds == ({0, 1} if mode == "mor" else {0})
    spark.sql(f"DELETE FROM {REST}.{table} WHERE id = 0")
    assert [r[0] for r in _same(spark, con, table)][:1] == [1]


def test_appends_race_each_lands_once(lake: tuple[SparkSession, Served, Connection]) -> None:
    spark, rest, con = lake
    table = f"{NS}.race"
    con.execute(f"CREATE TABLE {table} (id bigint, writer string) TBLPROPERTIES ({RETRIES})")
    spark_batches, spark_done, done = 6, threading.Event(), [0]

    def spark_job() -> None:
        try:
            for b in range(spark_batches):
                spark.sql(f"INSERT INTO {REST}.{table} SELECT 1000 * {b} + id, 'spark' FROM range(3)")
        finally:
            spark_done.set()

    def iceduck_job() -> None:
        b = 0
        while not spark_done.is_set() or b < 6:
            con.execute(f"INSERT INTO {table} SELECT -(1000 * {b} + i), 'iceduck' FROM range(2) r(i)")
            b += 1
            time.sleep(random.uniform(0.02, 0.2))
        done[0] = b

    assert together(spark_job, iceduck_job) == [None, None]
    expected = sorted(
        [(1000 * b + i, "spark") for b in range(spark_batches) for i in range(3)]
        + [(-(1000 * b + i), "iceduck") for b in range(done[0]) for i in range(2)]
    )
    assert sorted(con.execute(f"SELECT * FROM {table}").fetchall()) == expected
    _same(spark, con, table)
    catalog = rest.catalog()
    snapshots = catalog.load_table(TableIdentifier((NS,), "race")).metadata.snapshots
    catalog.close()
    writers = [
        "spark" if "spark.app.id" in s.summary else "iceduck"
        for s in sorted(snapshots, key=lambda s: s.sequence_number)
    ]
    assert writers.count("spark") == spark_batches and writers.count("iceduck") == done[0]
    assert sum(1 for a, b in itertools.pairwise(writers) if a != b) >= 2, writers


def test_held_delete_against_spark_insert_fails_cleanly(
    lake: tuple[SparkSession, Served, Connection], tmp_path: Path
) -> None:
    spark, _, con = lake
    table = f"{NS}.held"
    con.execute(
        f"CREATE TABLE {table} (grp int, src string) PARTITIONED BY (grp) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', "
        f"'write.delete.isolation-level' = 'serializable', {RETRIES})"
    )
    con.execute(f"INSERT INTO {table} VALUES (0, 'seed'), (1, 'seed')")
    gate = tmp_path / "gate"
    gate.mkdir()

    def delete() -> None:
        con.register("held_groups", held_groups(gate, 0))
        con.execute(f"DELETE FROM {table} WHERE grp = 0 AND grp IN (SELECT g FROM held_groups)")

    def insert() -> None:
        assert wait_for(gate / "reading"), "the DELETE never started reading"
        spark.sql(f"INSERT INTO {REST}.{table} VALUES (0, 'spark')")
        (gate / "inserted").touch()

    delete_error, insert_error = together(delete, insert)
    assert insert_error is None
    assert isinstance(delete_error, CommitConflictError), repr(delete_error)
    assert _same(spark, con, table) == [(0, "seed"), (0, "spark"), (1, "seed")]
    con.execute(f"DELETE FROM {table} WHERE grp = 0")  # again, now that it sees Spark's row
    assert _same(spark, con, table) == [(1, "seed")]
