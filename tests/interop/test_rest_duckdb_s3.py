"""DuckDB and iceduck sharing a lake in an S3 bucket (moto on loopback) through ``iceduck serve``.

The server's warehouse is ``s3://<bucket>/wh`` with its catalog in a local SQLite file
(``--catalog sqlite:///...``) and ``--vend-credentials``. DuckDB 1.5.5 attaches it either
with ``ACCESS_DELEGATION_MODE 'none'`` and its own S3 secret (httpfs), or with nothing but
the credentials the server vends; it creates, writes and deletes there, and iceduck (the
same catalog, the object store configured with the same Iceberg properties) reads the same
rows; iceduck's v2 and v3 merge-on-read tables in the bucket read the same in DuckDB
through the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.open import open_catalog
from iceduck.serve.context import ServeContext
from iceduck.serve.server import CatalogServer
from tests.support.lake_peers import duckdb_s3_secret, object_store_missing
from tests.support.rest_duckdb import DuckRest, duckdb_rest_unavailable
from tests.support.s3 import S3Server, create_bucket, list_keys
from tests.support.scenario_peers import PeerError
from tests.support.scenario_rows import assert_same, iceduck_rows

UNAVAILABLE = duckdb_rest_unavailable() or object_store_missing()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")


@pytest.fixture
def lake(tmp_path: Path, s3_configured: S3Server) -> Iterator[tuple[CatalogServer, str, str]]:
    """``iceduck serve`` of a fresh bucket's warehouse: (server, warehouse, catalog URI)."""
    warehouse = f"s3://{create_bucket(s3_configured)}/wh"
    catalog_uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    catalog = open_catalog(warehouse, "iceduck", catalog_uri=catalog_uri, properties=s3_configured.properties)
    context = ServeContext(catalog, warehouse, storage=s3_configured.properties, vend_credentials=True)
    server = CatalogServer(("127.0.0.1", 0), context)
    server.start()
    try:
        yield server, warehouse, catalog_uri
    finally:
        server.stop()
        catalog.close()


def test_duckdb_and_iceduck_share_an_s3_lake_through_the_server(
    lake: tuple[CatalogServer, str, str], s3_configured: S3Server
) -> None:
    server, warehouse, catalog_uri = lake
    duck = DuckRest(
        server.url,
        setup=[duckdb_s3_secret(s3_configured.properties)],
        options="AUTHORIZATION_TYPE 'none', ACCESS_DELEGATION_MODE 'none'",
    )
    duck.execute(
        "CREATE SCHEMA r.lake",
        "CREATE TABLE r.lake.d (id BIGINT, v VARCHAR, day DATE) PARTITIONED BY (day)",
        "INSERT INTO r.lake.d SELECT i, 'v' || i, DATE '2024-05-01' + (i % 3)::INTEGER FROM range(300) t(i)",
        "DELETE FROM r.lake.d WHERE id % 7 = 0",
        "CREATE TABLE r.lake.copied AS SELECT * FROM r.lake.d WHERE id < 100",
    )
    keys = list_keys(s3_configured.endpoint_url, warehouse.removeprefix("s3://").split("/")[0])
    assert any(k.startswith("wh/lake/d/data/") for k in keys), keys[:5]
    assert any(k.startswith("wh/lake/d/metadata/") and k.endswith(".metadata.json") for k in keys)

    with iceduck.connect(warehouse, catalog_uri=catalog_uri, properties=s3_configured.properties) as con:
        for table in ("d", "copied"):
            expected = iceduck_rows(con, f"SELECT * FROM lake.{table}")
            assert_same(
                f"DuckDB reading lake.{table} in S3", duck.rows(f"SELECT * FROM r.lake.{table}"), expected
            )
        assert len(iceduck_rows(con, "SELECT * FROM lake.d")[1]) == 300 - 43
        for version in (2, 3):
            con.execute(
                f"CREATE TABLE lake.mor{version} (id BIGINT, cat STRING) USING iceberg "
                f"PARTITIONED BY (bucket(3, id)) TBLPROPERTIES ('format-version' = '{version}', "
                "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"
            )
            con.execute(f"INSERT INTO lake.mor{version} SELECT i, 'c' || (i % 4) FROM range(400) r(i)")
            con.execute(f"DELETE FROM lake.mor{version} WHERE id % 9 = 0")
            con.execute(f"UPDATE lake.mor{version} SET cat = 'u' WHERE id % 10 = 3")
        expected = [iceduck_rows(con, f"SELECT * FROM lake.mor{v}") for v in (2, 3)]
        location = con.execute("SELECT file_path FROM lake.mor3.delete_files LIMIT 1").fetchone()
    assert location is not None and location[0].startswith(warehouse + "/lake/mor3/")
    got = duck.queries("SELECT * FROM r.lake.mor2", "SELECT * FROM r.lake.mor3")
    for version, answer, reference in zip((2, 3), got, expected, strict=True):
        assert_same(f"DuckDB reading iceduck's v{version} deletes in S3", answer, reference)


def test_duckdb_uses_the_credentials_the_server_vends(
    lake: tuple[CatalogServer, str, str], s3_configured: S3Server
) -> None:
    """No S3 secret in DuckDB: its default ``ACCESS_DELEGATION_MODE`` asks for vended
    credentials, and the server (``--vend-credentials``) answers with its own S3 properties."""
    server, warehouse, catalog_uri = lake
    duck = DuckRest(server.url)
    duck.execute(
        "CREATE SCHEMA r.v",
        "CREATE TABLE r.v.t (id BIGINT, v VARCHAR)",
        "INSERT INTO r.v.t SELECT i, 'v' || i FROM range(100) t(i)",
        "DELETE FROM r.v.t WHERE id % 4 = 0",
    )
    with iceduck.connect(warehouse, catalog_uri=catalog_uri, properties=s3_configured.properties) as con:
        expected = iceduck_rows(con, "SELECT * FROM v.t")
    assert len(expected[1]) == 75
    assert_same("DuckDB with vended credentials", duck.rows("SELECT * FROM r.v.t"), expected)
    # what made it work: without them (and no secret of its own) DuckDB cannot reach the bucket
    unvended = DuckRest(server.url, options="AUTHORIZATION_TYPE 'none', ACCESS_DELEGATION_MODE 'none'")
    with pytest.raises(PeerError, match=r"amazonaws\.com"):  # AWS's endpoint, unreachable here
        unvended.rows("SELECT * FROM r.v.t")
