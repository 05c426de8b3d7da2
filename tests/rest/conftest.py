"""A real ``iceduck serve`` on a free loopback port, in a thread, over a fresh warehouse;
tests speak HTTP to it with ``urllib.request`` (:class:`RestClient`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.rest.server import CatalogServer
from tests.support.rest import Reply, RestClient, start_server

__all__ = ["Reply", "RestClient", "start_server"]


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
