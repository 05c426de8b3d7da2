"""A real ``iceduck serve`` on a free loopback port, in a thread, over a fresh warehouse;
tests speak HTTP to it with ``urllib.request`` (:class:`RestClient`)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.rest.context import ServeContext
from iceduck.rest.server import CatalogServer


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]


class RestClient:
    def __init__(self, base: str, token: str | None = None) -> None:
        self.base = base
        self.token = token

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token is not None:
            request.add_header("Authorization", f"Bearer {self.token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return _reply(response.status, response.read(), dict(response.headers))
        except urllib.error.HTTPError as e:
            return _reply(e.code, e.read(), dict(e.headers))

    def get(self, path: str) -> Reply:
        return self.call("GET", path)

    def post(self, path: str, body: Any) -> Reply:
        return self.call("POST", path, body)


def _reply(status: int, data: bytes, headers: dict[str, str]) -> Reply:
    return Reply(status, json.loads(data) if data else None, headers)


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


def start_server(
    warehouse: Path, token: str | None = None, prefix: str | None = None, **options: Any
) -> CatalogServer:
    """A server over ``warehouse``; ``options`` are further :class:`ServeContext` fields
    (``auth``, ``catalog_name``, ``storage``, ``vend_credentials``)."""
    location = warehouse_location(warehouse)
    catalog = open_catalog(location, "iceduck")
    context = ServeContext(catalog, location, prefix, **options)
    server = CatalogServer(("127.0.0.1", 0), context, token=token)
    server.start()
    return server


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
