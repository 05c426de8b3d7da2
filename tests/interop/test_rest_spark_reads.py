"""iceduck writes tables of the served warehouse; Spark reads them through ``iceduck serve``.

iceduck commits straight to the served ``catalog.db`` (the same rows the server reads), and
Spark 3.5 + Iceberg 1.10.2's ``RESTCatalog`` (catalog ``rest``) loads the tables through the
server: CREATE (partitioned: identity, bucket, days), INSERT, DELETE, UPDATE and MERGE in
copy-on-write and merge-on-read, v2 (position deletes) and v3 (deletion vectors). Full
result sets, sorted, must be equal after every step, and Spark then writes on top of
iceduck's deletes (a DV it must merge with, on v3) and iceduck reads that back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from iceduck.connection import Connection
from tests.support.rest_spark import REST, iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "iw"
MODES = {"cow": "copy-on-write", "mor": "merge-on-read"}
CASES = [(version, mode) for version in (2, 3) for mode in MODES]


@pytest.fixture(scope="module")
def lake(spark: SparkSession) -> Iterator[tuple[SparkSession, Connection]]:
    rest = served(spark)
    con = rest.connect()
    con.execute(f"CREATE NAMESPACE {NS}")
    yield spark, con
    con.close()
    assert rest.log.server_errors() == []


def _same(spark: SparkSession, con: Connection, table: str) -> list[tuple[object, ...]]:
    by_iceduck = iceduck_rows(con, f"SELECT * FROM {table}")
    assert spark_rows(spark, f"SELECT * FROM {REST}.{table}") == by_iceduck
    return by_iceduck


@pytest.mark.parametrize(("version", "mode"), CASES, ids=[f"v{v}-{m}" for v, m in CASES])
def test_iceduck_writes_spark_reads_through_rest(
    lake: tuple[SparkSession, Connection], version: int, mode: str
) -> None:
    spark, con = lake
    table = f"{NS}.t_v{version}_{mode}"
    modes = ", ".join(f"'write.{op}.mode' = '{MODES[mode]}'" for op in ("delete", "update", "merge"))
    con.execute(
        f"CREATE TABLE {table} (id bigint, who string, amount decimal(10,2), ts timestamp) "
        "PARTITIONED BY (who, bucket(4, id), days(ts)) "
        f"TBLPROPERTIES ('format-version' = '{version}', {modes})"
    )
    con.execute(
        f"INSERT INTO {table} SELECT i, 'c' || (i % 3), i * 1.25, "
        "TIMESTAMPTZ '2024-05-01 00:00:00+00' + to_hours(i * 7) FROM range(12) r(i)"
    )
    assert len(_same(spark, con, table)) == 12
    con.execute(f"DELETE FROM {table} WHERE id IN (2, 9)")
    _same(spark, con, table)
    con.execute(f"UPDATE {table} SET amount = amount + 100 WHERE id % 4 = 1")
    _same(spark, con, table)
    con.execute(
        f"MERGE INTO {table} t USING (SELECT i AS id, 'merged' AS who FROM range(10, 15) r(i)) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET who = s.who "
        "WHEN NOT MATCHED THEN INSERT (id, who, amount, ts) "
        "VALUES (s.id, s.who, 0, TIMESTAMPTZ '2024-06-01 00:00:00+00')"
    )
    rows = _same(spark, con, table)
    assert sorted(r[0] for r in rows) == [0, 1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14]
    assert {r[0]: r[1] for r in rows}[11] == "merged"

    delete_files = spark_rows(spark, f"SELECT file_format FROM {REST}.{table}.delete_files")
    if mode == "mor":
        assert {r[0] for r in delete_files} == ({"PUFFIN"} if version == 3 else {"PARQUET"})
    else:
        assert delete_files == []
    assert spark_rows(spark, f"SELECT snapshot_id, operation FROM {REST}.{table}.snapshots") == (
        iceduck_rows(con, f"SELECT snapshot_id, operation FROM {table}.snapshots")
    )

    # Spark writes on top of iceduck's deletes, iceduck reads Spark's commit back
    spark.sql(f"DELETE FROM {REST}.{table} WHERE id IN (3, 12)")
    spark.sql(f"INSERT INTO {REST}.{table} VALUES (99, 'spark', 9.99, timestamp '2024-07-01 12:00:00')")
    rows = _same(spark, con, table)
    assert sorted(r[0] for r in rows) == [0, 1, 4, 5, 6, 7, 8, 10, 11, 13, 14, 99]


def test_iceduck_schema_is_what_spark_describes(lake: tuple[SparkSession, Connection]) -> None:
    spark, con = lake
    con.execute(
        f"CREATE TABLE {NS}.typed (id int NOT NULL, price decimal(12,3), day date, tags array<string>, "
        "point struct<x: double, y: double>, attrs map<string, bigint>) "
        "TBLPROPERTIES ('format-version' = '3')"
    )
    con.execute(
        f"INSERT INTO {NS}.typed VALUES (1, 1.5, DATE '2024-01-02', ['a', 'b'], {{'x': 1.0, 'y': 2.0}}, "
        "MAP {'k': 7}), (2, NULL, NULL, [], NULL, MAP {})"
    )
    described = [(r[0], r[1]) for r in spark.sql(f"DESCRIBE TABLE {REST}.{NS}.typed").collect()][:6]
    assert described == [
        ("id", "int"),
        ("price", "decimal(12,3)"),
        ("day", "date"),
        ("tags", "array<string>"),
        ("point", "struct<x:double,y:double>"),
        ("attrs", "map<string,bigint>"),
    ]
    by_spark = spark_rows(spark, f"SELECT id, price, day, tags, point, attrs FROM {REST}.{NS}.typed")
    assert by_spark == iceduck_rows(con, f"SELECT id, price, day, tags, point, attrs FROM {NS}.typed")
