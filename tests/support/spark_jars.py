"""The JVM class path of the reference Spark (Spark 3.5 + Iceberg 1.10.2), as users get it.

The assembly is the product's own (:mod:`iceduck.spark.jars`: the Iceberg runtime from PyPI,
the relocated Jackson shim built by :mod:`iceduck.spark.shim`, Debian's SQLite JDBC driver),
so the tests start Spark exactly as ``iceduck.spark_conf(warehouse, jars=True)`` tells users
to. Only the shim's cache differs: ``$ICEDUCK_TEST_CACHE`` or ``<repo>/.cache/``, so a test
run never writes to the home folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from iceduck.spark import jars as spark_jars

REPO_ROOT = Path(__file__).resolve().parents[2]


class SparkHarnessError(RuntimeError):
    """The Spark test harness cannot start: Java or PySpark is missing."""


def cache_dir() -> Path:
    """Where built test artifacts live: ``$ICEDUCK_TEST_CACHE`` or ``<repo>/.cache`` (git-ignored)."""
    return Path(os.environ.get("ICEDUCK_TEST_CACHE") or REPO_ROOT / ".cache")


def jackson_shim_jar() -> Path:
    """The relocated-Jackson jar, built once into the test cache."""
    return spark_jars.jackson_shim_jar(cache_dir())


def spark_jar_conf() -> dict[str, str]:
    """The product's class-path settings (:func:`iceduck.spark.jars.spark_jar_conf`), test-cached."""
    return spark_jars.spark_jar_conf(cache_dir())


def spark_classpath() -> list[Path]:
    """Every jar the reference Spark needs beyond pyspark's own: runtime, shim, SQLite JDBC."""
    return spark_jars.spark_classpath(cache_dir())
