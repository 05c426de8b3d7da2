"""Spark 3.5 + Iceberg's ``RESTCatalog`` over HTTPS against ``iceduck serve --tls-cert
--tls-key``, the certificate signed by the tests' private CA (:mod:`tests.support.tls`).

Java's REST client trusts what the JVM trusts: the run's SparkSession starts with
``-Djavax.net.ssl.trustStore`` naming a copy of the JDK's roots plus the CA
(:func:`tests.support.tls.jvm_trust_options`, in :func:`tests.support.spark_session.session_conf`;
a JVM reads its trust store once, so it has to be there from the start). Spark creates and
writes a table that iceduck's client, over the same HTTPS server, reads; iceduck writes and
Spark reads; each side compares the full result set.
"""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pytest

import iceduck
from tests.support.rest import start_server
from tests.support.rest_spark import attach, iceduck_rows, require_rest_client, spark_rows
from tests.support.tls import TlsUnavailable, jvm_trust_store, private_ca

pytestmark = pytest.mark.spark

CATALOG = "tls_rest"


def test_spark_and_iceduck_share_a_table_over_https(spark: Any, warehouse: Path) -> None:
    require_rest_client(spark)
    try:
        pki, store = private_ca(), jvm_trust_store()
    except TlsUnavailable as e:
        pytest.skip(str(e))
    assert spark.sparkContext._jvm.java.lang.System.getProperty("javax.net.ssl.trustStore") == str(store)
    served = start_server(warehouse, tls=pki.server_context())
    try:
        assert served.url.startswith("https://")
        attach(spark, CATALOG, served.url)
        spark.sql(f"CREATE NAMESPACE {CATALOG}.sec")
        spark.sql(
            f"CREATE TABLE {CATALOG}.sec.t (id bigint, name string, amount decimal(10,2), ts timestamp) "
            "USING iceberg"
        )
        spark.sql(
            f"INSERT INTO {CATALOG}.sec.t VALUES (1, 'a', 1.50, TIMESTAMP '2024-01-02 03:04:05'), "
            "(2, NULL, NULL, NULL)"
        )
        spark_written = [
            (1, "a", decimal.Decimal("1.50"), datetime.datetime(2024, 1, 2, 3, 4, 5)),
            (2, None, None, None),
        ]
        select = "SELECT id, name, amount, ts FROM sec.t"
        with iceduck.connect(catalog_uri=served.url, properties={"ssl.ca-cert": str(pki.ca)}) as con:
            assert iceduck_rows(con, select) == spark_written
            con.execute("INSERT INTO sec.t VALUES (3, 'c', 3.25, TIMESTAMP '2025-06-07 08:09:10')")
            both = iceduck_rows(con, select)
        assert both == [
            *spark_written,
            (3, "c", decimal.Decimal("3.25"), datetime.datetime(2025, 6, 7, 8, 9, 10)),
        ]
        assert spark_rows(spark, f"SELECT id, name, amount, ts FROM {CATALOG}.sec.t") == both
    finally:
        served.stop()
