"""``POST /v1/oauth/tokens``: OAuth2 tokens for the clients of ``--credential``.

The spec's ``OAuthTokenRequest`` is a form (``application/x-www-form-urlencoded``) of one
of two grants:

* ``client_credentials`` (RFC 6749 section 4.4): ``client_id`` and ``client_secret`` in the
  form, or in an ``Authorization: Basic`` header as RFC 6749 section 2.3.1 prefers (not
  both: "The client MUST NOT use more than one authentication method in each request");
* ``urn:ietf:params:oauth:grant-type:token-exchange`` (RFC 8693): "To exchange an access
  token for one with the same claims and a refreshed expiration period" (spec), the way
  Java's client refreshes: a still-valid token as ``subject_token`` gets a new one.

The answer is an ``OAuthTokenResponse`` (``access_token``, ``token_type: bearer``,
``expires_in``, ``issued_token_type``); a refusal is the spec's ``OAuthError``
(``{"error": "invalid_client", "error_description": ...}``), 401 for wrong credentials or
tokens, 400 for a malformed request or an unknown grant (``unsupported_grant_type``).
The spec marks the endpoint deprecated ("DEPRECATED for REMOVAL" in favour of an
external OAuth2 server) but PyIceberg, Java and DuckDB still call it when given a
credential, so it is served for them.
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import parse_qsl, unquote_plus

from iceduck.serve.auth import Authenticator
from iceduck.serve.context import ServeContext
from iceduck.serve.errors import HttpRefusal, OAuthRefusal
from iceduck.serve.request import Request, Response

CLIENT_CREDENTIALS = "client_credentials"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def get_token(ctx: ServeContext, req: Request) -> Response:
    auth = ctx.auth
    form = _form(req)
    grant = form.get("grant_type")
    if not grant:
        raise OAuthRefusal(400, "invalid_request", "grant_type is required")
    if grant == CLIENT_CREDENTIALS:
        subject = _check_client(auth, req, form)
    elif grant == TOKEN_EXCHANGE:
        subject = _check_exchange(auth, form)
    else:
        raise OAuthRefusal(
            400,
            "unsupported_grant_type",
            f"grant_type {grant!r}: use {CLIENT_CREDENTIALS} or {TOKEN_EXCHANGE}",
        )
    return Response(
        200,
        {
            "access_token": auth.issue(subject),
            "token_type": "bearer",
            "expires_in": auth.ttl,
            "issued_token_type": ACCESS_TOKEN_TYPE,
        },
        {"Cache-Control": "no-store"},  # RFC 6749 section 5.1
    )


def _form(req: Request) -> dict[str, str]:
    media_type = (req.header("Content-Type") or "").partition(";")[0].strip().lower()
    if media_type and media_type != "application/x-www-form-urlencoded":
        raise OAuthRefusal(
            400, "invalid_request", f"the body must be application/x-www-form-urlencoded, not {media_type}"
        )
    try:
        pairs = parse_qsl(req.body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(req.body))
    except (UnicodeDecodeError, ValueError):
        raise OAuthRefusal(400, "invalid_request", "the body is not a URL-encoded form") from None
    form: dict[str, str] = {}
    for key, value in pairs:
        if key in form:  # RFC 6749 section 3.2: "parameters MUST NOT be included more than once"
            raise OAuthRefusal(400, "invalid_request", f"parameter {key} is given twice")
        form[key] = value
    return form


def _check_client(auth: Authenticator, req: Request, form: dict[str, str]) -> str:
    """The subject the client credentials authenticate, or an ``OAuthError``."""
    basic = _basic_credentials(req.header("Authorization"))
    in_form = form.get("client_id") is not None or form.get("client_secret") is not None
    if basic is not None and in_form:
        raise OAuthRefusal(400, "invalid_request", "send the client credentials once: Basic header or form")
    client_id, secret = basic if basic is not None else (form.get("client_id"), form.get("client_secret"))
    if not client_id or not secret:
        raise OAuthRefusal(401, "invalid_client", "client_id and client_secret are required")
    if not auth.has_clients:
        raise OAuthRefusal(
            401, "invalid_client", "this server has no OAuth2 clients (see iceduck serve --credential)"
        )
    try:
        subject = auth.login(client_id, secret)
    except HttpRefusal as e:  # the principal's credentials expired
        raise OAuthRefusal(401, "invalid_client", str(e)) from None
    if subject is None:
        raise OAuthRefusal(401, "invalid_client", "unknown client or wrong secret")
    return subject


def _basic_credentials(authorization: str | None) -> tuple[str, str] | None:
    """RFC 6749 section 2.3.1: ``Basic base64(urlencode(id):urlencode(secret))``; a bearer
    header (the spec's refresh request carries one) is not client authentication."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise OAuthRefusal(
            400, "invalid_request", "the Basic authorization header is not base64 of id:secret"
        ) from None
    client_id, colon, secret = decoded.partition(":")
    if not colon:
        raise OAuthRefusal(
            400, "invalid_request", "the Basic authorization header is not base64 of id:secret"
        )
    return unquote_plus(client_id), unquote_plus(secret)


def _check_exchange(auth: Authenticator, form: dict[str, str]) -> str:
    """The subject of a still-valid ``subject_token``: the new token is theirs."""
    subject = form.get("subject_token")
    if not subject or not form.get("subject_token_type"):
        raise OAuthRefusal(
            400, "invalid_request", "token exchange needs subject_token and subject_token_type"
        )
    if not auth.required:
        raise OAuthRefusal(
            401, "invalid_client", "this server has no OAuth2 clients (see iceduck serve --credential)"
        )
    try:
        caller = auth.caller(subject)
    except HttpRefusal:
        raise OAuthRefusal(
            401, "invalid_grant", "the subject_token is unknown or expired: use the client credentials"
        ) from None
    actor = form.get("actor_token")
    if actor is not None and not auth.valid(actor):
        raise OAuthRefusal(401, "invalid_grant", "the actor_token is unknown or expired")
    return caller.name or "token"
