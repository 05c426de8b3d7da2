"""Session fixtures shared by all tests: the reference Spark and its warehouse.

* ``spark`` -- one SparkSession (Spark 3.5 + Iceberg 1.10.2) for the whole run, whose
  ``iceduck`` catalog is the JDBC/SQLite catalog of the fixture warehouse.
* ``spark_warehouse`` -- ``SparkWarehouse(path, tables)``: the Spark-written tables of
  ``tests/support/spark_warehouse.py``, built once per run (about a minute).
* ``s3_server`` -- ``S3Server(endpoint_url, properties)``: one moto S3 server on loopback
  for the run (``tests/support/s3.py``); ``s3_bucket`` -- a fresh bucket per test module;
  ``s3_configured`` -- the process's object-store configuration set to reach it for one
  test (restored after); ``s3_connection`` -- a connection on a local warehouse with it.

Every test using either fixture is marked ``spark`` automatically, so ``-m 'not spark'``
runs the fast tests alone.

To iterate quickly, keep a warehouse between runs with ``--spark-warehouse PATH`` or
``ICEDUCK_SPARK_WAREHOUSE=PATH``: it is built on the first run and reused while the
builders are unchanged (rebuilt when ``spark_warehouse.py`` changes). By default a fresh
warehouse is built in pytest's temporary directory.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.hive_metastore import HiveMetastore, MetastoreUnavailable, start_metastore
from tests.support.postgres import PostgresServer, running_postgres
from tests.support.s3 import S3Server, create_bucket, moto_missing, moto_server
from tests.support.spark_session import spark_session, stop_spark_session
from tests.support.spark_warehouse import (
    MANIFEST,
    SparkWarehouse,
    build_warehouse,
    load_warehouse,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_FIXTURES = frozenset({"spark", "spark_warehouse", "spark_warehouse_path"})
WAREHOUSE_ENV = "ICEDUCK_SPARK_WAREHOUSE"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--spark-warehouse",
        default=None,
        metavar="PATH",
        help=f"reuse (or build once into) this Spark fixture warehouse; also ${WAREHOUSE_ENV}",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests that use Spark as ``spark`` before ``-m`` selection runs."""
    for item in items:
        if SPARK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.spark)


def _chosen_warehouse(config: pytest.Config) -> Path | None:
    value = config.getoption("--spark-warehouse") or os.environ.get(WAREHOUSE_ENV)
    return Path(value).expanduser().resolve() if value else None


@pytest.fixture(scope="session")
def spark_warehouse_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the fixture warehouse lives; a stale kept warehouse is wiped before Spark starts.

    Wiping must happen before the SparkSession exists: its JDBC catalog holds the SQLite
    file open once used.
    """
    path = _chosen_warehouse(request.config)
    if path is None:
        return tmp_path_factory.mktemp("spark-warehouse")
    if path.exists() and any(path.iterdir()) and load_warehouse(path) is None:
        if not (path / MANIFEST).is_file():
            raise pytest.UsageError(
                f"{path} is not empty and was not made by the test harness; refusing to use it"
            )
        shutil.rmtree(path)  # built by an older version of the builders, or interrupted
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def spark(spark_warehouse_path: Path) -> Iterator[SparkSession]:
    """The run's SparkSession; its ``iceduck`` catalog is the fixture warehouse's."""
    yield spark_session(spark_warehouse_path)
    stop_spark_session()


@pytest.fixture(scope="session")
def spark_warehouse(spark: SparkSession, spark_warehouse_path: Path) -> SparkWarehouse:
    """The Spark-written tables, built once per run (or reused, see the module docstring)."""
    tables = load_warehouse(spark_warehouse_path)
    if tables is None:
        tables = build_warehouse(spark, spark_warehouse_path)
    return SparkWarehouse(spark_warehouse_path, tables)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """The run's moto S3 server and the catalog properties reaching it (skips without moto)."""
    reason = moto_missing()
    if reason is not None:
        pytest.skip(reason)
    with moto_server() as server:
        yield server


@pytest.fixture(scope="module")
def s3_bucket(s3_server: S3Server) -> str:
    """A fresh bucket on the run's S3 server, one per test module."""
    return create_bucket(s3_server)


@pytest.fixture
def object_store_restored() -> Iterator[None]:
    """The process's object-store configuration, restored after the test changed it."""
    from iceduck.io import object_store

    before = object_store.properties()
    try:
        yield
    finally:
        object_store.configure(before, replace=True)


@pytest.fixture
def s3_configured(s3_server: S3Server, object_store_restored: None) -> S3Server:
    """``iceduck.io.object_store`` configured for the run's S3 server during one test."""
    from iceduck.io import object_store

    object_store.configure(s3_server.properties, replace=True)
    return s3_server


@pytest.fixture
def s3_connection(tmp_path: Path, s3_configured: S3Server) -> Iterator[Any]:
    """An iceduck connection on a local warehouse (``tmp_path/wh``, namespace ``db``) with the
    object store configured for the run's S3 server: tables get ``LOCATION 's3://...'``."""
    import iceduck

    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    yield con
    con.close()


# -- PostgreSQL (tests/support/postgres.py) -------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the run (initdb + pg_ctl on a loopback port), stopped at the
    end; the tests using it skip, naming the reason, where PostgreSQL or psycopg is missing."""
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="session")
def hive_metastore() -> Iterator[HiveMetastore]:
    """One Hive standalone metastore for the run (from Maven, Derby in a temp folder, a loopback
    port), stopped at the end; the tests using it skip naming the reason where Java or the
    Maven artifacts are missing, and fail instead under ``ICEDUCK_REQUIRE_MAVEN=1``."""
    try:
        server = start_metastore()
    except MetastoreUnavailable as e:
        if os.environ.get("ICEDUCK_REQUIRE_MAVEN"):
            pytest.fail(str(e))
        pytest.skip(str(e))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def postgres_database(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database for the test module; its ``postgresql://`` URI (with the password)."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    return postgres_server.create_database(f"{module[:40]}_{uuid.uuid4().hex[:8]}")
