"""A real ``iceduck serve`` (a thread, a free loopback port) over a fresh SQLite warehouse,
plain or requiring a bearer token, and ``iceduck.connect`` clients of it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import iceduck
from iceduck.serve.server import CatalogServer
from tests.support.rest import start_server

TOKEN = "t0ken-for-tests"


@dataclass
class Served:
    """A running server, its warehouse, and the properties a client needs for it."""

    server: CatalogServer
    warehouse: Path
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.url

    def connect(self, **properties: str) -> iceduck.Connection:
        return iceduck.connect(catalog_uri=self.url, properties={**self.properties, **properties})


def serve(tmp_path: Path, token: str | None = None, prefix: str | None = None) -> Served:
    warehouse = tmp_path / "served"
    warehouse.mkdir(exist_ok=True)
    properties = {"token": token} if token else {}
    return Served(start_server(warehouse, token=token, prefix=prefix), warehouse, properties)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    running = serve(tmp_path)
    yield running
    running.server.stop()


@pytest.fixture(params=["plain", "token"])
def any_served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    """The server plain, then requiring ``Authorization: Bearer`` (the client sends ``token``)."""
    running = serve(tmp_path, token=TOKEN if request.param == "token" else None)
    yield running
    running.server.stop()
