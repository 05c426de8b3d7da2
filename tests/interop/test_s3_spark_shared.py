"""Spark and iceduck share tables in S3: Spark through Iceberg's ``S3FileIO`` (the
``iceberg-aws-bundle`` from Maven on its class path), iceduck through its own object store,
both on one PostgreSQL JDBC catalog over a warehouse in moto's S3 -- and through
``iceduck serve`` of an S3 warehouse, whose vended credentials are all Spark is given.

Spark's catalog is declared from ``iceduck.spark_conf(...)`` with the arguments iceduck
opens the lake with -- the recipe the README gives users -- so the endpoint, path-style
access and keys Spark uses are the ones iceduck emits. Checked: alternating writes read the
same both ways after every step (full result sets); a table Spark puts at an ``s3a://``
location is read and written by iceduck; commits from both at the same moment are all kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

import iceduck
from iceduck.catalog.open import open_catalog
from iceduck.serve.context import ServeContext
from iceduck.serve.server import CatalogServer
from tests.support.rest_spark import attach
from tests.support.s3 import S3Server, create_bucket, list_keys
from tests.support.writer_race import SPARK_IDS, race

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "s3pg"


@dataclass
class Lake:
    spark: SparkSession
    con: iceduck.Connection
    bucket: str
    endpoint: str


def _require_s3fileio(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.java.lang.Class.forName("software.amazon.awssdk.services.s3.S3Client")
    except Exception as e:  # the PyPI-only class path has no AWS SDK
        pytest.skip(f"the running Spark has no AWS SDK (iceberg-aws-bundle from Maven): {e}")


@pytest.fixture(scope="module")
def lake(spark: SparkSession, s3_server: S3Server, s3_bucket: str, postgres_database: str) -> Iterator[Lake]:
    """iceduck's lake ``s3://<bucket>/wh`` on the module's PostgreSQL database, and Spark's
    catalog ``s3pg`` declared from ``iceduck.spark_conf`` with the same arguments."""
    _require_s3fileio(spark)
    warehouse = f"s3://{s3_bucket}/wh"
    arguments: dict[str, Any] = {"catalog_uri": postgres_database, "properties": s3_server.properties}
    con = iceduck.connect(warehouse, CATALOG, **arguments)  # creates the catalog tables
    for key, value in iceduck.spark_conf(warehouse, CATALOG, **arguments).items():
        if key.startswith(f"spark.sql.catalog.{CATALOG}"):  # read at the catalog's first use
            spark.conf.set(key, value)
    yield Lake(spark, con, s3_bucket, s3_server.endpoint_url)
    con.close()


def _both(lake: Lake, table: str) -> list[tuple[Any, ...]]:
    """The table's rows read by Spark and by iceduck, which must be equal."""
    by_spark = [tuple(r) for r in lake.spark.sql(f"SELECT * FROM {CATALOG}.{table} ORDER BY id").collect()]
    by_iceduck = lake.con.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    assert by_iceduck == by_spark
    return by_iceduck


def test_alternating_writes_in_s3_read_the_same_both_ways(lake: Lake) -> None:
    spark, con = lake.spark, lake.con
    spark.sql(f"CREATE NAMESPACE {CATALOG}.shop")
    spark.sql(
        f"CREATE TABLE {CATALOG}.shop.orders (id bigint, who string, amount decimal(10,2), day date) "
        "USING iceberg PARTITIONED BY (day) TBLPROPERTIES ('format-version' = '2', "
        "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"
    )
    spark.sql(
        f"INSERT INTO {CATALOG}.shop.orders SELECT id, concat('c', id % 3), id * 1.5, "
        "date_add(DATE '2024-01-01', CAST(id % 4 AS int)) FROM range(20)"
    )
    assert len(_both(lake, "shop.orders")) == 20
    keys = list_keys(lake.endpoint, lake.bucket, "wh/shop/orders/")
    assert any(k.endswith(".parquet") for k in keys) and any(k.endswith(".metadata.json") for k in keys)
    con.execute("DELETE FROM shop.orders WHERE id < 3")
    spark.sql(f"UPDATE {CATALOG}.shop.orders SET who = 'spark' WHERE id % 5 = 0")
    con.execute("INSERT INTO shop.orders VALUES (100, 'iceduck', 1.25, DATE '2024-02-01')")
    con.execute("UPDATE shop.orders SET amount = 0 WHERE id = 9")
    spark.sql(f"DELETE FROM {CATALOG}.shop.orders WHERE id = 4")
    con.execute(
        "MERGE INTO shop.orders t USING (SELECT * FROM (VALUES (5, 'm'), (200, 'n')) v(id, who)) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET who = s.who "
        "WHEN NOT MATCHED THEN INSERT (id, who) VALUES (s.id, s.who)"
    )
    spark.sql(f"CALL {CATALOG}.system.rewrite_data_files(table => 'shop.orders')")
    rows = _both(lake, "shop.orders")
    assert [r[0] for r in rows] == [3, *range(5, 20), 100, 200]
    assert {r[1] for r in rows if r[0] in (10, 15)} == {"spark"} and rows[1][1] == "m"
    count = "SELECT count(*) FROM {}.snapshots"
    history = spark.sql(count.format(f"{CATALOG}.shop.orders")).collect()[0][0]
    assert con.execute(count.format("shop.orders")).fetchall() == [(history,)]

    # a table iceduck creates in the bucket, Spark writes and iceduck reads back
    con.execute("CREATE TABLE shop.made (id bigint, note string) TBLPROPERTIES ('format-version' = '3')")
    con.execute("INSERT INTO shop.made VALUES (1, 'iceduck'), (2, 'iceduck')")
    spark.sql(f"INSERT INTO {CATALOG}.shop.made VALUES (3, 'spark')")
    spark.sql(f"DELETE FROM {CATALOG}.shop.made WHERE id = 1")
    con.execute("UPDATE shop.made SET note = 'both' WHERE id = 3")
    assert _both(lake, "shop.made") == [(2, "iceduck"), (3, "both")]


def test_a_table_spark_puts_at_an_s3a_location(lake: Lake) -> None:
    """``s3a://`` (Hadoop's scheme, which ``S3FileIO`` also takes) in every path Spark writes:
    iceduck reads the table and commits to it, and Spark reads iceduck's commit."""
    spark, con = lake.spark, lake.con
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.hadoopish")
    spark.sql(
        f"CREATE TABLE {CATALOG}.hadoopish.t (id bigint, v string) USING iceberg "
        f"LOCATION 's3a://{lake.bucket}/elsewhere/t' TBLPROPERTIES ('format-version' = '2')"
    )
    spark.sql(f"INSERT INTO {CATALOG}.hadoopish.t VALUES (1, 'a'), (2, 'b')")
    paths = con.execute("SELECT file_path FROM hadoopish.t.files").fetchall()
    assert paths and all(p.startswith(f"s3a://{lake.bucket}/elsewhere/t/") for (p,) in paths)
    con.execute("DELETE FROM hadoopish.t WHERE id = 1")
    con.execute("INSERT INTO hadoopish.t VALUES (3, 'c')")
    assert _both(lake, "hadoopish.t") == [(2, "b"), (3, "c")]


def test_concurrent_commits_to_an_s3_table_are_all_kept(lake: Lake) -> None:
    """Spark and iceduck append to one S3 table at the same moment; the catalog's
    compare-and-swap makes each loser retry on fresh metadata, so every batch is kept."""
    spark, con = lake.spark, lake.con
    con.execute("CREATE NAMESPACE IF NOT EXISTS race")
    con.execute(
        "CREATE TABLE race.t (id bigint, who string) TBLPROPERTIES ('format-version' = '2', "
        "'commit.retry.num-retries' = '50', 'commit.retry.min-wait-ms' = '10', "
        "'commit.retry.max-wait-ms' = '500')"
    )
    spark_batches = 5
    done = race(
        lambda i: spark.sql(f"INSERT INTO {CATALOG}.race.t VALUES ({i}, 'spark')"),
        lambda i: con.execute(f"INSERT INTO race.t VALUES ({i}, 'iceduck')"),
        spark_batches,
        8,
    )
    expected = [(b, "iceduck") for b in range(done)]
    expected += [(SPARK_IDS + b, "spark") for b in range(spark_batches)]
    assert _both(lake, "race.t") == expected
    assert con.execute("SELECT count(*) FROM race.t.snapshots").fetchall() == [(spark_batches + done,)]


def test_spark_writes_an_s3_lake_served_by_iceduck_with_only_vended_credentials(
    spark: SparkSession, s3_configured: S3Server, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``iceduck serve`` of ``s3://<bucket>/served`` with ``--vend-credentials``: Spark's REST
    catalog asks for them (``X-Iceberg-Access-Delegation``) and is given no S3 setting of its
    own; iceduck's REST client is the other writer. Full result sets compared both ways."""
    _require_s3fileio(spark)
    warehouse = f"s3://{create_bucket(s3_configured)}/served"
    catalog_uri = f"sqlite:///{tmp_path_factory.mktemp('served') / 'catalog.db'}"
    catalog = open_catalog(warehouse, "iceduck", catalog_uri=catalog_uri, properties=s3_configured.properties)
    context = ServeContext(catalog, warehouse, storage=s3_configured.properties, vend_credentials=True)
    server = CatalogServer(("127.0.0.1", 0), context)
    server.start()
    try:
        attach(
            spark,
            "s3rest",
            server.url,
            **{
                "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                "header.X-Iceberg-Access-Delegation": "vended-credentials",
            },
        )
        spark.sql("CREATE NAMESPACE s3rest.lake")
        spark.sql(
            "CREATE TABLE s3rest.lake.t (id bigint, v string) USING iceberg "
            "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
        )
        spark.sql("INSERT INTO s3rest.lake.t SELECT id, concat('v', id) FROM range(10)")
        with iceduck.connect(catalog_uri=server.url) as con:
            con.execute("DELETE FROM lake.t WHERE id % 3 = 0")
            con.execute("INSERT INTO lake.t VALUES (50, 'iceduck')")
            spark.sql("UPDATE s3rest.lake.t SET v = 'spark' WHERE id = 4")
            by_spark = [tuple(r) for r in spark.sql("SELECT * FROM s3rest.lake.t ORDER BY id").collect()]
            assert con.execute("SELECT * FROM lake.t ORDER BY id").fetchall() == by_spark
        assert [r[0] for r in by_spark] == [1, 2, 4, 5, 7, 8, 50] and by_spark[2] == (4, "spark")
        keys = list_keys(s3_configured.endpoint_url, warehouse.removeprefix("s3://").split("/")[0])
        assert any(k.startswith("served/lake/t/data/") for k in keys)
    finally:
        server.stop()
        catalog.close()
