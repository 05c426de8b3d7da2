"""AWS Signature Version 4 on every request to the REST catalog: what AWS Glue's and S3
Tables' Iceberg REST endpoints (and catalogs behind API Gateway) ask for instead of a token.

The properties are Java's ``AwsProperties`` (and PyIceberg's rest catalog):

* ``rest.sigv4-enabled``: ``true`` signs every request to the catalog URI;
* ``rest.signing-name``: the service the signature is scoped to, default ``execute-api``
  (Java's ``REST_SIGNING_NAME_DEFAULT``: "API Gateway and lambda"); AWS Glue is ``glue``,
  S3 Tables ``s3tables``;
* ``rest.signing-region``: default ``client.region``, then the AWS default region chain
  (``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile's ``region`` in ``~/.aws/config``);
* ``rest.access-key-id``, ``rest.secret-access-key``, ``rest.session-token``: static
  credentials; without them the AWS default credential chain (botocore's: environment
  variables, ``~/.aws`` profiles, container and instance metadata), whose expiring
  credentials are refreshed as they near their end (botocore's refreshable credentials,
  read again for each request).

What is signed follows Java's ``RESTSigV4Signer``: the request as it goes on the wire,
method, path, query, every header already set (``Idempotency-Key`` among them) and the body,
whose SHA-256 is sent as ``X-Amz-Content-SHA256`` and signed too. An ``Authorization``
header set before (a bearer token) is relocated to ``Original-Authorization``, "as SigV4
takes precedence". Each attempt is signed afresh (a retry gets its own ``X-Amz-Date``).
botocore's ``SigV4Auth`` computes the signature: it is AWS's own Python implementation of
the algorithm, and botocore is imported only when signing is enabled (the ``aws`` extra).

Failures are :class:`~iceduck.errors.UserError` naming what to set: botocore missing (the
extra to install), no credentials or no region anywhere (the properties and the chain), a
credential refresh that fails, and a 403 whose body or ``x-amzn-ErrorType`` says AWS refused
the signature, its scope or its key (AWS's reason, which holds no secret, and the properties
to check).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from iceduck.errors import UserError

SIGV4_ENABLED = "rest.sigv4-enabled"
SIGNING_NAME = "rest.signing-name"
SIGNING_REGION = "rest.signing-region"
ACCESS_KEY_ID = "rest.access-key-id"
SECRET_ACCESS_KEY = "rest.secret-access-key"
SESSION_TOKEN = "rest.session-token"
CLIENT_REGION = "client.region"
#: Java's ``AwsProperties.REST_SIGNING_NAME_DEFAULT``
DEFAULT_SIGNING_NAME = "execute-api"
#: Java's ``RESTSigV4Signer.RELOCATED_HEADER_PREFIX``
RELOCATED_PREFIX = "Original-"
CONTENT_SHA256 = "X-Amz-Content-SHA256"
#: what AWS says when it refuses a signature, its credential scope or its access key
_REFUSALS = (
    "signature",  # SignatureDoesNotMatch, InvalidSignatureException, IncompleteSignature...
    "credential should be scoped",
    "security token included in the request is invalid",
    "unrecognizedclient",
)


def sigv4_enabled(properties: Mapping[str, str]) -> bool:
    """``rest.sigv4-enabled`` is ``true`` (Java reads it as a boolean: anything else is off)."""
    return properties.get(SIGV4_ENABLED, "").strip().lower() == "true"


class SigV4Signer:
    """Signs requests with the credentials and scope the properties name, resolved once
    (the credentials' values are read again for each request, so expiring ones refresh)."""

    def __init__(self, properties: Mapping[str, str]) -> None:
        try:
            from botocore.session import Session
        except ImportError:
            raise UserError(
                f"{SIGV4_ENABLED}=true signs requests with botocore, which is not installed: "
                "pip install 'iceduck[aws]'"
            ) from None
        session = Session()
        self.name = _text(properties, SIGNING_NAME) or DEFAULT_SIGNING_NAME
        self.region = _region(properties, session)
        self._credentials = _credentials(properties, session)

    def sign(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> dict[str, str]:
        """The headers to send ``method url`` with: ``headers`` (an ``Authorization`` moved
        to ``Original-Authorization``), ``X-Amz-Content-SHA256``, ``X-Amz-Date``, the
        session token when there is one, and the SigV4 ``Authorization``."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        data = body or b""
        unsigned = relocated(headers)
        unsigned[CONTENT_SHA256] = hashlib.sha256(data).hexdigest()
        request = AWSRequest(method=method, url=url, headers=unsigned, data=data)
        SigV4Auth(self._frozen(), self.name, self.region).add_auth(request)
        return {str(k): str(v) for k, v in request.headers.items()}

    def _frozen(self) -> Any:
        """The credentials' current values; refreshed first when they near their expiry
        (a refresh that fails, or brings back expired ones, is one error)."""
        from botocore.exceptions import BotoCoreError

        try:
            return self._credentials.get_frozen_credentials()
        except (BotoCoreError, RuntimeError) as e:
            raise UserError(f"the AWS credentials for {SIGV4_ENABLED} could not be refreshed: {e}") from None


def relocated(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` with ``Authorization`` renamed ``Original-Authorization`` (Java's
    ``RESTSigV4Signer.convertHeaders``: "Relocate Authorization header as SigV4 takes
    precedence"); the relocated header is signed with the others."""
    return {(RELOCATED_PREFIX + k if k.lower() == "authorization" else k): v for k, v in headers.items()}


def refused_signature(where: str, status: int, body: Any, headers: Mapping[str, str]) -> UserError | None:
    """The error for an answer from ``where`` that refuses the signature: what AWS said (its
    messages name no secret) and what to check; None for any other answer."""
    said = refusal(status, body, headers)
    if said is None:
        return None
    return UserError(
        f"{where} refused the request ({said}): the SigV4 signature was refused: check "
        f"{SIGNING_REGION} / {SIGNING_NAME} / the keys"
    )


def refusal(status: int, body: Any, headers: Mapping[str, str]) -> str | None:
    """AWS's words when a 403 says the signature (or its scope, or its access key) was
    refused; None for any other answer (a 403 of the catalog's own). An answer to ``HEAD``
    has no body: its ``x-amzn-ErrorType`` header (``InvalidSignatureException:<doc URL>``)
    names the refusal alone."""
    if status != 403:
        return None
    if isinstance(body, dict):
        error = body.get("error")
        nested = error.get("message") if isinstance(error, dict) else None
        text = str(body.get("message") or body.get("Message") or nested or body)
    else:
        text = str(body or "")
    kind = next((v for k, v in headers.items() if k.lower() == "x-amzn-errortype"), "").partition(":")[0]
    said = "; ".join(part for part in (kind, text.strip()[:300]) if part)
    return said if any(words in said.lower() for words in _REFUSALS) else None


def _text(properties: Mapping[str, str], name: str) -> str | None:
    value = properties.get(name)
    return value.strip() if value and value.strip() else None


def _region(properties: Mapping[str, str], session: Any) -> str:
    """``rest.signing-region``, ``client.region``, then the default region chain (Java's
    ``DefaultAwsRegionProviderChain`` reads ``AWS_REGION`` first; botocore reads
    ``AWS_DEFAULT_REGION`` and the profile)."""
    region = (
        _text(properties, SIGNING_REGION)
        or _text(properties, CLIENT_REGION)
        or (os.environ.get("AWS_REGION") or "").strip()
        or session.get_config_variable("region")
    )
    if not region:
        raise UserError(
            f"{SIGV4_ENABLED}=true needs the region to sign for: set {SIGNING_REGION} (or "
            f"{CLIENT_REGION}, AWS_REGION, AWS_DEFAULT_REGION, or region in the AWS profile)"
        )
    return str(region)


def _credentials(properties: Mapping[str, str], session: Any) -> Any:
    """The static ``rest.*`` keys, else botocore's default chain (refreshable when the
    source expires: assumed roles, SSO, container and instance metadata)."""
    access_key = _text(properties, ACCESS_KEY_ID)
    secret = _text(properties, SECRET_ACCESS_KEY)
    if access_key or secret:
        if not (access_key and secret):
            raise UserError(f"{ACCESS_KEY_ID} and {SECRET_ACCESS_KEY} are given together, or neither")
        from botocore.credentials import Credentials

        return Credentials(access_key, secret, _text(properties, SESSION_TOKEN))
    found = session.get_credentials()
    if found is None:
        raise UserError(
            f"{SIGV4_ENABLED}=true found no AWS credentials: set {ACCESS_KEY_ID} and "
            f"{SECRET_ACCESS_KEY} (and {SESSION_TOKEN}), or provide them to the AWS default "
            "credential chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, an ~/.aws profile, "
            "container or instance metadata)"
        )
    return found
