"""PEP 249 (DB-API 2.0) module globals and exceptions, and how iceduck's errors map onto them.

An error a cursor raises is *both* the PEP 249 class and the iceduck error it came from:
``except iceduck.ProgrammingError`` and ``except iceduck.errors.NotFoundError`` both
catch an unknown table. The mapping (:data:`MAPPING`) follows the kinds of
:mod:`iceduck.errors`:

=========================  ======================  ================================
iceduck                    PEP 249                 why
=========================  ======================  ================================
UserError (NotFound...)    ProgrammingError        the statement or a name is wrong
ValidationError            DataError               a value breaks a rule
UnsupportedError           NotSupportedError       valid, but not supported (yet)
CorruptDataError           DatabaseError           a file of the table is broken
CommitConflictError        OperationalError        retry may succeed
=========================  ======================  ================================

Anything else raised by DuckDB surfaces as :class:`OperationalError`.
"""

from __future__ import annotations

from iceduck import errors

apilevel = "2.0"
#: threads may share the module, not connections (each connection owns one DuckDB database)
threadsafety = 1
#: ``?`` markers; DuckDB's ``$1`` and ``$name`` work too
paramstyle = "qmark"


class Warning(Exception):
    """Important warnings (PEP 249); iceduck raises none yet."""


class Error(Exception):
    """Base of every PEP 249 error."""


class InterfaceError(Error):
    """Misuse of the interface: a closed connection or cursor, fetching before executing."""


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


#: iceduck error kind -> PEP 249 class, most specific first
MAPPING: tuple[tuple[type[errors.IceduckError], type[Error]], ...] = (
    (errors.ValidationError, DataError),
    (errors.UserError, ProgrammingError),
    (errors.UnsupportedError, NotSupportedError),
    (errors.CorruptDataError, DatabaseError),
    (errors.CommitConflictError, OperationalError),
    (errors.IceduckError, DatabaseError),
)

_COMBINED: dict[tuple[type[Error], type[Exception]], type[Error]] = {}


def _combined(dbapi_class: type[Error], original: type[Exception]) -> type[Error]:
    key = (dbapi_class, original)
    found = _COMBINED.get(key)
    if found is None:
        found = type(original.__name__, (dbapi_class, original), {"__module__": original.__module__})
        _COMBINED[key] = found
    return found


def dbapi_error(error: Exception) -> Error:
    """``error`` as an instance of both its PEP 249 class and its own class.

    The copy keeps the message and attributes (``CorruptDataError.path``...); raise it
    ``from error`` so the original stays in the chain.
    """
    if isinstance(error, Error):
        return error
    if not isinstance(error, errors.IceduckError):
        return OperationalError(str(error))  # e.g. DuckDB's own (C types cannot be mixed in)
    dbapi_class = next(mapped for iceduck_class, mapped in MAPPING if isinstance(error, iceduck_class))
    combined = _combined(dbapi_class, type(error))
    copy = combined.__new__(combined)
    copy.__dict__.update(error.__dict__)
    copy.args = error.args
    return copy
