"""Views through ``iceduck serve`` with Spark 3.5 + Iceberg 1.10.2's ``RESTCatalog`` (catalog
``rest``): Spark creates, replaces, alters, renames and drops a view, and iceduck's REST
client reads each state as the served JDBC catalog holds it; iceduck's REST client creates a
view with a ``spark`` representation and Spark's full result over it equals the query's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField, StringType
from iceduck.spec.view_metadata import ViewRepresentation, new_view
from tests.support.rest_spark import REST, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "rv"


def test_spark_views_through_iceduck_serve(spark: SparkSession) -> None:
    rest = served(spark)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {REST}.{NS}")
    spark.sql(f"CREATE TABLE {REST}.{NS}.t (id BIGINT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO {REST}.{NS}.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"CREATE VIEW {REST}.{NS}.v COMMENT 'big ids' AS SELECT id FROM {REST}.{NS}.t WHERE id > 1")
    client = RestCatalog(rest.url, "rest")
    own = SqliteCatalog(rest.warehouse)
    v = TableIdentifier((NS,), "v")
    assert client.list_views((NS,)) == [v]
    created = client.load_view(v)
    assert created == own.load_view(v)
    version = created.metadata.current_version
    spark_sql = version.representation("spark")
    assert spark_sql is not None and "WHERE id > 1" in spark_sql.sql
    assert version.summary["engine-name"] == "spark" and created.metadata.properties["comment"] == "big ids"
    assert sorted(spark_rows(spark, f"SELECT * FROM {REST}.{NS}.v")) == [(2,), (3,)]

    spark.sql(f"CREATE OR REPLACE VIEW {REST}.{NS}.v AS SELECT name FROM {REST}.{NS}.t")
    spark.sql(f"ALTER VIEW {REST}.{NS}.v SET TBLPROPERTIES ('team' = 'etl')")
    replaced = client.load_view(v).metadata
    assert replaced.current_version_id == 2 and [e.version_id for e in replaced.version_log] == [1, 2]
    assert [f.name for f in replaced.schema.fields] == ["name"] and replaced.properties["team"] == "etl"

    spark.sql(f"ALTER VIEW {REST}.{NS}.v RENAME TO {REST}.{NS}.w")
    assert client.list_views((NS,)) == [TableIdentifier((NS,), "w")]
    spark.sql(f"DROP VIEW {REST}.{NS}.w")
    assert client.list_views((NS,)) == []
    assert rest.log.server_errors() == []


def test_spark_reads_a_view_iceduck_created_through_rest(spark: SparkSession) -> None:
    rest = served(spark)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {REST}.{NS}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {REST}.{NS}.u (id BIGINT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO {REST}.{NS}.u VALUES (1, 'a'), (2, 'b')")
    client = RestCatalog(rest.url, "rest")
    identifier = TableIdentifier((NS,), "iv")
    schema = Schema((NestedField(0, "name", StringType()), NestedField(1, "twice", LongType())))
    query = f"SELECT name, id * 2 AS twice FROM {NS}.u"
    metadata = new_view(
        client.default_view_location(identifier),
        schema,
        (ViewRepresentation(query, "duckdb"), ViewRepresentation(query, "spark")),
        (NS,),
        summary={"engine-name": "iceduck"},
    )
    client.create_view(identifier, metadata)
    assert sorted(spark_rows(spark, f"SELECT * FROM {REST}.{NS}.iv")) == [("a", 2), ("b", 4)]
    listed = spark.sql(f"SHOW VIEWS IN {REST}.{NS}").collect()
    assert [r.viewName for r in listed if not r.isTemporary] == ["iv"]  # not other tests' temporary views
    spark.sql(f"DROP VIEW {REST}.{NS}.iv")
    assert not client.view_exists(identifier)
    assert rest.log.server_errors() == []
