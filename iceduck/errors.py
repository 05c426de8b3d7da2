"""iceduck's one closed error hierarchy.

Every error iceduck raises on purpose is an :class:`IceduckError`, of exactly one of
four kinds, because each kind asks the caller for a different reaction:

* :class:`UserError` -- the statement or the argument is wrong; fix it and try again.
* :class:`UnsupportedError` -- valid Iceberg/SQL, but iceduck does not do it (yet).
* :class:`CorruptDataError` -- a file on disk breaks the spec; iceduck refuses to guess.
* :class:`CommitConflictError` -- someone else committed first; retrying may succeed.

The DB-API layer maps these onto PEP 249's exceptions (``ProgrammingError``,
``NotSupportedError``, ``DataError``/``DatabaseError``, ``OperationalError``).
Subclasses below only refine the message's subject; callers should catch the kinds.
"""

from __future__ import annotations


class IceduckError(Exception):
    """Root of every error iceduck raises on purpose."""


class UserError(IceduckError):
    """The caller asked for something wrong: bad SQL, unknown table, type mismatch."""


class NotFoundError(UserError):
    """A named table, namespace, snapshot, ref or column does not exist."""


class AlreadyExistsError(UserError):
    """A table or namespace that is being created already exists."""


class ValidationError(UserError):
    """A value or change breaks a rule of the Iceberg spec (e.g. a disallowed promotion)."""


class UnsupportedError(IceduckError):
    """Valid input that iceduck does not support."""


class CorruptDataError(IceduckError):
    """A metadata, manifest, Puffin or data file is malformed.

    The message always names the file (when known) and what is wrong with it, so that
    a user can find the broken file without a debugger.
    """

    def __init__(self, problem: str, path: str | None = None) -> None:
        self.problem = problem
        self.path = path
        super().__init__(f"{path}: {problem}" if path else problem)


class CommitConflictError(IceduckError):
    """The table changed under a commit; the operation may be retried on fresh metadata."""

    retryable = True
