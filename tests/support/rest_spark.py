"""Spark 3.5 + Iceberg 1.10.2 attached to a real ``iceduck serve`` as a REST catalog.

One server per test run, in a thread on a free loopback port, over a fresh warehouse in a
temporary folder (a local folder both processes see: the Spark runtime here has no object
store jars). The run's one SparkSession gets catalog :data:`REST` at runtime with
``spark.conf.set``: Spark instantiates a catalog plugin from SQLConf at the catalog's
first use, so the settings only have to be in place before that (``SHOW NAMESPACES IN
rest`` right after proves it). Each test module works in its own namespace.

``cache-enabled=false``: iceduck commits to the same tables behind Spark's back (straight
through ``catalog.db``), so Spark must load a table's metadata afresh for every statement,
as it does with the JDBC catalog in the other interop tests.
"""

from __future__ import annotations

import atexit
import datetime
import importlib.util
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.catalog.base import Catalog
from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.connection import Connection, connect
from iceduck.serve.context import ServeContext
from iceduck.serve.server import CatalogServer
from tests.support.rest import RequestLog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the Spark catalog name of the served warehouse
REST = "rest"


@dataclass(frozen=True)
class Served:
    """The run's server: its URL, the warehouse folder it serves, the requests it answered."""

    server: CatalogServer
    warehouse: Path
    log: RequestLog

    @property
    def url(self) -> str:
        return self.server.url

    def connect(self) -> Connection:
        """iceduck on the same warehouse and ``catalog.db`` the server serves."""
        return connect(self.warehouse)

    def connect_rest(self) -> Connection:
        """iceduck through its own REST client catalog on this server (skips, naming the
        reason, where iceduck has none)."""
        if importlib.util.find_spec("iceduck.catalog.rest_client") is None:
            pytest.skip("iceduck has no REST client catalog (iceduck.catalog.rest_client) in this tree")
        return connect(catalog_uri=self.url)

    def catalog(self) -> Catalog:
        """The served ``catalog.db`` opened on its own (not the server's object)."""
        return open_catalog(warehouse_location(self.warehouse), "iceduck")


_served: Served | None = None


def catalog_settings(name: str, url: str, **extra: str) -> dict[str, str]:
    """The ``spark.sql.catalog.<name>.*`` settings attaching Spark to a REST catalog at ``url``."""
    prefix = f"spark.sql.catalog.{name}"
    settings = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": url,
        f"{prefix}.cache-enabled": "false",
    }
    settings.update({f"{prefix}.{key}": value for key, value in extra.items()})
    return settings


def attach(spark: SparkSession, name: str, url: str, **extra: str) -> None:
    """Declare Spark catalog ``name`` on the REST catalog at ``url`` (read at first use)."""
    for key, value in catalog_settings(name, url, **extra).items():
        spark.conf.set(key, value)


def require_rest_client(spark: SparkSession) -> None:
    """Skip, naming the reason, when the running Spark cannot load Iceberg's HTTP client."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.java.lang.Class.forName("org.apache.iceberg.shaded.org.apache.hc.core5.http.Method")
    except Exception:  # the PyPI-only runtime (no Maven here) has no HTTP client
        pytest.skip("Iceberg's REST client needs the complete runtime from Maven (no httpclient5 in PyPI's)")


def served(spark: SparkSession) -> Served:
    """The run's ``iceduck serve``, started and attached to ``spark`` as :data:`REST` once."""
    global _served
    require_rest_client(spark)
    if _served is None:
        folder = Path(tempfile.mkdtemp(prefix="iceduck-rest-spark-")) / "warehouse"
        folder.mkdir()
        location = warehouse_location(folder)
        server = CatalogServer(("127.0.0.1", 0), ServeContext(open_catalog(location, "iceduck"), location))
        log = RequestLog()
        logger = logging.getLogger("iceduck.rest")
        logger.addHandler(log)
        logger.setLevel(logging.INFO)
        server.start()
        _served = Served(server, folder, log)
        atexit.register(_stop)
        attach(spark, REST, server.url)
    return _served


def _stop() -> None:
    global _served
    if _served is not None:
        _served.server.stop()
        shutil.rmtree(_served.warehouse.parent, ignore_errors=True)
        _served = None


def spark_rows(spark: SparkSession, sql: str) -> list[tuple[Any, ...]]:
    """Spark's result as sorted tuples (``None`` sorts first)."""
    return sorted((_plain(tuple(r)) for r in spark.sql(sql).collect()), key=_key)


def iceduck_rows(con: Connection, sql: str) -> list[tuple[Any, ...]]:
    """iceduck's result as sorted tuples, a ``timestamptz`` as Spark shows it: naive UTC
    (the session time zone of the test Spark)."""
    return sorted((_plain(tuple(r)) for r in con.execute(sql).fetchall()), key=_key)


def _plain(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_value(v) for v in row)


def _value(v: Any) -> Any:
    """One value in a form both engines' results share: a struct (Spark's ``Row``, iceduck's
    dict) as a dict, an aware datetime as naive UTC."""
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.UTC).replace(tzinfo=None)
    if hasattr(v, "asDict"):
        v = v.asDict()
    if isinstance(v, dict):
        return {k: _value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


def _key(row: tuple[Any, ...]) -> tuple[tuple[bool, str], ...]:
    return tuple((v is not None, repr(v)) for v in row)
