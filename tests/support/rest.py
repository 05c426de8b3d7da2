"""A real ``iceduck serve`` on a free loopback port, in a thread, over a fresh warehouse
(:func:`start_server`), and a small ``urllib.request`` client to speak raw HTTP to it
(:class:`RestClient`): for the server's tests and for the REST client catalog's."""

from __future__ import annotations

import json
import logging
import re
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iceduck.catalog.base import Catalog
from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.serve.context import ServeContext
from iceduck.serve.server import CatalogServer


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


def start_server(
    warehouse: Path,
    token: str | None = None,
    prefix: str | None = None,
    kind: str = "sql",
    tls: ssl.SSLContext | None = None,
    catalog: Catalog | None = None,
    **options: Any,
) -> CatalogServer:
    """A server over ``warehouse`` (its ``catalog.db``, or with ``kind="hadoop"`` the folder
    itself, a catalog that keeps no views; or ``catalog`` when given); ``options`` are
    further :class:`ServeContext` fields (``auth``, ``catalog_name``, ``storage``,
    ``vend_credentials``); ``tls``: serve HTTPS."""
    location = warehouse_location(warehouse)
    if catalog is None:
        catalog = open_catalog(location, "iceduck", kind)
    context = ServeContext(catalog, location, prefix, **options)
    server = CatalogServer(("127.0.0.1", 0), context, token=token, tls=tls)
    server.start()
    return server


class RequestLog(logging.Handler):
    """Every request the server answered, as ``(method, path, status)``, read from the
    access log the server writes (logger ``iceduck.rest``)."""

    LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+" (\d{3})')

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.requests: list[tuple[str, str, int]] = []

    def server_errors(self) -> list[tuple[str, str, int]]:
        """The requests answered with a 5xx: a request the server could not handle."""
        return [r for r in self.requests if r[2] >= 500]

    def emit(self, record: logging.LogRecord) -> None:
        found = self.LINE.search(record.getMessage())
        if found:
            self.requests.append((found.group(1), found.group(2), int(found.group(3))))
