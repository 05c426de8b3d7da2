"""The result of one statement, and the last line of error translation.

A :class:`Result` holds the engine's :class:`~iceduck.engine.results.StatementRows` of
the DuckDB cursor that ran a statement (each statement gets its own, see
:mod:`iceduck.session.session`) and hands its rows out as tuples or Arrow. The engine reads them,
so a DuckDB exception reaches the user as one of iceduck's error kinds
(:mod:`iceduck.errors`; :mod:`iceduck.engine.errors` translates).

:func:`statement_errors` is the last line: a Python exception that no code raises on
purpose but that hostile input or an unlucky machine can provoke (an ``OSError`` of a
full disk, sqlglot's ``RecursionError``, ``decimal.InvalidOperation``, a ``UnicodeError``,
Python's "embedded null byte") leaves a statement as one of iceduck's kinds too.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iceduck.errors import IceduckError, UserError, ValidationError
from iceduck.io import fileio
from iceduck.ops.context import OpResult
from iceduck.sql.explain import ScanExplanation
from iceduck.sql.parse import NESTED_TOO_DEEPLY

if TYPE_CHECKING:
    from iceduck.engine.results import StatementRows


@dataclass
class Result:
    """The outcome of one statement: rows to fetch from the DuckDB cursor that ran it.

    A write statement has no rows: its ``rowcount`` is the number of rows it changed
    (-1 for DDL), ``description`` is None and fetching returns nothing, as in ``sqlite3``
    (the PEP 249 cursor answers as DuckDB's does instead: one ``Count`` row,
    :func:`iceduck.dbapi.write_answer`).

    Rows come out as tuples (``fetch*``), or as Arrow without a detour through Python
    objects: ``to_arrow_table``, ``fetch_record_batch`` (a stream), ``df`` (pandas), ``pl``
    (polars) and the Arrow PyCapsule ``__arrow_c_stream__`` (``pyarrow.table(result)``,
    ``polars.DataFrame(result)``); see :mod:`iceduck.session.result_forms`. Every form consumes
    the rows not fetched yet.

    A query is bound when executed (a wrong name raises then, and ``description`` is
    known) and runs at the first fetch, in the form that fetch asks for
    (:mod:`iceduck.engine.results`): tuples stream from a DuckDB result a chunk at a time,
    ``fetch_record_batch`` is DuckDB's own Arrow stream (memory stays flat however large the
    result), and ``to_arrow_table`` / ``df`` / ``pl`` receive DuckDB's Arrow without a copy.
    An error while the query runs (a damaged data file) therefore raises at the first
    fetch, as in DuckDB's relational API. After an Arrow form, the tuple forms find no rows
    left; after a tuple fetch, the Arrow forms read the rest (a copy, as DuckDB makes).
    """

    rows: StatementRows
    statement: str
    #: the Iceberg scans the statement planned (EXPLAIN shows them; tests read them)
    scans: list[ScanExplanation] = field(default_factory=list)
    #: set for write statements: what the operation reported
    written: OpResult | None = None
    #: what the user should know besides the rows, e.g. why a ``CALL`` rewrote nothing (its
    #: result columns are Spark's, all zeros then); the shell prints it under the rows
    notice: str | None = None

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        """PEP 249 7-tuples; the type code is the DuckDB type's text (see :mod:`iceduck.dbapi`)."""
        if self.written is not None:
            return None
        from iceduck.dbapi import describe_column

        described = self.rows.description
        return None if described is None else [describe_column(name, kind) for name, kind in described]

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
        return self.rows.fetchone()

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        if self.written is not None:
            return []
        return self.rows.fetchmany(size)

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self.written is not None:
            return []
        return self.rows.fetchall()

    def to_arrow_table(self) -> Any:
        """The remaining rows as a ``pyarrow.Table``."""
        from iceduck.session import result_forms

        if self.written is not None:
            return result_forms.empty_table()
        return self.rows.arrow_table()

    fetch_arrow_table = to_arrow_table

    def fetch_record_batch(self, rows_per_batch: int = 1_000_000) -> Any:
        """A ``pyarrow.RecordBatchReader`` streaming the remaining rows from DuckDB, a batch
        at a time (DuckDB computes the rows as they are read)."""
        from iceduck.session import result_forms

        if self.written is not None:
            return result_forms.empty_reader()
        return self.rows.record_batch_reader(rows_per_batch)

    to_arrow_reader = fetch_record_batch

    def df(self) -> Any:
        """The remaining rows as a ``pandas.DataFrame`` (needs pandas)."""
        from iceduck.session import result_forms

        pandas = result_forms.require("pandas", "df()")
        if self.written is not None:
            return pandas.DataFrame()
        return self.rows.pandas_frame()

    def pl(self) -> Any:
        """The remaining rows as a ``polars.DataFrame`` (needs polars)."""
        from iceduck.session import result_forms

        polars = result_forms.require("polars", "pl()")
        if self.written is not None:
            return polars.DataFrame()
        return polars.from_arrow(self.rows.arrow_table())

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of the remaining rows (zero-copy for pyarrow, polars;
        streamed, as ``fetch_record_batch``)."""
        return self.fetch_record_batch().__arrow_c_stream__(requested_schema)

    def close(self) -> None:
        self.rows.close()


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
