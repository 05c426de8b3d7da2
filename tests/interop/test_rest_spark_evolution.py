"""Schema and partition evolution through ``iceduck serve``, both ways.

Spark 3.5 + Iceberg 1.10.2's ``RESTCatalog`` evolves a table (add, rename, drop and widen
columns, a nested struct field; ADD, DROP and REPLACE PARTITION FIELD; WRITE ORDERED BY),
writing rows under each schema and spec, and iceduck -- on the served ``catalog.db`` --
must show the same columns (DESCRIBE), rows (SELECT) and metadata tables (``files``:
every file with its spec and sort order; ``partitions``: the unified partition tuple of
each spec's files). Then iceduck evolves a table and Spark, through the server, must see
the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from tests.support.rest_spark import REST, iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "ev"
FILES = "file_path, spec_id, record_count, sort_order_id"
PARTITIONS = "partition, spec_id, record_count, file_count"


@pytest.fixture(scope="module")
def lake(spark: SparkSession) -> Iterator[tuple[SparkSession, Connection]]:
    rest = served(spark)
    spark.sql(f"CREATE NAMESPACE {REST}.{NS}")
    con = rest.connect()
    yield spark, con
    con.close()
    assert rest.log.server_errors() == []


def _same(spark: SparkSession, con: Connection, sql: str) -> list[tuple[Any, ...]]:
    """``sql`` (with ``{t}`` for the table name) read by both; equal full result sets."""
    by_iceduck = iceduck_rows(con, sql.format(t=f"{NS}"))
    assert spark_rows(spark, sql.format(t=f"{REST}.{NS}")) == by_iceduck
    return by_iceduck


def _spark_columns(spark: SparkSession, table: str) -> list[tuple[str, str]]:
    rows = spark.sql(f"DESCRIBE TABLE {REST}.{NS}.{table}").collect()
    columns = []
    for name, kind, _ in rows:
        if name == "" or name.startswith("#"):
            break  # the partitioning section follows
        columns.append((name, kind))
    return columns


def _iceduck_columns(con: Connection, table: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(f"DESCRIBE {NS}.{table}").fetchall()]


def test_spark_evolution_shows_in_iceduck(lake: tuple[SparkSession, Connection]) -> None:
    spark, con = lake
    t = f"{REST}.{NS}.by_spark"
    spark.sql(
        f"CREATE TABLE {t} (id int, name string, price float, amount decimal(9,2), "
        "loc struct<lat: double>, dropme string, ts timestamp) USING iceberg PARTITIONED BY (days(ts)) "
        "TBLPROPERTIES ('format-version' = '2')"
    )
    spark.sql(
        f"INSERT INTO {t} VALUES (1, 'a', 1.5, 10.25, named_struct('lat', 1.0D), 'x', "
        "timestamp '2024-01-01 10:00:00'), (2, 'b', 2.5, 20.50, named_struct('lat', 2.0D), 'y', "
        "timestamp '2024-01-02 10:00:00')"
    )
    spark.sql(f"ALTER TABLE {t} ADD COLUMN note string")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN loc.lon double")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO label")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN dropme")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN price TYPE double")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN amount TYPE decimal(12,2)")
    spark.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id)")
    spark.sql(
        f"INSERT INTO {t} VALUES (3, 'c', 3.5, 1234567.89, named_struct('lat', 3.0D, 'lon', 30.0D), "
        "timestamp '2024-01-03 10:00:00', 'new')"
    )
    spark.sql(f"ALTER TABLE {t} DROP PARTITION FIELD days(ts)")
    spark.sql(f"ALTER TABLE {t} REPLACE PARTITION FIELD bucket(4, id) WITH truncate(2, label)")
    spark.sql(f"ALTER TABLE {t} WRITE ORDERED BY id DESC")
    spark.sql(
        f"INSERT INTO {t} VALUES (5, 'e', 5.5, 5, named_struct('lat', 5.0D, 'lon', 50.0D), "
        "timestamp '2024-01-05 10:00:00', 'sorted'), (4, 'dd', 4.5, 4, NULL, NULL, NULL)"
    )

    assert _iceduck_columns(con, "by_spark") == [
        ("id", "BIGINT"),
        ("label", "VARCHAR"),
        ("price", "DOUBLE"),
        ("amount", "DECIMAL(12,2)"),
        ("loc", "STRUCT(lat DOUBLE, lon DOUBLE)"),
        ("ts", "TIMESTAMP WITH TIME ZONE"),
        ("note", "VARCHAR"),
    ]
    assert [c[0] for c in _spark_columns(spark, "by_spark")] == [
        c[0] for c in _iceduck_columns(con, "by_spark")
    ]
    rows = _same(spark, con, "SELECT * FROM {t}.by_spark")
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0][4] == {"lat": 1.0, "lon": None} and rows[0][6] is None
    assert _same(spark, con, "SELECT id, loc.lon FROM {t}.by_spark WHERE label = 'c'") == [(3, 30.0)]

    files = _same(spark, con, f"SELECT {FILES} FROM {{t}}.by_spark.files")
    assert sorted(r[1] for r in files) == [0, 0, 1, 3, 3]  # a file per partition of three specs
    catalog = served(spark).catalog()
    metadata = catalog.load_table(TableIdentifier((NS,), "by_spark")).metadata
    catalog.close()
    assert metadata.default_sort_order_id == 1, "WRITE ORDERED BY committed through the server"
    assert [f.source_id for f in metadata.sort_order().fields] == [1]
    partitions = _same(spark, con, f"SELECT {PARTITIONS} FROM {{t}}.by_spark.partitions")
    assert sum(r[2] for r in partitions) == 5


def test_iceduck_evolution_shows_in_spark(lake: tuple[SparkSession, Connection]) -> None:
    spark, con = lake
    t = f"{NS}.by_iceduck"
    con.execute(
        f"CREATE TABLE {t} (id int, name string, score float, info struct<a: int>) "
        "PARTITIONED BY (name) TBLPROPERTIES ('format-version' = '3')"
    )
    con.execute(f"INSERT INTO {t} VALUES (1, 'x', 1.5, {{'a': 1}}), (2, 'y', 2.5, NULL)")
    con.execute(f"ALTER TABLE {t} ADD COLUMN extra string")
    con.execute(f"ALTER TABLE {t} ADD COLUMN info.b string")
    con.execute(f"ALTER TABLE {t} RENAME COLUMN name TO label")
    con.execute(f"ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
    con.execute(f"ALTER TABLE {t} ALTER COLUMN score TYPE double")
    con.execute(f"ALTER TABLE {t} REPLACE PARTITION FIELD label WITH bucket(2, id)")
    con.execute(f"ALTER TABLE {t} WRITE ORDERED BY id")
    con.execute(
        f"INSERT INTO {t} VALUES (3, 'z', 3.5, {{'a': 3, 'b': 'bee'}}, 'more'), (4, 'w', 4, NULL, NULL)"
    )
    con.execute(f"ALTER TABLE {t} DROP COLUMN extra")

    assert _spark_columns(spark, "by_iceduck") == [
        ("id", "bigint"),
        ("label", "string"),
        ("score", "double"),
        ("info", "struct<a:int,b:string>"),
    ]
    rows = _same(spark, con, "SELECT * FROM {t}.by_iceduck")
    assert [r[0] for r in rows] == [1, 2, 3, 4]
    assert rows[2][3] == {"a": 3, "b": "bee"}
    files = _same(spark, con, f"SELECT {FILES} FROM {{t}}.by_iceduck.files")
    assert sorted(r[1] for r in files) == [0, 0, 1, 1]
    _same(spark, con, f"SELECT {PARTITIONS} FROM {{t}}.by_iceduck.partitions")

    # Spark writes under iceduck's latest schema, spec and order; iceduck reads it
    spark.sql(
        f"INSERT INTO {REST}.{t} VALUES (6, 's', 6.5, named_struct('a', 6, 'b', 'six')), (5, 's', 5, NULL)"
    )
    assert [r[0] for r in _same(spark, con, "SELECT * FROM {t}.by_iceduck")] == [1, 2, 3, 4, 5, 6]
    spark_files = _same(spark, con, f"SELECT {FILES} FROM {{t}}.by_iceduck.files")
    assert len(spark_files) > len(files)
