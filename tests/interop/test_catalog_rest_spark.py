"""Spark and iceduck as two clients of one ``iceduck serve``: Spark 3.5 + Iceberg 1.10.2's
``RESTCatalog`` (``type=rest``, ``token``) and ``iceduck.connect(catalog_uri=...)``.

What iceduck's REST client commits (creates, CTAS through ``assert-create``, row-level
deletes, schema evolution) Spark reads, and the reverse, after every step; the catalog is
added to the run's one SparkSession with ``spark.conf.set`` before its first use.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.catalog.rest_client.conftest import TOKEN, Served, serve

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

CATALOG = "rest_peer"


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Served]:
    running = serve(tmp_path, token=TOKEN)
    yield running
    running.server.stop()


#: a class of the HTTP client Iceberg's RESTCatalog uses, shaded into the full runtime jar
HTTP_CLIENT_CLASS = "org.apache.iceberg.shaded.org.apache.hc.core5.http.Method"


def _require_rest_client(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.java.lang.Class.forName(HTTP_CLIENT_CLASS)
    except Exception:
        pytest.skip(
            f"Spark's Iceberg runtime on this machine lacks {HTTP_CLIENT_CLASS} (Iceberg's shaded "
            "httpclient5), so its RESTCatalog cannot start: install the full iceberg-spark-runtime jar"
        )


def _declare(spark: SparkSession, served: Served) -> None:
    prefix = f"spark.sql.catalog.{CATALOG}"
    for key, value in {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": served.url,
        f"{prefix}.token": TOKEN,
        f"{prefix}.cache-enabled": "false",  # iceduck commits too: re-read on every statement
    }.items():
        spark.conf.set(key, value)


def _spark_rows(spark: SparkSession, table: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {CATALOG}.{table}").collect())


def test_spark_and_iceduck_share_a_rest_catalog(spark: SparkSession, guarded: Served) -> None:
    _require_rest_client(spark)
    _declare(spark, guarded)
    cur = guarded.connect().cursor()

    def iceduck_rows(table: str) -> list[tuple[Any, ...]]:
        return sorted(cur.execute(f"SELECT * FROM {table}").fetchall())

    cur.execute("CREATE NAMESPACE shared")
    cur.execute(
        "CREATE TABLE shared.t (id bigint, s string) USING iceberg PARTITIONED BY (bucket(4, id)) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    cur.execute("INSERT INTO shared.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    assert _spark_rows(spark, "shared.t") == [(1, "a"), (2, "b"), (3, "c")]
    spark.sql(f"INSERT INTO {CATALOG}.shared.t VALUES (4, 'spark')")
    assert iceduck_rows("shared.t") == [(1, "a"), (2, "b"), (3, "c"), (4, "spark")]
    cur.execute("DELETE FROM shared.t WHERE id = 2")  # a position delete file
    assert _spark_rows(spark, "shared.t") == [(1, "a"), (3, "c"), (4, "spark")]
    cur.execute("ALTER TABLE shared.t ADD COLUMN n int")
    spark.sql(f"UPDATE {CATALOG}.shared.t SET n = 7 WHERE id = 3")
    assert iceduck_rows("shared.t") == [(1, "a", None), (3, "c", 7), (4, "spark", None)]
    cur.execute("CREATE TABLE shared.c AS SELECT id, s FROM shared.t WHERE n IS NULL")
    assert _spark_rows(spark, "shared.c") == [(1, "a"), (4, "spark")]
    spark.sql(f"CREATE TABLE {CATALOG}.shared.from_spark USING iceberg AS SELECT 42 AS answer")
    assert iceduck_rows("shared.from_spark") == [(42,)]
    history = cur.execute("SELECT operation FROM shared.t.snapshots ORDER BY committed_at").fetchall()
    assert [op for (op,) in history] == ["append", "append", "delete", "overwrite"]
