"""``iceduck.connect``: PEP 249 connections and cursors over a :class:`~iceduck.session.Session`.

::

    import iceduck

    with iceduck.connect("warehouse") as con:
        cur = con.cursor()
        cur.execute("SELECT count(*) FROM ns.events WHERE device_id = ?", [42])
        print(cur.fetchone())

A connection owns one session (catalog, manifest cache, DuckDB database); each cursor
holds the result of its last statement. Errors are raised as PEP 249 classes that are
also the iceduck error they come from (:mod:`iceduck.dbapi`). iceduck does not write yet,
so ``commit`` does nothing and ``rollback`` has nothing to undo.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from iceduck.dbapi import InterfaceError, ProgrammingError, dbapi_error
from iceduck.errors import IceduckError
from iceduck.session import Result, Session

T = TypeVar("T")
Parameters = Sequence[Any] | dict[str, Any] | None


def connect(
    warehouse: str | Path = "warehouse",
    catalog: str = "iceduck",
    *,
    catalog_type: str = "sql",
    read_only: bool = False,
) -> Connection:
    """Open the warehouse folder ``warehouse`` through catalog ``catalog``.

    ``catalog_type`` is ``sql`` (the SQLite ``<warehouse>/catalog.db`` shared with Spark's
    JDBC catalog and PyIceberg's SQL catalog; created when missing unless ``read_only``)
    or ``hadoop`` (Spark's Hadoop catalog layout under the folder).
    """
    session = _call(lambda: Session(warehouse, catalog, catalog_type=catalog_type, read_only=read_only))
    return Connection(session)


def _call(fn: Callable[[], T]) -> T:
    """Run ``fn``, raising errors as PEP 249 classes (see :mod:`iceduck.dbapi`)."""
    try:
        return fn()
    except Exception as e:
        if isinstance(e, IceduckError) or type(e).__module__.lstrip("_").startswith("duckdb"):
            raise dbapi_error(e) from e
        raise


class Connection:
    """A PEP 249 connection to one warehouse."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._cursors: weakref.WeakSet[Cursor] = weakref.WeakSet()

    @property
    def closed(self) -> bool:
        return self.session.closed

    def _check(self) -> None:
        if self.session.closed:
            raise InterfaceError("the connection is closed")

    def cursor(self) -> Cursor:
        self._check()
        cursor = Cursor(self)
        self._cursors.add(cursor)
        return cursor

    def execute(self, sql: str, parameters: Parameters = None) -> Cursor:
        """Shortcut (as in sqlite3 and DuckDB): a new cursor that ran ``sql``."""
        return self.cursor().execute(sql, parameters)

    def commit(self) -> None:
        self._check()

    def rollback(self) -> None:
        self._check()

    def close(self) -> None:
        for cursor in list(self._cursors):
            cursor.close()
        self._cursors.clear()
        self.session.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Cursor:
    """A PEP 249 cursor: runs statements and fetches the rows of the last one."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.arraysize = 1
        self._result: Result | None = None
        self._closed = False

    # -- state ----------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")
        self.connection._check()

    def _rows(self) -> Result:
        self._check_open()
        if self._result is None:
            raise ProgrammingError("no statement has been executed on this cursor")
        return self._result

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        return None if self._result is None else self._result.description

    @property
    def rowcount(self) -> int:
        return -1 if self._result is None else self._result.rowcount

    @property
    def result(self) -> Result | None:
        """The session's result of the last statement (Arrow access, the scans planned)."""
        return self._result

    # -- statements -----------------------------------------------------------------------------

    def execute(self, sql: str, parameters: Parameters = None) -> Cursor:
        self._check_open()
        self._release()
        self._result = _call(lambda: self.connection.session.execute(sql, parameters))
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        result = self._rows()
        return _call(result.fetchone)

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        result = self._rows()
        count = self.arraysize if size is None else size
        return _call(lambda: result.fetchmany(count))

    def fetchall(self) -> list[tuple[Any, ...]]:
        result = self._rows()
        return _call(result.fetchall)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    def setinputsizes(self, sizes: Any) -> None:
        pass

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        pass

    def _release(self) -> None:
        if self._result is not None:
            self._result.close()
            self._result = None

    def close(self) -> None:
        self._release()
        self._closed = True

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
