"""``iceduck.spark_conf(catalog_uri="http://...")`` declares a Spark catalog that works: its
``spark.sql.catalog.*`` settings, set on the running session, attach Spark 3.5's Iceberg
``RESTCatalog`` to the same ``iceduck serve`` iceduck's client uses, and both see the same rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

import iceduck
from tests.support.rest_spark import iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NAME = "restconf"


def test_spark_conf_attaches_spark_to_the_rest_catalog(spark: SparkSession) -> None:
    rest = served(spark)
    conf = iceduck.spark_conf(catalog_uri=rest.url, catalog=NAME)
    assert conf[f"spark.sql.catalog.{NAME}.type"] == "rest"
    for key, value in conf.items():
        if key.startswith(f"spark.sql.catalog.{NAME}"):  # the extensions are set at start
            spark.conf.set(key, value)
    con = rest.connect_rest()
    con.execute("CREATE NAMESPACE IF NOT EXISTS sc")
    con.execute("CREATE TABLE sc.t (id BIGINT, s STRING)")
    con.execute("INSERT INTO sc.t VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO {NAME}.sc.t VALUES (3, 'c')")
    expected = [(1, "a"), (2, "b"), (3, "c")]
    assert spark_rows(spark, f"SELECT * FROM {NAME}.sc.t") == expected
    assert iceduck_rows(con, "SELECT * FROM sc.t") == expected
    con.close()
