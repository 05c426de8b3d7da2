"""One SparkSession per test run, wired to the ``iceduck`` Iceberg catalog of a warehouse.

The catalog is Iceberg's JDBC catalog on a SQLite file, ``<warehouse>/catalog.db``, because
that is the catalog iceduck shares with Spark (see /work/shared/notes/formats.md, "Catalog
shared with Spark and PyIceberg"); the catalog name is ``iceduck``, iceduck's default, since
the name is stored in every catalog row and both sides must agree on it.

Starting a JVM costs ~10 s, so the session is a process-wide singleton, stopped at exit.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from iceduck.catalog.sqlite import CATALOG_DB as CATALOG_DB  # re-exported: tests import it from here
from iceduck.spark.conf import spark_conf
from tests.support.spark_jars import SparkHarnessError, spark_jar_conf
from tests.support.tls import jvm_trust_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "iceduck"

_session: SparkSession | None = None
_session_warehouse: Path | None = None
_session_scratch: Path | None = None


def catalog_conf(warehouse: Path) -> dict[str, str]:
    """Spark settings declaring the ``iceduck`` JDBC catalog over ``<warehouse>/catalog.db``.

    The product's own :func:`iceduck.spark_conf` -- the tests use what users are told to use
    (it includes the Iceberg SQL extensions); only the class path is the harness's.
    """
    return spark_conf(warehouse, CATALOG)


def session_conf(warehouse: Path, scratch: Path) -> dict[str, str]:
    """Every Spark setting of the test session: small, local, UTC, Iceberg-enabled."""
    # The standard runtime from Maven, or (no Maven) the PyPI-only assembly users get from
    # spark_conf(warehouse, jars=True), whose REST tests then skip (it has no HTTP client).
    jars = spark_jar_conf()
    # the JVM trusts the TLS tests' private CA besides its own roots (read once, at start)
    java_options = (
        f"{jars.get('spark.driver.extraJavaOptions', '')} -Duser.timezone=UTC {jvm_trust_options()}"
    )
    java_options = " ".join(java_options.split())
    return {
        **local_conf("iceduck-tests", scratch, memory="3g"),
        **jars,
        "spark.driver.extraJavaOptions": java_options,
        **catalog_conf(warehouse),
    }


def local_conf(name: str, scratch: Path, memory: str) -> dict[str, str]:
    """A small local Spark in UTC, its scratch space (shuffle files, its unused default
    warehouse) under ``scratch``: what every Spark of the tests shares."""
    return {
        "spark.master": "local[2]",
        "spark.app.name": name,
        "spark.driver.memory": memory,
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": str(scratch / "spark-warehouse"),
        "spark.local.dir": str(scratch / "spark-local"),
    }


def _check_java() -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SparkHarnessError("no Java found (need Java 17 for Spark 3.5): install openjdk-17-jre-headless")


def spark_session(warehouse: Path) -> SparkSession:
    """The test run's SparkSession, created on first call with its catalog at ``warehouse``.

    Later calls must name the same warehouse: Iceberg catalogs are configured once per
    session, and silently reusing another warehouse would make tests lie.
    """
    global _session, _session_warehouse, _session_scratch
    warehouse = Path(warehouse).resolve()
    if _session is not None:
        if warehouse != _session_warehouse:
            raise SparkHarnessError(
                f"the Spark session already serves warehouse {_session_warehouse}, not {warehouse}"
            )
        return _session
    _check_java()
    # Spark otherwise warns that the host name resolves to a loopback address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise SparkHarnessError("pyspark is not installed; run: python3 -m pip install -e '.[test]'") from exc
    warehouse.mkdir(parents=True, exist_ok=True)
    # The catalog tables, exactly as Java creates them (see catalog_conf: Spark must not).
    from iceduck.catalog.sqlite import SqliteCatalog

    SqliteCatalog(warehouse).close()
    # Spark's own scratch space (shuffle files, its unused default warehouse) stays out of
    # both the repository and the Iceberg warehouse.
    scratch = Path(tempfile.mkdtemp(prefix="iceduck-spark-"))
    builder = SparkSession.builder
    for key, value in session_conf(warehouse, scratch).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    _session, _session_warehouse, _session_scratch = session, warehouse, scratch
    atexit.register(stop_spark_session)
    return session


def stop_spark_session() -> None:
    """Stop the singleton session (registered with atexit; safe to call twice)."""
    global _session, _session_warehouse, _session_scratch
    if _session is not None:
        _session.stop()
    if _session_scratch is not None:
        shutil.rmtree(_session_scratch, ignore_errors=True)
    _session, _session_warehouse, _session_scratch = None, None, None
