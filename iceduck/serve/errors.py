"""The REST spec's error model: every failure is ``{"error": {"message", "type", "code"}}``.

The OpenAPI spec (``ErrorModel``, ``IcebergErrorResponse``) names the exception types
clients switch on: Java's ``ErrorHandlers`` turns a 404 whose type is
``NoSuchNamespaceException`` into ``NoSuchNamespaceException`` and any other 404 on a table
route into ``NoSuchTableException``; a 409 on a commit is ``CommitFailedException`` (the
client refreshes and retries). So the type is chosen per kind of iceduck error and, for a
plain :class:`~iceduck.errors.NotFoundError`, per the resource the route serves.

A 500 carries the exception's class name only: a traceback or a path in a message of an
unexpected error could tell a remote client about the server's files.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitStateUnknownError,
    CorruptDataError,
    IceduckError,
    NotFoundError,
    StorageError,
    UnsupportedError,
    UserError,
)
from iceduck.io.fileio import MissingFileError


class HttpRefusal(UserError):
    """A refusal the iceduck kinds do not say by themselves: its status and spec type are
    given (a namespace that is not empty, an unauthorised request, a body too large...)."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        self.status = status
        self.error_type = error_type
        super().__init__(message)


class OAuthRefusal(HttpRefusal):
    """A refusal of ``POST /v1/oauth/tokens``, answered in OAuth's own shape (the spec's
    ``OAuthError``: ``{"error": "invalid_client", "error_description": ...}``, RFC 6749
    section 5.2), which OAuth clients parse instead of the error model."""

    def __init__(self, status: int, oauth_error: str, description: str) -> None:
        self.oauth_error = oauth_error
        super().__init__(status, oauth_error, description)


def no_such_namespace(message: str) -> HttpRefusal:
    """A 404 typed ``NoSuchNamespaceException`` even on a table route (Java's
    ``ErrorHandlers.tableErrorHandler`` reads the type to tell the two apart)."""
    return HttpRefusal(404, "NoSuchNamespaceException", message)


@dataclass(frozen=True)
class ErrorResponse:
    status: int
    error_type: str
    message: str
    #: answered as the spec's ``OAuthError`` rather than ``IcebergErrorResponse``
    oauth: bool = False

    def body(self) -> dict[str, Any]:
        """The spec's ``IcebergErrorResponse`` (or ``OAuthError``)."""
        if self.oauth:
            return {"error": self.error_type, "error_description": self.message}
        return {"error": {"message": self.message, "type": self.error_type, "code": self.status}}


#: the statuses for which the OpenAPI document declares the view routes' error body as a bare
#: ``ErrorModel`` (``message``, ``type``, ``code`` at the top), where every other route, and the
#: view routes' own examples, wrap it in ``IcebergErrorResponse`` (``{"error": {...}}``)
VIEW_BARE_ERROR_STATUSES = frozenset({404, 406, 409})


def view_error_body(body: dict[str, Any], status: int) -> dict[str, Any]:
    """``body`` as a view route answers it: for :data:`VIEW_BARE_ERROR_STATUSES`, the wrapped
    error with its fields repeated at the top, which reads right under either schema the
    document gives (clients read ``error``, as Java's ``ErrorResponseParser`` does)."""
    error = body.get("error")
    if status in VIEW_BARE_ERROR_STATUSES and isinstance(error, dict):
        return {**body, **error}
    return body


#: what a plain NotFoundError is on a route serving each resource
_NOT_FOUND = {
    "table": "NoSuchTableException",
    "namespace": "NoSuchNamespaceException",
    "view": "NoSuchViewException",
}


#: iceduck's own wording of a missing or existing table, view or namespace ("table 'ns.t' not
#: found in catalog 'x'", "namespace n does not exist")
_WHAT_IS_WRONG = re.compile(
    r"^(?P<kind>table|namespace|view) '?(?P<name>[^' ]+?)'? "
    r"(?P<how>not found|does not exist|already exists)\b"
)


def java_message(message: str) -> str:
    """``message`` in Java's words when it says a table, view or namespace is missing or
    exists: "Table does not exist: ns.t", "View does not exist: ns.v", "Namespace already
    exists: n" (Java's catalogs and
    ``CatalogHandlers``), which Java's clients show and Iceberg's catalog tests check word
    for word; any other message as it is."""
    found = _WHAT_IS_WRONG.match(message)
    if found is None:
        return message
    how = "already exists" if found["how"] == "already exists" else "does not exist"
    return f"{found['kind'].capitalize()} {how}: {found['name']}"


def error_response(error: BaseException, resource: str | None = None) -> ErrorResponse:
    """The response for ``error`` raised while serving a route on ``resource``; a missing or
    existing table or namespace is told in Java's words (:func:`java_message`)."""
    problem = _error_response(error, resource)
    if problem.status in (404, 409) and not problem.oauth:
        return dataclasses.replace(problem, message=java_message(problem.message))
    return problem


def _error_response(error: BaseException, resource: str | None = None) -> ErrorResponse:
    message = str(error)
    if isinstance(error, OAuthRefusal):
        return ErrorResponse(error.status, error.oauth_error, message, oauth=True)
    if isinstance(error, HttpRefusal):
        return ErrorResponse(error.status, error.error_type, message)
    if isinstance(error, NotFoundError):
        return ErrorResponse(404, _NOT_FOUND.get(resource or "", "NotFoundException"), message)
    if isinstance(error, AlreadyExistsError):
        return ErrorResponse(409, "AlreadyExistsException", message)
    if isinstance(error, CommitConflictError):
        return ErrorResponse(409, "CommitFailedException", message)
    if isinstance(error, CommitStateUnknownError):
        # the spec's 500/502/504 on a commit: "the commit state is unknown"
        return ErrorResponse(500, "CommitStateUnknownException", message)
    if isinstance(error, UnsupportedError):
        return ErrorResponse(406, "UnsupportedOperationException", message)
    if isinstance(error, UserError):
        return ErrorResponse(400, "BadRequestException", message)
    if isinstance(error, MissingFileError):
        # a file the table's metadata names is gone (e.g. one metadata file registered under
        # two names, then purged through one): Iceberg's NotFoundException, which Java's
        # RESTCatalogAdapter answers with 404, naming the file -- not a server failure
        return ErrorResponse(404, "NotFoundException", message)
    if isinstance(error, CorruptDataError):
        return ErrorResponse(500, "CorruptDataException", message)
    if isinstance(error, StorageError):
        return ErrorResponse(503, "ServiceUnavailableException", message)
    if isinstance(error, IceduckError):
        return ErrorResponse(500, "InternalServerError", message)
    return ErrorResponse(500, "InternalServerError", f"internal error ({type(error).__name__})")
