"""iceduck's one closed error hierarchy.

Every error iceduck raises on purpose is an :class:`IceduckError`, of exactly one of
six kinds, because each kind asks the caller for a different reaction:

* :class:`UserError` -- the statement or the argument is wrong; fix it and try again.
* :class:`UnsupportedError` -- valid Iceberg/SQL, but iceduck does not do it (yet).
* :class:`CorruptDataError` -- a file on disk breaks the spec; iceduck refuses to guess.
* :class:`CommitConflictError` -- someone else committed first; retrying may succeed.
* :class:`CommitStateUnknownError` -- a commit may or may not have landed (Java's
  ``CommitStateUnknownException``); its files were kept, look before retrying.
* :class:`StorageError` -- the machine refused: disk full, read-only, permission denied,
  file too large, name too long; free space or fix permissions and try again.

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


class CommitStateUnknownError(IceduckError):
    """A commit whose outcome is unknown: the swap may have landed.

    Java's ``CommitStateUnknownException``: raised when the catalog could not tell whether
    the new metadata became current (the swap was interrupted and checking the catalog
    afterwards failed too). Nothing the commit wrote was deleted -- deleting files the
    catalog may now point to would destroy the table -- so at worst unreferenced files
    remain. Look at the table (``SELECT * FROM t.snapshots``) before running it again.
    """

    retryable = False


class StorageError(IceduckError):
    """The storage refused an operation: no space left, read-only file system, permission
    denied, file too large, name too long. Not a problem of the statement or the table:
    the message names the file and says what to do (free space, fix permissions, ...)."""

    def __init__(self, problem: str, path: str | None = None) -> None:
        self.problem = problem
        self.path = path
        super().__init__(f"{path}: {problem}" if path else problem)
