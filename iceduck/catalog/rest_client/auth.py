"""Who the client is to the REST catalog: a bearer token, or OAuth2 client credentials.

The catalog properties of Java's ``OAuth2Properties`` and PyIceberg's RestCatalog:

* ``token``: a bearer token sent as ``Authorization: Bearer <token>`` on every request;
* ``credential``: ``client_id:client_secret`` (or a secret alone) exchanged at the token
  endpoint for an access token (RFC 6749 section 4.4, the client credentials grant, as
  Java's ``OAuth2Util.fetchToken``): a form ``POST`` of ``grant_type=client_credentials``,
  ``client_id``, ``client_secret`` and ``scope``;
* ``scope``: default ``catalog`` (Java's ``OAuth2Properties.CATALOG_SCOPE``);
* ``oauth2-server-uri``: the token endpoint, default ``<uri>/v1/oauth/tokens`` (the spec's
  deprecated in-catalog endpoint, which ``iceduck serve`` and most catalogs answer).

A token fetched with a credential is fetched again before its ``expires_in`` runs out
(within the last tenth of its life, at most five minutes before, as Java's
``AuthSession`` schedules its refresh) and once after a 401, in case the server revoked
it early. A token given as ``token`` has no known expiry: a 401 re-fetches only when a
credential is given too. No message ever holds the token or the secret.

With SigV4 signing on (:mod:`.sigv4`) the token endpoint is signed too when it is the
catalog's own (under the catalog URI, as PyIceberg's signer is mounted on it); a token
endpoint elsewhere gets the form unsigned.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from iceduck.catalog.rest_client.http import Signer, Transport
from iceduck.catalog.rest_client.sigv4 import refused_signature
from iceduck.errors import UserError

TOKEN = "token"
CREDENTIAL = "credential"
SCOPE = "scope"
OAUTH2_SERVER_URI = "oauth2-server-uri"
DEFAULT_SCOPE = "catalog"
#: the most a refresh happens before expiry (Java's ``AuthSession``: five minutes)
MAX_REFRESH_WINDOW_S = 300.0


class Auth:
    """The ``Authorization`` header of a catalog's requests, fetched and refreshed.

    ``clock`` (seconds, only moving forward) says when a token is due for its refresh;
    tests set one they advance instead of waiting out a token's ``expires_in``.
    """

    def __init__(
        self,
        catalog_uri: str,
        properties: Mapping[str, str],
        clock: Callable[[], float] = time.monotonic,
        signer: Signer | None = None,
    ) -> None:
        self.clock = clock
        self.catalog_uri = catalog_uri.rstrip("/")
        self._token: str | None = properties.get(TOKEN) or None
        self._credential = properties.get(CREDENTIAL) or None
        self._scope = properties.get(SCOPE) or DEFAULT_SCOPE
        self.token_uri = properties.get(OAUTH2_SERVER_URI) or f"{self.catalog_uri}/v1/oauth/tokens"
        self._refresh_at: float | None = None
        self._lock = threading.Lock()
        self._transport: Transport | None = None
        self._properties = dict(properties)
        self._signer = signer if self.token_uri.startswith(self.catalog_uri + "/") else None

    @property
    def can_refresh(self) -> bool:
        return self._credential is not None

    def headers(self) -> dict[str, str]:
        """The header to send now: fetching the first token, or a fresh one when the
        current one is about to expire."""
        with self._lock:
            if self._credential is not None and (
                self._token is None or (self._refresh_at is not None and self.clock() >= self._refresh_at)
            ):
                self._fetch()
            return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    def refresh(self, rejected: Mapping[str, str]) -> bool:
        """After a 401 to a request sent with the ``rejected`` headers: fetch a new token
        with the credential (unless another thread already has); False when there is no
        credential to fetch one with."""
        if self._credential is None:
            return False
        with self._lock:
            if rejected.get("Authorization") == (f"Bearer {self._token}" if self._token else None):
                self._fetch()
        return True

    def _fetch(self) -> None:
        """Java's ``OAuth2Util.fetchToken`` with the client credentials grant."""
        assert self._credential is not None
        client_id, sep, secret = self._credential.partition(":")
        form = {"grant_type": "client_credentials", "scope": self._scope}
        if sep:
            form["client_id"] = client_id
            form["client_secret"] = secret
        else:
            form["client_secret"] = client_id
        if self._transport is None:
            self._transport = Transport(self.token_uri, self._properties, self._signer)
        started = self.clock()
        reply = self._transport.request("POST", "", form=form)
        body = reply.body if isinstance(reply.body, dict) else {}
        refused = refused_signature(
            f"the OAuth2 token endpoint {self.token_uri}", reply.status, reply.body, reply.headers
        )
        if refused is not None and self._signer is not None:
            raise refused
        if reply.status != 200:
            error = body.get("error")
            if isinstance(error, dict):  # a catalog answering with the ErrorModel instead
                error = error.get("type") or error.get("message")
            described = body.get("error_description")
            detail = ", ".join(str(x) for x in (error, described) if x) or f"HTTP {reply.status}"
            raise UserError(
                f"the OAuth2 token endpoint {self.token_uri} refused the credential ({detail}): "
                "check the credential and scope properties"
            )
        token = body.get("access_token")
        token_type = body.get("token_type")
        if not isinstance(token, str) or not token:
            raise UserError(f"the OAuth2 token endpoint {self.token_uri} answered without an access_token")
        if not isinstance(token_type, str) or token_type.lower() not in ("bearer", "n_a"):
            raise UserError(
                f"the OAuth2 token endpoint {self.token_uri} issued a {token_type!r} token: only "
                "bearer tokens are supported"
            )
        self._token = token
        expires_in = body.get("expires_in")
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and expires_in > 0:
            window = min(MAX_REFRESH_WINDOW_S, expires_in / 10)
            self._refresh_at = started + expires_in - window
        else:
            self._refresh_at = None
