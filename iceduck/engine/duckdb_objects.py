"""The DuckDB side of a session's own objects: listing them, settings and variables.

A session's temporary tables and macros are ordinary tables and macros of the ``main``
schema of its in-memory database (:func:`iceduck.engine.connection.open_database`):
every cursor of the database sees them, and no other iceduck connection does, since each
opens its own database. :func:`session_names` lists them, so the session routes a
statement on them to DuckDB.

Settings: a statement's cursor lives as long as the statement, so ``SET`` is made
``GLOBAL`` on the session's database (:func:`apply_setting`); the few settings DuckDB
keeps per connection only (``search_path``...) and ``SET VARIABLE`` values are instead
replayed on each new cursor (:func:`replay`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import duckdb

from iceduck.engine.connection import SESSION_TIME_ZONE
from iceduck.engine.types import quote_identifier

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: what ``RESET`` returns to where iceduck's database differs from DuckDB's defaults
ICEDUCK_DEFAULTS = {
    "timezone": f"'{SESSION_TIME_ZONE}'",
    "autoinstall_known_extensions": "false",
    "autoload_known_extensions": "false",
}

#: a setting or variable to replay on each cursor: (name, SQL value, is a variable)
Replayed = tuple[str, str, bool]


def session_names(duck: Duck) -> tuple[frozenset[str], frozenset[str]]:
    """The (lower-case) names of the session's tables and of its macros."""
    tables = duck.execute(
        "SELECT lower(table_name) FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary"
    ).fetchall()
    macros = duck.execute(
        "SELECT DISTINCT lower(function_name) FROM duckdb_functions() "
        "WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal "
        "AND function_type IN ('macro', 'table_macro')"
    ).fetchall()
    return frozenset(str(r[0]) for r in tables), frozenset(str(r[0]) for r in macros)


def _local_only(error: duckdb.Error) -> bool:
    return "cannot be set globally" in str(error) or "cannot be reset globally" in str(error)


def apply_setting(duck: Duck, name: str, value: str) -> Replayed | None:
    """``SET name = value`` for the whole session: globally, or on ``duck`` for a setting
    DuckDB keeps per connection, which is then returned to replay on each cursor."""
    try:
        duck.execute(f"SET GLOBAL {quote_identifier(name)} = {value}")
        return None
    except duckdb.CatalogException as e:
        if not _local_only(e):
            raise
    duck.execute(f"SET {quote_identifier(name)} = {value}")
    return (name, value, False)


def reset_setting(duck: Duck, name: str) -> None:
    """``RESET name``: iceduck's own default where it has one (UTC...), else DuckDB's."""
    default = ICEDUCK_DEFAULTS.get(name.lower())
    if default is not None:
        duck.execute(f"SET GLOBAL {quote_identifier(name)} = {default}")
        return
    try:
        duck.execute(f"RESET GLOBAL {quote_identifier(name)}")
    except duckdb.CatalogException as e:
        if not _local_only(e):
            raise
        duck.execute(f"RESET {quote_identifier(name)}")


def current_setting(duck: Duck, name: str) -> Any:
    row = duck.execute("SELECT current_setting($1)", [name]).fetchone()
    return None if row is None else row[0]


def set_variable(duck: Duck, name: str, value: str, params: Any = None) -> Replayed:
    """``SET VARIABLE name = value`` on ``duck``; what replays it: its value as a typed literal."""
    duck.execute(f"SET VARIABLE {quote_identifier(name)} = {value}", params)
    row = duck.execute("SELECT getvariable($1)::VARCHAR, typeof(getvariable($1))", [name]).fetchone()
    assert row is not None
    text, kind = row
    literal = "NULL" if text is None else "CAST('" + str(text).replace("'", "''") + f"' AS {kind})"
    duck.execute(f"SET VARIABLE {quote_identifier(name)} = {literal}")  # the value replays will give
    return (name, literal, True)


def reset_variable(duck: Duck, name: str) -> None:
    duck.execute(f"RESET VARIABLE {quote_identifier(name)}")


def replay(duck: Duck, replayed: Iterable[Replayed]) -> None:
    """Make the session's per-connection settings and variables hold on a new cursor."""
    for name, value, variable in replayed:
        duck.execute(f"SET {'VARIABLE ' if variable else ''}{quote_identifier(name)} = {value}")


def run_counted(duck: Duck, sql: str, params: Any = None) -> int:
    """Run a DuckDB write statement; the rows it changed (-1 when it does not say)."""
    cursor = duck.execute(sql, params)
    described = cursor.description or ()
    rows = cursor.fetchall()
    if len(described) == 1 and described[0][0].lower() == "count" and len(rows) == 1:
        return int(rows[0][0])
    return -1
