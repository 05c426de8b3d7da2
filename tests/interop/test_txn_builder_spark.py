"""iceduck's table creation and commits against Spark 3.5 / Iceberg 1.10 on the shared catalog.

* the ids ``new_table_metadata`` assigns are the ids Spark assigns to the same CREATE TABLE;
* a table iceduck creates (metadata only) is a table Spark describes, lists properties
  of, reads (empty) and appends to;
* a property iceduck commits to a Spark-made table is seen by Spark, and Spark's next
  commit builds on iceduck's metadata file.

Everything lives in the namespace ``txn_test`` of the fixture warehouse, dropped before
and after each test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.sort import UNSORTED
from iceduck.spec.transforms import parse_transform
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from tests.txn.test_builder import BUCKET_B_AND_A, NESTED_INPUT, SPARK_IDS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "txn_test"
NESTED_DDL = (
    "a int, s struct<x:int, y:struct<z:int>>, l array<struct<p:int>>, "
    "m map<string, struct<q:int>>, b bigint NOT NULL, mm map<int, array<int>>"
)


def _drop_namespace(spark: SparkSession, catalog: SqliteCatalog) -> None:
    if catalog.namespace_exists((NS,)):
        for ident in catalog.list_tables((NS,)):
            spark.sql(f"DROP TABLE IF EXISTS iceduck.{NS}.{ident.name} PURGE")
        catalog.drop_namespace((NS,))


@pytest.fixture
def catalog(spark: SparkSession, spark_warehouse_path: Path) -> Iterator[SqliteCatalog]:
    """The fixture warehouse's catalog with an empty ``txn_test`` namespace (created by
    iceduck), gone again afterwards so the fixture warehouse keeps only its own tables."""
    catalog = SqliteCatalog(spark_warehouse_path)
    _drop_namespace(spark, catalog)
    catalog.create_namespace((NS,))
    yield catalog
    _drop_namespace(spark, catalog)


def _props(spark: SparkSession, table: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}


def test_new_table_ids_equal_sparks(spark: SparkSession, catalog: SqliteCatalog) -> None:
    spark.sql(
        f"CREATE TABLE iceduck.{NS}.nested ({NESTED_DDL}) USING iceberg PARTITIONED BY (bucket(4, b), a)"
    )
    spark_md = catalog.load_table(TableIdentifier((NS,), "nested")).metadata
    ours = new_table_metadata(NESTED_INPUT, BUCKET_B_AND_A, UNSORTED, spark_md.location, {})
    spark_schema = spark_md.schema()
    assert {spark_schema.column_name(i): i for i in spark_schema.field_ids()} == SPARK_IDS
    assert ours.schema().fields == spark_schema.fields
    assert ours.last_column_id == spark_md.last_column_id
    assert ours.partition_specs == spark_md.partition_specs
    assert ours.last_partition_id == spark_md.last_partition_id
    assert ours.sort_orders == spark_md.sort_orders
    # Spark's catalog adds "owner"; Java's core stores the zstd codec on every new table
    assert (
        spark_md.properties["write.parquet.compression-codec"]
        == ours.properties["write.parquet.compression-codec"]
    )


def test_spark_reads_a_table_iceduck_created(spark: SparkSession, catalog: SqliteCatalog) -> None:
    ident = TableIdentifier((NS,), "made_by_iceduck")
    spec = PartitionSpec(0, (PartitionField(113, 1, "b_bucket", parse_transform("bucket[4]")),))
    metadata = new_table_metadata(
        NESTED_INPUT, spec, UNSORTED, catalog.default_table_location(ident), {"format-version": "3", "k": "v"}
    )
    created = catalog.create_table(ident, metadata)
    builder = MetadataBuilder(created.metadata)
    builder.set_properties({"k2": "v2"})
    committed = catalog.commit_table(created, builder.build())
    assert Path(committed.metadata_location).name.startswith("00001-")

    name = f"iceduck.{NS}.made_by_iceduck"
    described = {r["col_name"]: r["data_type"] for r in spark.sql(f"DESCRIBE {name}").collect()}
    assert described["b"] == "bigint" and described["s"] == "struct<x:int,y:struct<z:int>>"
    assert described["Part 0"] == "bucket(4, b)"
    props = _props(spark, name)
    assert props["k"] == "v" and props["k2"] == "v2" and props["format-version"] == "3"
    assert props["write.parquet.compression-codec"] == "zstd"
    assert spark.sql(f"SELECT * FROM {name}").count() == 0
    # Spark can write to it, on top of iceduck's metadata file
    spark.sql(f"INSERT INTO {name} VALUES (1, NULL, NULL, NULL, 10, NULL), (2, NULL, NULL, NULL, 20, NULL)")
    assert spark.sql(f"SELECT sum(b) AS s FROM {name}").collect()[0]["s"] == 30
    after = catalog.load_table(ident).metadata
    assert after.metadata_log[-1].metadata_file == committed.metadata_location
    assert after.next_row_id == 2


def test_iceduck_commit_to_a_spark_table_is_seen_by_spark(
    spark: SparkSession, catalog: SqliteCatalog
) -> None:
    name = f"iceduck.{NS}.made_by_spark"
    spark.sql(f"CREATE TABLE {name} (id bigint, s string) USING iceberg")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    ident = TableIdentifier((NS,), "made_by_spark")
    base = catalog.load_table(ident)
    builder = MetadataBuilder(base.metadata)
    builder.set_properties({"write.delete.mode": "merge-on-read", "from": "iceduck"})
    builder.remove_properties(["owner"])
    committed = catalog.commit_table(base, builder.build())

    props = _props(spark, name)
    assert props["from"] == "iceduck" and props["write.delete.mode"] == "merge-on-read"
    assert "owner" not in props
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {name}").collect()] == [(1, "a")]
    spark.sql(f"INSERT INTO {name} VALUES (2, 'b')")
    assert spark.sql(f"SELECT count(*) AS n FROM {name}").collect()[0]["n"] == 2
    latest = catalog.load_table(ident)
    assert latest.metadata.metadata_log[-1].metadata_file == committed.metadata_location
    assert latest.metadata.properties["from"] == "iceduck"
