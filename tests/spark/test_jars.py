"""``iceduck.spark.jars``: the class path a user's Spark needs, from installed packages, or an
error naming what is missing and the command that installs it.

These run without a JVM against the packages the test extra installs (and Debian's SQLite
JDBC driver, which CI installs); that Spark really starts with this class path is what the
``spark`` tests show (tests/examples/test_examples.py runs the README's example with it).
"""

from __future__ import annotations

import importlib.util
import os
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest

from iceduck.dbapi import ProgrammingError, dbapi_error
from iceduck.errors import StorageError
from iceduck.spark import jars as spark_jars
from iceduck.spark.jars import SparkJarsMissingError


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, as on a user's first run (and nothing written to the home folder)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ICEDUCK_CACHE", str(folder))
    monkeypatch.delenv(spark_jars.SQLITE_JDBC_ENV, raising=False)
    return folder


def test_the_class_path_is_the_runtime_the_shim_and_the_sqlite_driver(cache: Path) -> None:
    runtime, shim, sqlite, *postgres = spark_jars.spark_classpath()
    assert runtime.name == "iceberg-spark-runtime-3.5_2.12-1.10.2.jar" and runtime.is_file()
    assert shim.parent == cache / "jars" and shim.name.startswith("iceberg-jackson-shim-") and shim.is_file()
    assert "sqlite-jdbc" in sqlite.name and sqlite.is_file()
    # Debian's PostgreSQL JDBC driver follows when installed (a catalog on PostgreSQL needs it)
    installed = spark_jars.postgresql_jdbc_jar()
    assert postgres == ([installed] if installed is not None else [])
    if Path("/usr/share/java/postgresql.jar").is_file():
        assert postgres == [Path("/usr/share/java/postgresql.jar")]


def test_the_shim_is_built_once_and_reused(cache: Path) -> None:
    first = spark_jars.jackson_shim_jar()
    built = first.stat().st_mtime_ns
    assert spark_jars.jackson_shim_jar() == first
    assert first.stat().st_mtime_ns == built
    assert [p.name for p in first.parent.iterdir()] == [first.name]  # no temporary file left


def test_jar_conf_puts_the_jars_on_the_system_class_path_with_the_sqlite_natives() -> None:
    conf = spark_jars.spark_jar_conf()
    jars = conf["spark.driver.extraClassPath"].split(os.pathsep)
    assert jars == [str(j) for j in spark_jars.spark_classpath()]
    assert conf["spark.executor.extraClassPath"] == conf["spark.driver.extraClassPath"]
    options = conf["spark.driver.extraJavaOptions"]  # Debian's jar has no bundled natives
    lib_path = options.split("-Dorg.sqlite.lib.path=")[1].split()[0]
    lib_name = options.split("-Dorg.sqlite.lib.name=")[1].split()[0]
    assert (Path(lib_path) / lib_name).is_file()


def test_a_missing_package_is_named_with_its_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == spark_jars.ICEBERG_PACKAGE else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(SparkJarsMissingError) as caught:
        spark_jars.spark_classpath()
    message = str(caught.value)
    assert "snowpark-connect-deps-iceberg is not installed" in message
    assert "pip install -e '.[spark]'" in message
    assert isinstance(dbapi_error(caught.value), ProgrammingError)


def test_a_missing_sqlite_driver_is_named_with_the_apt_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "java"
    empty.mkdir()
    monkeypatch.setattr(spark_jars, "DEBIAN_JAVA_DIR", empty)
    with pytest.raises(SparkJarsMissingError) as caught:
        spark_jars.spark_jar_conf()
    message = str(caught.value)
    assert message.startswith(f"no SQLite JDBC driver in {empty}; install it with: ")
    assert "apt-get install -y libxerial-sqlite-jdbc-java" in message and "ICEDUCK_SQLITE_JDBC_JAR" in message


def test_a_debian_driver_without_its_native_library_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sqlite-jdbc.jar").write_bytes(b"PK")
    monkeypatch.setattr(spark_jars, "DEBIAN_JAVA_DIR", tmp_path)
    monkeypatch.setattr(spark_jars, "DEBIAN_JNI_GLOB", str(tmp_path / "jni" / "*" / "libsqlitejdbc.so"))
    with pytest.raises(
        SparkJarsMissingError, match=r"native library .* is missing beside .*sqlite-jdbc\.jar"
    ):
        spark_jars.sqlite_jdbc_jar()


def test_a_driver_named_by_the_environment_needs_no_jvm_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream = tmp_path / "sqlite-jdbc-3.46.1.3.jar"  # upstream jars carry their natives
    upstream.write_bytes(b"PK")
    monkeypatch.setenv(spark_jars.SQLITE_JDBC_ENV, str(upstream))
    conf = spark_jars.spark_jar_conf()
    assert str(upstream) in conf["spark.driver.extraClassPath"].split(os.pathsep)
    assert "spark.driver.extraJavaOptions" not in conf
    monkeypatch.setenv(spark_jars.SQLITE_JDBC_ENV, str(tmp_path / "gone.jar"))
    with pytest.raises(
        SparkJarsMissingError, match=r"ICEDUCK_SQLITE_JDBC_JAR not found: .*gone\.jar does not"
    ):
        spark_jars.spark_jar_conf()


def test_an_unwritable_cache_says_where_to_build_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ICEDUCK_CACHE", str(blocker))
    with pytest.raises(
        StorageError, match=r"cannot write the Jackson shim jar .*set ICEDUCK_CACHE"
    ) as caught:
        spark_jars.jackson_shim_jar()
    assert caught.value.path is not None and caught.value.path.startswith(str(blocker))


def test_the_cache_defaults_to_the_user_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ICEDUCK_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert spark_jars.cache_dir() == tmp_path / "xdg" / "iceduck"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert spark_jars.cache_dir() == Path.home() / ".cache" / "iceduck"


def test_the_command_prints_the_class_path_or_the_settings(capsys: pytest.CaptureFixture[str]) -> None:
    assert spark_jars.main([]) == 0
    assert capsys.readouterr().out.strip() == os.pathsep.join(str(j) for j in spark_jars.spark_classpath())
    assert spark_jars.main(["--conf"]) == 0
    out = capsys.readouterr().out
    assert "--conf 'spark.driver.extraClassPath=" in out and "-Dorg.sqlite.lib.path=" in out


def test_the_command_reports_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(spark_jars.SQLITE_JDBC_ENV, "/nonexistent/sqlite-jdbc.jar")
    assert spark_jars.main([]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: the SQLite JDBC jar named by $ICEDUCK_SQLITE_JDBC_JAR not found")
