"""The result of one statement, and DuckDB's errors as iceduck's.

A :class:`Result` wraps the DuckDB cursor that ran a statement (each statement gets its own,
see :mod:`iceduck.session`) and hands its rows out as tuples or Arrow. Every call into
DuckDB goes through :func:`duckdb_call`, so a DuckDB exception reaches the user as one of
iceduck's error kinds (:mod:`iceduck.errors`), with the names the user wrote; an error
about one of the table's files (broken, missing, or the disk refusing) names that file,
even when DuckDB's message does not (:mod:`iceduck.engine.file_errors`).

:func:`statement_errors` is the last line: a Python exception that no code raises on
purpose but that hostile input or an unlucky machine can provoke (an ``OSError`` of a
full disk, sqlglot's ``RecursionError``, ``decimal.InvalidOperation``, a ``UnicodeError``,
Python's "embedded null byte") leaves a statement as one of iceduck's kinds too.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from iceduck.engine.file_errors import io_error, statement_file_error
from iceduck.errors import IceduckError, NotFoundError, UnsupportedError, UserError, ValidationError
from iceduck.io import fileio
from iceduck.ops.context import OpResult
from iceduck.sql.explain import ScanExplanation
from iceduck.sql.parse import NESTED_TOO_DEEPLY


@dataclass
class Result:
    """The outcome of one statement: rows to fetch from the DuckDB cursor that ran it.

    A write statement has no rows: its ``rowcount`` is the number of rows it changed
    (-1 for DDL), ``description`` is None and fetching returns nothing, as in ``sqlite3``
    (the PEP 249 cursor raises instead, as the standard asks).

    Rows come out as tuples (``fetch*``), or as Arrow without a detour through Python
    objects: ``to_arrow_table``, ``fetch_record_batch`` (a stream), ``df`` (pandas), ``pl``
    (polars) and the Arrow PyCapsule ``__arrow_c_stream__`` (``pyarrow.table(result)``,
    ``polars.DataFrame(result)``); see :mod:`iceduck.result_arrow`. Every form consumes
    the rows not fetched yet.
    """

    duck: Any
    statement: str
    #: the Iceberg scans the statement planned (EXPLAIN shows them; tests read them)
    scans: list[ScanExplanation] = field(default_factory=list)
    #: set for write statements: what the operation reported
    written: OpResult | None = None

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        """PEP 249 7-tuples; the type code is the DuckDB type's text (see :mod:`iceduck.dbapi`)."""
        if self.written is not None:
            return None
        from iceduck.dbapi import describe_column

        described = self.duck.description
        return None if described is None else [describe_column(d[0], d[1]) for d in described]

    @property
    def rowcount(self) -> int:
        return -1 if self.written is None else self.written.rowcount

    @property
    def message(self) -> str | None:
        """A write statement's one-line report (for the shell)."""
        return None if self.written is None else self.written.message

    def fetchone(self) -> tuple[Any, ...] | None:
        if self.written is not None:
            return None
        return duckdb_call(self.duck.fetchone, con=self.duck)

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        if self.written is not None:
            return []
        return duckdb_call(self.duck.fetchmany, size, con=self.duck)

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self.written is not None:
            return []
        return duckdb_call(self.duck.fetchall, con=self.duck)

    def to_arrow_table(self) -> Any:
        """The remaining rows as a ``pyarrow.Table``."""
        from iceduck import result_arrow

        if self.written is not None:
            return result_arrow.empty_table()
        return duckdb_call(result_arrow.arrow_table, self.duck, con=self.duck)

    fetch_arrow_table = to_arrow_table

    def fetch_record_batch(self, rows_per_batch: int = 1_000_000) -> Any:
        """A ``pyarrow.RecordBatchReader`` streaming the remaining rows from DuckDB."""
        from iceduck import result_arrow

        if self.written is not None:
            return result_arrow.empty_reader()
        return duckdb_call(result_arrow.record_batch_reader, self.duck, rows_per_batch, con=self.duck)

    def df(self) -> Any:
        """The remaining rows as a ``pandas.DataFrame`` (needs pandas)."""
        from iceduck import result_arrow

        if self.written is not None:
            return result_arrow.require("pandas", "df()").DataFrame()
        return duckdb_call(result_arrow.pandas_frame, self.duck, con=self.duck)

    def pl(self) -> Any:
        """The remaining rows as a ``polars.DataFrame`` (needs polars)."""
        from iceduck import result_arrow

        if self.written is not None:
            return result_arrow.require("polars", "pl()").DataFrame()
        return duckdb_call(result_arrow.polars_frame, self.duck, con=self.duck)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of the remaining rows (zero-copy for pyarrow, polars)."""
        return self.fetch_record_batch().__arrow_c_stream__(requested_schema)

    def close(self) -> None:
        self.duck.close()


# -- DuckDB errors -> iceduck errors ---------------------------------------------------------------

#: DuckDB exception classes whose meaning is "the statement is wrong"
_USER_ERRORS = frozenset(
    {
        "ParserException",
        "BinderException",
        "InvalidInputException",
        "ConversionException",
        "OutOfRangeException",
        "TypeMismatchException",
        "SyntaxException",
        "DependencyException",
        "ConstraintException",
        "InvalidTypeException",
        "ProgrammingError",
    }
)


def duckdb_call(fn: Any, *args: Any, con: Any = None) -> Any:
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
    error: Exception, views: dict[str, str] | None = None, rewritten: bool = False, con: Any = None
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
    if not type(error).__module__.lstrip("_").startswith("duckdb"):
        return None
    if con is not None:
        about_file = statement_file_error(con, error)
        if about_file is not None:
            return about_file
    kind = type(error).__name__
    message = _user_names(str(error), views or {}, rewritten)
    if kind == "CatalogException":
        return NotFoundError(message)
    if kind == "IOException" or kind == "HTTPException":
        return io_error(error)
    if kind == "NotImplementedException":
        return UnsupportedError(message)
    if kind in _USER_ERRORS:
        return UserError(message)
    if kind == "InterruptException":
        return UserError("the query was interrupted")
    return None


def _user_names(message: str, views: dict[str, str], rewritten: bool) -> str:
    if not rewritten and not any(view in message for view in views):
        return message
    head, _, _ = message.partition("\n\nLINE ")
    for view, shown in views.items():
        head = re.sub(rf'"{re.escape(view)}"(?: AS "[^"]*")?', shown, head)
    return head


# -- the last line: Python's own exceptions -> iceduck errors --------------------------------------


@contextmanager
def statement_errors() -> Iterator[None]:
    """Run a statement, raising a Python exception that escaped every layer as the iceduck
    error :func:`python_error` says (anything else -- a bug -- stays what it is)."""
    try:
        yield
    except Exception as e:
        translated = python_error(e)
        if translated is None:
            raise
        raise translated from e


def python_error(error: BaseException) -> IceduckError | None:
    """The iceduck error for a Python exception that reached the statement boundary; None for
    iceduck's own errors and for anything not listed (a bug must stay visible as one)."""
    if isinstance(error, IceduckError):
        return None
    if isinstance(error, RecursionError):
        return UserError(NESTED_TOO_DEEPLY)
    if isinstance(error, decimal.DecimalException):
        return ValidationError(
            f"a decimal computation failed (decimal.{type(error).__name__}): a value has more "
            "digits than the computation allows, or is not a number"
        )
    if isinstance(error, UnicodeError):
        return UserError(f"text is not valid Unicode: {_unicode_problem(error)}")
    if isinstance(error, OSError):
        return fileio.storage_error(error)
    if isinstance(error, ValueError) and ("null byte" in str(error) or "null character" in str(error)):
        return UserError("a name, path or value contains a NUL character, which a file name cannot hold")
    return None


def _unicode_problem(error: UnicodeError) -> str:
    if isinstance(error, UnicodeEncodeError | UnicodeDecodeError):
        return f"{error.reason} at position {error.start}"
    return str(error)
