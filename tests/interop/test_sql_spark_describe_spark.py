"""DESCRIBE EXTENDED, SHOW COLUMNS and SHOW PARTITIONS in iceduck and in Spark 3.5 + Iceberg
1.10 on the same tables (iceduck.sql.spark_describe, iceduck.sql.partition_paths).

* DESCRIBE EXTENDED|FORMATTED: the same rows, with nothing to normalise: both engines read
  the location and the ``owner`` property from the table (Spark stores the OS user as
  ``owner`` when it creates a table; a table iceduck created has none, and neither shows
  an Owner row);
* SHOW COLUMNS: Spark refuses it on an Iceberg table ("not supported for v2 tables"); iceduck's
  rows are the top-level columns Spark's DESCRIBE lists;
* SHOW PARTITIONS: Spark refuses it ("does not support partition management"); iceduck's
  rows are Spark's ``SELECT partition FROM t.partitions`` as Hive paths, rendered here with
  Spark's own cast to string and ``ExternalCatalogUtils`` escaping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from iceduck.connection import Connection

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NS = "spark_describe"

#: statements Spark writes its tables with
SPARK_TABLES = {
    "parts": [
        "CREATE TABLE {t} (id BIGINT NOT NULL COMMENT 'key', cat STRING, ts TIMESTAMP, name STRING, "
        "s STRUCT<x: INT COMMENT 'inner', y: STRING>, m MAP<STRING, DECIMAL(9,2)>) USING iceberg "
        "PARTITIONED BY (cat, bucket(4, id), days(ts), truncate(2, name)) COMMENT 'parted' "
        "TBLPROPERTIES ('k'='v', 'format-version'='2')",
        "INSERT INTO {t} VALUES (1, 'a', TIMESTAMP '2024-01-01 10:00:00', 'alpha', NULL, NULL), "
        "(2, 'b/c=d', TIMESTAMP '2024-01-02 10:00:00', 'beta', NULL, NULL), "
        "(3, NULL, NULL, NULL, NULL, NULL), (4, '', NULL, 'x%y', NULL, NULL)",
    ],
    "wide": [
        "CREATE TABLE {t} (s STRUCT<" + ", ".join(f"f{i}: INT" for i in range(27)) + ">, "
        "t STRUCT<" + ", ".join(f"f{i}: INT" for i in range(25)) + ">) USING iceberg",
    ],
    "evolved": [
        "CREATE TABLE {t} (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (cat)",
        "INSERT INTO {t} VALUES (1, 'x')",
        "ALTER TABLE {t} ADD PARTITION FIELD bucket(2, id)",
        "INSERT INTO {t} VALUES (2, 'y')",
        "ALTER TABLE {t} DROP PARTITION FIELD cat",
        "INSERT INTO {t} VALUES (3, 'z')",
    ],
    "plain": [
        "CREATE TABLE {t} (a INT, b STRING) USING iceberg TBLPROPERTIES ('api.token'='hush')",
        "INSERT INTO {t} VALUES (1, 'x')",
        "ALTER TABLE {t} WRITE ORDERED BY a",
    ],
    "nested": [
        "CREATE TABLE {t} (id INT COMMENT 'the id', d DATE, s STRUCT<x: INT COMMENT 'inner', y: STRING>, "
        "l ARRAY<STRING>) USING iceberg PARTITIONED BY (id, d)",
        "INSERT INTO {t} VALUES (1, DATE '2024-03-05', NULL, NULL), (2, NULL, NULL, NULL)",
    ],
    "v1t": [
        "CREATE TABLE {t} (a INT, d DATE, h TIMESTAMP_NTZ, b BOOLEAN, f DOUBLE) USING iceberg "
        "PARTITIONED BY (months(d), hours(h), b, f) TBLPROPERTIES ('format-version'='1')",
        "INSERT INTO {t} VALUES (1, DATE '2024-03-05', TIMESTAMP_NTZ '2024-03-05 07:30:00', true, 1.5e-4), "
        "(2, NULL, NULL, false, 12345678.0)",
    ],
}


def _rows(rows: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in rows]


@pytest.fixture(scope="module")
def tables(spark: SparkSession, con: Connection) -> list[str]:
    """The tables Spark wrote, then one iceduck wrote (no owner property)."""
    for name, statements in SPARK_TABLES.items():
        for statement in statements:
            spark.sql(statement.format(t=f"iceduck.{NS}.{name}"))
    con.execute(
        f"CREATE TABLE {NS}.mine (id bigint COMMENT 'key', ts timestamp, tag string) "
        "PARTITIONED BY (hours(ts), tag) COMMENT 'iceduck''s'"
    )
    con.execute(f"INSERT INTO {NS}.mine VALUES (1, TIMESTAMP '2024-01-01 10:30:00', 'a:b'), (2, NULL, NULL)")
    spark.catalog.clearCache()
    return [*SPARK_TABLES, "mine"]


@pytest.mark.parametrize("form", ["DESCRIBE TABLE EXTENDED", "DESCRIBE FORMATTED", "DESC EXTENDED"])
def test_describe_extended_as_spark(
    spark: SparkSession, con: Connection, tables: list[str], form: str
) -> None:
    for name in tables:
        theirs = _rows(spark.sql(f"{form} iceduck.{NS}.{name}").collect())
        mine = con.execute(f"{form} {NS}.{name}").fetchall()
        assert mine == theirs, name
    owners = {r[1] for r in theirs if r[0] == "Owner"}
    assert owners == set(), "a table iceduck created has no owner property"


def test_show_columns_as_spark_lists_columns(spark: SparkSession, con: Connection, tables: list[str]) -> None:
    with pytest.raises(Exception, match="SHOW COLUMNS is not supported for v2 tables"):
        spark.sql(f"SHOW COLUMNS IN iceduck.{NS}.parts").collect()
    for name in tables:
        columns = spark.table(f"iceduck.{NS}.{name}").columns
        assert con.execute(f"SHOW COLUMNS IN {NS}.{name}").fetchall() == [(c,) for c in columns], name
        assert con.execute(f"SHOW COLUMNS FROM {name} IN {NS}").fetchall() == [(c,) for c in columns], name


def test_show_partitions_as_spark_renders_the_partitions_table(
    spark: SparkSession, con: Connection, tables: list[str]
) -> None:
    with pytest.raises(Exception, match="does not support partition management"):
        spark.sql(f"SHOW PARTITIONS iceduck.{NS}.parts").collect()
    for name in tables:
        if name in ("plain", "wide"):
            with pytest.raises(Exception, match="is not partitioned"):
                con.execute(f"SHOW PARTITIONS {NS}.{name}")
            continue
        assert con.execute(f"SHOW PARTITIONS {NS}.{name}").fetchall() == _spark_paths(spark, name), name


def _spark_paths(spark: SparkSession, name: str) -> list[tuple[str]]:
    """Spark's ``ShowPartitionsExec`` rendering of the ``partitions`` table: each value cast
    to a string by Spark, names and values escaped by Spark's ``ExternalCatalogUtils``
    (a null or empty value is ``__HIVE_DEFAULT_PARTITION__``), the paths sorted."""
    table = f"iceduck.{NS}.{name}.partitions"
    fields = spark.table(table).schema["partition"].dataType.names
    casts = ", ".join(f"CAST(partition.`{f}` AS STRING)" for f in fields)
    utils = spark.sparkContext._jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils  # type: ignore[union-attr]
    paths = []
    for row in spark.sql(f"SELECT {casts} FROM {table}").collect():
        values = zip(fields, row, strict=True)
        parts = [f"{utils.escapePathName(f)}={utils.getPartitionValueString(v)}" for f, v in values]
        paths.append(("/".join(parts),))
    return sorted(paths)
