"""Vended credentials go only to principals who may read (or write) the table."""

from __future__ import annotations

from pathlib import Path

from iceduck.catalog.open import open_catalog, warehouse_location
from tests.serve.conftest import RestClient, serve_principals

TEAM = """\
[principals.maker]
token = "maker"
roles = ["maker"]
[principals.reader]
token = "reader"
roles = ["reader"]
[principals.writer]
token = "writer"
roles = ["writer"]
[roles.maker]
grants = [{ namespace = "sales", privileges = ["create"] }]
[roles.reader]
grants = [{ table = "sales.orders", privileges = ["read"] }]
[roles.writer]
grants = [{ namespace = "sales", privileges = ["write"] }]
"""
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}
ASK = {"X-Iceberg-Access-Delegation": "vended-credentials"}


def test_credentials_only_to_who_may_read(warehouse: Path) -> None:
    open_catalog(warehouse_location(warehouse), "iceduck").create_namespace(("sales",), {})
    storage = {"s3.access-key-id": "AKIDVENDED", "s3.secret-access-key": "vended-secret"}
    server = serve_principals(warehouse, TEAM, storage=storage, vend_credentials=True)
    try:
        created = RestClient(server.url, "maker").call(
            "POST", "/v1/namespaces/sales/tables", {"name": "orders", "schema": SCHEMA}, headers=ASK
        )
        assert created.status == 200 and "storage-credentials" not in created.body
        assert not created.body.get("config")
        for who in ("reader", "writer"):
            loaded = RestClient(server.url, who).call(
                "GET", "/v1/namespaces/sales/tables/orders", headers=ASK
            )
            assert loaded.status == 200
            assert loaded.body["storage-credentials"][0]["config"] == storage
            fresh = RestClient(server.url, who).get("/v1/namespaces/sales/tables/orders/credentials")
            assert fresh.body["storage-credentials"][0]["config"] == storage
        refused = RestClient(server.url, "maker").call(
            "GET", "/v1/namespaces/sales/tables/orders", headers=ASK
        )
        assert refused.status == 403 and "vended-secret" not in str(refused.body)
        refused = RestClient(server.url, "maker").get("/v1/namespaces/sales/tables/orders/credentials")
        assert refused.status == 403
    finally:
        server.stop()
