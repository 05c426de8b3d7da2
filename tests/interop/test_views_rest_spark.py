"""Iceberg views through ``iceduck serve``: Spark's REST catalog creates, replaces, lists and
reads views the server keeps in its JDBC ``catalog.db``, and iceduck reads them (straight
from ``catalog.db`` and through its own REST client), and Spark reads the views iceduck
creates (issue 33).

Spark 3.5 + Iceberg 1.10.2 uses the ``/views`` routes only when the server's
``GET /v1/config`` lists them in ``endpoints``; a server without them makes Spark's
``CREATE VIEW`` fail, so these tests fail (not skip) until ``iceduck serve`` has views.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.rest_spark import REST, iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NS = "views_rest"


@pytest.fixture(scope="module")
def rest_ns(spark: SparkSession) -> str:
    """The namespace of this module in the served catalog, with one table Spark wrote."""
    served(spark)
    spark.sql(f"CREATE NAMESPACE {REST}.{NS}")
    spark.sql(f"CREATE TABLE {REST}.{NS}.orders (id bigint, customer string, day date) USING iceberg")
    spark.sql(
        f"INSERT INTO {REST}.{NS}.orders VALUES (1, 'ann', DATE '2024-01-01'), (2, 'bob', DATE "
        "'2024-01-02'), "
        "(3, 'ann', NULL), (4, NULL, DATE '2024-02-01')"
    )
    return NS


def test_spark_creates_and_replaces_a_view_through_serve(spark: SparkSession, rest_ns: str) -> None:
    server = served(spark)
    spark.sql(f"USE {REST}.{rest_ns}")
    spark.sql(
        "CREATE VIEW s_per_customer COMMENT 'per customer' AS SELECT nvl(customer, 'anon') AS who, "
        "count(*) AS n, collect_list(id) AS ids, max(day) AS last_day FROM orders GROUP BY customer"
    )
    view = f"{REST}.{rest_ns}.s_per_customer"
    expected = spark_rows(spark, f"SELECT who, n, sort_array(ids), last_day FROM {view}")
    assert [r[0] for r in expected] == ["ann", "anon", "bob"]
    assert {r.viewName for r in spark.sql(f"SHOW VIEWS IN {REST}.{rest_ns}").collect()} >= {"s_per_customer"}
    with server.connect() as con:
        assert (
            iceduck_rows(con, f"SELECT who, n, list_sort(ids), last_day FROM {rest_ns}.s_per_customer")
            == expected
        )
    spark.sql("CREATE OR REPLACE VIEW s_per_customer AS SELECT id FROM orders WHERE customer = 'ann'")
    assert spark_rows(spark, f"SELECT * FROM {view}") == [(1,), (3,)]
    with server.connect() as con:
        assert iceduck_rows(con, f"SELECT * FROM {rest_ns}.s_per_customer") == [(1,), (3,)]
    spark.sql("USE spark_catalog.default")


def test_spark_reads_iceducks_view_through_serve(spark: SparkSession, rest_ns: str) -> None:
    server = served(spark)
    with server.connect() as con:
        con.execute(
            f"CREATE VIEW {rest_ns}.d_recent AS SELECT customer, max(id) AS last_id, "
            f"customer || '!' AS shout FROM {rest_ns}.orders GROUP BY customer"
        )
        expected = iceduck_rows(con, f"SELECT * FROM {rest_ns}.d_recent")
    assert spark_rows(spark, f"SELECT * FROM {REST}.{rest_ns}.d_recent") == expected
    spark.sql(f"DROP VIEW {REST}.{rest_ns}.d_recent")
    with server.connect() as con:
        assert all("d_recent" not in str(row) for row in con.execute(f"SHOW VIEWS IN {rest_ns}").fetchall())


def test_iceducks_rest_client_reads_and_creates_views(spark: SparkSession, rest_ns: str) -> None:
    """iceduck's own REST client on the same server: a view Spark made through it, and one
    iceduck makes through it that Spark reads."""
    server = served(spark)
    # the SQL names `orders` as the view's default namespace resolves it: Spark's name for
    # the catalog (`rest`) is the client's own and is recorded nowhere iceduck could read it
    spark.sql(f"USE {REST}.{rest_ns}")
    spark.sql("CREATE VIEW s_by_rest AS SELECT id, upper(customer) AS who FROM orders")
    spark.sql("USE spark_catalog.default")
    expected = spark_rows(spark, f"SELECT * FROM {REST}.{rest_ns}.s_by_rest")
    with server.connect_rest() as con:
        assert iceduck_rows(con, f"SELECT * FROM {rest_ns}.s_by_rest") == expected
        con.execute(
            f"CREATE VIEW {rest_ns}.d_by_rest AS SELECT id FROM {rest_ns}.s_by_rest WHERE who = 'ANN'"
        )
    assert spark_rows(spark, f"SELECT * FROM {REST}.{rest_ns}.d_by_rest") == [(1,), (3,)]
