"""A loopback HTTP proxy that adds a fixed delay to every request, and counts the
*sequential round trips* its clients made.

In a cloud region every object-store request costs 10-30 ms, and what a cold query waits
for is not how many requests it sends but how many it sends *one after another*: requests
in flight together cost one latency between them. On loopback a request costs
microseconds, so neither shows. The proxy sits in front of an S3 endpoint (moto), sleeps
``latency_s`` before forwarding each request, and records when each request arrived and
when its answer was sent: a :class:`Span` per request.

**Waves** (:func:`waves`) are the length of the longest chain of requests in which each
one started after the previous one had ended: over the spans, the longest sequence
``r1, r2, ..., rk`` with ``end(r_i) <= start(r_(i+1))`` (the height of the interval order).
Requests that overlapped in time are never in one chain; a request sent only after an
answer arrived extends the chain through it. So ``waves * latency`` is a lower bound of
the time the client spent waiting on the store, and the count depends only on the order
of starts and ends, not on how fast either side ran: with a latency much larger than the
client's own work between two requests it is the number of round trips the client could
not overlap. Tests assert counts (bounds on waves), never times.

Used by tests (tests/io/test_s3_waves.py) and by the lake benchmark's latency mode
(bench/lake.py ``--latency-ms``), where it serves both iceduck and DuckDB's httpfs.
With ``faults`` (:mod:`tests.support.s3_faults`) the proxy also fails the requests a test
names: an error answer, an answer held, an answer cut mid-body.

Requests are forwarded with ``http.client`` over one keep-alive connection per client
connection, so a client that keeps its connections open pays no new TCP handshake (as
against a real endpoint; the delay stands for the whole round trip).
"""

from __future__ import annotations

import bisect
import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from tests.support.s3_faults import Faults

#: hop-by-hop headers (RFC 9110 section 7.6.1): never forwarded
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)


@dataclass(frozen=True)
class Span:
    """One request as the proxy saw it: from its arrival to its answer sent (monotonic s)."""

    start: float
    end: float
    method: str
    path: str


def waves(spans: list[Span]) -> int:
    """The length of the longest chain of spans each starting at or after the end of the
    one before (:func:`chain`)."""
    return len(chain(spans))


def chain(spans: list[Span]) -> list[Span]:
    """A longest chain of spans each starting at or after the end of the one before.

    Taken in order of their ends, every span ``q`` that may precede ``r`` (``end(q) <=
    start(r)``) comes before ``r``; so ``longest(r) = 1 + max(longest(q))`` over them, a
    prefix of that order, whose running maximum is kept: O(n log n).
    """
    by_end = sorted(spans, key=lambda s: s.end)
    ends = [s.end for s in by_end]
    previous: list[int | None] = []  # the span before each one in its longest chain
    length: list[int] = []
    best_upto: list[int] = []  # index of the longest chain's last span among by_end[: i + 1]
    for i, r in enumerate(by_end):
        before = bisect.bisect_right(ends, r.start, 0, i)
        if before:
            q = best_upto[before - 1]
            previous.append(q)
            length.append(length[q] + 1)
        else:
            previous.append(None)
            length.append(1)
        best_upto.append(i if not best_upto or length[i] > length[best_upto[-1]] else best_upto[-1])
    found: list[Span] = []
    at = best_upto[-1] if best_upto else None
    while at is not None:
        found.append(by_end[at])
        at = previous[at]
    return found[::-1]


@dataclass
class RequestLog:
    """The spans recorded, in order of completion (a lock: requests end on many threads)."""

    spans: list[Span] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, span: Span) -> None:
        with self._lock:
            self.spans.append(span)

    def clear(self) -> None:
        with self._lock:
            self.spans.clear()

    def snapshot(self) -> list[Span]:
        with self._lock:
            return list(self.spans)

    def waves(self) -> int:
        return waves(self.snapshot())

    def chain(self) -> list[Span]:
        """A longest chain of sequential requests (for a failing test to show)."""
        return chain(self.snapshot())

    def total(self) -> int:
        with self._lock:
            return len(self.spans)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # a client opening many connections at once (a prefetch of 32 objects) must not meet a
    # full accept queue: a refused SYN is sent again after a second, a late "round trip"
    request_queue_size = 256


class LatencyProxy:
    """A threaded HTTP proxy to ``upstream`` (``http://host:port``) on a free loopback port,
    sleeping ``latency_s`` before forwarding each request; :attr:`log` records the spans;
    ``faults`` spoil the requests their rules match."""

    def __init__(self, upstream: str, latency_s: float, faults: Faults | None = None) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.latency_s = latency_s
        self.faults = faults
        self.log = RequestLog()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        #: the clients' open connections: closed at :meth:`stop`, so that no handler thread
        #: waits on a client's idle keep-alive connection after the test (and its socket, and
        #: its own connection upstream, stay open for the rest of the run)
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()
        with self._connections_lock:
            open_connections = list(self._connections)
        for connection in open_connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed meanwhile

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as S3 clients expect

            def setup(self) -> None:
                super().setup()
                with proxy._connections_lock:
                    proxy._connections.add(self.connection)
                # the head and the body of an answer go out at once: with Nagle's algorithm
                # the body waits for the client's delayed ACK of the head (40 ms on Linux)
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def finish(self) -> None:
                with proxy._connections_lock:
                    proxy._connections.discard(self.connection)
                con = getattr(self, "_con", None)
                if con is not None:
                    con.close()
                super().finish()

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _upstream(self) -> http.client.HTTPConnection:
                con = getattr(self, "_con", None)
                if con is None:
                    con = self._con = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                return con

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass  # trailers
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def _any(self) -> None:
                start = time.monotonic()
                body = self._body()
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                if body or self.command in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                if proxy.latency_s:
                    time.sleep(proxy.latency_s)
                fault = proxy.faults.take(self.command, self.path) if proxy.faults else None
                refusal = proxy.faults.refusal(fault, self.command, self.path) if proxy.faults else None
                if refusal is not None:
                    status, reason, answer, data = refusal
                else:
                    try:
                        status, reason, answer, data = self._forward(headers, body)
                    except (OSError, http.client.HTTPException):
                        self._con = None  # a dropped keep-alive connection: once more on a new one
                        status, reason, answer, data = self._forward(headers, body)
                if fault == "hang":  # the store acted; its answer never comes
                    assert proxy.faults is not None
                    proxy.faults.released.wait()
                    self.close_connection = True
                    return
                if fault == "cut" and not data:  # no body to cut: the connection ends before the head
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.send_response(status, reason)
                for name, value in answer:
                    if name.lower() not in _HOP_BY_HOP and (
                        name.lower() != "content-length" or self.command == "HEAD"
                    ):
                        self.send_header(name, value)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if fault == "cut":  # half the body promised, then the connection ends
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if data:
                    self.wfile.write(data)
                self.wfile.flush()
                proxy.log.record(Span(start, time.monotonic(), self.command, self.path))

            def _forward(
                self, headers: dict[str, str], body: bytes
            ) -> tuple[int, str, list[tuple[str, str]], bytes]:
                con = self._upstream()
                con.request(self.command, self.path, body=body or None, headers=headers)
                response = con.getresponse()
                data = response.read()
                return response.status, response.reason, response.getheaders(), data

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _any

        return Handler


@contextmanager
def latency_proxy(upstream: str, latency_s: float) -> Iterator[LatencyProxy]:
    """A :class:`LatencyProxy` to ``upstream`` for the duration of the block."""
    proxy = LatencyProxy(upstream, latency_s)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
