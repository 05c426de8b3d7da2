"""Views in the shared JDBC catalog, both ways, at the catalog level: a view iceduck's
:class:`~iceduck.catalog.sqlite.SqliteCatalog` creates, replaces and renames is read by Spark
3.5 + Iceberg 1.10, and one Spark creates and replaces is read by iceduck. The views live in
namespace ``views_catalog`` of the fixture warehouse (emptied first)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.spec.schema import Schema
from iceduck.spec.types import DecimalType, LongType, NestedField, StringType
from iceduck.spec.view_metadata import ViewRepresentation, add_view_version, new_view

NS = "views_catalog"
SPARK_NAME = f"iceduck.{NS}"
REPLACEMENT = f"SELECT id + 1 AS id FROM {SPARK_NAME}.orders"


@pytest.fixture(scope="module")
def catalog(spark: Any, spark_warehouse_path: Path) -> Iterator[SqliteCatalog]:
    spark.sql(f"DROP TABLE IF EXISTS {SPARK_NAME}.orders")
    for view in ("by_customer", "renamed", "from_spark"):
        spark.sql(f"DROP VIEW IF EXISTS {SPARK_NAME}.{view}")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SPARK_NAME}")
    spark.sql(
        f"CREATE TABLE {SPARK_NAME}.orders (id bigint, customer string, amount decimal(10, 2)) USING iceberg"
    )
    spark.sql(
        f"INSERT INTO {SPARK_NAME}.orders VALUES (1, 'ann', 10.50), (2, 'bob', 20.00), (3, 'ann', 5.25)"
    )
    c = SqliteCatalog(spark_warehouse_path)
    yield c
    c.close()


def _rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def test_spark_reads_replaces_and_drops_a_view_iceduck_created(spark: Any, catalog: SqliteCatalog) -> None:
    ident = TableIdentifier((NS,), "by_customer")
    schema = Schema((NestedField(0, "customer", StringType()), NestedField(1, "total", DecimalType(20, 2))))
    sql = "SELECT customer, sum(amount) AS total FROM orders GROUP BY customer"
    created = catalog.create_view(
        ident,
        new_view(
            catalog.default_view_location(ident),
            schema,
            [ViewRepresentation(sql, "spark")],
            (NS,),
            summary={"engine-name": "iceduck"},
        ),
    )
    listed = spark.sql(f"SHOW VIEWS IN {SPARK_NAME}").collect()
    # the run's one session also lists other tests' temporary views
    assert [r["viewName"] for r in listed if not r["isTemporary"]] == ["by_customer"]
    got = _rows(spark, f"SELECT customer, CAST(total AS string) FROM {SPARK_NAME}.by_customer")
    assert got == [("ann", "15.75"), ("bob", "20.00")]

    # a new version committed by iceduck: Spark sees its SQL at once
    count_schema = Schema((NestedField(0, "customer", StringType()), NestedField(1, "n", LongType(), True)))
    two = add_view_version(
        created.metadata,
        count_schema,
        [ViewRepresentation("SELECT customer, count(*) AS n FROM orders GROUP BY customer", "spark")],
        (NS,),
        summary={"engine-name": "iceduck"},
    )
    catalog.commit_view(created, two)
    assert _rows(spark, f"SELECT * FROM {SPARK_NAME}.by_customer") == [("ann", 2), ("bob", 1)]

    # Spark replaces it: iceduck reads Spark's version, the third
    spark.sql(f"CREATE OR REPLACE VIEW {SPARK_NAME}.by_customer AS SELECT id FROM {SPARK_NAME}.orders")
    replaced = catalog.load_view(ident)
    assert replaced.metadata.current_version_id == 3
    assert replaced.metadata.current_version.summary["engine-name"] == "spark"
    assert [v.version_id for v in replaced.metadata.versions] == [1, 2, 3]

    # renamed by iceduck, dropped by Spark
    catalog.rename_view(ident, TableIdentifier((NS,), "renamed"))
    assert _rows(spark, f"SELECT * FROM {SPARK_NAME}.renamed") == [(1,), (2,), (3,)]
    spark.sql(f"DROP VIEW {SPARK_NAME}.renamed")
    assert catalog.list_views((NS,)) == []


def test_iceduck_reads_a_view_spark_created(spark: Any, catalog: SqliteCatalog) -> None:
    spark.sql(f"USE {SPARK_NAME}")
    try:
        spark.sql("CREATE VIEW from_spark COMMENT 'c' AS SELECT customer FROM orders WHERE amount > 6")
    finally:
        spark.sql("USE spark_catalog.default")
    loaded = catalog.load_view(TableIdentifier((NS,), "from_spark"))
    version = loaded.metadata.current_version
    rep = version.representation("spark")
    assert rep is not None and rep.sql == "SELECT customer FROM orders WHERE amount > 6"
    assert version.default_namespace == (NS,) and loaded.metadata.properties["comment"] == "c"
    assert [f.name for f in loaded.metadata.schema.fields] == ["customer"]
    assert loaded.metadata_location.endswith(".gz.metadata.json")
    assert not catalog.table_exists(TableIdentifier((NS,), "from_spark"))


def test_spark_replacing_a_view_with_a_duckdb_representation(spark: Any, catalog: SqliteCatalog) -> None:
    """iceduck writes ``duckdb`` and ``spark`` representations; Spark's CREATE OR REPLACE
    writes only ``spark``, which Java's builder refuses as a loss of dialects unless the view
    has ``replace.drop-dialect.allowed`` = true."""
    schema = Schema((NestedField(0, "id", LongType()),))
    reps = [
        ViewRepresentation("SELECT id FROM orders", "duckdb"),
        ViewRepresentation("SELECT id FROM orders", "spark"),
    ]
    for name, properties in (
        ("two_dialects", {}),
        ("two_dialects_droppable", {"replace.drop-dialect.allowed": "true"}),
    ):
        ident = TableIdentifier((NS,), name)
        if catalog.view_exists(ident):
            catalog.drop_view(ident)
        catalog.create_view(
            ident, new_view(catalog.default_view_location(ident), schema, reps, (NS,), properties=properties)
        )
    with pytest.raises(Exception, match="loss of view dialects"):
        spark.sql(f"CREATE OR REPLACE VIEW {SPARK_NAME}.two_dialects AS {REPLACEMENT}")
    spark.sql(f"CREATE OR REPLACE VIEW {SPARK_NAME}.two_dialects_droppable AS {REPLACEMENT}")
    replaced = catalog.load_view(TableIdentifier((NS,), "two_dialects_droppable")).metadata.current_version
    assert replaced.dialects == {"spark"}
    for name in ("two_dialects", "two_dialects_droppable"):
        catalog.drop_view(TableIdentifier((NS,), name))
