"""The DuckDB database iceduck runs queries on.

Settings, and why:

* ``TimeZone = 'UTC'``: ``timestamptz`` values print and compare as Spark sessions in UTC
  show them, and string literals without an offset mean UTC, whatever the machine's zone;
* no extension is installed or loaded behind the user's back
  (``autoinstall_known_extensions`` / ``autoload_known_extensions`` off): Parquet, JSON
  and ICU are built in, and iceduck reads Iceberg itself;
* threads and memory: DuckDB's defaults (all cores, 80% of RAM) unless asked.

Each statement runs on its own cursor (:func:`open_cursor`): cursors share the
database and its caches but not temporary views, so concurrent statements never see
each other's scan views.

:data:`Duck` names the type of a DuckDB connection or cursor for annotations. Modules
outside :mod:`iceduck.engine` import it under ``TYPE_CHECKING`` only: they hold a handle
and pass it to the engine's functions, but never call DuckDB or import it themselves.
"""

from __future__ import annotations

import weakref
from typing import Any, TypeAlias

import duckdb

#: a DuckDB connection or cursor (DuckDB gives both the one class)
Duck: TypeAlias = duckdb.DuckDBPyConnection

SESSION_TIME_ZONE = "UTC"


def open_database(threads: int | None = None, memory_limit: str | None = None) -> Duck:
    """A new in-memory DuckDB database configured for iceduck."""
    config: dict[str, Any] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    if threads is not None:
        config["threads"] = threads
    if memory_limit is not None:
        config["memory_limit"] = memory_limit
    database = duckdb.connect(":memory:", config=config)
    # GLOBAL: every cursor of the database (one per statement) starts in UTC
    database.execute(f"SET GLOBAL TimeZone = '{SESSION_TIME_ZONE}'")
    return database


def time_zone(database: Duck) -> str:
    """The time zone the database's statements run in (timestamp literals mean it)."""
    row = database.execute("SELECT current_setting('TimeZone')").fetchone()
    assert row is not None
    return str(row[0])


#: the database each cursor of :func:`open_cursor` is of (DuckDB does not say): what is
#: created once per database, as functions are, is remembered by it
_DATABASE_OF: weakref.WeakKeyDictionary[Duck, Duck] = weakref.WeakKeyDictionary()


def open_cursor(database: Duck) -> Duck:
    """A new cursor of ``database`` for one statement (its views and variables are its own)."""
    cursor = database.cursor()
    _DATABASE_OF[cursor] = database_of(database)
    return cursor


def database_of(con: Duck) -> Duck:
    """The database ``con`` (a database, or a cursor of :func:`open_cursor`) is of."""
    return _DATABASE_OF.get(con, con)


def track_progress(cursor: Duck) -> None:
    """Have DuckDB track the progress of what runs on ``cursor`` (a per-cursor setting) for
    :func:`query_progress`, without printing it: the caller shows it."""
    cursor.execute("SET enable_progress_bar = true; SET enable_progress_bar_print = false")


def interrupt(cursor: Duck) -> None:
    """Stop what runs on ``cursor`` (from another thread): a DuckDB interrupt reaches only
    the connection it is called on. A cursor that finished and closed meanwhile has
    nothing left to stop."""
    try:
        cursor.interrupt()
    except Exception:
        pass


def query_progress(cursor: Duck) -> float | None:
    """Percent done of what runs on ``cursor`` (when tracked); None if unknown or finished."""
    try:
        value = float(cursor.query_progress())
    except Exception:  # finished and closed meanwhile
        return None
    return value if value >= 0 else None


def close(handle: Duck) -> None:
    """Close a cursor (its views, variables and unread rows go) or the database."""
    handle.close()


def abort(handle: Duck) -> None:
    """Drop a cursor's pending result (rows a dropped result never read), keeping the cursor
    and what it has prepared, so it can run its statement again."""
    handle.abort()
