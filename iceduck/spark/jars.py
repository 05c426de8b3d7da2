"""The jars a Spark 3.5 job needs to open an iceduck warehouse, assembled from installed packages.

Spark opens iceduck's catalog through Iceberg's JDBC catalog, so its JVM needs the Iceberg
Spark runtime and a SQLite JDBC driver beyond PySpark's own jars. Without internet access
(no ``spark.jars.packages``), they come from what ``pip`` and ``apt`` installed:

* the Iceberg 1.10.2 runtime jar of the ``snowpark-connect-deps-iceberg`` wheel;
* a relocated Jackson jar built from the ``snowpark-connect-deps-2`` wheel's Jackson jars
  (:mod:`iceduck.spark.shim`: the wheel's runtime lacks them), cached in
  ``$ICEDUCK_CACHE`` or ``~/.cache/iceduck``;
* Debian's SQLite JDBC driver (``libxerial-sqlite-jdbc-java``), whose native library lives
  outside the jar and is named by JVM options; or any ``sqlite-jdbc`` jar named by
  ``$ICEDUCK_SQLITE_JDBC_JAR`` (upstream jars bundle their natives);
* Debian's PostgreSQL JDBC driver (``libpostgresql-jdbc-java``), when installed, for a
  catalog on PostgreSQL (``uri=jdbc:postgresql://...``); Maven: :data:`POSTGRES_MAVEN_PACKAGE`.

With internet access, Maven coordinates do the same: ``spark.jars.packages`` =
:data:`MAVEN_PACKAGES`. Each missing piece is reported by name, with the command that installs it.

``python3 -m iceduck.spark.jars`` prints the class path (``--conf``: every Spark setting).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from iceduck.errors import StorageError, UserError
from iceduck.spark.shim import build_jackson_shim

ICEBERG_PACKAGE = "snowpark_connect_deps_iceberg"
DEPS_PACKAGE = "snowpark_connect_deps_2"
PIP_HINT = "python3 -m pip install -e '.[spark]' (in iceduck's folder)"

ICEBERG_RUNTIME_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JACKSON_JARS = ("jackson-core-2.18.8.jar", "jackson-databind-2.18.8.jar", "jackson-annotations-2.18.8.jar")

#: what a Spark job with internet access puts in ``spark.jars.packages`` instead
MAVEN_PACKAGES = "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2,org.xerial:sqlite-jdbc:3.46.1.3"

#: the PostgreSQL JDBC driver's Maven coordinates, for a catalog on PostgreSQL
POSTGRES_MAVEN_PACKAGE = "org.postgresql:postgresql:42.7.4"

SQLITE_JDBC_ENV = "ICEDUCK_SQLITE_JDBC_JAR"
DEBIAN_JAVA_DIR = Path("/usr/share/java")
DEBIAN_JNI_GLOB = "/usr/lib/*/jni/libsqlitejdbc.so"
APT_HINT = "apt-get install -y libxerial-sqlite-jdbc-java"

# Bump when the shim-building algorithm changes, so stale cached shims are not reused.
SHIM_FORMAT = 1


class SparkJarsMissingError(UserError):
    """A package, jar or native library that Spark's class path needs is not installed."""


def _package_jar_dir(package: str) -> Path:
    """The ``jars/`` folder of an installed wheel, found through the import system."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SparkJarsMissingError(
            f"the Python package {package.replace('_', '-')} is not installed; run: {PIP_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def _require_file(path: Path, what: str, hint: str) -> Path:
    if not path.is_file():
        raise SparkJarsMissingError(f"{what} not found: {path} does not exist; {hint}")
    return path


def iceberg_runtime_jar() -> Path:
    """The Iceberg 1.10.2 Spark 3.5 (Scala 2.12) runtime jar."""
    folder = _package_jar_dir(ICEBERG_PACKAGE)
    return _require_file(folder / ICEBERG_RUNTIME_JAR, "the Iceberg Spark runtime jar", f"run: {PIP_HINT}")


def jackson_jars() -> list[Path]:
    """The plain Jackson 2.18 jars the shim is relocated from."""
    folder = _package_jar_dir(DEPS_PACKAGE)
    return [_require_file(folder / name, "a Jackson jar", f"run: {PIP_HINT}") for name in JACKSON_JARS]


def cache_dir() -> Path:
    """Where the built shim is kept: ``$ICEDUCK_CACHE``, else ``$XDG_CACHE_HOME/iceduck``."""
    explicit = os.environ.get("ICEDUCK_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "iceduck"


def jackson_shim_jar(cache: Path | None = None) -> Path:
    """The relocated-Jackson jar in ``cache`` (default :func:`cache_dir`), built on first use.

    Keyed by the input jars and the shim format, so a new Jackson or algorithm builds anew.
    """
    jars = jackson_jars()
    key = hashlib.sha256(
        repr((SHIM_FORMAT, [(j.name, j.stat().st_size) for j in jars])).encode()
    ).hexdigest()[:16]
    target = (cache or cache_dir()) / "jars" / f"iceberg-jackson-shim-{key}.jar"
    if not target.is_file():
        try:
            build_jackson_shim(jars, target)
        except OSError as exc:
            raise StorageError(
                f"cannot write the Jackson shim jar ({exc.strerror or exc}); "
                "set ICEDUCK_CACHE to a writable folder",
                str(target),
            ) from exc
    return target


def sqlite_jdbc_jar() -> tuple[Path, str]:
    """A SQLite JDBC driver jar, and the JVM options it needs to find its native library.

    ``$ICEDUCK_SQLITE_JDBC_JAR`` wins (no options: upstream jars carry their natives);
    otherwise Debian's jar, whose native library is a separate file named by options.
    """
    named = os.environ.get(SQLITE_JDBC_ENV)
    if named:
        what = f"the SQLite JDBC jar named by ${SQLITE_JDBC_ENV}"
        return _require_file(
            Path(named).expanduser(), what, f"point ${SQLITE_JDBC_ENV} at a sqlite-jdbc jar"
        ), ""
    hint = f"install it with: {APT_HINT} (or set ${SQLITE_JDBC_ENV} to a sqlite-jdbc jar)"
    # Debian's unversioned link first (sqlite-jdbc.jar), then versioned names
    found = sorted(DEBIAN_JAVA_DIR.glob("*sqlite-jdbc*.jar"), key=lambda p: (len(p.name), p.name))
    if not found:
        raise SparkJarsMissingError(f"no SQLite JDBC driver in {DEBIAN_JAVA_DIR}; {hint}")
    natives = sorted(glob.glob(DEBIAN_JNI_GLOB))
    if not natives:
        raise SparkJarsMissingError(
            f"the SQLite JDBC native library ({DEBIAN_JNI_GLOB}) is missing beside {found[0]}; {hint}"
        )
    native = Path(natives[0])
    return found[0], f"-Dorg.sqlite.lib.path={native.parent} -Dorg.sqlite.lib.name={native.name}"


def postgresql_jdbc_jar() -> Path | None:
    """Debian's PostgreSQL JDBC driver (``apt-get install -y libpostgresql-jdbc-java``), or
    None: only a catalog on PostgreSQL needs it, so its absence is no error here."""
    jar = DEBIAN_JAVA_DIR / "postgresql.jar"
    return jar if jar.is_file() else None


def spark_classpath(cache: Path | None = None) -> list[Path]:
    """Every jar Spark needs beyond PySpark's own: Iceberg runtime, Jackson shim, SQLite JDBC,
    and PostgreSQL JDBC when installed."""
    postgres = postgresql_jdbc_jar()
    return [
        iceberg_runtime_jar(),
        jackson_shim_jar(cache),
        sqlite_jdbc_jar()[0],
        *([postgres] if postgres is not None else []),
    ]


def sqlite_jvm_options() -> str:
    """The JVM options the SQLite JDBC driver needs ("" when it bundles its natives)."""
    return sqlite_jdbc_jar()[1]


def spark_jar_conf(cache: Path | None = None) -> dict[str, str]:
    """The Spark settings putting :func:`spark_classpath` on the driver's and executors' class path.

    ``extraClassPath`` rather than ``spark.jars``: the jars must be on the JVM's system class
    path, where ``java.sql.DriverManager`` finds the SQLite driver for Iceberg's JDBC catalog.
    Settings read when the JVM starts: they work in a new ``SparkSession`` (or
    ``spark-submit``/``pyspark --conf``), not in one already running.
    """
    classpath = os.pathsep.join(str(jar) for jar in spark_classpath(cache))
    conf = {"spark.driver.extraClassPath": classpath, "spark.executor.extraClassPath": classpath}
    options = sqlite_jvm_options()
    if options:
        conf["spark.driver.extraJavaOptions"] = options
        conf["spark.executor.extraJavaOptions"] = options
    return conf


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m iceduck.spark.jars [--conf]``: print the class path, or every jar setting."""
    parser = argparse.ArgumentParser(
        prog="python3 -m iceduck.spark.jars",
        description="Print the class path Spark needs to open an iceduck warehouse.",
    )
    parser.add_argument("--conf", action="store_true", help="print the Spark settings as --conf arguments")
    args = parser.parse_args(argv)
    try:
        if args.conf:
            print(" ".join(f"--conf '{key}={value}'" for key, value in spark_jar_conf().items()))
        else:
            print(os.pathsep.join(str(jar) for jar in spark_classpath()))
    except (UserError, StorageError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
