"""PyIceberg's ``RestCatalog`` as two principals of one ``iceduck serve --principals``: the
writer (OAuth2 client credentials) creates and appends, the reader (a token) scans the same
rows and is refused an append and a drop with PyIceberg's ``ForbiddenError``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from iceduck.catalog.open import open_catalog, warehouse_location
from tests.serve.conftest import serve_principals

rest = pytest.importorskip("pyiceberg.catalog.rest")
ForbiddenError = pytest.importorskip("pyiceberg.exceptions").ForbiddenError

TEAM = """\
[principals.writer]
client-id = "writer"
client-secret = "writer-secret"
roles = ["writer"]
[principals.reader]
token = "reader-token"
roles = ["reader"]
[roles.writer]
grants = [{ namespace = "shop", privileges = ["create", "write"] }]
[roles.reader]
grants = [{ namespace = "shop", privileges = ["read"] }]
"""


def test_pyiceberg_principals(warehouse: Path) -> None:
    open_catalog(warehouse_location(warehouse), "iceduck").create_namespace(("shop",), {})
    server = serve_principals(warehouse, TEAM)
    try:
        writer = rest.RestCatalog(
            "w",
            uri=server.url,
            credential="writer:writer-secret",
            **{"oauth2-server-uri": f"{server.url}/v1/oauth/tokens"},
        )
        reader = rest.RestCatalog("r", uri=server.url, token="reader-token")
        rows = pa.table({"id": pa.array([1, 2], pa.int64())})
        writer.create_table("shop.items", schema=rows.schema).append(rows)
        assert reader.load_table("shop.items").scan().to_arrow().column("id").to_pylist() == [1, 2]
        assert reader.list_tables("shop") == [("shop", "items")]
        with pytest.raises(ForbiddenError, match=r"lacks the privilege write on table shop\.items"):
            reader.load_table("shop.items").append(rows)
        with pytest.raises(ForbiddenError, match=r"lacks the privilege drop on table shop\.items"):
            reader.drop_table("shop.items")
        with pytest.raises(ForbiddenError, match=r"lacks the privilege drop on table shop\.items"):
            writer.drop_table("shop.items")
        assert len(reader.load_table("shop.items").metadata.snapshots) == 1
    finally:
        server.stop()
