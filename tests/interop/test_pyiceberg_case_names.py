"""A table whose column names differ only in case (PyIceberg wrote it, as Spark does with
``spark.sql.caseSensitive=true``): each column is read, filtered, pruned and written under
the name ``SELECT *`` and ``DESCRIBE`` show (``uSeR_Id_1``), and PyIceberg reads the writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import iceduck

sql_catalog = pytest.importorskip("pyiceberg.catalog.sql")


@pytest.fixture
def table(tmp_path: Path) -> tuple[Any, Any]:
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, NestedField, StringType

    catalog = sql_catalog.SqlCatalog(
        "iceduck", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=tmp_path.as_uri()
    )
    catalog.create_namespace("ns")
    schema = Schema(
        NestedField(1, "user_id", IntegerType(), required=False),
        NestedField(2, "uSeR_Id", StringType(), required=False),
        NestedField(3, "v", IntegerType(), required=False),
    )
    t = catalog.create_table("ns.t", schema, properties={"format-version": "2"})
    ids = pa.array([1, 2, 3], pa.int32())
    t.append(pa.table({"user_id": ids, "uSeR_Id": ["a", "b", "c"], "v": pa.array([10, 20, 30], pa.int32())}))
    con = iceduck.connect(tmp_path)
    yield catalog, con.cursor()
    con.close()


def _rows(cur: Any, sql: str) -> list[tuple[Any, ...]]:
    cur.execute(sql)
    return cur.fetchall()


def test_select_star_and_describe_name_the_columns_alike(table: tuple[Any, Any]) -> None:
    _, cur = table
    cur.execute("SELECT * FROM ns.t ORDER BY v")
    assert [d[0] for d in cur.description] == ["user_id", "uSeR_Id_1", "v"]
    assert [r[0] for r in _rows(cur, "DESCRIBE ns.t")] == ["user_id", "uSeR_Id_1", "v"]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT user_id_1 FROM ns.t ORDER BY 1", [("a",), ("b",), ("c",)]),
        ('SELECT "uSeR_Id_1", v FROM ns.t ORDER BY 2', [("a", 10), ("b", 20), ("c", 30)]),
        ("SELECT user_id FROM ns.t ORDER BY 1", [(1,), (2,), (3,)]),
        ("SELECT v FROM ns.t WHERE user_id_1 = 'b'", [(20,)]),  # pushed to field 2
        ("SELECT v FROM ns.t WHERE user_id = 3", [(30,)]),  # pushed to field 1
        ('SELECT v FROM ns.t WHERE "uSeR_Id" = 1', [(10,)]),  # DuckDB: the first column
        ("SELECT count(*) FROM ns.t WHERE user_id_1 IS NOT NULL", [(3,)]),
    ],
)
def test_each_column_is_selectable_and_filterable(
    table: tuple[Any, Any], sql: str, expected: list[Any]
) -> None:
    _, cur = table
    assert _rows(cur, sql) == expected


def test_writes_reach_the_right_field(table: tuple[Any, Any]) -> None:
    catalog, cur = table
    cur.execute("INSERT INTO ns.t VALUES (4, 'd', 40)")
    cur.execute("UPDATE ns.t SET user_id_1 = 'B' WHERE user_id = 2")
    cur.execute("DELETE FROM ns.t WHERE user_id_1 = 'a'")
    cur.execute("INSERT INTO ns.t (user_id_1, v) VALUES ('q', 5)")
    expected = [(None, "q", 5), (2, "B", 20), (3, "c", 30), (4, "d", 40)]
    assert _rows(cur, "SELECT * FROM ns.t ORDER BY v") == expected
    peer = catalog.load_table("ns.t").scan().to_arrow().sort_by("v")
    assert [tuple(r.values()) for r in peer.to_pylist()] == expected
