"""The parser's reading of Spark DDL agrees with what Spark (Iceberg 1.10) makes of it.

Each statement runs in Spark on its own table; the metadata Spark commits is then
compared with :func:`iceduck.sql.ddl.parse_write`'s statement: column types (ids
aside), partition transforms and their source columns, sort orders and branch/tag
retention.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import IcebergType, ListType, MapType, StructType
from iceduck.sql.ddl import parse_write
from iceduck.sql.statements import AlterTable, CreateRef, CreateTable, WriteOrder

NAMESPACE = "parser_spark"


@pytest.fixture(scope="module")
def spark_ns(spark: Any, spark_warehouse_path: Path) -> Iterator[tuple[Any, SqliteCatalog]]:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS iceduck.{NAMESPACE}")
    catalog = SqliteCatalog(spark_warehouse_path, "iceduck", read_only=True)
    yield spark, catalog
    for row in spark.sql(f"SHOW TABLES IN iceduck.{NAMESPACE}").collect():
        spark.sql(f"DROP TABLE iceduck.{NAMESPACE}.{row.tableName} PURGE")
    spark.sql(f"DROP NAMESPACE iceduck.{NAMESPACE}")
    catalog.close()


def shape(t: IcebergType) -> Any:
    """A type without its field ids."""
    if isinstance(t, StructType):
        return tuple((f.name, f.required, shape(f.field_type), f.doc) for f in t.fields)
    if isinstance(t, ListType):
        return ("list", shape(t.element_type), t.element_required)
    if isinstance(t, MapType):
        return ("map", shape(t.key_type), shape(t.value_type), t.value_required)
    return str(t)


def run(spark_ns: tuple[Any, SqliteCatalog], table: str, sql: str) -> tuple[Any, TableMetadata]:
    """Run ``sql`` (``{t}`` = the table's name) in Spark; our statement and Spark's metadata."""
    spark, catalog = spark_ns
    spark.sql(sql.format(t=f"iceduck.{NAMESPACE}.{table}"))
    loaded = catalog.load_table(TableIdentifier((NAMESPACE,), table))
    return parse_write(sql.format(t=f"{NAMESPACE}.{table}")), loaded.metadata


SPARK_CREATE = (
    "CREATE TABLE {t} (id bigint NOT NULL COMMENT 'unique id', b boolean, ti tinyint, si smallint, i int, "
    "f float, d double, dec decimal(12, 3), dd decimal, s string, vc varchar(10), ch char(2), bin binary, "
    "dt date, ts timestamp, ntz timestamp_ntz, "
    "st struct<x: int NOT NULL COMMENT 'ex', y: array<struct<z: string>>>, "
    "m map<string, array<bigint>>, l array<map<int, string>>) USING iceberg "
    "PARTITIONED BY (bucket(16, id), days(ts), truncate(4, s), i, months(ntz), years(dt)) "
    "COMMENT 'a table' TBLPROPERTIES ('format-version' = '2', 'k' = 'v')"
)


def test_create_table_types_and_partitions_match_spark(spark_ns: tuple[Any, SqliteCatalog]) -> None:
    statement, metadata = run(spark_ns, "created", SPARK_CREATE)
    assert isinstance(statement, CreateTable)
    schema = metadata.schema()
    assert [(c.name, c.required, shape(c.type), c.comment) for c in statement.columns] == [
        (f.name, f.required, shape(f.field_type), f.doc) for f in schema.fields
    ]
    spark_terms = [(str(p.transform), schema.find_field(p.source_id).name) for p in metadata.spec().fields]
    assert [(str(t.transform), ".".join(t.source)) for t in statement.partition_by] == spark_terms
    assert metadata.properties["k"] == "v" and metadata.format_version == 2


def test_hours_and_hour_transform_names(spark_ns: tuple[Any, SqliteCatalog]) -> None:
    statement, metadata = run(
        spark_ns, "hourly", "CREATE TABLE {t} (ts timestamp, id int) USING iceberg PARTITIONED BY (hours(ts))"
    )
    assert isinstance(statement, CreateTable)
    assert [str(t.transform) for t in statement.partition_by] == [
        str(p.transform) for p in metadata.spec().fields
    ]


def test_write_ordered_by_matches_spark(spark_ns: tuple[Any, SqliteCatalog]) -> None:
    spark, _ = spark_ns
    spark.sql(f"CREATE TABLE iceduck.{NAMESPACE}.ordered (id bigint, s string, ts timestamp) USING iceberg")
    statement, metadata = run(
        spark_ns, "ordered", "ALTER TABLE {t} WRITE ORDERED BY s DESC, bucket(4, id), days(ts) ASC NULLS LAST"
    )
    assert isinstance(statement, AlterTable)
    (order,) = statement.actions
    assert isinstance(order, WriteOrder)
    schema = metadata.schema()
    spark_fields = [
        (str(f.transform), schema.find_field(f.source_id).name, f.direction, f.null_order)
        for f in metadata.sort_order().fields
    ]
    ours = [(str(t.transform), ".".join(t.source), t.direction, t.null_order) for t in order.terms]
    assert ours == spark_fields


def test_branch_and_tag_retention_match_spark(spark_ns: tuple[Any, SqliteCatalog]) -> None:
    spark, _ = spark_ns
    spark.sql(f"CREATE TABLE iceduck.{NAMESPACE}.refs (id bigint) USING iceberg")
    spark.sql(f"INSERT INTO iceduck.{NAMESPACE}.refs VALUES (1)")
    branch, metadata = run(
        spark_ns,
        "refs",
        "ALTER TABLE {t} CREATE BRANCH `audit-branch` RETAIN 30 DAYS "
        "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 HOURS",
    )
    assert isinstance(branch, CreateRef)
    ref = metadata.refs["audit-branch"]
    assert (ref.max_ref_age_ms, ref.min_snapshots_to_keep, ref.max_snapshot_age_ms) == (
        branch.max_ref_age_ms,
        branch.min_snapshots_to_keep,
        branch.max_snapshot_age_ms,
    )
    snapshot_id = metadata.current_snapshot_id
    tag, metadata = run(
        spark_ns, "refs", f"ALTER TABLE {{t}} CREATE TAG v1 AS OF VERSION {snapshot_id} RETAIN 90 MINUTES"
    )
    assert isinstance(tag, CreateRef) and tag.snapshot_id == snapshot_id
    assert metadata.refs["v1"].max_ref_age_ms == tag.max_ref_age_ms == 90 * 60_000
