"""The JVM class path of the reference Spark (Spark 3.5 + Iceberg 1.10.2), as users get it.

With Maven (:mod:`tests.support.maven`), the reference runtime is the standard
``iceberg-spark-runtime-3.5_2.12:1.10.2`` from Maven Central, complete as users get it with
``spark.jars.packages``: no relocated Jackson shim, no rebuilt HTTP client. Beside it go
Debian's SQLite JDBC driver (and PostgreSQL's, when installed). Without Maven (and without
``ICEDUCK_REQUIRE_MAVEN``), the assembly is the product's PyPI-only one
(:mod:`iceduck.spark.jars`: the runtime from PyPI, the Jackson shim built by
:mod:`iceduck.spark.shim`), as ``iceduck.spark_conf(warehouse, jars=True)`` gives users who
lack Maven; ``tests/examples/test_examples.py::test_spark_sharing`` runs that path in every
run. Built artifacts go to ``$ICEDUCK_TEST_CACHE`` or ``<repo>/.cache/``, so a test run never
writes to the home folder (Maven's own repository aside).
"""

from __future__ import annotations

import os
from pathlib import Path

from iceduck.spark import jars as spark_jars
from tests.support import maven

REPO_ROOT = Path(__file__).resolve().parents[2]
#: the reference Spark's Iceberg runtime (the version the PyPI jar carries too)
REFERENCE_RUNTIME = "1.10.2"


class SparkHarnessError(RuntimeError):
    """The Spark test harness cannot start: Java or PySpark is missing."""


def cache_dir() -> Path:
    """Where built test artifacts live: ``$ICEDUCK_TEST_CACHE`` or ``<repo>/.cache`` (git-ignored)."""
    return Path(os.environ.get("ICEDUCK_TEST_CACHE") or REPO_ROOT / ".cache")


def jackson_shim_jar() -> Path:
    """The relocated-Jackson jar, built once into the test cache."""
    return spark_jars.jackson_shim_jar(cache_dir())


def maven_runtime() -> Path | None:
    """The reference runtime from Maven Central; None when Maven cannot provide it here
    (the PyPI-only assembly then), an error when ``ICEDUCK_REQUIRE_MAVEN`` is set."""
    try:
        return maven.iceberg_runtime(REFERENCE_RUNTIME)
    except maven.MavenUnavailable:
        if os.environ.get("ICEDUCK_REQUIRE_MAVEN"):
            raise
        return None


def spark_classpath() -> list[Path]:
    """Every jar the reference Spark needs beyond PySpark's own: the Iceberg runtime, the AWS
    bundle (``S3FileIO``), SQLite JDBC, PostgreSQL JDBC when installed; on the PyPI-only path
    the product's assembly (the Jackson shim, no AWS bundle)."""
    runtime = maven_runtime()
    if runtime is None:
        return spark_jars.spark_classpath(cache_dir())
    postgres = spark_jars.postgresql_jdbc_jar()
    jdbc = [spark_jars.sqlite_jdbc_jar()[0], *([postgres] if postgres is not None else [])]
    return [runtime, maven.jar(maven.AWS_BUNDLE), *jdbc]


def spark_jar_conf() -> dict[str, str]:
    """:func:`spark_classpath` as Spark settings (system class path, where ``DriverManager``
    finds the JDBC drivers), with the SQLite driver's JVM options."""
    if maven_runtime() is None:
        return spark_jars.spark_jar_conf(cache_dir())
    classpath = os.pathsep.join(str(jar) for jar in spark_classpath())
    conf = {"spark.driver.extraClassPath": classpath, "spark.executor.extraClassPath": classpath}
    options = spark_jars.sqlite_jvm_options()
    if options:
        conf["spark.driver.extraJavaOptions"] = options
        conf["spark.executor.extraJavaOptions"] = options
    return conf
