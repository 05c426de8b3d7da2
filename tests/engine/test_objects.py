"""Python objects on a DuckDB cursor (iceduck.engine.objects): registered and forgotten, and
which one-part names DuckDB already resolves itself."""

from __future__ import annotations

import pyarrow as pa

from iceduck.engine import connection as engine
from iceduck.engine.objects import is_duckdb_relation, register_object, unregister_object


def test_register_read_unregister() -> None:
    database = engine.open_database()
    duck = engine.open_cursor(database)
    register_object(duck, "__iceduck_py_1", pa.table({"a": [1, 2]}))
    assert duck.execute('SELECT sum(a) FROM "__iceduck_py_1"').fetchall() == [(3,)]
    assert is_duckdb_relation(duck, "__ICEDUCK_PY_1")  # a registered object is a (temporary) view
    unregister_object(duck, "__iceduck_py_1")
    assert not is_duckdb_relation(duck, "__iceduck_py_1")
    other = engine.open_cursor(database)
    register_object(duck, "only_here", pa.table({"a": [1]}))
    assert not is_duckdb_relation(other, "only_here")  # each cursor has its own


def test_duckdbs_own_relations() -> None:
    duck = engine.open_cursor(engine.open_database())
    assert is_duckdb_relation(duck, "pg_tables") and is_duckdb_relation(duck, "PG_Class")
    assert not is_duckdb_relation(duck, "df")
    duck.execute("CREATE TEMP TABLE df (a int)")
    assert is_duckdb_relation(duck, "df")
