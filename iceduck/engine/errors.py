"""DuckDB's exceptions as iceduck's error kinds (:mod:`iceduck.errors`).

Only the engine imports DuckDB, so only the engine knows its exception classes: every
other layer asks here. :func:`translate_duckdb_error` maps a DuckDB exception to the kind
it means (a wrong statement, a missing name, something unsupported, a file that cannot be
read...), keeping DuckDB's message but giving back the names the user wrote; an error
about one of the statement's files names that file, even when DuckDB's message does not
(:mod:`iceduck.engine.file_errors`). :func:`duckdb_call` runs a call into DuckDB through it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from iceduck.engine.file_errors import io_error, statement_file_error
from iceduck.engine.rewritten_messages import user_terms
from iceduck.errors import IceduckError, NotFoundError, UnsupportedError, UserError

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

T = TypeVar("T")

#: DuckDB exception classes whose meaning is "the statement is wrong" (tested after
#: ``CatalogException``, a ``ProgrammingError`` that means "no such name")
_USER_ERRORS: tuple[type[Exception], ...] = (
    duckdb.ParserException,
    duckdb.BinderException,
    duckdb.InvalidInputException,
    duckdb.ConversionException,
    duckdb.OutOfRangeException,
    duckdb.TypeMismatchException,
    duckdb.SyntaxException,
    duckdb.DependencyException,
    duckdb.ConstraintException,
    duckdb.InvalidTypeException,
    duckdb.ProgrammingError,
)


def is_duckdb_error(error: BaseException) -> bool:
    """Whether ``error`` comes from DuckDB (and so is not yet one of iceduck's kinds)."""
    return isinstance(error, duckdb.Error)


def is_conversion_error(error: BaseException) -> bool:
    """Whether DuckDB failed to convert a value (a cast), as opposed to any other failure."""
    return isinstance(error, duckdb.ConversionException)


def is_binder_error(error: BaseException) -> bool:
    """Whether DuckDB could not bind a statement (a column or function it does not know)."""
    return isinstance(error, duckdb.BinderException)


def duckdb_call(fn: Callable[..., T], *args: Any, con: Duck | None = None) -> T:
    """Call ``fn``, turning DuckDB's exceptions into iceduck's (messages unchanged).

    ``con`` is the DuckDB cursor of the statement, when there is one: an error about a file
    its scans read is then named after that file.
    """
    try:
        return fn(*args)
    except IceduckError:
        raise
    except Exception as e:
        translated = translate_duckdb_error(e, con=con)
        if translated is None:
            raise
        raise translated from e


def translate_duckdb_error(
    error: Exception, views: dict[str, str] | None = None, rewritten: bool = False, con: Duck | None = None
) -> IceduckError | None:
    """The iceduck error for a DuckDB exception; None for anything not from DuckDB.

    ``views`` maps the names of the statement's DuckDB objects to the references they
    replaced, and ``rewritten`` says the text DuckDB ran is not the user's: a message
    quoting it is given back the user's names and loses DuckDB's ``LINE`` excerpt, whose
    caret would point into text the user never wrote. ``con``, the statement's cursor,
    lets an error about one of the files its scans read name the file
    (:func:`iceduck.engine.file_errors.statement_file_error`): a truncated data file is
    then a CorruptDataError, not the "invalid input" DuckDB calls it, and a full disk a
    StorageError.
    """
    if not isinstance(error, duckdb.Error):
        return None
    if con is not None:
        about_file = statement_file_error(con, error)
        if about_file is not None:
            return about_file
    message = _user_names(str(error), views or {}, rewritten)
    if isinstance(error, duckdb.CatalogException):
        return NotFoundError(message)
    if isinstance(error, duckdb.IOException):  # HTTPException is one too
        return io_error(error, table_file=False)
    if isinstance(error, duckdb.NotImplementedException):
        return UnsupportedError(message)
    if isinstance(error, _USER_ERRORS):
        return UserError(message)
    if isinstance(error, duckdb.InterruptException):
        return UserError("the query was interrupted")
    return None


def _user_names(message: str, views: dict[str, str], rewritten: bool) -> str:
    if not rewritten and not any(view in message for view in views):
        return message
    head, _, _ = message.partition("\n\nLINE ")
    for view, shown in views.items():
        head = re.sub(rf'"{re.escape(view)}"(?: AS "[^"]*")?', shown, head)
    return user_terms(head) if rewritten else head
