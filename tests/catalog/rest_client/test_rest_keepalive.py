"""The transport's keep-alive connections, against ``iceduck serve``'s handler speaking
HTTP/1.1 (the server itself answers one request per connection): requests of a thread reuse
one connection, and a connection the server closed while idle is replaced before a request
is sent -- a commit is never sent on a dead connection, where its outcome would be unknown."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.serve.server import CatalogServer, _Handler
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from tests.catalog.rest_client.conftest import serve

IDLE_TIMEOUT_S = 0.3


class _KeepAliveHandler(_Handler):
    """The server's handler with HTTP/1.1 persistent connections, closing one idle for
    :data:`IDLE_TIMEOUT_S` (``StreamRequestHandler.timeout``); :attr:`closed` is released
    each time it has closed one, so a test waits for that instead of sleeping."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S
    connections = 0
    lock = threading.Lock()
    closed = threading.Semaphore(0)

    def setup(self) -> None:
        with _KeepAliveHandler.lock:
            _KeepAliveHandler.connections += 1
        super().setup()

    def finish(self) -> None:
        super().finish()
        self.request.close()  # closed now, not after this returns: the client sees it closed
        _KeepAliveHandler.closed.release()


@pytest.fixture
def keep_alive(tmp_path: Path) -> Iterator[CatalogServer]:
    running = serve(tmp_path)
    running.server.RequestHandlerClass = _KeepAliveHandler
    _KeepAliveHandler.connections = 0
    _KeepAliveHandler.closed = threading.Semaphore(0)
    yield running.server
    running.server.stop()


def test_requests_reuse_a_connection_and_survive_the_server_closing_it(keep_alive: CatalogServer) -> None:
    catalog = RestCatalog(keep_alive.url, "iceduck")
    ident = TableIdentifier(("db",), "t")
    catalog.create_namespace(("db",))
    schema = Schema((NestedField(1, "id", LongType(), True),))
    location = catalog.default_table_location(ident)
    catalog.create_table(ident, new_table_metadata(schema, UNPARTITIONED, UNSORTED, location, {}))
    for _ in range(10):
        assert catalog.table_exists(ident)
    assert _KeepAliveHandler.connections == 1  # config, creates and ten HEADs on one connection
    assert _KeepAliveHandler.closed.acquire(timeout=60)  # the server closed the idle connection
    base = catalog.load_table(ident)
    assert _KeepAliveHandler.connections == 2
    assert _KeepAliveHandler.closed.acquire(timeout=60)
    builder = MetadataBuilder(base.metadata)
    builder.set_properties({"after": "idle"})
    committed = catalog.commit_table(base, builder.build())  # sent on a fresh connection
    assert committed.metadata.properties["after"] == "idle"
    assert _KeepAliveHandler.connections == 3
