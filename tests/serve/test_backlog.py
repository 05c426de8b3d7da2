"""The server's listen backlog holds a burst of clients connecting at once.

The transport answers one request per connection, so every client request is a new TCP
connection. The standard library's ``socketserver`` listens with a backlog of 5: once 6
connections wait to be accepted, Linux drops further SYNs and each dropped client retries
after its 1 s SYN timeout. bench/serve_load.py (16 clients on loopback) showed it as a p99 of
about 1 s for requests whose median is 15 ms, and the kernel's ``ListenOverflows`` counter
rising by one per slow request. Here the server is bound but accepts nothing, so every
connection must be held by the backlog alone."""

from __future__ import annotations

import socket
from pathlib import Path

from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.serve.context import ServeContext
from iceduck.serve.server import CatalogServer

#: more than the 16 clients of bench/serve_load.py, each with a connection being opened
BURST = 64


def test_a_burst_of_connections_waits_in_the_backlog_instead_of_being_dropped(tmp_path: Path) -> None:
    location = warehouse_location(tmp_path)
    server = CatalogServer(("127.0.0.1", 0), ServeContext(open_catalog(location, "iceduck"), location))
    connections: list[socket.socket] = []
    try:
        for _ in range(BURST):
            # a dropped SYN leaves connect() waiting for the retransmit: the timeout ends it
            conn = socket.create_connection(server.server_address[:2], timeout=3)
            connections.append(conn)
    except TimeoutError:
        pass
    finally:
        for conn in connections:
            conn.close()
        server.server_close()
    assert len(connections) == BURST, f"only {len(connections)} connections got into the backlog"
