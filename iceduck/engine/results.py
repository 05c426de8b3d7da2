"""The rows of one statement, read from the DuckDB cursor that ran it.

:class:`StatementRows` is what the user-facing :class:`~iceduck.session.result.Result` holds: every
fetch goes through :func:`~iceduck.engine.errors.duckdb_call` with the statement's cursor,
so a failure while rows stream (a damaged file met half-way, an interrupt) reaches the
user as one of iceduck's kinds, naming the file at fault.

A query is *bound* when it is executed and *run* at its first fetch, in the form that fetch
asks for (:meth:`StatementRows.bind`). DuckDB picks a result's output format when it runs
the statement: a DB-API result (``cursor.execute``) streams rows as Python tuples, but its
Arrow forms read the whole pending result into a copy first (1.9 GB on a 20M-row query),
while a relation (``cursor.sql``) streams Arrow batches (``to_arrow_reader``: flat memory)
and hands over a whole ``pyarrow.Table`` without a copy. So:

* at execute, ``cursor.sql(sql, params=...)`` binds the query -- a catalog or binder error
  still raises there, and ``description`` comes from the binding -- and runs nothing;
* the first ``fetchone`` / ``fetchmany`` / ``fetchall`` runs it as a DB-API result
  (``cursor.execute``), which streams rows; later Arrow forms read what is left of it;
* the first Arrow form (``record_batch_reader``, ``arrow_table``, ``pandas_frame``) runs
  the relation in that form; the rows are then consumed, and later fetches find none.

A failure while the query runs (a damaged data file) therefore raises at the first fetch,
as in DuckDB's relational API. Binding costs one more bind of the rewritten text (parsed
once for both): about 0.35 ms of a 3.8 ms warm point query over a 100,000-row table.
A query run again from what its last run kept (:mod:`iceduck.session.prepared`) is not bound
at execute: its description is the earlier binding's (:meth:`StatementRows.pending`), and
its first fetch runs DuckDB's parse of it on the cursor that holds its scans.
Statements whose rows iceduck computed itself (SHOW, EXPLAIN, DESCRIBE) leave a DB-API
result on the cursor instead (``StatementRows(cursor)``).

The statement's cursor stays the result's cursor: the objects a scan registered on it
(position-delete tables, metadata tables, file-list variables) live until the rows are
read. Each read runs inside ``running()`` (the session's: its ``interrupt()`` and
``progress()`` reach the cursor while DuckDB works for the read, batch by batch for a
stream).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

from iceduck.engine.arrow_stream import raised_as_iceduck, translating_reader
from iceduck.engine.errors import duckdb_call

if TYPE_CHECKING:
    import duckdb

    from iceduck.engine.connection import Duck

T = TypeVar("T")

#: rows per Arrow batch when the caller does not say (DuckDB's own default)
ROWS_PER_BATCH = 1_000_000

#: what a read runs inside: the session's "this cursor is working" context
Running = Callable[[], AbstractContextManager[Any]]


class StatementRows:
    """The unread rows of the statement of ``cursor``; each form consumes them.

    Built on a cursor holding a DB-API result (rows iceduck computed), or by :meth:`bind`
    for a query not yet run.
    """

    def __init__(
        self, cursor: Duck, running: Running = nullcontext, release: Callable[[], None] | None = None
    ) -> None:
        self.cursor = cursor
        self.running = running
        #: a cursor lent by a kept query (:mod:`iceduck.session.prepared`): closing these rows
        #: gives it back (its result cancelled) instead of closing it
        self.release = release
        self.closed = False
        #: the bound query, until a fetch runs it
        self._relation: duckdb.DuckDBPyRelation | None = None
        #: what a run as rows executes: the parsed statement (or its text) and parameters
        self._query: tuple[Any, Any] | None = None
        #: set once an Arrow form consumed the relation: the schema of the (empty) rest
        self._consumed: Any = None
        #: the relation a DB-API result was run from, alive while the rows are read
        self._source: duckdb.DuckDBPyRelation | None = None
        #: a bound query's columns, as the binder gave them (the cursor has none until run)
        self._described: list[tuple[str, Any]] | None = None

    @classmethod
    def bind(cls, cursor: Duck, sql: str, params: Any, running: Running = nullcontext) -> StatementRows:
        """Bind query ``sql`` on ``cursor`` (its catalog and binder errors raise here) and
        leave it to the first fetch to run it in the form asked (see the module docstring)."""
        rows = cls(cursor, running)
        # parsed once for the binding and for a run as rows (a parse of a scan's text is
        # ~0.15 ms of a warm point query)
        parsed = cursor.extract_statements(sql)
        statement: Any = parsed[0] if len(parsed) == 1 else sql
        relation = cursor.sql(statement, params=params)
        if relation is None:  # DuckDB ran it already: a statement that returns nothing
            rows._consumed = _no_columns()
        else:
            if relation.type == "MATERIALIZED_RELATION":  # it ran already (it writes: nextval)
                statement, params = relation.sql_query(), None  # rows read what it returned
            rows._relation, rows._query = relation, (statement, params)
            rows._described = [(d[0], d[1]) for d in relation.description]
        return rows

    @classmethod
    def pending(
        cls,
        cursor: Duck,
        statement: Any,
        params: Any,
        described: list[tuple[str, Any]],
        running: Running = nullcontext,
        release: Callable[[], None] | None = None,
    ) -> StatementRows:
        """The rows of ``statement`` (DuckDB's parse of a query bound before on ``cursor``
        with parameters of the same values, which gave ``described``), run at the first
        fetch: a repeated query is not bound again for its description."""
        rows = cls(cursor, running, release)
        rows._query, rows._described = (statement, params), described
        return rows

    def prepared(self) -> tuple[Any, list[tuple[str, Any]]] | None:
        """DuckDB's parsed statement and the columns of a bound query not run yet, for
        :meth:`pending` to run again; None for anything else (rows iceduck computed, a
        statement DuckDB ran at once)."""
        if self._relation is None or self._query is None or self._described is None:
            return None
        statement = self._query[0]
        if isinstance(statement, str) or self._relation.type == "MATERIALIZED_RELATION":
            return None
        return statement, self._described

    @property
    def description(self) -> list[tuple[str, Any]] | None:
        """(name, DuckDB type) per column; None for a statement without rows."""
        if self._described is not None:
            return self._described
        described = self.cursor.description
        return None if described is None else [(d[0], d[1]) for d in described]

    # -- rows ------------------------------------------------------------------------------------

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._run_as_rows():
            return None
        return self._read(self.cursor.fetchone)

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        if self._run_as_rows():
            return []
        return self._read(self.cursor.fetchmany, size)

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self._run_as_rows():
            return []
        return self._read(self.cursor.fetchall)

    def _run_as_rows(self) -> bool:
        """Run a bound query as a DB-API result; whether an Arrow form consumed the rows."""
        if self._consumed is not None:
            return True
        if self._query is not None:
            sql, params = self._query
            # kept: a relation DuckDB ran already holds the rows the text reads
            self._source, self._relation, self._query = self._relation, None, None
            self._read(self.cursor.execute, sql, params)
        return False

    # -- Arrow -----------------------------------------------------------------------------------

    def arrow_table(self) -> Any:
        """The unread rows as a ``pyarrow.Table`` (a bound query's without a copy)."""
        relation = self._take()
        if relation is not None:
            return self._remember(self._read(relation.to_arrow_table))
        if self._consumed is not None:
            return self._consumed.empty_table()
        return self._read(self._copied, "to_arrow_table", "fetch_arrow_table")

    def record_batch_reader(self, rows_per_batch: int = ROWS_PER_BATCH) -> Any:
        """A ``pyarrow.RecordBatchReader`` streaming the unread rows from DuckDB, one batch
        at a time (a bound query's in flat memory)."""
        import pyarrow as pa

        if rows_per_batch < 1:
            raise ValueError(f"rows_per_batch must be positive, not {rows_per_batch}")
        relation = self._take()
        if relation is not None:
            reader = self._read(relation.to_arrow_reader, rows_per_batch)
            self._remember(reader)
            return translating_reader(reader, self.cursor, self.running)
        if self._consumed is not None:
            return pa.RecordBatchReader.from_batches(self._consumed, [])
        reader = self._read(self._copied, "to_arrow_reader", "fetch_record_batch", rows_per_batch)
        return translating_reader(reader, self.cursor, self.running)

    def pandas_frame(self) -> Any:
        """The unread rows as a ``pandas.DataFrame`` (DuckDB converts from its vectors;
        the caller checks that pandas is installed)."""
        described = self.description or []
        relation = self._take()
        if relation is not None:
            frame = self._zoned(self._read(relation.df), described)
            self._consumed = _schema_of_frame(frame)
            return frame
        if self._consumed is not None:
            return self._consumed.empty_table().to_pandas()
        return self._zoned(self._read(self._copied, "fetch_df", "df"), described)

    def _zoned(self, frame: Any, described: list[tuple[str, Any]]) -> Any:
        """``frame`` with its TIMESTAMPTZ_NS columns as instants: DuckDB (2.0.1) converts
        them to zone-less ``datetime64[ns]`` holding the UTC wall clock, where a
        TIMESTAMPTZ column is zoned in the session's time zone (as are both types' Arrow
        and Python values); they get that zone too. Asked of the cursor only when such a
        column exists, after the rows are read (a pending result would refuse it)."""
        positions = [i for i, (_, kind) in enumerate(described) if str(kind) == "TIMESTAMPTZ_NS"]
        naive = [i for i in positions if _is_naive_datetime(frame.dtypes.iloc[i])]
        if not naive:
            return frame
        (zone,) = self._read(self.cursor.sql("SELECT current_setting('TimeZone')").fetchall)[0]
        for i in naive:
            frame.isetitem(i, frame.iloc[:, i].dt.tz_localize("UTC").dt.tz_convert(zone))
        return frame

    def close(self) -> None:
        self._relation = self._source = self._query = None
        if self.closed:
            return
        self.closed = True
        if self.release is None:
            self.cursor.close()
            return
        self.cursor.abort()  # the rest of the rows not read: the cursor is free for the next run
        self.release()

    # -- helpers ---------------------------------------------------------------------------------

    def _take(self) -> duckdb.DuckDBPyRelation | None:
        """The bound query for an Arrow form to run, once (the rows are then consumed)."""
        relation = self._relation
        if relation is None and self._query is not None:  # pending: bound again, for Arrow
            statement, params = self._query
            relation = self._read(lambda: self.cursor.sql(statement, params=params))
        if relation is not None:
            self._consumed = _no_columns()
            self._relation = self._query = None
        return relation

    def _remember(self, arrow: Any) -> Any:
        self._consumed = arrow.schema
        return arrow

    def _read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the statement's cursor, while it counts as running, with DuckDB's
        errors (also those crossing an Arrow stream) raised as iceduck's."""
        with self.running(), raised_as_iceduck(self.cursor):
            return duckdb_call(fn, *args, con=self.cursor)

    def _copied(self, new: str, old: str, *args: Any) -> Any:
        """An Arrow form of a DB-API result (DuckDB copies it: only for rows iceduck computed
        or the rest of a query fetched as rows first)."""
        method = getattr(self.cursor, new, None) or getattr(self.cursor, old)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DuckDB notes the copy a DB-API result costs
            return method(*args)


def _no_columns() -> Any:
    import pyarrow as pa

    return pa.schema([])


def _schema_of_frame(frame: Any) -> Any:
    """The Arrow schema of a pandas frame's columns (what the empty rest after ``df()`` has)."""
    import pyarrow as pa

    return pa.Schema.from_pandas(frame.iloc[0:0], preserve_index=False)


def _is_naive_datetime(dtype: Any) -> bool:
    """Whether a pandas column type is numpy's zone-less ``datetime64`` (a zoned column's
    type is pandas' own ``DatetimeTZDtype``)."""
    import numpy as np

    return isinstance(dtype, np.dtype) and dtype.kind == "M"
