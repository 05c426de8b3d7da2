"""Python objects (DataFrames, Arrow tables and streams) made readable on a statement's cursor.

The session finds the objects a statement names (:mod:`iceduck.session.caller_scope`); this module
is the DuckDB side: registering one under a name of the statement's cursor (DuckDB's
``register``, a temporary view over a replacement scan of the object), forgetting it, and
telling whether a one-part name is already a DuckDB table or view there (which then wins
over a Python variable of the same name, as in DuckDB).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: the schemas a one-part name is looked up in by DuckDB (the search path and pg_catalog)
_SEARCHED_SCHEMAS = ("main", "pg_catalog")


def register_object(duck: Duck, name: str, obj: Any) -> None:
    """Make ``obj`` readable as ``name`` on ``duck`` until :func:`unregister_object` or the
    cursor closes (DuckDB holds a reference to it till then)."""
    duck.register(name, obj)


def unregister_object(duck: Duck, name: str) -> None:
    duck.unregister(name)


def is_duckdb_relation(duck: Duck, name: str) -> bool:
    """Whether the one-part ``name`` is a table or view DuckDB itself resolves on ``duck``
    (``pg_tables``, a temporary table of the cursor); compared without case, as DuckDB does."""
    schemas = ", ".join(f"'{s}'" for s in _SEARCHED_SCHEMAS)
    rows = duck.execute(
        "SELECT count(*) FROM ("
        "SELECT table_name AS name, schema_name FROM duckdb_tables() "
        "UNION ALL SELECT view_name, schema_name FROM duckdb_views()"
        f") WHERE lower(name) = lower($1) AND schema_name IN ({schemas})",
        [name],
    ).fetchall()  # to the end: DuckDB refuses more work on a cursor with an unfinished result
    return bool(rows[0][0])
