"""Counting the requests an S3 client sends: moto's S3 served on a second loopback port
behind a WSGI layer that records each request's S3 operation.

At 10-30 ms a request in a real object store, the number of requests decides how long a
commit or a cold query takes; on loopback moto the time says nothing, the count is exact
and deterministic. The counting server runs moto's own application in this process, so it
shares the buckets and objects of the run's ``s3_server`` (moto keeps them in one
in-process backend): a table written through either endpoint is read through the other.

:func:`operation` names a request as the S3 API reference does (``PutObject``,
``CreateMultipartUpload``, ``ListObjectsV2``, ...), from its method, path and query alone
(path-style addressing, as :func:`tests.support.s3.properties_for` configures).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from tests.support.s3 import S3Server, properties_for


def operation(method: str, path: str, query: str) -> str:
    """The S3 operation of a path-style request (``/bucket`` or ``/bucket/key``)."""
    params = parse_qs(query, keep_blank_values=True)
    has_key = "/" in path.strip("/")
    if method == "POST" and "uploads" in params:
        return "CreateMultipartUpload"
    if method == "POST" and "uploadId" in params:
        return "CompleteMultipartUpload"
    if method == "POST" and "delete" in params:
        return "DeleteObjects"
    if method == "PUT" and "partNumber" in params:
        return "UploadPart"
    if method == "DELETE" and "uploadId" in params:
        return "AbortMultipartUpload"
    if not has_key:
        if method == "GET" and params.get("list-type") == ["2"]:
            return "ListObjectsV2"
        if method == "GET" and not params:
            return "ListObjects"
        return {"HEAD": "HeadBucket", "PUT": "CreateBucket", "DELETE": "DeleteBucket"}.get(
            method, f"{method} bucket?{query}"
        )
    return {"HEAD": "HeadObject", "GET": "GetObject", "PUT": "PutObject", "DELETE": "DeleteObject"}.get(
        method, f"{method} object?{query}"
    )


@dataclass
class RequestLog:
    """The operations received, in order (a lock: the server answers on many threads)."""

    operations: list[tuple[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, name: str, path: str) -> None:
        with self._lock:
            self.operations.append((name, path))

    def clear(self) -> None:
        with self._lock:
            self.operations.clear()

    def counts(self) -> Counter[str]:
        """How many requests of each operation."""
        with self._lock:
            return Counter(name for name, _ in self.operations)

    def total(self) -> int:
        with self._lock:
            return len(self.operations)


Wsgi = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _counting(app: Wsgi, log: RequestLog) -> Wsgi:
    def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        log.record(operation(environ["REQUEST_METHOD"], path, environ.get("QUERY_STRING", "")), path)
        return app(environ, start_response)

    return counted


@contextmanager
def counting_server() -> Iterator[tuple[S3Server, RequestLog]]:
    """moto's S3 on a free loopback port, every request recorded in the log yielded."""
    from moto.server import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request
    log = RequestLog()
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server(
        "127.0.0.1", 0, _counting(app, log), threaded=True, request_handler=MotoRequestHandler
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        yield S3Server(endpoint, properties_for(endpoint)), log
    finally:
        server.shutdown()
        thread.join()
