"""Spark's Iceberg procedures through ``iceduck serve`` leave tables iceduck reads correctly.

``CALL rest.system.rollback_to_snapshot`` (a ``set-snapshot-ref`` commit),
``rewrite_data_files`` (a ``replace`` snapshot, position deletes applied) and
``expire_snapshots`` (``remove-snapshots``, then Spark deletes the unreachable files) run in
Spark 3.5 + Iceberg 1.10.2 against the server; after each, iceduck on the served
``catalog.db`` reads the same rows, snapshots and files as Spark, and every file iceduck's
metadata names exists.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from iceduck.connection import Connection
from tests.support.rest_spark import REST, iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "pr"
TABLE = f"{NS}.events"


@pytest.fixture(scope="module")
def lake(spark: SparkSession) -> Iterator[tuple[SparkSession, Connection]]:
    rest = served(spark)
    spark.sql(f"CREATE NAMESPACE {REST}.{NS}")
    spark.sql(
        f"CREATE TABLE {REST}.{TABLE} (id bigint, kind string) USING iceberg PARTITIONED BY (kind) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    for batch in range(4):
        spark.sql(f"INSERT INTO {REST}.{TABLE} SELECT {batch} * 10 + id, concat('k', id % 2) FROM range(5)")
    con = rest.connect()
    yield spark, con
    con.close()
    assert rest.log.server_errors() == []


def _same(
    spark: SparkSession, con: Connection, what: str = "*", suffix: str = ""
) -> list[tuple[object, ...]]:
    by_iceduck = iceduck_rows(con, f"SELECT {what} FROM {TABLE}{suffix}")
    assert spark_rows(spark, f"SELECT {what} FROM {REST}.{TABLE}{suffix}") == by_iceduck
    return by_iceduck


def _snapshot_ids(con: Connection) -> list[int]:
    return [
        r[0]
        for r in con.execute(f"SELECT snapshot_id FROM {TABLE}.history ORDER BY made_current_at").fetchall()
    ]


def test_procedures_through_rest(lake: tuple[SparkSession, Connection]) -> None:
    spark, con = lake
    third = _snapshot_ids(con)[2]
    spark.sql(f"CALL {REST}.system.rollback_to_snapshot(table => '{TABLE}', snapshot_id => {third})")
    rows = _same(spark, con)
    assert sorted(r[0] for r in rows) == [*range(5), *range(10, 15), *range(20, 25)]
    assert con.execute(f"SELECT snapshot_id FROM {TABLE}.snapshots ORDER BY committed_at DESC").fetchall()
    assert iceduck_rows(con, f"SELECT count(*) FROM {TABLE} VERSION AS OF {third}") == [(15,)]

    spark.sql(f"DELETE FROM {REST}.{TABLE} WHERE id IN (1, 12)")  # position deletes
    before = len(con.execute(f"SELECT * FROM {TABLE}.files").fetchall())
    old_data = {Path(r[0]) for r in con.execute(f"SELECT file_path FROM {TABLE}.data_files").fetchall()}
    result = spark.sql(
        f"CALL {REST}.system.rewrite_data_files(table => '{TABLE}', "
        "options => map('min-input-files', '2', 'delete-file-threshold', '1'))"
    ).collect()[0]
    assert result.rewritten_data_files_count > 0
    rows = _same(spark, con)
    assert len(rows) == 13
    after = con.execute(f"SELECT content, file_path FROM {TABLE}.files").fetchall()
    assert len(after) < before
    assert ("replace",) in _same(spark, con, "operation", ".snapshots")

    spark.sql(
        f"CALL {REST}.system.expire_snapshots(table => '{TABLE}', "
        "older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
    )
    assert _same(spark, con, "snapshot_id", ".snapshots") == [(_snapshot_ids(con)[-1],)]
    assert len(_same(spark, con)) == 13
    files = [Path(r[0]) for r in con.execute(f"SELECT file_path FROM {TABLE}.files").fetchall()]
    assert files and all(f.exists() for f in files)
    rewritten = old_data - set(files)
    assert rewritten and not any(f.exists() for f in rewritten), "expired snapshots' files are deleted"
    _same(spark, con, "file_path, record_count", ".files")
    # a write after the procedures, by iceduck, read by Spark through the server
    con.execute(f"INSERT INTO {TABLE} VALUES (100, 'k0')")
    assert len(_same(spark, con)) == 14
