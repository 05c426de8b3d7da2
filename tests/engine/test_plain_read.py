"""Plain ``read_parquet`` by name where the footers prove it equals the field-id read: the
decision (:func:`plain_columns`), the rows (always those of the field-id read), and what
DuckDB's planner gains (the column statistics a ``schema = MAP`` scan hides)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iceduck.engine.layout import PRIMITIVE, STRUCT, FileField
from iceduck.engine.plain_read import canonical_type, needs_virtual_columns, plain_columns
from iceduck.engine.projection import ColumnRead, Entry, blind_read
from iceduck.engine.read import attach_scan, scan_to_arrow, unregister_scan
from iceduck.scan.tasks import ScanPlan
from iceduck.spec.schema import POS_ID, Schema
from iceduck.spec.types import DecimalType, IntegerType, LongType, NestedField, StringType
from tests.engine.helpers import data_task, position_delete_file, read_rows, write_parquet


def F(fid: int, name: str, t: Any) -> NestedField:
    return NestedField(fid, name, t)


def scan_text(con: Any, plan: ScanPlan, field_ids: list[int] | None = None) -> str:
    sql = attach_scan(con, plan, "plain", field_ids)
    unregister_scan(con, "plain")
    return sql


# -- the decision ----------------------------------------------------------------------------------

LONG = FileField("id", 1, PRIMITIVE, "BIGINT")
NAME = FileField("name", 2, PRIMITIVE, "VARCHAR")
FIELDS = (F(1, "id", LongType()), F(2, "name", StringType()))
ENTRIES = tuple(Entry(f.field_id, f.field_id, blind_read(f)) for f in FIELDS)


def test_type_names_are_compared_in_one_spelling() -> None:
    assert canonical_type("DECIMAL(9, 2)") == canonical_type("DECIMAL(9,2)")
    assert canonical_type("TIMESTAMPTZ") == canonical_type("TIMESTAMP WITH TIME ZONE")
    assert canonical_type("INTEGER") != canonical_type("BIGINT")


def test_plain_when_every_column_is_the_same_primitive_under_one_name() -> None:
    assert plain_columns(ENTRIES, (LONG, NAME), False, False) == {1: "id", 2: "name"}
    renamed = (FileField("old_id", 1, PRIMITIVE, "BIGINT"), NAME)  # the file's own name is read
    assert plain_columns(ENTRIES, renamed, False, False) == {1: "old_id", 2: "name"}


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(None, id="footers not read"),
        pytest.param((LONG,), id="a column the file lacks"),
        pytest.param((FileField("id", 1, PRIMITIVE, "INTEGER"), NAME), id="a promotion"),
        pytest.param((LONG, FileField("ID", 2, PRIMITIVE, "VARCHAR")), id="names equal without case"),
        pytest.param((FileField("id", None, PRIMITIVE, "BIGINT"), NAME), id="no field id"),
        pytest.param((FileField("id", 1, STRUCT, "STRUCT(a BIGINT)"), NAME), id="a struct"),
    ],
)
def test_field_id_read_kept(layout: Any) -> None:
    assert plain_columns(ENTRIES, layout, False, False) is None


def test_field_id_read_kept_for_name_mapped_files_and_expressions() -> None:
    assert plain_columns(ENTRIES, (LONG, NAME), True, False) is None
    cast = (Entry(1, 1, ColumnRead("BIGINT", "NULL", "CAST({} AS DECIMAL(20, 0))")), ENTRIES[1])
    assert plain_columns(cast, (LONG, NAME), False, False) is None


def test_a_file_column_named_like_a_virtual_column_hides_it() -> None:
    """``file_row_number`` as a data column: fine to read plainly, unless the scan needs
    DuckDB's own row numbers (deletes, ``_pos``)."""
    layout = (LONG, NAME, FileField("File_Row_Number", 3, PRIMITIVE, "BIGINT"))
    assert plain_columns(ENTRIES, layout, False, False) == {1: "id", 2: "name"}
    assert plain_columns(ENTRIES, layout, False, True) is None
    assert needs_virtual_columns((*FIELDS, NestedField(POS_ID, "_pos", LongType(), True)), False)
    assert needs_virtual_columns(FIELDS, True) and not needs_virtual_columns(FIELDS, False)


# -- the rows --------------------------------------------------------------------------------------


def test_swapped_names_read_by_id(con: Any, tmp_path: Path, read_mode: str) -> None:
    """Columns renamed into each other's names: the plain read selects the file's own names,
    so each field id still reads its own values."""
    path = write_parquet(
        con,
        tmp_path / "f.parquet",
        "SELECT i::BIGINT AS a, 'v' || i AS b FROM range(3) t(i)",
        {"a": 1, "b": 2},
    )
    schema = Schema((F(2, "a", StringType()), F(1, "b", LongType())))
    plan = ScanPlan(schema, 1, (data_task(con, path),))
    assert read_rows(con, schema, plan.tasks) == [{"a": f"v{i}", "b": i} for i in range(3)]
    sql = scan_text(con, plan)
    assert ("schema = MAP" in sql) == (read_mode == "blind"), sql


def test_files_of_two_schemas_read_plainly_and_by_id(con: Any, tmp_path: Path, read_mode: str) -> None:
    """An int column promoted to long: the old files keep the field-id read (DuckDB casts),
    the new ones are read plainly; one scan, every row."""
    old = write_parquet(con, tmp_path / "old.parquet", "SELECT i::INT AS n FROM range(2) t(i)", {"n": 1})
    new = write_parquet(
        con, tmp_path / "new.parquet", "SELECT (i + 2)::BIGINT AS n FROM range(2) t(i)", {"n": 1}
    )
    schema = Schema((F(1, "n", LongType()),))
    plan = ScanPlan(schema, 1, (data_task(con, old), data_task(con, new)))
    assert sorted(r["n"] for r in read_rows(con, schema, plan.tasks)) == [0, 1, 2, 3]
    sql = scan_text(con, plan)
    assert sql.count("schema = MAP") == 1, sql  # blind: one read of both files
    assert sql.count("read_parquet(") == (1 if read_mode == "blind" else 2), sql


def test_partition_folders_are_not_hive_columns(con: Any, tmp_path: Path) -> None:
    """Iceberg's partition folders look like Hive's (``s=a%2Fb``); a plain read must not
    decode them into columns (DuckDB's hive auto-detection fails on some names)."""
    folder = tmp_path / "data" / "s=%C3%A9%FF" / "k=1"
    folder.mkdir(parents=True)
    path = write_parquet(con, folder / "f.parquet", "SELECT 'x' AS s, 1::BIGINT AS k", {"s": 1, "k": 2})
    schema = Schema((F(1, "s", StringType()), F(2, "k", LongType())))
    assert read_rows(con, schema, [data_task(con, path)]) == [{"s": "x", "k": 1}]


def test_decimals_and_strings_read_plainly(con: Any, tmp_path: Path, read_mode: str) -> None:
    path = write_parquet(
        con,
        tmp_path / "f.parquet",
        "SELECT (i * 1.25)::DECIMAL(9, 2) AS d, i::INT AS n FROM range(3) t(i)",
        {"d": 1, "n": 2},
    )
    schema = Schema((F(1, "d", DecimalType(9, 2)), F(2, "n", IntegerType())))
    plan = ScanPlan(schema, 1, (data_task(con, path),))
    rows = read_rows(con, schema, plan.tasks)
    assert [str(r["d"]) for r in rows] == ["0.00", "1.25", "2.50"]
    assert ("schema = MAP" in scan_text(con, plan)) == (read_mode == "blind")


def test_one_read_is_one_select(con: Any, tmp_path: Path, read_mode: str) -> None:
    """One group of files is one SELECT over ``read_parquet``, however it is read: no layer
    only to rename columns (each costs DuckDB's binder on every statement)."""
    path = write_parquet(
        con,
        tmp_path / "f.parquet",
        "SELECT i::BIGINT AS id, 'n' || i AS name FROM range(3) t(i)",
        {"id": 1, "name": 2},
    )
    plan = ScanPlan(Schema(FIELDS), 1, (data_task(con, path),))
    for field_ids, expected in (
        ([2], [("n0",), ("n1",), ("n2",)]),
        (None, [(0, "n0"), (1, "n1"), (2, "n2")]),
    ):
        sql = attach_scan(con, plan, "one", field_ids)
        assert sql.count("SELECT") == 1, sql
        result = con.execute(f"SELECT * FROM ({sql}) ORDER BY 1")
        assert result.fetchall() == expected
        assert [d[0] for d in result.description] == (
            [f.name for f in FIELDS] if field_ids is None else ["name"]
        )
        unregister_scan(con, "one")


# -- what DuckDB's planner gains -------------------------------------------------------------------


def test_duckdb_sees_the_column_statistics(con: Any, tmp_path: Path, read_mode: str) -> None:
    """A filter no row can pass: with the footers' min/max, DuckDB's optimizer replaces the
    scan by an empty result; through ``schema = MAP`` it must read the file."""
    path = write_parquet(
        con, tmp_path / "f.parquet", "SELECT i::BIGINT AS id FROM range(3000) t(i)", {"id": 1}
    )
    plan = ScanPlan(Schema((F(1, "id", LongType()),)), 1, (data_task(con, path),))
    sql = attach_scan(con, plan, "stats")
    plan_text = con.execute(f"EXPLAIN SELECT count(*) FROM ({sql}) AS x WHERE id > 100000").fetchall()[0][1]
    unregister_scan(con, "stats")
    assert ("Empty Result" in plan_text or "EMPTY_RESULT" in plan_text) == (read_mode == "footers"), plan_text


def test_deletes_and_positions_through_a_plain_read(con: Any, tmp_path: Path, read_mode: str) -> None:
    """Position deletes and ``_pos`` use DuckDB's row numbers, which the plain read passes
    through its subquery: the same rows as the field-id read, deleted ones gone."""
    path = write_parquet(
        con, tmp_path / "f.parquet", "SELECT i::BIGINT AS id FROM range(100) t(i) ORDER BY i", {"id": 1}
    )
    deletes = position_delete_file(con, tmp_path / "pd.parquet", [(str(path), p) for p in (0, 7, 8, 99)])
    task = data_task(con, path, position_deletes=[deletes])
    schema = Schema((F(1, "id", LongType()),))
    plan = ScanPlan(schema, 1, (task,))
    rows = sorted(scan_to_arrow(con, plan, [1, POS_ID]).to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["_pos"]) for r in rows] == [(i, i) for i in range(100) if i not in (0, 7, 8, 99)]
    assert ("schema = MAP" in scan_text(con, plan, [1, POS_ID])) == (read_mode == "blind")
