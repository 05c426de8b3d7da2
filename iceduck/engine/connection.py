"""The DuckDB database iceduck runs queries on.

Settings, and why:

* ``TimeZone = 'UTC'``: ``timestamptz`` values print and compare as Spark sessions in UTC
  show them, and string literals without an offset mean UTC, whatever the machine's zone;
* no extension is installed or loaded behind the user's back
  (``autoinstall_known_extensions`` / ``autoload_known_extensions`` off): Parquet, JSON
  and ICU are built in, and iceduck reads Iceberg itself;
* threads and memory: DuckDB's defaults (all cores, 80% of RAM) unless asked.

Each statement runs on its own cursor (``database.cursor()``): cursors share the
database and its caches but not temporary views, so concurrent statements never see
each other's scan views.
"""

from __future__ import annotations

from typing import Any

import duckdb

SESSION_TIME_ZONE = "UTC"


def open_database(threads: int | None = None, memory_limit: str | None = None) -> Any:
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
