"""Spark creates, writes and reads tables through ``iceduck serve``; iceduck reads the same.

Spark 3.5 + Iceberg 1.10.2's ``RESTCatalog`` (catalog ``rest``, :mod:`tests.support.rest_spark`)
does every write; iceduck opens the served warehouse's ``catalog.db`` and must see the same
full result set (sorted rows) as Spark reads back through the server. Covered: partitioned
tables (identity, bucket, days) in v2 and v3, INSERT, MERGE/UPDATE/DELETE in copy-on-write
and merge-on-read (v2 position deletes, v3 deletion vectors), CTAS and REPLACE TABLE AS
SELECT (Java's staged create: ``stage-create`` then a commit asserting ``assert-create``),
ALTER TABLE RENAME, DROP TABLE and DROP TABLE PURGE, namespaces with properties.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from tests.support.rest_spark import REST, Served, iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "sw"
MOR = ", ".join(f"'write.{op}.mode'='merge-on-read'" for op in ("delete", "update", "merge"))
COW = ", ".join(f"'write.{op}.mode'='copy-on-write'" for op in ("delete", "update", "merge"))
#: (table, format version, row-level mode properties)
TABLES = [("cow_v2", 2, COW), ("mor_v2", 2, MOR), ("cow_v3", 3, COW), ("mor_v3", 3, MOR)]


@pytest.fixture(scope="module")
def lake(spark: SparkSession) -> Iterator[tuple[SparkSession, Served, Connection]]:
    """The namespace and the four partitioned tables, written by Spark once for the module."""
    rest = served(spark)
    spark.sql(f"CREATE NAMESPACE {REST}.{NS} WITH DBPROPERTIES ('team' = 'spark', 'purpose' = 'tests')")
    for name, version, modes in TABLES:
        spark.sql(
            f"CREATE TABLE {REST}.{NS}.{name} (id bigint, who string, amount decimal(10,2), ts timestamp) "
            "USING iceberg PARTITIONED BY (who, bucket(4, id), days(ts)) "
            f"TBLPROPERTIES ('format-version' = '{version}', {modes})"
        )
        spark.sql(
            f"INSERT INTO {REST}.{NS}.{name} SELECT id, concat('c', id % 3), id * 1.25, "
            "timestamp '2024-05-01 00:00:00' + make_interval(0, 0, 0, 0, id * 7, 0, 0) FROM range(12)"
        )
        spark.sql(f"UPDATE {REST}.{NS}.{name} SET amount = amount + 100 WHERE id % 4 = 1")
        spark.sql(f"DELETE FROM {REST}.{NS}.{name} WHERE id IN (2, 9)")
        spark.sql(
            f"MERGE INTO {REST}.{NS}.{name} t USING (SELECT id, 'merged' AS who FROM range(10, 15)) s "
            "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.who = s.who "
            "WHEN NOT MATCHED THEN INSERT (id, who, amount, ts) "
            "VALUES (s.id, s.who, 0, timestamp '2024-06-01')"
        )
    con = rest.connect()
    yield spark, rest, con
    con.close()
    assert rest.log.server_errors() == []


def _same(spark: SparkSession, con: Connection, table: str, columns: str = "*") -> list[tuple[object, ...]]:
    by_spark = spark_rows(spark, f"SELECT {columns} FROM {REST}.{table}")
    by_iceduck = iceduck_rows(con, f"SELECT {columns} FROM {table}")
    assert by_iceduck == by_spark
    return by_iceduck


@pytest.mark.parametrize(("name", "version", "modes"), TABLES, ids=[t[0] for t in TABLES])
def test_spark_row_level_writes_read_the_same_in_iceduck(
    lake: tuple[SparkSession, Served, Connection], name: str, version: int, modes: str
) -> None:
    spark, _, con = lake
    rows = _same(spark, con, f"{NS}.{name}")
    assert sorted(r[0] for r in rows) == [0, 1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14]
    assert {r[0]: r[1] for r in rows}[11] == "merged"
    metadata = con.execute(f"SELECT * FROM {NS}.{name}.files").fetchall()
    assert metadata  # the files metadata table reads through the same catalog
    kinds = {r[0] for r in con.execute(f"SELECT content FROM {NS}.{name}.files").fetchall()}
    if modes is MOR:
        assert kinds == {0, 1}, "merge-on-read leaves delete files (v2 position deletes, v3 DVs)"
        formats = {r[0] for r in con.execute(f"SELECT file_format FROM {NS}.{name}.delete_files").fetchall()}
        assert formats == ({"PUFFIN"} if version == 3 else {"PARQUET"})
    else:
        assert kinds == {0}
    history = spark_rows(spark, f"SELECT snapshot_id, operation FROM {REST}.{NS}.{name}.snapshots")
    assert iceduck_rows(con, f"SELECT snapshot_id, operation FROM {NS}.{name}.snapshots") == history
    assert len(history) == 4  # INSERT, UPDATE, DELETE, MERGE


def test_namespace_properties_through_rest(lake: tuple[SparkSession, Served, Connection]) -> None:
    spark, rest, _ = lake
    spark.sql(f"ALTER NAMESPACE {REST}.{NS} SET DBPROPERTIES ('purpose' = 'interop')")
    described = dict(spark_rows(spark, f"DESCRIBE NAMESPACE EXTENDED {REST}.{NS}"))
    assert "interop" in described["Properties"] and "team" in described["Properties"]
    catalog = rest.catalog()
    props = catalog.load_namespace_properties((NS,))
    assert props["team"] == "spark" and props["purpose"] == "interop"
    spark.sql(f"CREATE NAMESPACE {REST}.{NS}_empty")
    assert (f"{NS}_empty",) in spark_rows(spark, f"SHOW NAMESPACES IN {REST}")
    spark.sql(f"DROP NAMESPACE {REST}.{NS}_empty")
    assert not catalog.namespace_exists((f"{NS}_empty",))
    catalog.close()


def test_ctas_and_replace_table_as_select(lake: tuple[SparkSession, Served, Connection]) -> None:
    spark, rest, con = lake
    seen = len(rest.log.requests)
    spark.sql(
        f"CREATE TABLE {REST}.{NS}.ctas USING iceberg PARTITIONED BY (who) "
        f"TBLPROPERTIES ('format-version' = '3') "
        f"AS SELECT id, who, amount FROM {REST}.{NS}.cow_v2 WHERE id < 8"
    )
    assert [r[0] for r in _same(spark, con, f"{NS}.ctas")] == [0, 1, 3, 4, 5, 6, 7]
    spark.sql(
        f"REPLACE TABLE {REST}.{NS}.ctas USING iceberg "
        f"AS SELECT id, concat(who, '!') AS who FROM {REST}.{NS}.mor_v3 WHERE id > 5"
    )
    rows = _same(spark, con, f"{NS}.ctas")
    assert [r[0] for r in rows] == [10, 11, 12, 13, 14, 6, 7, 8]  # sorted by repr
    assert con.execute(f"DESCRIBE {NS}.ctas").fetchall()[1][0] == "who"
    assert [r[0] for r in con.execute(f"SELECT count(*) FROM {NS}.ctas.snapshots").fetchall()] == [2]
    spark.sql(f"CREATE OR REPLACE TABLE {REST}.{NS}.ctas2 USING iceberg AS SELECT 1 AS one")
    assert _same(spark, con, f"{NS}.ctas2") == [(1,)]
    # every request of the staged creates was served: stage-create, the assert-create
    # commit, and the commit report Java sends before the table exists; lookups may miss
    # (Java's view-aware builder asks HEAD .../views/ctas first: a 404 means "no view")
    requests = rest.log.requests[seen:]
    assert ("POST", f"/v1/namespaces/{NS}/tables/ctas/metrics", 204) in requests
    assert ("HEAD", f"/v1/namespaces/{NS}/views/ctas", 404) in requests
    failed = [r for r in requests if r[2] >= 400 and r[0] not in ("GET", "HEAD")]
    assert failed == []


def test_rename_and_drop(lake: tuple[SparkSession, Served, Connection]) -> None:
    spark, rest, con = lake
    spark.sql(f"CREATE TABLE {REST}.{NS}.before USING iceberg AS SELECT 1 AS id, 'x' AS v")
    spark.sql(f"ALTER TABLE {REST}.{NS}.before RENAME TO {NS}.after")
    assert _same(spark, con, f"{NS}.after") == [(1, "x")]
    tables = {r[1] for r in spark_rows(spark, f"SHOW TABLES IN {REST}.{NS}")}
    assert "after" in tables and "before" not in tables
    catalog = rest.catalog()
    assert {t.name for t in catalog.list_tables((NS,))} == tables

    location = Path(con.execute(f"SELECT file_path FROM {NS}.after.files").fetchall()[0][0]).parent
    spark.sql(f"DROP TABLE {REST}.{NS}.after")
    assert not catalog.table_exists(TableIdentifier((NS,), "after"))
    assert location.is_dir(), "DROP TABLE without PURGE keeps the files"

    spark.sql(f"CREATE TABLE {REST}.{NS}.purged USING iceberg AS SELECT 2 AS id")
    data = Path(con.execute(f"SELECT file_path FROM {NS}.purged.files").fetchall()[0][0])
    spark.sql(f"DROP TABLE {REST}.{NS}.purged PURGE")
    assert not data.exists(), "DROP TABLE PURGE deletes the data files"
    tables = {r[1] for r in spark_rows(spark, f"SHOW TABLES IN {REST}.{NS}")}
    assert not {"after", "purged"} & tables
    catalog.close()


def test_nested_namespaces(lake: tuple[SparkSession, Served, Connection]) -> None:
    spark, rest, con = lake
    spark.sql(f"CREATE NAMESPACE {REST}.{NS}.deep WITH DBPROPERTIES ('level' = '2')")
    spark.sql(f"CREATE TABLE {REST}.{NS}.deep.t USING iceberg AS SELECT id, id * 2 AS twice FROM range(4)")
    assert [r[0] for r in spark_rows(spark, f"SHOW NAMESPACES IN {REST}.{NS}")] == [f"{NS}.deep"]
    assert _same(spark, con, f"{NS}.deep.t") == [(0, 0), (1, 2), (2, 4), (3, 6)]
    catalog = rest.catalog()
    assert catalog.load_namespace_properties((NS, "deep"))["level"] == "2"
    assert [t.name for t in catalog.list_tables((NS, "deep"))] == ["t"]
    catalog.close()
