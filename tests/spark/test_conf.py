"""``iceduck.spark_conf`` opens, in Spark, the catalog iceduck writes.

The test harness's SparkSession (tests/support/spark_session.py) is built from
``iceduck.spark_conf`` and the class path of ``spark_conf(..., jars=True)`` (only its shim
cache is the harness's), so this checks the product's settings: a table iceduck creates and
fills is read by Spark, and a row Spark appends is read back.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.spark.jars import SparkJarsMissingError, spark_jar_conf
from tests.support import spark_jars as harness

NAMESPACE = "spark_conf"


@pytest.fixture
def shared(spark: Any, spark_warehouse_path: Path) -> Iterator[tuple[Any, Connection]]:
    with iceduck.connect(spark_warehouse_path) as con:
        con.execute(f"CREATE NAMESPACE IF NOT EXISTS {NAMESPACE}")
        con.execute(f"DROP TABLE IF EXISTS {NAMESPACE}.events")
        yield spark, con
        con.execute(f"DROP TABLE IF EXISTS {NAMESPACE}.events")
        con.execute(f"DROP NAMESPACE IF EXISTS {NAMESPACE}")


def test_the_spark_session_is_configured_by_spark_conf(spark: Any, spark_warehouse_path: Path) -> None:
    conf = spark.sparkContext.getConf()
    for key, value in iceduck.spark_conf(spark_warehouse_path).items():
        assert conf.get(key) == value, key


def test_jars_adds_the_class_path_to_the_catalog_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICEDUCK_CACHE", str(tmp_path / "cache"))
    plain = iceduck.spark_conf(tmp_path / "wh")
    assert not any("extraClassPath" in key or "extraJavaOptions" in key for key in plain)
    assert plain["spark.sql.catalog.iceduck.warehouse"] == str((tmp_path / "wh").resolve())
    with_jars = iceduck.spark_conf(tmp_path / "wh", jars=True)
    assert with_jars == {**plain, **spark_jar_conf()}
    assert str(tmp_path / "cache" / "jars") in with_jars["spark.driver.extraClassPath"]


def test_the_spark_session_runs_with_the_harness_class_path(spark: Any) -> None:
    """The run's Spark has the standard runtime from Maven (with the AWS bundle), or -- no
    Maven -- the product's PyPI assembly (the PyPI path users get is run as users run it by
    tests/examples: test_spark_sharing)."""
    conf = spark.sparkContext.getConf()
    maven = harness.maven_runtime() is not None
    for key, value in harness.spark_jar_conf().items():
        if key.endswith("JavaOptions"):  # Spark adds its JVM flags, the harness -Duser.timezone=UTC
            assert value in conf.get(key), key
        else:
            jars = conf.get(key).split(os.pathsep)
            assert jars[: len(value.split(os.pathsep))] == value.split(os.pathsep), key
            extra = jars[len(value.split(os.pathsep)) :]
            assert extra == [], key
    if maven:
        assert str(harness.maven_runtime()) in conf.get("spark.driver.extraClassPath")


def test_spark_reads_and_appends_to_a_table_iceduck_created(shared: tuple[Any, Connection]) -> None:
    spark, con = shared
    con.execute(f"CREATE TABLE {NAMESPACE}.events (id bigint, kind string) PARTITIONED BY (kind)")
    con.executemany(f"INSERT INTO {NAMESPACE}.events VALUES (?, ?)", [(1, "a"), (2, "b"), (3, "a")])
    rows = spark.sql(f"SELECT id, kind FROM iceduck.{NAMESPACE}.events ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, "a"), (2, "b"), (3, "a")]
    spark.sql(f"INSERT INTO iceduck.{NAMESPACE}.events VALUES (4, 'c')")
    assert con.execute(f"SELECT count(*), max(id) FROM {NAMESPACE}.events").fetchone() == (4, 4)


# -- a team's lake: the same arguments as iceduck.connect ----------------------------------------


def test_a_postgresql_catalog_and_an_s3_warehouse() -> None:
    properties = {
        "s3.endpoint": "http://minio.internal:9000",
        "s3.path-style-access": "true",
        "s3.access-key-id": "AKIA",
        "s3.secret-access-key": "s3cret",
        "client.region": "eu-west-1",
        "iceduck.duckdb-io": "fsspec",  # iceduck's own: not Spark's business
    }
    conf = iceduck.spark_conf(
        warehouse="s3://lake/wh",
        catalog="team",
        catalog_uri="postgresql://analyst:p%40ss@pg.internal:5432/lake",
        properties=properties,
    )
    p = "spark.sql.catalog.team"
    assert conf == {
        p: "org.apache.iceberg.spark.SparkCatalog",
        f"{p}.type": "jdbc",
        f"{p}.uri": "jdbc:postgresql://pg.internal:5432/lake",
        f"{p}.jdbc.user": "analyst",
        f"{p}.jdbc.password": "p@ss",
        f"{p}.jdbc.schema-version": "V1",
        f"{p}.cache-enabled": "false",
        f"{p}.warehouse": "s3://lake/wh",
        f"{p}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        f"{p}.s3.endpoint": "http://minio.internal:9000",
        f"{p}.s3.path-style-access": "true",
        f"{p}.s3.access-key-id": "AKIA",
        f"{p}.s3.secret-access-key": "s3cret",
        f"{p}.client.region": "eu-west-1",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }


def test_spark_s_own_jdbc_url_and_credentials_from_the_properties() -> None:
    conf = iceduck.spark_conf(
        "gs://lake/wh",
        catalog_uri="jdbc:postgresql://pg:5432/lake?sslmode=require",
        properties={"jdbc.user": "u", "jdbc.password": "pw", "io-impl": "my.FileIO"},
    )
    p = "spark.sql.catalog.iceduck"
    assert conf[f"{p}.uri"] == "jdbc:postgresql://pg:5432/lake?sslmode=require"
    assert (conf[f"{p}.jdbc.user"], conf[f"{p}.jdbc.password"]) == ("u", "pw")
    assert conf[f"{p}.io-impl"] == "my.FileIO"  # the user's choice stays
    assert f"{p}.jdbc.init-catalog-tables" not in conf  # a SQLite-only workaround


@pytest.mark.parametrize(
    ("warehouse", "io_impl"),
    [
        ("s3a://lake/wh", "org.apache.iceberg.aws.s3.S3FileIO"),
        ("gs://lake/wh", "org.apache.iceberg.gcp.gcs.GCSFileIO"),
        ("abfss://c@acct.dfs.core.windows.net/wh", "org.apache.iceberg.azure.adlsv2.ADLSFileIO"),
    ],
)
def test_the_file_io_of_the_warehouse_s_store(warehouse: str, io_impl: str) -> None:
    conf = iceduck.spark_conf(warehouse, catalog_uri="postgresql://h/db")
    assert conf["spark.sql.catalog.iceduck.io-impl"] == io_impl
    assert conf["spark.sql.catalog.iceduck.warehouse"] == warehouse


def test_a_sqlite_catalog_uri_and_a_local_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    default = iceduck.spark_conf(tmp_path / "wh")
    uris = (f"sqlite:///{tmp_path}/cat/catalog.db", "sqlite:///cat/catalog.db", "jdbc:sqlite:cat/catalog.db")
    for uri in uris:
        conf = iceduck.spark_conf("wh", catalog_uri=uri)
        assert conf == {
            **default,
            "spark.sql.catalog.iceduck.uri": f"jdbc:sqlite:{tmp_path}/cat/catalog.db",
        }, uri
    assert "spark.sql.catalog.iceduck.io-impl" not in default


def test_spark_conf_without_arguments_is_the_configured_lake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[catalog]\nuri = "postgresql://me:pw@pg/lake"\nwarehouse = "s3://lake/wh"\nname = "team"\n'
        '[properties]\n"s3.endpoint" = "http://minio:9000"\n'
    )
    monkeypatch.setenv("ICEDUCK_CONFIG", str(config))
    assert iceduck.spark_conf() == iceduck.spark_conf(
        "s3://lake/wh",
        "team",
        catalog_uri="postgresql://me:pw@pg/lake",
        properties={"s3.endpoint": "http://minio:9000"},
    )


def test_spark_conf_refuses_what_spark_cannot_share() -> None:
    with pytest.raises(iceduck.errors.UserError, match="not a local folder"):
        iceduck.spark_conf("s3://lake/wh")


def test_spark_conf_of_a_glue_catalog() -> None:
    """Spark's GlueCatalog (type=glue) with the lake's warehouse, the catalog id of a
    glue://<id> URI, and the properties as they are (Java's AwsProperties names)."""
    properties = {"client.region": "eu-west-1", "glue.skip-archive": "false", "iceduck.duckdb-io": "fsspec"}
    conf = iceduck.spark_conf("s3://b/wh", "team", catalog_uri="glue://123456789012", properties=properties)
    assert conf == {
        "spark.sql.catalog.team": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.team.type": "glue",
        "spark.sql.catalog.team.cache-enabled": "false",
        "spark.sql.catalog.team.warehouse": "s3://b/wh",
        "spark.sql.catalog.team.glue.id": "123456789012",
        "spark.sql.catalog.team.client.region": "eu-west-1",
        "spark.sql.catalog.team.glue.skip-archive": "false",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }
    by_type = iceduck.spark_conf("s3://b/wh", "team", properties={"type": "glue"})
    assert by_type["spark.sql.catalog.team.type"] == "glue"
    assert "spark.sql.catalog.team.glue.id" not in by_type
    with pytest.raises(iceduck.errors.UnsupportedError, match="iceberg-aws-bundle"):
        iceduck.spark_conf("s3://b/wh", catalog_uri="glue://", jars=True)


def test_spark_conf_of_a_rest_catalog() -> None:
    conf = iceduck.spark_conf(
        "lake1",
        "team",
        catalog_uri="https://rest.internal/",
        properties={
            "credential": "etl:pw",
            "s3.endpoint": "http://minio:9000",
            "iceduck.duckdb-io": "fsspec",
        },
    )
    assert conf == {
        "spark.sql.catalog.team": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.team.type": "rest",
        "spark.sql.catalog.team.uri": "https://rest.internal",
        "spark.sql.catalog.team.cache-enabled": "false",
        "spark.sql.catalog.team.warehouse": "lake1",
        "spark.sql.catalog.team.credential": "etl:pw",
        "spark.sql.catalog.team.s3.endpoint": "http://minio:9000",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }
    # the PyPI runtime jars=True would add cannot run Iceberg's REST client: said, not hidden
    with pytest.raises(iceduck.errors.UnsupportedError, match=r"iceberg-spark-runtime-3\.5_2\.12:1\.10\.2"):
        iceduck.spark_conf(catalog_uri="http://127.0.0.1:8181", jars=True)


def test_spark_conf_of_a_hive_metastore(tmp_path: Path) -> None:
    """thrift:// is Iceberg's HiveCatalog in Spark: type=hive, the same uri, the warehouse
    where new databases go (as a local folder's absolute path)."""
    conf = iceduck.spark_conf(
        tmp_path / "wh", "hms", catalog_uri="thrift://127.0.0.1:9083", properties={"k": "v"}
    )
    assert conf == {
        "spark.sql.catalog.hms": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.hms.type": "hive",
        "spark.sql.catalog.hms.uri": "thrift://127.0.0.1:9083",
        "spark.sql.catalog.hms.cache-enabled": "false",
        "spark.sql.catalog.hms.warehouse": str(tmp_path / "wh"),
        "spark.sql.catalog.hms.k": "v",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }


def test_jars_adds_the_postgresql_driver_for_a_postgresql_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICEDUCK_CACHE", str(tmp_path / "cache"))
    driver = tmp_path / "postgresql-42.jar"
    driver.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: the path is what is checked
    monkeypatch.setenv("ICEDUCK_POSTGRES_JDBC_JAR", str(driver))
    conf = iceduck.spark_conf("s3://lake/wh", catalog_uri="postgresql://h/db", jars=True)
    for key in ("spark.driver.extraClassPath", "spark.executor.extraClassPath"):
        assert conf[key] == f"{spark_jar_conf()[key]}:{driver}"
    sqlite = iceduck.spark_conf(tmp_path / "wh", jars=True)
    assert str(driver) not in sqlite["spark.driver.extraClassPath"]
    monkeypatch.setenv("ICEDUCK_POSTGRES_JDBC_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(SparkJarsMissingError, match="PostgreSQL JDBC driver jar is missing"):
        iceduck.spark_conf("s3://lake/wh", catalog_uri="postgresql://h/db", jars=True)


def share_with_spark(spark: Any, warehouse: Path, name: str, uri: str) -> None:
    """iceduck writes a table of catalog ``name`` at ``uri``; Spark, given spark_conf's catalog
    settings on its running session (a Spark catalog may be added before its first use), reads
    it and appends a row iceduck reads back; the data files lie under ``warehouse``."""
    with iceduck.connect(warehouse, name, catalog_uri=uri) as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.t (id bigint, kind string) PARTITIONED BY (kind)")
        con.executemany("INSERT INTO ns.t VALUES (?, ?)", [(1, "a"), (2, "b")])
        for key, value in iceduck.spark_conf(warehouse, name, catalog_uri=uri).items():
            if key.startswith(f"spark.sql.catalog.{name}"):
                spark.conf.set(key, value)
        rows = spark.sql(f"SELECT id, kind FROM {name}.ns.t ORDER BY id").collect()
        assert [tuple(r) for r in rows] == [(1, "a"), (2, "b")]
        spark.sql(f"INSERT INTO {name}.ns.t VALUES (3, 'c')")
        assert con.execute("SELECT count(*), max(id) FROM ns.t").fetchone() == (3, 3)
        files = con.execute("SELECT file_path FROM ns.t.files").fetchall()
        assert all(str(path).split(":")[-1].startswith(str(warehouse)) for (path,) in files)


def test_spark_opens_a_sqlite_catalog_named_by_its_uri(spark: Any, tmp_path: Path) -> None:
    """A catalog file outside the warehouse, named by PyIceberg's URI form."""
    share_with_spark(spark, tmp_path / "lake", "lakecfg", f"sqlite:///{tmp_path}/shared/catalog.db")


def test_spark_opens_a_postgresql_catalog_with_spark_conf_s_settings(
    spark: Any, tmp_path: Path, postgres_database: str
) -> None:
    """The PostgreSQL database iceduck writes to, its libpq URI turned into a JDBC URL and its
    credentials into ``jdbc.user`` / ``jdbc.password``."""
    share_with_spark(spark, tmp_path / "pglake", "pgconf", postgres_database)
