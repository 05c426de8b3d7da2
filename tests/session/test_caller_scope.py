"""Finding Python objects (iceduck.session.caller_scope): what is a table, the registry, and the
caller's variables in DuckDB's order."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import iceduck
from iceduck.errors import UserError
from iceduck.session.caller_scope import PythonScope, Registry, is_table_like, kind_of


class Stream:
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return pa.table({"a": [1]}).__arrow_c_stream__(requested_schema)


class MyFrame(pd.DataFrame):
    pass


def test_what_is_a_table(tmp_path: Path) -> None:
    table = pa.table({"a": [1]})
    tables = [
        table,
        table.to_batches()[0],
        table.to_reader(),
        ds.dataset(table),
        ds.dataset(table).scanner(),
        table.to_pandas(),
        MyFrame({"a": [1]}),
        pl.from_arrow(table),
        pl.from_arrow(table).lazy(),  # type: ignore[union-attr]
        Stream(),
    ]
    assert all(is_table_like(t) for t in tables)
    others = [5, "t", None, {"a": [1]}, [1], np.array([1]), pa.Table, pa.array([1]), pd.Series([1])]
    assert not any(is_table_like(o) for o in others if not hasattr(o, "__arrow_c_stream__"))
    assert not is_table_like(pa.Table)  # the class, not a table
    with iceduck.connect(tmp_path / "wh") as con:
        assert not is_table_like(con.cursor())  # a cursor streams its rows but is no table
    assert kind_of(5) == "int" and kind_of(table.to_pandas()) == "pandas.DataFrame"


def test_registry_names_compare_without_case() -> None:
    registry = Registry()
    table = pa.table({"a": [1]})
    registry.register("Frame", table)
    assert registry.get("FRAME") is table
    registry.unregister("frame")
    assert registry.get("Frame") is None
    registry.unregister("never")  # no error
    with pytest.raises(UserError, match="object of type int is not a table"):
        registry.register("x", 5)
    with pytest.raises(UserError, match="needs a name"):
        registry.register("  ", table)


GLOBAL_TABLE = pa.table({"where": ["global"]})
shadowed = pa.table({"where": ["global"]})


def test_locals_then_globals_from_the_caller_outwards() -> None:
    outer_only = pa.table({"where": ["outer"]})
    local = pa.table({"where": ["local"]})

    def inner() -> PythonScope:
        not_a_table = 5
        GLOBAL_TABLE = local  # shadows the module's
        assert not_a_table and GLOBAL_TABLE is not None
        return PythonScope.of_caller()

    def caller() -> PythonScope:
        shadowed = pa.table({"where": ["outer"]})
        assert outer_only is not None and shadowed is not None
        return inner()

    scope = caller()
    assert scope.variable("GLOBAL_TABLE") is local  # a frame's locals before its globals
    # DuckDB's order: the inner frame's globals before the outer frame's locals
    assert scope.variable("shadowed") is globals()["shadowed"]
    assert scope.variable("outer_only") is outer_only
    assert scope.variable("not_a_table") is None
    assert "of type int, not a table" in scope.hint("not_a_table")
    assert scope.hint("nothing_named_so") == ""


def test_registries_first_and_iceducks_frames_skipped() -> None:
    registry, other = Registry(), Registry()
    table = pa.table({"a": [1]})
    registry.register("t", table)
    scope = PythonScope([registry]).with_registry(other)
    assert scope.registered("T") is table and scope.variable("t") is None  # no frame: no variables

    # a frame of iceduck's own (as Connection.execute's) is skipped
    namespace: dict[str, Any] = {"__name__": "iceduck.connection", "PythonScope": PythonScope}
    source = (
        "def entry():\n"
        "    hidden = __import__('pyarrow').table({'a': [1]})\n"
        "    return PythonScope.of_caller()"
    )
    exec(source, namespace)
    hidden = pa.table({"a": [2]})
    assert namespace["entry"]().variable("hidden") is hidden
    assert sys._getframe().f_globals["__name__"] == __name__
