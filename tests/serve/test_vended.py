"""Vended storage credentials: a server over a warehouse in S3 (moto checking credentials,
in a subprocess) started with its store's properties and ``--vend-credentials`` hands them
to a client that asks (``X-Iceberg-Access-Delegation: vended-credentials``) in the
load-table and create-table responses; PyIceberg, given no S3 keys at all, then writes and
reads the table through them. Without the flag, or without the header, no key leaves the
server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.serve.context import ServeContext
from iceduck.serve.request import Request
from iceduck.serve.server import CatalogServer
from iceduck.serve.table_response import asked_to_vend, vended
from tests.serve.conftest import RestClient
from tests.support.s3 import AUTH_BUCKET, S3Server, auth_server, client, moto_missing

pytestmark = pytest.mark.skipif(moto_missing() is not None, reason=str(moto_missing()))

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}],
}
DELEGATION = {"X-Iceberg-Access-Delegation": "vended-credentials"}


@pytest.fixture(scope="module")
def checked_s3() -> Iterator[S3Server]:
    with auth_server() as server:
        yield server


def _serve(tmp_path: Path, s3: S3Server, vend: bool) -> tuple[CatalogServer, str]:
    warehouse = f"s3://{AUTH_BUCKET}/wh-{uuid.uuid4().hex[:8]}"
    catalog = open_catalog(
        warehouse, "iceduck", catalog_uri=f"sqlite:///{tmp_path}/catalog.db", properties=s3.properties
    )
    context = ServeContext(catalog, warehouse, storage=s3.properties, vend_credentials=vend)
    server = CatalogServer(("127.0.0.1", 0), context)
    server.start()
    return server, warehouse


@pytest.fixture
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No key for the client but what the server vends (nor a profile, nor EC2's metadata)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))


def test_pyiceberg_without_keys_uses_the_vended_ones(
    tmp_path: Path, checked_s3: S3Server, object_store_restored: None, no_aws_environment: None
) -> None:
    rest = pytest.importorskip("pyiceberg.catalog.rest")
    server, warehouse = _serve(tmp_path, checked_s3, vend=True)
    try:
        catalog = rest.RestCatalog("vended", uri=server.url)  # no s3.* property of its own
        catalog.create_namespace("lake")
        rows = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
        table = catalog.create_table("lake.items", schema=rows.schema)
        table.append(rows)
        again = catalog.load_table("lake.items")
        assert sorted(again.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
        prefix = warehouse.removeprefix(f"s3://{AUTH_BUCKET}/")
        props = checked_s3.properties
        s3 = client(checked_s3.endpoint_url, props["s3.access-key-id"], props["s3.secret-access-key"])
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=AUTH_BUCKET, Prefix=prefix)["Contents"]]
        assert any(k.endswith(".parquet") for k in keys) and any(k.endswith(".avro") for k in keys)
    finally:
        server.stop()


def test_responses_carry_credentials_only_when_asked_and_allowed(
    tmp_path: Path, checked_s3: S3Server, object_store_restored: None
) -> None:
    secret = checked_s3.properties["s3.secret-access-key"]
    server, warehouse = _serve(tmp_path, checked_s3, vend=True)
    try:
        client = RestClient(server.url)
        client.post("/v1/namespaces", {"namespace": ["lake"]})
        created = client.call(
            "POST", "/v1/namespaces/lake/tables", {"name": "t", "schema": SCHEMA}, headers=DELEGATION
        )
        assert created.status == 200, created.body
        for reply in (created, client.call("GET", "/v1/namespaces/lake/tables/t", headers=DELEGATION)):
            assert reply.body["config"]["s3.secret-access-key"] == secret
            assert reply.body["config"]["s3.endpoint"] == checked_s3.endpoint_url
            (credential,) = reply.body["storage-credentials"]
            assert credential == {"prefix": warehouse, "config": reply.body["config"]}
        several = client.call(
            "GET",
            "/v1/namespaces/lake/tables/t",
            headers={"X-Iceberg-Access-Delegation": "remote-signing, vended-credentials"},
        )
        assert several.body["config"]["s3.secret-access-key"] == secret
        plain = client.get("/v1/namespaces/lake/tables/t")  # not asked
        assert plain.body["config"] == {} and "storage-credentials" not in plain.body
        signing = client.call(
            "GET", "/v1/namespaces/lake/tables/t", headers={"X-Iceberg-Access-Delegation": "remote-signing"}
        )
        assert signing.body["config"] == {}
    finally:
        server.stop()

    (tmp_path / "second").mkdir()
    server, _ = _serve(tmp_path / "second", checked_s3, vend=False)
    try:
        client = RestClient(server.url)
        client.post("/v1/namespaces", {"namespace": ["lake"]})
        created = client.call(
            "POST", "/v1/namespaces/lake/tables", {"name": "t", "schema": SCHEMA}, headers=DELEGATION
        )
        loaded = client.call("GET", "/v1/namespaces/lake/tables/t", headers=DELEGATION)
        for reply in (created, loaded):
            assert reply.status == 200
            assert secret not in str(reply.body) and "storage-credentials" not in reply.body
    finally:
        server.stop()


def test_only_object_store_properties_are_vended(warehouse: Path) -> None:
    location = warehouse_location(warehouse)
    storage = {
        "s3.access-key-id": "a",
        "gcs.oauth2.token": "g",
        "adls.sas-token.acct": "z",
        "client.region": "eu",
        "jdbc.password": "never",
        "uri": "postgresql://x",
    }
    context = ServeContext(
        open_catalog(location, "iceduck"), location, storage=storage, vend_credentials=True
    )
    request = Request("GET", {}, {}, b"", {"x-iceberg-access-delegation": "vended-credentials"})
    assert asked_to_vend(context, request)
    expected = {
        "s3.access-key-id": "a",
        "gcs.oauth2.token": "g",
        "adls.sas-token.acct": "z",
        "client.region": "eu",
    }
    assert vended(context, f"{location}/db/t") == (expected, [{"prefix": location, "config": expected}])
