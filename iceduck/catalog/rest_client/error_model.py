"""The REST spec's ``ErrorModel`` answers as iceduck's error kinds.

Every failure of the spec is ``{"error": {"message", "type", "code"}}`` (``IcebergErrorResponse``);
the HTTP status says what happened and the ``type`` (the Java exception's simple name)
refines it. The mapping follows Java's ``ErrorHandlers``:

* 404: ``NoSuchNamespaceException`` / ``NoSuchTableException`` (and any other 404):
  :class:`NotFoundError` naming what the call was about;
* 409: ``AlreadyExistsException`` -> :class:`AlreadyExistsError`, ``NamespaceNotEmptyException``
  -> :class:`ValidationError` (the protocol's "not empty"), ``CommitFailedException`` (and,
  on a commit, any 409) -> :class:`CommitConflictError`: iceduck's commit loop reloads and
  re-applies the statement;
* 400 -> :class:`UserError`, 422 -> :class:`ValidationError`, 406 (``UnsupportedOperationException``)
  -> :class:`UnsupportedError`;
* 401, 403, 419 -> one :class:`UserError` naming the catalog URI and what to check, never
  the secret;
* 5xx -> :class:`StorageError`; on a commit 500, 502, 503 and 504 are
  :class:`CommitStateUnknownError` (``tableCommitHandler``: "the commit state is
  unknown"), so no file the commit may have made current is deleted.
"""

from __future__ import annotations

from typing import Any

from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitStateUnknownError,
    IceduckError,
    NotFoundError,
    StorageError,
    UnsupportedError,
    UserError,
    ValidationError,
)

#: the statuses after which a commit's outcome is unknown (Java's ``tableCommitHandler``)
COMMIT_STATE_UNKNOWN = frozenset({500, 502, 503, 504})
AUTH_STATUSES = frozenset({401, 403, 419})


def error_parts(body: Any) -> tuple[str | None, str]:
    """``(type, message)`` of an ``IcebergErrorResponse`` (or whatever else came back)."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        kind = error.get("type") if isinstance(error.get("type"), str) else None
        message = error.get("message") if isinstance(error.get("message"), str) else ""
        return kind, message
    if isinstance(body, str):
        return None, body.strip()
    return None, ""


def error_for(
    status: int, body: Any, uri: str, about: str, *, namespace: str | None = None, commit: bool = False
) -> IceduckError:
    """The iceduck error for an answer of ``status`` to a call about ``about`` (``table
    'ns.t'``, ``namespace 'ns'``...) in ``namespace`` (``namespace 'ns'``, named for a
    ``NoSuchNamespaceException`` on a table route) at the catalog ``uri``."""
    kind, message = error_parts(body)
    said = f": {message}" if message else ""
    if status == 403:  # who the caller is was accepted: what they asked is not granted to them
        return UserError(f"the REST catalog at {uri} does not allow this (HTTP 403{said})")
    if status in AUTH_STATUSES:
        return UserError(
            f"the REST catalog at {uri} refused the credentials (HTTP {status}{said}): "
            "check the token or credential property"
        )
    if status == 404:
        if kind == "NoSuchNamespaceException" and namespace is not None:
            return NotFoundError(f"{namespace} not found in the REST catalog at {uri}{said}")
        return NotFoundError(f"{about} not found in the REST catalog at {uri}{said}")
    if status == 409:
        if kind == "AlreadyExistsException":
            return AlreadyExistsError(f"{about} already exists{said}")
        if kind == "NamespaceNotEmptyException":
            return ValidationError(f"{about} is not empty{said}")
        if commit or kind == "CommitFailedException":
            return CommitConflictError(f"{about} changed under the commit{said}")
        return UserError(f"the REST catalog at {uri} refused the request on {about} (HTTP 409{said})")
    if commit and status in COMMIT_STATE_UNKNOWN:
        return CommitStateUnknownError(
            f"the REST catalog at {uri} answered HTTP {status} to the commit to {about}{said}: it "
            "may or may not have landed; no file was deleted. Look at the table "
            "(SELECT * FROM <table>.snapshots) before running the statement again"
        )
    if status == 406 or kind == "UnsupportedOperationException":
        return UnsupportedError(f"the REST catalog at {uri} does not support this on {about}{said}")
    if status == 422:
        return ValidationError(f"the REST catalog at {uri} refused the change to {about}{said}")
    if 400 <= status < 500:
        return UserError(f"the REST catalog at {uri} refused the request on {about} (HTTP {status}{said})")
    return StorageError(f"the REST catalog at {uri} failed on {about} (HTTP {status}{said})")
