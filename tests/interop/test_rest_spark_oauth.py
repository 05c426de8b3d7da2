"""Spark's ``RESTCatalog`` (Iceberg 1.10.2) with ``credential=id:secret`` against ``iceduck
serve --credential``: it logs in at ``/v1/oauth/tokens``, creates and writes a table, and
keeps working past its first token's lifetime (Java refreshes before ``expires_in`` runs
out, by token exchange); iceduck reads what it wrote."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.serve.auth import Authenticator
from tests.support.clock import wait_until
from tests.support.rest import start_server

pytestmark = pytest.mark.spark

TTL_SECONDS = 6

#: a class of the HTTP client Iceberg's runtime jar shades for its REST catalog
HTTP_CLIENT_CLASS = "org.apache.iceberg.shaded.org.apache.hc.core5.http.Method"


def _rest_client_missing(spark: Any) -> str | None:
    """Why Spark's JVM cannot run Iceberg's REST client here, or None."""
    try:
        spark._jvm.java.lang.Class.forName(HTTP_CLIENT_CLASS)
    except Exception as e:  # py4j's error for a ClassNotFoundException in the JVM
        return f"the Iceberg runtime jar on Spark's class path lacks {HTTP_CLIENT_CLASS} ({type(e).__name__})"
    return None


@dataclass
class _KeepsTokens(Authenticator):
    """The server's authenticator, keeping the tokens it issued in order (so that the test
    can tell when Spark's first one expired)."""

    tokens: list[str] = field(default_factory=list)

    def issue(self, subject: str) -> str:
        token = super().issue(subject)
        self.tokens.append(token)
        return token


def test_spark_logs_in_and_refreshes_its_token(
    spark: Any, warehouse: Path, caplog: pytest.LogCaptureFixture
) -> None:
    why = _rest_client_missing(spark)
    if why is not None:
        pytest.skip(why)
    caplog.set_level(logging.INFO, logger="iceduck.rest")  # the server's access log
    auth = _KeepsTokens(credentials={"spark": "pw"}, ttl=TTL_SECONDS)
    served = start_server(warehouse, auth=auth)
    name = "oauth_rest"
    try:
        for key, value in {
            "": "org.apache.iceberg.spark.SparkCatalog",
            "type": "rest",
            "uri": served.url,
            "credential": "spark:pw",
            "oauth2-server-uri": f"{served.url}/v1/oauth/tokens",
        }.items():
            spark.conf.set(f"spark.sql.catalog.{name}" + (f".{key}" if key else ""), value)
        spark.sql(f"CREATE NAMESPACE {name}.sp")
        spark.sql(f"CREATE TABLE {name}.sp.t (id bigint) USING iceberg")
        spark.sql(f"INSERT INTO {name}.sp.t VALUES (1), (2)")
        # Java refreshes on the JVM's clock, which no test can advance: wait (bounded) until
        # the server no longer takes Spark's first token, then write with what Spark has now
        wait_until(lambda: not auth.valid(auth.tokens[0]), TTL_SECONDS * 20, "the first token never expired")
        spark.sql(f"INSERT INTO {name}.sp.t VALUES (3)")
        assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {name}.sp.t").collect()) == [1, 2, 3]
        access = [r.getMessage() for r in caplog.records]
        tokens = [line for line in access if '"POST /v1/oauth/tokens' in line and '" 200 ' in line]
        assert len(tokens) >= 2, access  # a first token, then a refreshed one
        assert not [line for line in access if '" 401 ' in line], access
    finally:
        served.stop()
    with iceduck.connect(warehouse) as con:
        assert con.execute("SELECT id FROM sp.t ORDER BY id").fetchall() == [(1,), (2,), (3,)]
