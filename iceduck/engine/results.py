"""The rows of one statement, read from the DuckDB cursor that ran it.

:class:`StatementRows` is what the user-facing :class:`~iceduck.result.Result` holds: every
fetch goes through :func:`~iceduck.engine.errors.duckdb_call` with the statement's cursor,
so a failure while rows stream (a damaged file met half-way, an interrupt) reaches the
user as one of iceduck's kinds, naming the file at fault.

DuckDB streams a result as Arrow record batches, so the Arrow forms are read without a
detour through Python tuples. DuckDB renamed its Arrow methods in 2.0
(``fetch_record_batch`` became ``to_arrow_reader``, ``fetch_arrow_table`` became
``to_arrow_table``); both spellings are accepted, because iceduck supports DuckDB from 1.1 on.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from iceduck.engine.errors import duckdb_call

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: rows per Arrow batch when the caller does not say (DuckDB's own default)
ROWS_PER_BATCH = 1_000_000


class StatementRows:
    """The unread rows of the statement that ran on ``cursor``; each form consumes them."""

    def __init__(self, cursor: Duck) -> None:
        self.cursor = cursor

    @property
    def description(self) -> list[tuple[str, Any]] | None:
        """(name, DuckDB type) per column; None for a statement without rows."""
        described = self.cursor.description
        return None if described is None else [(d[0], d[1]) for d in described]

    def fetchone(self) -> tuple[Any, ...] | None:
        return duckdb_call(self.cursor.fetchone, con=self.cursor)

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        return duckdb_call(self.cursor.fetchmany, size, con=self.cursor)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return duckdb_call(self.cursor.fetchall, con=self.cursor)

    def arrow_table(self) -> Any:
        """The unread rows as a ``pyarrow.Table``."""
        return duckdb_call(self._arrow, "to_arrow_table", "fetch_arrow_table", con=self.cursor)

    def record_batch_reader(self, rows_per_batch: int = ROWS_PER_BATCH) -> Any:
        """A ``pyarrow.RecordBatchReader`` streaming the unread rows from DuckDB."""
        if rows_per_batch < 1:
            raise ValueError(f"rows_per_batch must be positive, not {rows_per_batch}")
        return duckdb_call(
            self._arrow, "to_arrow_reader", "fetch_record_batch", rows_per_batch, con=self.cursor
        )

    def pandas_frame(self) -> Any:
        """The unread rows as a ``pandas.DataFrame`` (DuckDB converts from its vectors;
        the caller checks that pandas is installed)."""
        return duckdb_call(self._arrow, "fetch_df", "df", con=self.cursor)

    def close(self) -> None:
        self.cursor.close()

    def _arrow(self, new: str, old: str, *args: Any) -> Any:
        method = getattr(self.cursor, new, None) or getattr(self.cursor, old)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DuckDB notes the copy a DB-API result costs
            return method(*args)
