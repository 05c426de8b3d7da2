"""A loopback proxy that checks AWS Signature Version 4 as an AWS endpoint does, in front of
an ``iceduck serve``: each request's signature is computed again from the known secret and
the request as received (method, path, query, the headers its ``SignedHeaders`` names, the
body), with botocore's implementation of the algorithm; a mismatch is refused with 403 and
AWS's JSON error body (``x-amzn-ErrorType`` names the exception), anything else is forwarded.

:func:`verify` is the check itself, a pure function of the request: the tests hold it to a
vector of AWS's published SigV4 test suite before trusting it with the client's requests.

An ``Original-Authorization`` (the bearer token the client relocated) is forwarded as
``Authorization``, as a gateway in front of a token-checking catalog would.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

#: hop-by-hop headers (RFC 9110 section 7.6.1) and what the forward sets anew
_NOT_FORWARDED = frozenset({"connection", "keep-alive", "transfer-encoding", "host", "content-length"})


@dataclass(frozen=True)
class Keys:
    """What the endpoint knows: the access key, its secret and session token, and the
    region and service a signature must be scoped to."""

    access_key: str
    secret: str
    region: str
    service: str
    session_token: str | None = None


@dataclass(frozen=True)
class Refused:
    """AWS's answer to a request it does not accept: the exception's name and message."""

    kind: str
    message: str


def parse_authorization(value: str) -> dict[str, str] | None:
    """``Credential``, ``SignedHeaders`` and ``Signature`` of a SigV4 ``Authorization``."""
    algorithm, _, rest = value.partition(" ")
    if algorithm != "AWS4-HMAC-SHA256":
        return None
    parts = dict(p.strip().partition("=")[::2] for p in rest.split(","))
    return parts if {"Credential", "SignedHeaders", "Signature"} <= parts.keys() else None


def canonical_parts(
    method: str, target: str, headers: dict[str, str], body: bytes, keys: Keys, signed: list[str]
) -> tuple[AWSRequest, SigV4Auth]:
    """botocore's request and signer for the ``signed`` headers of a received request."""
    lower = {k.lower(): v for k, v in headers.items()}
    request = AWSRequest(
        method=method,
        url=f"http://{lower.get('host', '')}{target}",
        headers={name: lower[name] for name in signed if name in lower},
        data=body,
    )
    request.context["timestamp"] = lower.get("x-amz-date", "")
    token = lower.get("x-amz-security-token")
    return request, SigV4Auth(Credentials(keys.access_key, keys.secret, token), keys.service, keys.region)


def verify(method: str, target: str, headers: dict[str, str], body: bytes, keys: Keys) -> Refused | None:
    """None when ``method target`` with ``headers`` and ``body`` is signed with ``keys``;
    otherwise what AWS answers (its exception names and messages)."""
    lower = {k.lower(): v for k, v in headers.items()}
    parsed = parse_authorization(lower.get("authorization", ""))
    if parsed is None:
        return Refused("MissingAuthenticationTokenException", "Missing Authentication Token")
    access_key, date, region, service, terminal = (parsed["Credential"].split("/") + [""] * 5)[:5]
    if access_key != keys.access_key or lower.get("x-amz-security-token") != keys.session_token:
        return Refused(
            "UnrecognizedClientException", "The security token included in the request is invalid."
        )
    if terminal != "aws4_request" or date != lower.get("x-amz-date", "")[:8]:
        return Refused(
            "IncompleteSignatureException", "Credential is not of the form key/date/region/service"
        )
    if region != keys.region:
        return Refused(
            "InvalidSignatureException", f"Credential should be scoped to a valid region, not '{region}'."
        )
    if service != keys.service:
        return Refused(
            "InvalidSignatureException", f"Credential should be scoped to correct service: '{keys.service}'."
        )
    signed = parsed["SignedHeaders"].split(";")
    if "host" not in signed or any(name not in lower for name in signed):
        return Refused("IncompleteSignatureException", "Signed headers must include host and be present")
    declared = lower.get("x-amz-content-sha256")
    if declared is not None and declared != hashlib.sha256(body).hexdigest():
        return Refused(
            "InvalidSignatureException", "The provided 'x-amz-content-sha256' header does not match"
        )
    request, auth = canonical_parts(method, target, headers, body, keys, signed)
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    if not hmac.compare_digest(expected, parsed["Signature"]):
        return Refused(
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. Check your "
            "AWS Secret Access Key and signing method. Consult the service documentation for details.",
        )
    return None


@dataclass
class Seen:
    """A request the proxy accepted: its method, target, headers as received, and the names
    its signature covered."""

    method: str
    target: str
    headers: dict[str, str]
    signed: list[str] = field(default_factory=list)


class SigV4Proxy:
    """``http://127.0.0.1:<port>`` checking signatures with ``keys``, forwarding to
    ``upstream`` (``host, port``); :attr:`accepted` and :attr:`refused` record what came."""

    def __init__(self, upstream: tuple[str, int], keys: Keys) -> None:
        self.keys = keys
        self.upstream = upstream
        self.accepted: list[Seen] = []
        self.refused: list[Refused] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items()}
                refused = verify(self.command, self.path, headers, body, proxy.keys)
                if refused is not None:
                    with proxy._lock:
                        proxy.refused.append(refused)
                    self._answer(
                        403,
                        {"x-amzn-ErrorType": refused.kind},
                        json.dumps({"message": refused.message}).encode(),
                    )
                    return
                parsed = parse_authorization(headers.get("Authorization", ""))
                assert parsed is not None
                with proxy._lock:
                    proxy.accepted.append(
                        Seen(self.command, self.path, headers, parsed["SignedHeaders"].split(";"))
                    )
                self._forward(headers, body)

            def _forward(self, headers: dict[str, str], body: bytes) -> None:
                sent = {
                    k: v for k, v in headers.items() if k.lower() not in _NOT_FORWARDED | {"authorization"}
                }
                original = sent.pop("Original-Authorization", None)
                if original is not None:
                    sent["Authorization"] = original
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    conn.request(self.command, self.path, body=body or None, headers=sent)
                    response = conn.getresponse()
                    data = response.read()
                    kept = {k: v for k, v in response.getheaders() if k.lower() not in _NOT_FORWARDED}
                    self._answer(response.status, kept, data)
                finally:
                    conn.close()

            def _answer(self, status: int, headers: dict[str, str], data: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if not any(name.lower() == "content-type" for name in headers):
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":  # an answer to HEAD has headers alone (RFC 9110 9.3.2)
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> SigV4Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
