"""Who may call the server: a fixed bearer token (``--token``) and tokens issued by
``POST /v1/oauth/tokens`` to OAuth2 clients (``--credential CLIENT_ID:SECRET``).

The REST spec secures every route with "OAuth2" or "BearerAuth"; a client sends
``Authorization: Bearer <token>``. Issued tokens are random (:func:`secrets.token_urlsafe`,
256 bits), expire after ``ttl`` seconds (the ``expires_in`` of the ``OAuthTokenResponse``)
and live in this process's memory only: a restart invalidates them, and clients holding
one get a 401 and fetch a new one with their credentials, as they do when it expires.

An expired or unknown token is a 401 typed ``NotAuthorizedException`` in the error model:
PyIceberg's ``RestCatalog`` refreshes its token and retries on a 401, and Java's
``RESTSessionCatalog`` refreshes before ``expires_in`` runs out.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from iceduck.errors import UserError
from iceduck.serve.errors import HttpRefusal

DEFAULT_TTL_SECONDS = 3600


def not_authorized(message: str) -> HttpRefusal:
    return HttpRefusal(401, "NotAuthorizedException", message)


def parse_credential(text: str) -> tuple[str, str]:
    """``CLIENT_ID:SECRET`` (as PyIceberg's and Java's ``credential`` property) split in two."""
    client_id, colon, secret = text.partition(":")
    if not colon or not client_id or not secret:
        raise UserError("a credential is CLIENT_ID:SECRET, both non-empty")
    return client_id, secret


@dataclass
class Authenticator:
    """The server's accepted tokens; with neither a token nor a credential, every request
    is let through (a catalog on loopback for one user)."""

    token: str | None = None
    #: client id -> secret of the OAuth2 clients
    credentials: Mapping[str, str] = field(default_factory=dict)
    ttl: int = DEFAULT_TTL_SECONDS
    #: seconds on a clock that only moves forward: when tokens are issued and expire
    #: (tests pass one they advance, instead of waiting out a ``ttl``)
    clock: Callable[[], float] = time.monotonic
    _issued: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def required(self) -> bool:
        return self.token is not None or bool(self.credentials)

    def client_allowed(self, client_id: str, secret: str) -> bool:
        """Whether ``client_id``/``secret`` is a configured client (compared in constant time)."""
        known = self.credentials.get(client_id)
        return known is not None and hmac.compare_digest(known.encode(), secret.encode())

    def issue(self) -> str:
        """A new token valid for :attr:`ttl` seconds; expired ones are forgotten meanwhile."""
        token = secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock:
            for old in [t for t, expiry in self._issued.items() if expiry <= now]:
                del self._issued[old]
            self._issued[token] = now + self.ttl
        return token

    def valid(self, token: str) -> bool:
        """Whether ``token`` is the fixed token or an issued one not yet expired."""
        if self.token is not None and hmac.compare_digest(token.encode(), self.token.encode()):
            return True
        with self._lock:
            expiry = self._issued.get(token)
        return expiry is not None and self.clock() < expiry

    def check(self, authorization: str | None) -> None:
        """Refuse a request whose ``Authorization`` header holds no valid bearer token."""
        if not self.required:
            return
        scheme, _, value = (authorization or "").partition(" ")
        token = value.strip()
        if scheme.lower() != "bearer" or not token:
            raise not_authorized("a valid bearer token is required (Authorization: Bearer <token>)")
        if self.valid(token):
            return
        with self._lock:
            issued = token in self._issued
        if issued:
            raise not_authorized("the bearer token expired: get a new one from /v1/oauth/tokens")
        raise not_authorized(
            "a valid bearer token is required: this one is unknown (a restart forgets issued tokens)"
        )
