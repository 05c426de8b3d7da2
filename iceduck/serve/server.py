"""The transport: the standard library's ``ThreadingHTTPServer``, one thread per request.

Why the standard library: a catalog on a laptop or a small server answers a few requests
a second, each a catalog row lookup plus a metadata file read or write; a thread per
request is plenty, and the catalog's compare-and-swap (``commit_table``), not the server,
decides between concurrent commits. No dependency to install or keep up to date, and
nothing between the socket and the handlers that this module does not show. Not for the
open internet: HTTP/1.0-style connection handling (one request per connection).

TLS (``--tls-cert``/``--tls-key``, :mod:`iceduck.serve.tls`): the accept loop only wraps
each accepted socket (no I/O); the handshake runs in the request's own thread, bounded by
:data:`HANDSHAKE_TIMEOUT_S`, so a client that connects and says nothing, or speaks plain
HTTP to the TLS port, holds up no one else. A failed handshake is one log line and a
closed connection.

Per request, in order: the path must be a route under ``/v1/``; a server with ``--token``
or ``--credential`` wants ``Authorization: Bearer <token>`` on every route but
``/v1/oauth/tokens`` (:mod:`iceduck.serve.auth`; 401 before the body is read); a body larger
than :data:`MAX_BODY_BYTES` is refused with 413 before it is read; then the route's
handler runs and any error becomes the spec's error model (:mod:`iceduck.serve.errors`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from iceduck.errors import UserError
from iceduck.serve import audit, idempotency, permissions
from iceduck.serve.access import ANYONE, Caller
from iceduck.serve.api import ROUTES
from iceduck.serve.context import ServeContext
from iceduck.serve.errors import ErrorResponse, HttpRefusal, error_response, view_error_body
from iceduck.serve.request import Request, Response
from iceduck.serve.routes import Route, find_route

#: the largest request body accepted: a commit of thousands of updates is well under it
MAX_BODY_BYTES = 10 * 1024 * 1024
#: the methods whose answers an ``Idempotency-Key`` replays (:mod:`iceduck.serve.idempotency`)
_MUTATIONS = frozenset({"POST", "DELETE"})
#: how long a client may take over the TLS handshake before its connection is closed
HANDSHAKE_TIMEOUT_S = 10.0

# the access log keeps the logger name it had before the package was named serve/: logging
# configurations and the tests that read the log name it
log = logging.getLogger("iceduck.rest")


class CatalogServer(ThreadingHTTPServer):
    """An HTTP server serving ``context`` on ``(host, port)``; port 0 picks a free one."""

    daemon_threads = True
    #: connections waiting to be accepted (``listen``'s backlog; the kernel caps it at
    #: ``net.core.somaxconn``): every request is a new connection, and with the standard
    #: library's 5 a burst of clients had SYNs dropped, each waiting 1 s to retry
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        context: ServeContext,
        token: str | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        if token is not None:  # a shorthand for a context whose Authenticator has only this token
            context = dataclasses.replace(context, auth=dataclasses.replace(context.auth, token=token))
        self.context = context
        #: the server-side TLS context (:func:`iceduck.serve.tls.server_context`), or None: plain HTTP
        self.tls = tls
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"{'https' if self.tls is not None else 'http'}://{host!s}:{port}"

    def get_request(self) -> tuple[socket.socket, Any]:
        """The accepted connection, wrapped in TLS without a handshake yet (that waits for
        the request's thread: :meth:`finish_request`)."""
        sock, address = super().get_request()
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def finish_request(self, request: Any, client_address: Any) -> None:
        if isinstance(request, ssl.SSLSocket) and not _handshake(request, client_address):
            return
        super().finish_request(request, client_address)

    def start(self) -> threading.Thread:
        """Serve in a daemon thread (tests, embedding); :meth:`stop` ends it. The loop looks
        for a stop request every 20 ms (the standard library's 0.5 s made every stop wait)."""
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.02}, name="iceduck-rest", daemon=True
        )
        thread.start()
        return thread

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def _handshake(sock: ssl.SSLSocket, client_address: Any) -> bool:
    """The TLS handshake, in the request's thread, within :data:`HANDSHAKE_TIMEOUT_S`;
    False (logged) when the client failed it: plain HTTP, an old protocol version, a
    certificate it does not trust, silence."""
    timeout = sock.gettimeout()
    sock.settimeout(HANDSHAKE_TIMEOUT_S)
    try:
        sock.do_handshake()
    except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
        reason = getattr(e, "reason", None) or str(e)
        if isinstance(e, TimeoutError):
            reason = f"no handshake within {HANDSHAKE_TIMEOUT_S:g} s"
        elif reason == "HTTP_REQUEST":
            reason = "plain HTTP sent to the TLS port (use https://)"
        log.warning("%s TLS handshake failed: %s", client_address[0], reason)
        return False
    sock.settimeout(timeout)
    return True


class _Handler(BaseHTTPRequestHandler):
    server: CatalogServer
    server_version = "iceduck-rest"

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What the standard library's parser refuses (a malformed request line, headers too
        long, a method no ``do_*`` serves) answered in the spec's error model too, not HTML."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # a request line too broken to name a version
            self.request_version = "HTTP/1.0"
        if code == 501:  # a method no do_* serves (TRACE, OPTIONS, QUERY, BREW...): the route
            code = 405  # does not allow it, with an Allow header (what the OpenAPI checks expect)
            message = f"{self.command} is not allowed on {self.path}"
        error_type = {405: "MethodNotAllowedException"}.get(
            code, "BadRequestException" if code < 500 else "NotImplementedException"
        )
        problem = ErrorResponse(code, error_type, message or "malformed request")
        self._send(self.command or "GET", Response(code, problem.body()))

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)

    # -- one request -------------------------------------------------------------------------

    def _serve(self, method: str) -> None:
        route: Route | None = None
        params: dict[str, str] = {}
        query: dict[str, str] = {}
        body = b""
        caller = ANYONE
        self._request_id = audit.request_id(self.headers.get("X-Request-ID"))
        try:
            url = urlsplit(self.path)
            route, params = self._route(method, url.path)
            if not route.public:
                caller = self._check_token()
            body = self._body()
            query = dict(parse_qsl(url.query, keep_blank_values=True))
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = Request(method, params, query, body, headers, caller)
            permissions.check(route.need, caller, request)
            key = headers.get(idempotency.HEADER)
            answer = self._answerer(route, request)
            keys = self.server.context.idempotency
            if key is not None and keys is not None and method in _MUTATIONS and not route.public:
                response = keys.run(key, method, url.path, body, answer, principal=caller.name)
            else:
                response = answer()
        except Exception as e:  # every failure is an answer in the spec's model
            response = self._refusal(e, route, method)
        self._audit(route, method, params, query, body, caller, response)
        self._send(method, response)

    def _audit(
        self,
        route: Route | None,
        method: str,
        params: dict[str, str],
        query: dict[str, str],
        body: bytes,
        caller: Caller,
        response: Response,
    ) -> None:
        """The request's line in the audit trail, when the server keeps one and it is due."""
        trail = self.server.context.audit
        if trail is None or route is None or not audit.audited(method, route.pattern, response.status):
            return
        token = self.server.context.auth.token
        trail.write(
            audit.audit_line(
                route=route.endpoint(),
                method=method,
                params=params,
                query=query,
                body=body,
                status=response.status,
                answer=response.body,
                principal=caller.name,
                client=self.client_address[0] if self.client_address else "",
                request_id=self._request_id,
                mask=(lambda text: text.replace(token, "***")) if token else (lambda text: text),
            )
        )

    def _answerer(self, route: Route, request: Request) -> Callable[[], Response]:
        """The route's answer to ``request``, a refusal in the spec's model included (what an
        ``Idempotency-Key`` replays)."""

        def answer() -> Response:
            try:
                return route.handler(self.server.context, request)
            except Exception as e:
                return self._refusal(e, route, request.method)

        return answer

    def _refusal(self, error: Exception, route: Route | None, method: str) -> Response:
        problem = error_response(error, route.resource if route is not None else None)
        if problem.status == 500:  # unexpected: its traceback is for the operator
            log.exception("%s %s failed", method, self.path)
        elif problem.status > 500:  # the database or store away (503): expected, no traceback
            log.warning("%s %s answered %d: %s", method, self.path, problem.status, problem.message)
        if problem.status == 413:
            self.close_connection = True  # the unread body must not be taken as a request
        body = problem.body()
        # the document declares the bare ErrorModel for the view routes of Iceberg 1.10, but
        # the wrapped IcebergErrorResponse (only) for 1.11's register-view
        if route is not None and route.resource == "view" and route.pattern[-1] != "register-view":
            body = view_error_body(body, problem.status)
        return Response(problem.status, body)

    def _check_token(self) -> Caller:
        try:
            return self.server.context.auth.check(self.headers.get("Authorization"))
        except HttpRefusal:
            self.close_connection = True  # the body, unread, must not be taken as a request
            raise

    def _route(self, method: str, path: str) -> tuple[Route, dict[str, str]]:
        if not path.startswith("/v1/"):
            raise HttpRefusal(404, "NotFoundException", f"no such endpoint: {path}")
        try:
            segments = [unquote(s, errors="strict") for s in path[len("/v1/") :].split("/")]
        except UnicodeDecodeError:
            raise UserError("the path is not valid UTF-8 once percent-decoded") from None
        prefix = self.server.context.prefix
        unprefixed = [r for r in ROUTES if not r.prefixed]
        found, params_or_known = find_route(unprefixed, method, segments)
        if found is None:
            known = bool(params_or_known)  # /v1/config exists, for GET
            rest = segments
            if prefix:
                rest = segments[1:] if segments and segments[0] == prefix else []
            found, params_or_known = find_route([r for r in ROUTES if r.prefixed], method, rest)
            if found is None:
                params_or_known = known or bool(params_or_known)
        if found is None:
            if params_or_known:
                raise HttpRefusal(405, "MethodNotAllowedException", f"{method} is not allowed on {path}")
            raise HttpRefusal(404, "NotFoundException", f"no such endpoint: {method} {path}")
        assert isinstance(params_or_known, dict)
        return found, params_or_known

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity"):
            self.close_connection = True
            raise HttpRefusal(411, "LengthRequiredException", "send the body with a Content-Length")
        text = self.headers.get("Content-Length")
        if text is None:
            return b""
        if not text.strip().isdigit():
            self.close_connection = True
            raise UserError(f"invalid Content-Length {text!r}")
        length = int(text)
        if length > MAX_BODY_BYTES:
            raise HttpRefusal(
                413, "RequestTooLargeException", f"the body of {length} bytes exceeds {MAX_BODY_BYTES} bytes"
            )
        return self.rfile.read(length)

    def _allowed(self) -> list[str]:
        """The methods some route serves on this request's path (a 405's ``Allow``)."""
        try:
            path = urlsplit(self.path).path
        except ValueError:
            return []
        allowed = []
        for method in sorted({r.method for r in ROUTES}):
            try:
                self._route(method, path)
            except UserError:  # HttpRefusal too: no route for this method
                continue
            allowed.append(method)
        return allowed

    def _send(self, method: str, response: Response) -> None:
        data = b"" if response.body is None else json.dumps(response.body).encode()
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        if response.status == 405:  # RFC 9110 section 15.5.6: "MUST generate an Allow header"
            self.send_header("Allow", ", ".join(self._allowed()))
        if response.status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="iceduck"')
        self.send_header("X-Request-ID", getattr(self, "_request_id", "") or audit.request_id(None))
        if data:
            self.send_header("Content-Type", "application/json")
        if response.status != 304:  # RFC 9110 section 15.4.5: a 304 has no content
            # for HEAD: the length of the content a GET would have (RFC 9110 section 9.3.2:
            # "the same header fields [...] as if the request method had been GET")
            self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if method != "HEAD" and data:
            self.wfile.write(data)
