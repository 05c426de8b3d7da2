"""Iceberg views in a JDBC catalog on PostgreSQL, shared with Spark (issue 33).

Spark 3.5 + Iceberg 1.10.2 opens the module's database as catalog ``pgviews`` (the settings
of tests/interop/test_postgres_catalog_spark.py) and iceduck as ``PostgresCatalog``: Spark's
view, with a Spark-only function, is read by iceduck with the same rows; iceduck's view,
created and then replaced, is read by Spark; the rows of ``iceberg_tables`` say ``VIEW``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.catalog.postgres import PostgresCatalog
from iceduck.session.session import Session
from tests.interop.test_postgres_catalog_spark import _require_driver, _spark_catalog
from tests.support.postgres import PostgresServer

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]'")

CATALOG = "pgviews"


@pytest.fixture(scope="module")
def shared(
    spark: SparkSession, postgres_server: PostgresServer, postgres_database: str, tmp_path_factory: Any
) -> Iterator[tuple[SparkSession, Session]]:
    _require_driver(spark)
    warehouse = tmp_path_factory.mktemp("pg-views-warehouse")
    catalog = PostgresCatalog(postgres_database, str(warehouse), CATALOG)
    _spark_catalog(spark, CATALOG, postgres_server, postgres_database.rsplit("/", 1)[1], warehouse)
    session = Session(warehouse, catalog_impl=catalog)
    spark.sql(f"CREATE NAMESPACE {CATALOG}.shop")
    spark.sql(f"CREATE TABLE {CATALOG}.shop.orders (id bigint, who string, day date) USING iceberg")
    spark.sql(
        f"INSERT INTO {CATALOG}.shop.orders VALUES (1, 'ann', DATE '2024-01-01'), "
        "(2, NULL, DATE '2024-02-29'), (3, 'ann', NULL)"
    )
    yield spark, session
    session.close()


def rows(result: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in result), key=repr)


def test_views_cross_both_ways_in_postgres(
    shared: tuple[SparkSession, Session], postgres_database: str
) -> None:
    spark, session = shared
    spark.sql(f"USE {CATALOG}.shop")
    spark.sql(
        "CREATE VIEW s_named AS SELECT nvl(who, 'anon') AS who, count(*) AS n, "
        "sort_array(collect_list(id)) AS ids FROM orders GROUP BY who"
    )
    spark.sql("USE spark_catalog.default")
    by_spark = rows(spark.sql(f"SELECT * FROM {CATALOG}.shop.s_named").collect())
    assert rows(session.execute("SELECT * FROM shop.s_named").fetchall()) == by_spark

    session.execute(
        "CREATE VIEW shop.d_dated AS SELECT id, year(day) AS y FROM shop.orders WHERE day IS NOT NULL"
    )
    assert rows(spark.sql(f"SELECT * FROM {CATALOG}.shop.d_dated").collect()) == [(1, 2024), (2, 2024)]
    session.execute("CREATE OR REPLACE VIEW shop.d_dated AS SELECT id FROM shop.orders WHERE who = 'ann'")
    assert rows(spark.sql(f"SELECT * FROM {CATALOG}.shop.d_dated").collect()) == [(1,), (3,)]

    with psycopg.connect(postgres_database) as conn:
        kinds = conn.execute(
            "SELECT table_name, iceberg_type FROM iceberg_tables WHERE catalog_name = %s ORDER BY table_name",
            (CATALOG,),
        ).fetchall()
    assert kinds == [("d_dated", "VIEW"), ("orders", "TABLE"), ("s_named", "VIEW")]
    listed = spark.sql(f"SHOW VIEWS IN {CATALOG}.shop").collect()
    assert {r.viewName for r in listed if not r.isTemporary} == {
        "s_named",
        "d_dated",
    }
