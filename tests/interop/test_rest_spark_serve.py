"""The ``iceduck serve`` command, as a user starts it, with Spark attached as users attach it.

``python3 -m iceduck serve WAREHOUSE --port 0 --token T --prefix P --credential ID:SECRET``
runs in a subprocess; Spark 3.5 + Iceberg 1.10.2 attaches catalogs at runtime with the
documented settings (``type=rest``, ``uri``, ``token`` or ``credential``, ``warehouse``): the
static bearer token, OAuth2 client credentials (Java logs in at ``/v1/oauth/tokens``), the
``prefix`` the server hands out in ``GET /v1/config``'s overrides, and the ``warehouse``
query parameter Java's client sends with it. A wrong token or secret is one clean
``NotAuthorizedException``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import iceduck
from tests.support.rest_spark import attach, iceduck_rows, require_rest_client, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cr3t-t0ken"
CREDENTIAL = "spark-etl:pa55word"


@pytest.fixture(scope="module")
def cli_server(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``iceduck serve`` in a subprocess on a free port: (its URL, its warehouse)."""
    require_rest_client(spark)
    warehouse = tmp_path_factory.mktemp("served") / "wh"
    command = ["serve", str(warehouse), "--port", "0", "--token", TOKEN, "--prefix", "lake"]
    process = subprocess.Popen(
        [sys.executable, "-m", "iceduck", *command, "--credential", CREDENTIAL],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        assert found, line
        yield found.group(1), warehouse
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_spark_on_the_served_command_with_a_token(spark: SparkSession, cli_server: tuple[str, Path]) -> None:
    url, warehouse = cli_server
    attach(spark, "served_cli", url, token=TOKEN, warehouse=str(warehouse))
    spark.sql("CREATE NAMESPACE served_cli.cli")
    spark.sql(
        "CREATE TABLE served_cli.cli.t (id bigint, v string) USING iceberg PARTITIONED BY (bucket(2, id)) "
        "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"
    )
    spark.sql("INSERT INTO served_cli.cli.t SELECT id, concat('v', id) FROM range(6)")
    spark.sql("DELETE FROM served_cli.cli.t WHERE id = 4")
    by_spark = spark_rows(spark, "SELECT * FROM served_cli.cli.t")
    assert [r[0] for r in by_spark] == [0, 1, 2, 3, 5]
    with iceduck.connect(warehouse) as con:
        assert iceduck_rows(con, "SELECT * FROM cli.t") == by_spark
        con.execute("UPDATE cli.t SET v = 'iceduck' WHERE id = 0")
    assert spark_rows(spark, "SELECT v FROM served_cli.cli.t WHERE id = 0") == [("iceduck",)]


def test_a_wrong_token_is_refused_cleanly(spark: SparkSession, cli_server: tuple[str, Path]) -> None:
    url, _ = cli_server
    attach(spark, "served_badtoken", url, token="not-the-token")
    with pytest.raises(Exception, match="NotAuthorized") as refused:
        spark.sql("SHOW NAMESPACES IN served_badtoken").collect()
    assert "a valid bearer token is required" in str(refused.value)


def test_spark_logs_in_with_client_credentials(spark: SparkSession, cli_server: tuple[str, Path]) -> None:
    url, warehouse = cli_server
    attach(
        spark, "served_oauth", url, credential=CREDENTIAL, **{"oauth2-server-uri": f"{url}/v1/oauth/tokens"}
    )
    spark.sql("CREATE NAMESPACE served_oauth.oauth")
    spark.sql("CREATE TABLE served_oauth.oauth.t USING iceberg AS SELECT id FROM range(3)")
    spark.sql("INSERT INTO served_oauth.oauth.t VALUES (10)")
    with iceduck.connect(warehouse) as con:
        assert iceduck_rows(con, "SELECT * FROM oauth.t") == spark_rows(
            spark, "SELECT * FROM served_oauth.oauth.t"
        )
        assert len(iceduck_rows(con, "SELECT * FROM oauth.t")) == 4


def test_a_wrong_secret_is_refused_cleanly(spark: SparkSession, cli_server: tuple[str, Path]) -> None:
    url, _ = cli_server
    oauth = {"oauth2-server-uri": f"{url}/v1/oauth/tokens"}
    attach(spark, "served_badsecret", url, credential="spark-etl:wrong", **oauth)
    with pytest.raises(Exception, match="NotAuthorized") as refused:
        spark.sql("SHOW NAMESPACES IN served_badsecret").collect()
    assert "invalid_client" in str(refused.value)
