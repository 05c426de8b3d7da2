"""The AWS Glue client of a Glue catalog: boto3 configured from Iceberg's property names,
and boto3's failures turned into iceduck's errors.

Properties, as Iceberg Java's ``AwsProperties`` and PyIceberg's ``GlueCatalog`` name them:

* ``glue.region`` (else ``client.region``, else ``s3.region``, else boto3's own sources:
  ``AWS_REGION``, ``~/.aws/config``);
* ``glue.endpoint``: another Glue endpoint (a VPC endpoint, a test server);
* ``glue.access-key-id`` / ``glue.secret-access-key`` / ``glue.session-token``, falling back to
  ``client.*`` and then ``s3.*`` keys of the same names, then to boto3's default credential
  chain (environment, profile, instance role); ``glue.profile-name`` (else
  ``client.profile-name``) picks a profile of ``~/.aws``;
* ``glue.id``: the catalog id (the AWS account owning the catalog) sent as ``CatalogId``.

boto3 is imported when a Glue catalog opens, never before: ``pip install 'iceduck[glue]'``.

Errors name the catalog, the object and what to check, and never a secret: any secret
value a message might echo is replaced by ``***`` (:func:`scrub`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    IceduckError,
    NotFoundError,
    StorageError,
    UserError,
    ValidationError,
)

INSTALL_HINT = "pip install 'iceduck[glue]' (or: pip install boto3)"
#: the seconds a connection to Glue may take before it counts as unreachable
CONNECT_TIMEOUT_S = 10
READ_TIMEOUT_S = 60

#: Glue's and AWS's codes for credentials that are wrong, expired or not allowed
_AUTH_CODES = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "SignatureDoesNotMatch",
        "InvalidClientTokenId",
        "ExpiredTokenException",
        "AccessDeniedException",
        "MissingAuthenticationTokenException",
        "IncompleteSignature",
    }
)
_SECRET_KEYS = ("secret-access-key", "session-token")


def first_property(properties: Mapping[str, str], *keys: str) -> str | None:
    """The value of the first of ``keys`` that ``properties`` sets (non-empty)."""
    for key in keys:
        value = properties.get(key)
        if value:
            return value
    return None


def _aws(properties: Mapping[str, str], name: str) -> str | None:
    """``glue.<name>``, else ``client.<name>``, else ``s3.<name>``."""
    return first_property(properties, f"glue.{name}", f"client.{name}", f"s3.{name}")


def region(properties: Mapping[str, str]) -> str | None:
    return _aws(properties, "region")


def secrets(properties: Mapping[str, str]) -> list[str]:
    """Every secret value the properties hold, for :func:`scrub`."""
    return [v for k, v in properties.items() if v and any(k.endswith(s) for s in _SECRET_KEYS)]


def scrub(text: str, hidden: list[str]) -> str:
    """``text`` with every value of ``hidden`` replaced by ``***``."""
    for value in hidden:
        text = text.replace(value, "***")
    return text


def make_client(properties: Mapping[str, str], where: str, attempts: int | None = None) -> Any:
    """A boto3 Glue client for the properties (module docstring); ``where`` names the
    catalog in errors. ``attempts`` caps the tries of each request (None: the SDK's
    standard retries)."""
    try:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError
    except ImportError as e:
        raise UserError(f"{where} needs boto3, AWS's SDK for Python ({e}): {INSTALL_HINT}") from None
    try:
        session = boto3.Session(
            profile_name=first_property(properties, "glue.profile-name", "client.profile-name"),
            region_name=region(properties),
            aws_access_key_id=_aws(properties, "access-key-id"),
            aws_secret_access_key=_aws(properties, "secret-access-key"),
            aws_session_token=_aws(properties, "session-token"),
        )
        return session.client(
            "glue",
            endpoint_url=properties.get("glue.endpoint") or None,
            config=Config(
                connect_timeout=CONNECT_TIMEOUT_S,
                read_timeout=READ_TIMEOUT_S,
                retries={"mode": "standard", **({"total_max_attempts": attempts} if attempts else {})},
            ),
        )
    except BotoCoreError as e:  # no region, an unknown profile, a malformed endpoint
        raise UserError(
            f"{where}: cannot set up the Glue client: {scrub(str(e), secrets(properties))}; "
            "check glue.region (or client.region / AWS_REGION), glue.endpoint and glue.profile-name"
        ) from None


def error_code(error: BaseException) -> str | None:
    """The AWS error code of a boto3 ``ClientError`` (None for any other error)."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    code = response.get("Error", {}).get("Code")
    return str(code) if code else None


def http_status(error: BaseException) -> int | None:
    """The HTTP status of Glue's answer in a boto3 ``ClientError`` (None for any other error)."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status if isinstance(status, int) else None


def is_refusal(error: BaseException) -> bool:
    """Whether Glue answered ``error`` with an AWS error code and a status below 500: it
    refused the request as a whole (a 5xx may have been applied before it failed)."""
    status = http_status(error)
    return error_code(error) is not None and status is not None and status < 500


def translate(error: Exception, where: str, about: str, hidden: list[str], endpoint: str) -> IceduckError:
    """The iceduck error of a failed Glue call on ``about`` (a table or database, as
    messages name it): Glue's own answers by their code, credentials and reachability
    with what to check. ``hidden`` are the secrets the message must not show."""
    code = error_code(error)
    text = scrub(str(error), hidden)
    if code == "EntityNotFoundException":
        return NotFoundError(f"{about} not found in {where}")
    if code == "AlreadyExistsException":
        return AlreadyExistsError(f"{about} already exists in {where}")
    if code == "ConcurrentModificationException":
        return CommitConflictError(f"{about} in {where}: Glue detected a concurrent update ({text})")
    if code in ("InvalidInputException", "ValidationException"):
        return ValidationError(f"{about} in {where}: Glue refused the request: {text}")
    if code in _AUTH_CODES or http_status(error) in (401, 403):
        return UserError(
            f"{where} refused access to {about} ({code}): check the credentials "
            "(glue.access-key-id / glue.secret-access-key / glue.session-token, or the client.* "
            "and s3.* keys, or the AWS_* environment), their permissions, glue.region and glue.id"
        )
    if code is not None:
        return StorageError(f"{where} failed on {about} ({code}): {text}")
    name = type(error).__name__
    if name in ("NoCredentialsError", "PartialCredentialsError"):
        return UserError(
            f"{where} found no AWS credentials for {about}: set glue.access-key-id and "
            "glue.secret-access-key, or configure AWS's default credentials (environment, profile, role)"
        )
    return StorageError(
        f"cannot reach {where} for {about} at {endpoint} ({name}: {text}): check glue.endpoint, "
        "glue.region and the network"
    )
