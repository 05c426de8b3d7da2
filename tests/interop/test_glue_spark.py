"""Spark's Iceberg ``GlueCatalog`` and iceduck's share one Glue catalog (moto's Glue and S3,
the run's moto server), both ways: Spark (the 1.10.2 runtime and ``iceberg-aws-bundle`` from
Maven, ``S3FileIO``) creates, writes and deletes, iceduck reads the same rows; iceduck
creates, writes and deletes through ``glue://``, Spark reads the same rows; and both commit to
one table in turn, each commit building on the other's.

Spark runs in a process of its own (:class:`tests.support.spark_peer.SparkPeer`): its AWS
SDK takes the Glue client's keys from the environment, as on a real cluster.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from tests.support import maven
from tests.support.s3 import REGION, S3Server
from tests.support.spark_jars import REFERENCE_RUNTIME
from tests.support.spark_peer import SparkPeer

pytestmark = [pytest.mark.spark, pytest.mark.old_runtimes]

CATALOG = "glue"


def _jars() -> list[Path]:
    try:
        return [maven.iceberg_runtime(REFERENCE_RUNTIME), maven.jar(maven.AWS_BUNDLE)]
    except maven.MavenUnavailable as e:
        if os.environ.get("ICEDUCK_REQUIRE_MAVEN"):
            raise
        pytest.skip(f"Spark's GlueCatalog needs the runtime and iceberg-aws-bundle from Maven: {e}")


@pytest.fixture(scope="module")
def lake(
    s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SparkPeer, dict[str, str]]]:
    """The Spark peer with a Glue catalog on moto, and iceduck's properties for the same."""
    jars = _jars()
    bucket = f"glue-spark-{uuid.uuid4().hex[:8]}"
    from tests.support.s3 import client

    client(s3_server.endpoint_url).create_bucket(Bucket=bucket)
    warehouse = f"s3://{bucket}/wh"
    props = s3_server.properties
    spark_catalog = {
        "type": "glue",
        "warehouse": warehouse,
        "glue.endpoint": s3_server.endpoint_url,
        "client.region": REGION,
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint": s3_server.endpoint_url,
        "s3.path-style-access": "true",
        "s3.access-key-id": props["s3.access-key-id"],
        "s3.secret-access-key": props["s3.secret-access-key"],
        "cache-enabled": "false",
    }
    catalogs = {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
        **{f"spark.sql.catalog.{CATALOG}.{k}": v for k, v in spark_catalog.items()},
    }
    env = {
        "AWS_ACCESS_KEY_ID": props["s3.access-key-id"],
        "AWS_SECRET_ACCESS_KEY": props["s3.secret-access-key"],
        "AWS_REGION": REGION,
    }
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the spawned Spark inherits them: its Glue client's credential chain
    try:
        peer = SparkPeer(jars, catalogs, tmp_path_factory.mktemp("glue-spark"))
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    ours = {**props, "glue.endpoint": s3_server.endpoint_url, "glue.region": REGION, "warehouse": warehouse}
    try:
        yield peer, ours
    finally:
        peer.close()


def _connect(props: dict[str, str]) -> iceduck.Connection:
    properties = {k: v for k, v in props.items() if k != "warehouse"}
    return iceduck.connect(warehouse=props["warehouse"], catalog_uri="glue://", properties=properties)


def _ours(con: iceduck.Connection, table: str) -> list[tuple[Any, ...]]:
    return sorted(con.execute(f"SELECT id, name FROM {table}").fetchall())


def _spark(peer: SparkPeer, table: str) -> list[tuple[Any, ...]]:
    return sorted(peer.collect(f"SELECT id, name FROM {CATALOG}.{table}"))


def test_iceduck_reads_what_spark_wrote(lake: tuple[SparkPeer, dict[str, str]]) -> None:
    peer, props = lake
    db = f"s_{uuid.uuid4().hex[:8]}"
    peer.sql(f"CREATE NAMESPACE {CATALOG}.{db}")
    peer.sql(
        f"CREATE TABLE {CATALOG}.{db}.t (id bigint, name string) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    peer.sql(f"INSERT INTO {CATALOG}.{db}.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    peer.sql(f"DELETE FROM {CATALOG}.{db}.t WHERE id = 2")
    con = _connect(props)
    try:
        assert _ours(con, f"{db}.t") == _spark(peer, f"{db}.t") == [(1, "a"), (3, "c")]
    finally:
        con.close()


def test_spark_reads_what_iceduck_wrote_and_both_take_turns(lake: tuple[SparkPeer, dict[str, str]]) -> None:
    peer, props = lake
    db = f"i_{uuid.uuid4().hex[:8]}"
    con = _connect(props)
    try:
        con.execute(f"CREATE NAMESPACE {db}")
        con.execute(
            f"CREATE TABLE {db}.t (id bigint, name string) "
            "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
        )
        con.execute(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        con.execute(f"DELETE FROM {db}.t WHERE id = 1")
        assert _spark(peer, f"{db}.t") == _ours(con, f"{db}.t") == [(2, "b"), (3, "c")]
        peer.sql(f"INSERT INTO {CATALOG}.{db}.t VALUES (4, 'd')")
        con.execute(f"UPDATE {db}.t SET name = 'B' WHERE id = 2")
        peer.sql(f"DELETE FROM {CATALOG}.{db}.t WHERE id = 3")
        con.execute(f"INSERT INTO {db}.t VALUES (5, 'e')")
        expected = [(2, "B"), (4, "d"), (5, "e")]
        assert _spark(peer, f"{db}.t") == _ours(con, f"{db}.t") == expected
        history = peer.collect(f"SELECT count(*) FROM {CATALOG}.{db}.t.snapshots")
        assert history == [(6,)]  # every commit of either side kept, none overwritten
    finally:
        con.close()
