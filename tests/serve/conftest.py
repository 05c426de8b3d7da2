"""A real ``iceduck serve`` on a free loopback port, in a thread, over a fresh warehouse;
tests speak HTTP to it with ``urllib.request`` (:class:`RestClient`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from iceduck.serve.server import CatalogServer
from tests.support.rest import Reply, RestClient, start_server

__all__ = ["FORM", "Reply", "RestClient", "creation_updates", "new_token", "start_server", "token_request"]

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def token_request(
    server: CatalogServer, form: dict[str, str], headers: dict[str, str] | None = None
) -> Reply:
    """``POST /v1/oauth/tokens`` with ``form``, URL-encoded."""
    return RestClient(server.url).call(
        "POST", "/v1/oauth/tokens", raw=urlencode(form).encode(), headers={**FORM, **(headers or {})}
    )


def new_token(server: CatalogServer, client_id: str = "app", secret: str = "s3cret") -> str:
    """A token for the client credentials ``client_id``/``secret`` (which must be accepted)."""
    reply = token_request(
        server, {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    )
    assert reply.status == 200, reply.body
    return str(reply.body["access_token"])


def creation_updates(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The updates that create a staged table's ``metadata``, as a client sends them with
    ``assert-create`` (Java's ``CreateTableRequest`` transaction)."""
    return [
        {"action": "assign-uuid", "uuid": metadata["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": metadata["format-version"]},
        {
            "action": "add-schema",
            "schema": metadata["schemas"][0],
            "last-column-id": metadata["last-column-id"],
        },
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": metadata["partition-specs"][0]},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": metadata["sort-orders"][0]},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": metadata["location"]},
    ]


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    folder = tmp_path / "warehouse"
    folder.mkdir()
    return folder


@pytest.fixture
def server(warehouse: Path) -> Iterator[CatalogServer]:
    served = start_server(warehouse)
    yield served
    served.stop()


@pytest.fixture
def client(server: CatalogServer) -> RestClient:
    return RestClient(server.url)


def serve_principals(warehouse: Path, text: str, **options: Any) -> CatalogServer:
    """A server over ``warehouse`` whose callers are the principals of the TOML ``text``
    (written to ``principals.toml`` beside the warehouse, where a test may rewrite it)."""
    from iceduck.catalog.open import open_catalog, warehouse_location
    from iceduck.serve.auth import Authenticator
    from iceduck.serve.principals import PrincipalsFile

    path = warehouse.parent / "principals.toml"
    path.write_text(text)
    catalog = open_catalog(warehouse_location(warehouse), "iceduck")
    auth = Authenticator(principals=PrincipalsFile(path, catalog.namespace_exists), **options.pop("auth", {}))
    return start_server(warehouse, auth=auth, **options)
