"""Who may call the server: a fixed bearer token (``--token``) and tokens issued by
``POST /v1/oauth/tokens`` to OAuth2 clients (``--credential CLIENT_ID:SECRET``), or the
named principals of a principals file (``--principals``, :mod:`iceduck.serve.principals`),
each with their grants. A token issued to a principal dies with the principal's
credentials: once a reload removes the principal or changes its secret, or its ``expires``
passes, every route answers 401.

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

import datetime
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from iceduck.errors import UserError
from iceduck.serve.access import ANYONE, Caller
from iceduck.serve.errors import HttpRefusal
from iceduck.serve.principals import Principal, PrincipalsFile

DEFAULT_TTL_SECONDS = 3600


def not_authorized(message: str) -> HttpRefusal:
    return HttpRefusal(401, "NotAuthorizedException", message)


def parse_credential(text: str) -> tuple[str, str]:
    """``CLIENT_ID:SECRET`` (as PyIceberg's and Java's ``credential`` property) split in two."""
    client_id, colon, secret = text.partition(":")
    if not colon or not client_id or not secret:
        raise UserError("a credential is CLIENT_ID:SECRET, both non-empty")
    return client_id, secret


@dataclass(frozen=True)
class _Issued:
    expiry: float
    #: the principal (or OAuth2 client id) the token was issued to
    subject: str
    #: the principal's :meth:`~iceduck.serve.principals.Principal.fingerprint` at issue
    fingerprint: str | None = None


@dataclass
class Authenticator:
    """The server's accepted tokens; with neither a token, a credential nor a principals
    file, every request is let through (a catalog on loopback for one user)."""

    token: str | None = None
    #: client id -> secret of the OAuth2 clients
    credentials: Mapping[str, str] = field(default_factory=dict)
    ttl: int = DEFAULT_TTL_SECONDS
    #: seconds on a clock that only moves forward: when tokens are issued and expire
    #: (tests pass one they advance, instead of waiting out a ``ttl``)
    clock: Callable[[], float] = time.monotonic
    #: ``--principals FILE``: named principals with grants (instead of token and credentials)
    principals: PrincipalsFile | None = None
    #: the wall clock a principal's ``expires`` is compared with
    now: Callable[[], datetime.datetime] = field(default=lambda: datetime.datetime.now(datetime.UTC))
    _issued: dict[str, _Issued] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def required(self) -> bool:
        return self.token is not None or bool(self.credentials) or self.principals is not None

    @property
    def has_clients(self) -> bool:
        if self.principals is not None:
            return self.principals.policy.has_clients
        return bool(self.credentials)

    def login(self, client_id: str, secret: str) -> str | None:
        """The subject ``client_id``/``secret`` authenticate (compared in constant time)."""
        if self.principals is not None:
            principal = self.principals.policy.by_client(client_id, secret)
            if principal is None:
                return None
            self._live(principal)
            return principal.name
        known = self.credentials.get(client_id)
        if known is not None and hmac.compare_digest(known.encode(), secret.encode()):
            return client_id
        return None

    def issue(self, subject: str) -> str:
        """A new token for ``subject`` valid for :attr:`ttl` seconds; expired ones are forgotten."""
        token = secrets.token_urlsafe(32)
        now = self.clock()
        fingerprint = None
        if self.principals is not None:
            fingerprint = self.principals.policy.principals[subject].fingerprint()
        with self._lock:
            for old in [t for t, issued in self._issued.items() if issued.expiry <= now]:
                del self._issued[old]
            self._issued[token] = _Issued(now + self.ttl, subject, fingerprint)
        return token

    def caller(self, token: str) -> Caller:
        """Who ``token`` belongs to, or a 401 saying why it is refused (never the token)."""
        if self.principals is not None:
            policy = self.principals.policy
            principal = policy.by_token(token)
            if principal is not None:
                self._live(principal)
                return Caller(principal.name, policy.grants_of(principal))
        elif self.token is not None and hmac.compare_digest(token.encode(), self.token.encode()):
            return Caller("token")
        with self._lock:
            issued = self._issued.get(token)
        if issued is None:
            raise not_authorized(
                "a valid bearer token is required: this one is unknown (a restart forgets issued tokens)"
            )
        if self.clock() >= issued.expiry:
            raise not_authorized("the bearer token expired: get a new one from /v1/oauth/tokens")
        if self.principals is None:
            return Caller(issued.subject)
        policy = self.principals.policy
        principal = policy.principals.get(issued.subject)
        if principal is None or principal.fingerprint() != issued.fingerprint:
            raise not_authorized(
                f"the bearer token was revoked: {issued.subject!r} was removed or given new credentials"
            )
        self._live(principal)
        return Caller(principal.name, policy.grants_of(principal))

    def valid(self, token: str) -> bool:
        """Whether ``token`` is accepted now (a refresh's ``subject_token``)."""
        try:
            self.caller(token)
        except HttpRefusal:
            return False
        return True

    def _live(self, principal: Principal) -> None:
        if principal.expires is not None and self.now() >= principal.expires:
            raise not_authorized(
                f"the credentials of {principal.name!r} expired on {principal.expires.isoformat()}"
            )

    def check(self, authorization: str | None) -> Caller:
        """The caller of a request with this ``Authorization`` header, or a 401."""
        if not self.required:
            return ANYONE
        scheme, _, value = (authorization or "").partition(" ")
        token = value.strip()
        if scheme.lower() != "bearer" or not token:
            raise not_authorized("a valid bearer token is required (Authorization: Bearer <token>)")
        return self.caller(token)
