"""Parameters bound to tables (iceduck.sql.table_parameters): the text each gets, the
parameters left for DuckDB, and statements binding a DataFrame or an Arrow table to ``?``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import UserError
from iceduck.sql.table_parameters import bind_tables


class Table:
    """Stands for a table object in the text-level tests."""


def is_table(value: Any) -> bool:
    return isinstance(value, Table)


def test_a_question_mark_bound_to_a_table_becomes_a_name() -> None:
    t = Table()
    text, params, bound = bind_tables("SELECT * FROM ? WHERE a > ? AND s <> '?'", [t, 5], is_table)
    assert text == "SELECT * FROM \"__iceduck_param_1\" WHERE a > ? AND s <> '?'"
    assert params == [5]
    assert bound == {"__iceduck_param_1": t}


def test_numbered_parameters_are_renumbered() -> None:
    t, u = Table(), Table()
    text, params, bound = bind_tables(
        "SELECT $1, $3 FROM $2 JOIN $4 USING (id) WHERE x = $3 -- $2", [1, t, 3, u], is_table
    )
    assert text == (
        'SELECT $1, $2 FROM "__iceduck_param_2" JOIN "__iceduck_param_4" USING (id) WHERE x = $2 -- $2'
    )
    assert params == [1, 3]
    assert bound == {"__iceduck_param_2": t, "__iceduck_param_4": u}


def test_named_parameters_lose_their_table() -> None:
    t = Table()
    sql = "MERGE INTO db.t USING $src s ON s.id = $id"
    text, params, bound = bind_tables(sql, {"src": t, "id": 1}, is_table)
    assert text == 'MERGE INTO db.t USING "__iceduck_param_src" s ON s.id = $id'
    assert params == {"id": 1}
    assert bound == {"__iceduck_param_src": t}


def test_no_table_leaves_everything_as_it_is() -> None:
    params = [1, "a"]
    assert bind_tables("SELECT ?, ?", params, is_table) == ("SELECT ?, ?", params, {})
    assert bind_tables("SELECT 1", None, is_table) == ("SELECT 1", None, {})


def test_a_table_where_a_value_goes_is_refused() -> None:
    with pytest.raises(UserError, match=r"parameter 2 is a table \(Table\): a table can only be bound where"):
        bind_tables("SELECT ?, ?", [1, Table()], is_table)
    with pytest.raises(UserError, match=r"parameter \$t is a table"):
        bind_tables("SELECT $t", {"t": Table()}, is_table)


# -- through a connection ----------------------------------------------------------------------


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute("CREATE TABLE db.t (id bigint, name string)")
        yield con


def test_duckdb_refuses_a_table_parameter_iceduck_registers_it(con: Connection) -> None:
    table = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    with pytest.raises(duckdb.Error):
        duckdb.connect().execute("SELECT * FROM ?", [table])
    sql = "SELECT name FROM ? WHERE id >= ? ORDER BY id"
    assert con.execute(sql, [table, 2]).fetchall() == [("b",), ("c",)]
    frame = table.to_pandas()
    plain = duckdb.connect().execute("SELECT name FROM frame WHERE id >= 2 ORDER BY id").fetchall()
    assert con.execute("SELECT name FROM $2 WHERE id >= $1 ORDER BY id", [2, frame]).fetchall() == plain
    described = duckdb.connect().execute("DESCRIBE frame").fetchall()
    assert con.execute("DESCRIBE ?", [table]).fetchall() == described


def test_insert_and_merge_from_a_parameter(con: Connection) -> None:
    frame = pd.DataFrame({"id": [1, 2], "name": ["a", "b"]})
    con.execute("INSERT INTO db.t SELECT * FROM ?", [frame])
    changes = pd.DataFrame({"id": [2, 3], "name": ["B", "c"]})
    con.execute(
        "MERGE INTO db.t t USING $changes s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *",
        {"changes": changes},
    )
    assert con.execute("SELECT * FROM db.t ORDER BY id").fetchall() == [(1, "a"), (2, "B"), (3, "c")]


def test_a_table_parameter_in_a_value_position_is_a_clear_error(con: Connection) -> None:
    with pytest.raises(iceduck.ProgrammingError, match="a table can only be bound where a table name goes"):
        con.execute("SELECT ?", [pa.table({"a": [1]})])
