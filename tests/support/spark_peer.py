"""A Spark with other jars, in a process of its own: another Iceberg runtime, or Paimon's.

A Python process holds one JVM, and the test run's own SparkSession
(:mod:`tests.support.spark_session`) holds the reference runtime; an older runtime from
Maven (:mod:`tests.support.maven`), or Paimon's Spark connector, therefore runs in a child
process started with ``spawn``, which starts PySpark with those jars alone on its class
path and the catalog settings it is given (:func:`iceberg_hadoop_catalog`: a Hadoop
catalog ``old`` over a warehouse). The parent sends SQL over a pipe; the child answers with
the rows, normalised as every interop test normalises Spark's rows
(:func:`tests.support.scenario_rows.spark_rows`), or with Spark's error as text.

One peer per runtime per test run (a module-scoped fixture): starting the JVM costs about
ten seconds.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tests.support.scenario_rows import Rows
from tests.support.spark_session import local_conf

CATALOG = "old"
#: how long one statement may take before the peer counts as hung (a compaction on 2 cores)
STATEMENT_TIMEOUT_S = 600


class SparkPeerError(AssertionError):
    """Spark refused a statement (the message is Spark's), or the peer died."""


def iceberg_hadoop_catalog(warehouse: Path) -> dict[str, str]:
    """Iceberg's SQL extensions and a Hadoop catalog :data:`CATALOG` over ``warehouse``."""
    return {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{CATALOG}.type": "hadoop",
        f"spark.sql.catalog.{CATALOG}.warehouse": str(warehouse),
        # iceduck commits between Spark's statements: never answer from a cached table
        f"spark.sql.catalog.{CATALOG}.cache-enabled": "false",
    }


def _conf(jars: list[str], catalogs: dict[str, str], scratch: str) -> dict[str, str]:
    return {
        **local_conf("iceduck-spark-peer", Path(scratch), memory="2g"),
        "spark.jars": ",".join(jars),
        **catalogs,
    }


def _serve(conn: Connection, jars: list[str], catalogs: dict[str, str], scratch: str) -> None:
    """The child: one SparkSession, then requests until ``close``."""
    from pyspark.sql import SparkSession

    from tests.support.scenario_rows import spark_rows

    builder = SparkSession.builder
    for key, value in _conf(jars, catalogs, scratch).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    conn.send(("ready", spark.version))
    while True:
        kind, text = conn.recv()
        if kind == "close":
            spark.stop()
            conn.send(("closed", None))
            return
        try:
            if kind == "rows":
                conn.send(("ok", spark_rows(spark, text)))
            elif kind == "collect":
                conn.send(("ok", [tuple(r) for r in spark.sql(text).collect()]))
            else:
                spark.sql(text).collect()
                conn.send(("ok", None))
        except Exception as e:  # Spark's refusal, as text (Py4J errors do not pickle)
            conn.send(("error", f"{type(e).__name__}: {e}"[:4000]))


class SparkPeer:
    """PySpark with ``jars`` in a child process, with the ``catalogs`` settings."""

    def __init__(self, jars: list[Path], catalogs: dict[str, str], scratch: Path) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(
            target=_serve,
            args=(child, [str(j) for j in jars], catalogs, str(scratch)),
            name=f"spark-peer-{jars[0].stem}",
            daemon=True,
        )
        self._process.start()
        child.close()
        kind, self.spark_version = self._receive()
        assert kind == "ready"

    def _receive(self) -> tuple[str, Any]:
        if not self._conn.poll(STATEMENT_TIMEOUT_S):
            self._process.kill()
            raise SparkPeerError(f"the Spark peer gave no answer within {STATEMENT_TIMEOUT_S} s")
        try:
            kind, payload = self._conn.recv()
        except EOFError:
            raise SparkPeerError(f"the Spark peer died (exit code {self._process.exitcode})") from None
        return kind, payload

    def _ask(self, kind: str, text: str) -> Any:
        self._conn.send((kind, text))
        answer, payload = self._receive()
        if answer == "error":
            raise SparkPeerError(f"Spark refused {text!r}: {payload}")
        return payload

    def sql(self, text: str) -> None:
        """Run ``text`` in Spark (a write, DDL, CALL); its rows are dropped."""
        self._ask("sql", text)

    def collect(self, text: str) -> list[tuple[Any, ...]]:
        """The rows of ``text`` as PySpark gives them (plain Python values)."""
        result: list[tuple[Any, ...]] = self._ask("collect", text)
        return result

    def rows(self, text: str) -> Rows:
        """Spark's normalised answer to the query ``text``."""
        result: Rows = self._ask("rows", text)
        return result

    def close(self) -> None:
        if self._process.is_alive():
            try:
                self._conn.send(("close", None))
                self._receive()
            except (SparkPeerError, OSError):
                pass
            self._process.join(30)
            if self._process.is_alive():
                self._process.kill()
        self._conn.close()
