"""The transport of the REST catalog client: JSON over HTTP(S) with the standard library.

Why ``http.client``: a catalog call is one small JSON request; a keep-alive connection per
thread (a session's statements and a server's threads each reuse theirs) is all the pooling
needed, and no dependency is added. TLS uses :func:`ssl.create_default_context` (the
system's trusted roots, host names checked), plus the CA certificates of the PEM file the
``ssl.ca-cert`` property names (PyIceberg's ``ssl`` > ``cabundle`` flattened,
``ssl.cabundle``, is read too). The file is *added* to the system's roots, not put in their
place as PyIceberg (``requests``' ``verify=``) and the JVM's ``javax.net.ssl.trustStore``
do: a property that names a team's private CA must not stop a catalog behind a public one
from working. There is no switch that turns verification off.

What a failure means matters more than the failure (Java's ``HTTPClient`` and
``ErrorHandlers.tableCommitHandler``): a request that could not be *sent* (connection
refused, unknown host, TLS refused) certainly did nothing on the server; one that was sent
and got no answer (a timeout, a connection lost while waiting) may have. For a commit the
second is :class:`~iceduck.errors.CommitStateUnknownError`, because callers delete the
commit's files only when it certainly did not land. A kept-alive connection the server
has closed meanwhile is noticed before sending (its socket reads as closed) and replaced;
a ``GET``/``HEAD`` that still finds it dead is sent once more on a fresh connection, any
other request never is.

Timeouts: Java's ``rest.client.connection-timeout-ms`` (default 10 s) and
``rest.client.socket-timeout-ms`` (default 120 s) properties.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from iceduck.errors import CommitStateUnknownError, StorageError, UserError

CONNECT_TIMEOUT_PROPERTY = "rest.client.connection-timeout-ms"
SOCKET_TIMEOUT_PROPERTY = "rest.client.socket-timeout-ms"
#: properties naming a PEM file of CA certificates to trust besides the system's (the
#: second is PyIceberg's ``ssl: {cabundle: ...}`` flattened)
CA_CERT_PROPERTIES = ("ssl.ca-cert", "ssl.cabundle")
DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_SOCKET_TIMEOUT_S = 120.0
#: methods safe to send again when a kept-alive connection turns out dead
_IDEMPOTENT = frozenset({"GET", "HEAD"})

#: ``(method, url, headers, body) -> headers to send``: what signs a request (SigV4) just
#: before each attempt goes out, so a retry is signed afresh
Signer = Callable[[str, str, Mapping[str, str], bytes | None], dict[str, str]]


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: its status, headers (names in lower case) and parsed JSON body
    (None when empty)."""

    status: int
    headers: Mapping[str, str]
    body: Any


def base_url(uri: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, path)`` of an ``http(s)://`` catalog URI; a :class:`UserError`
    for anything else."""
    try:
        parts = urlsplit(uri.strip())
        port = parts.port
    except ValueError as e:
        raise UserError(f"malformed REST catalog URI {uri!r}: {e}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"a REST catalog URI is http://host:port or https://host, not {uri!r}")
    if parts.query or parts.fragment:
        raise UserError(f"the REST catalog URI {uri!r} has a query or fragment: give the base URI only")
    if parts.username is not None:
        raise UserError(
            f"the REST catalog URI {parts.hostname} holds credentials: pass them as the token or "
            "credential property instead"
        )
    default_port = 443 if scheme == "https" else 80
    return scheme, parts.hostname, port or default_port, parts.path.rstrip("/")


def _seconds(properties: Mapping[str, str], name: str, default: float) -> float:
    text = properties.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value <= 0:
        raise UserError(f"{name} must be a positive number of milliseconds, not {text!r}")
    return value / 1000


class Transport:
    """Requests to one HTTP(S) origin, a keep-alive connection per thread."""

    def __init__(
        self, uri: str, properties: Mapping[str, str] | None = None, signer: Signer | None = None
    ) -> None:
        props = properties or {}
        self.uri = uri.strip().rstrip("/")
        self.scheme, self.host, self.port, self.path = base_url(self.uri)
        self.signer = signer
        self.connect_timeout = _seconds(props, CONNECT_TIMEOUT_PROPERTY, DEFAULT_CONNECT_TIMEOUT_S)
        self.socket_timeout = _seconds(props, SOCKET_TIMEOUT_PROPERTY, DEFAULT_SOCKET_TIMEOUT_S)
        self._local = threading.local()
        self._ssl = client_context(props) if self.scheme == "https" else None

    # -- connections -----------------------------------------------------------------------

    def _new_connection(self) -> http.client.HTTPConnection:
        if self._ssl is not None:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.connect_timeout, context=self._ssl
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=self.connect_timeout)

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, connected, and whether it was used before."""
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and (conn.sock is None or _closed_by_peer(conn.sock)):
            conn.close()
            conn = None
        reused = conn is not None
        if conn is None:
            conn = self._new_connection()
            try:
                conn.connect()
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                raise StorageError(f"cannot reach the REST catalog at {self.uri}: {_reason(e)}") from None
            assert conn.sock is not None
            conn.sock.settimeout(self.socket_timeout)
            self._local.conn = conn
        return conn, reused

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        self._drop()

    # -- requests ----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        commit: bool = False,
    ) -> Reply:
        """Send ``method path`` (``path`` after the URI's own path) with a JSON ``body`` or
        a ``form``; the reply whatever its status. ``commit``: a lost answer is a
        :class:`CommitStateUnknownError` rather than a :class:`StorageError`."""
        # RFC 3986 escapes (%20, not +): what SigV4's canonical query string is made of
        target = self.path + path + (f"?{urlencode(query, quote_via=quote)}" if query else "")
        sent_headers = {"Accept": "application/json", **(headers or {})}
        data: bytes | None = None
        if form is not None:
            data = urlencode(form).encode()
            sent_headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            sent_headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            conn, reused = self._connection()
            signed = self._signed(method, target, sent_headers, data)  # its failures are not the network's
            try:
                conn.request(method, target, body=data, headers=signed)
                response = conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                if attempt == 1 and reused and method in _IDEMPOTENT and not commit:
                    continue  # the server closed the kept-alive connection: once more, fresh
                what = f"{method} {self.uri}{path}"
                if commit:
                    raise CommitStateUnknownError(
                        f"the REST catalog at {self.uri} gave no answer to the commit "
                        f"({_reason(e)}): it may or may not have landed; no file was deleted. Look "
                        "at the table (SELECT * FROM <table>.snapshots) before running it again"
                    ) from None
                raise StorageError(f"no answer from the REST catalog to {what}: {_reason(e)}") from None
            if response.will_close:
                self._drop()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, _json(raw))
        raise AssertionError("unreachable")

    def _signed(
        self, method: str, target: str, headers: dict[str, str], data: bytes | None
    ) -> dict[str, str]:
        """``headers`` with the signer's additions, the ``Host`` header among the signed ones
        (set here as ``http.client`` would set it, so what was signed is what is sent)."""
        if self.signer is None:
            return headers
        default_port = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        netloc = host if self.port == default_port else f"{host}:{self.port}"
        url = f"{self.scheme}://{netloc}{target}"
        return self.signer(method, url, {"Host": netloc, **headers}, data)


def client_context(properties: Mapping[str, str]) -> ssl.SSLContext:
    """The system's trusted roots (host names checked) and the CA certificates of the files
    :data:`CA_CERT_PROPERTIES` name."""
    context = ssl.create_default_context()
    for name in CA_CERT_PROPERTIES:
        path = properties.get(name)
        if path is None:
            continue
        if not os.path.isfile(path):
            raise UserError(f"{name} names {path!r}, which is not a file (a PEM file of CA certificates)")
        try:
            context.load_verify_locations(cafile=path)
        except (ssl.SSLError, OSError) as e:
            raise UserError(f"{name}: cannot read CA certificates from {path}: {_reason(e)}") from None
    return context


def _json(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:500]  # an error page: kept as text for the message


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether a kept-alive socket was closed by the server: an idle connection that reads
    as ready has either hit EOF or holds bytes nobody asked for; neither can be reused."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _reason(e: BaseException) -> str:
    if isinstance(e, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(e, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({e.verify_message})"
    if isinstance(e, socket.gaierror):
        return f"unknown host ({e.strerror})"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(e, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def uuid7() -> str:
    """A new UUIDv7 (RFC 9562: 48 bits of Unix milliseconds, the version, random bits, the
    variant), the form the REST spec asks ``Idempotency-Key`` values to take."""
    value = (time.time_ns() // 1_000_000 & (1 << 48) - 1) << 80 | int.from_bytes(os.urandom(10), "big")
    value = value & ~(0xF << 76) | 0x7 << 76
    value = value & ~(0x3 << 62) | 0x2 << 62
    return str(uuid.UUID(int=value))
