"""Column projection by field id: renames, drops, added columns, promotions, nested fields,
identity partition values, name mapping, metadata columns; the view and its cleanup."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from iceduck.engine.layout import LayoutCache
from iceduck.engine.read import attach_scan, register_scan, scan_sql, scan_to_arrow, unregister_scan
from iceduck.errors import CorruptDataError, UnsupportedError, UserError
from iceduck.io.fileio import MissingFileError
from iceduck.scan.tasks import FileScanTask, ScanPlan
from iceduck.spec.manifest import FileFormat
from iceduck.spec.schema import FILE_PATH_ID, LAST_UPDATED_SEQUENCE_NUMBER_ID, POS_ID, ROW_ID_ID, Schema
from iceduck.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
    UnknownType,
)
from tests.engine.helpers import data_task, read_rows, write_parquet


def F(fid: int, name: str, t: Any, **kw: Any) -> NestedField:
    return NestedField(fid, name, t, **kw)


# -- evolution of top-level columns --------------------------------------------------------------

V1_IDS = {"id": 1, "name": 2, "f": 3, "dec": 4, "dropped": 5}
V1_SELECT = (
    "SELECT i::INT AS id, 'n' || i AS name, (i * 1.5)::FLOAT AS f, (i * 1.25)::DECIMAL(9, 2) AS dec, "
    "'gone' || i AS dropped FROM range(3) t(i)"
)


def evolved_schema() -> Schema:
    """int -> long, rename name -> full_name, float -> double, decimal(9,2) -> (20,2),
    drop ``dropped`` (5), re-add ``dropped`` with a new id, add a column with a default."""
    return Schema(
        (
            F(1, "id", LongType()),
            F(3, "f", DoubleType()),
            F(2, "full_name", StringType()),
            F(4, "dec", DecimalType(20, 2)),
            F(6, "dropped", StringType()),
            F(7, "added", IntegerType(), initial_default=42),
            F(8, "added_null", StringType()),
        )
    )


def test_renames_drops_adds_and_promotions(con: Any, tmp_path: Path) -> None:
    old = write_parquet(con, tmp_path / "old.parquet", V1_SELECT, V1_IDS)
    new = write_parquet(
        con,
        tmp_path / "new.parquet",
        "SELECT 9999999999::BIGINT AS id, 1e300::DOUBLE AS f, 'three' AS full_name, "
        "123456789012345678.99::DECIMAL(20, 2) AS dec, 'new' AS dropped, 7::INT AS added, 'x' AS added_null",
        {"id": 1, "f": 3, "full_name": 2, "dec": 4, "dropped": 6, "added": 7, "added_null": 8},
    )
    rows = read_rows(con, evolved_schema(), [data_task(con, old), data_task(con, new)])
    assert rows == sorted(
        [
            {"id": i, "f": i * 1.5, "full_name": f"n{i}", "dec": Decimal(i * 125) / 100, "dropped": None,
             "added": 42, "added_null": None}
            for i in range(3)
        ]
        + [
            {"id": 9999999999, "f": 1e300, "full_name": "three", "dec": Decimal("123456789012345678.99"),
             "dropped": "new", "added": 7, "added_null": "x"}
        ],
        key=repr,
    )  # fmt: skip


def test_view_types_are_the_current_types(con: Any, tmp_path: Path) -> None:
    old = write_parquet(con, tmp_path / "old.parquet", V1_SELECT, V1_IDS)
    plan = ScanPlan(evolved_schema(), 1, (data_task(con, old),))
    register_scan(con, plan, "v")
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE v)").fetchall())
    assert types == {
        "id": "BIGINT", "f": "DOUBLE", "full_name": "VARCHAR", "dec": "DECIMAL(20,2)", "dropped": "VARCHAR",
        "added": "INTEGER", "added_null": "VARCHAR",
    }  # fmt: skip


def test_projection_picks_and_orders_columns(con: Any, tmp_path: Path) -> None:
    old = write_parquet(con, tmp_path / "old.parquet", V1_SELECT, V1_IDS)
    table = scan_to_arrow(con, ScanPlan(evolved_schema(), 1, (data_task(con, old),)), field_ids=[2, 7])
    assert table.column_names == ["full_name", "added"]
    assert sorted(table.to_pylist(), key=repr) == [{"full_name": f"n{i}", "added": 42} for i in range(3)]
    with pytest.raises(UserError, match="field id 5"):
        scan_to_arrow(con, ScanPlan(evolved_schema(), 1, (data_task(con, old),)), field_ids=[5])


def test_defaults_of_every_primitive_type(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "a.parquet", "SELECT 1::INT AS id", {"id": 1})
    defaults = [
        F(10, "d", DateType(), initial_default=19782),
        F(11, "ts", TimestamptzType(), initial_default=1_700_000_000_123_456),
        F(12, "dec", DecimalType(38, 10), initial_default=Decimal("-1.2500000000")),
        F(13, "s", StringType(), initial_default="it's"),
        F(14, "f", FloatType(), initial_default=float("-inf")),
        F(15, "l", LongType(), initial_default=-(2**63)),
    ]
    rows = read_rows(con, Schema((F(1, "id", IntegerType()), *defaults)), [data_task(con, path)])
    assert rows == [
        {
            "id": 1,
            "d": datetime.date(2024, 2, 29),
            "ts": datetime.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=datetime.UTC),
            "dec": Decimal("-1.2500000000"),
            "s": "it's",
            "f": float("-inf"),
            "l": -(2**63),
        }
    ]


def test_unknown_type_reads_null(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "a.parquet", "SELECT 1::INT AS id, 5::INT AS u", {"id": 1, "u": 2})
    rows = read_rows(
        con, Schema((F(1, "id", IntegerType()), F(2, "u", UnknownType()))), [data_task(con, path)]
    )
    assert rows == [{"id": 1, "u": None}]  # "any corresponding column must be ignored"


# -- nested fields by id ----------------------------------------------------------------------------


NESTED_OLD = {
    "id": 1,
    "s": {"__duckdb_field_id": 2, "a": 3, "b": 4, "gone": 5},
    "l": {"__duckdb_field_id": 6, "element": {"__duckdb_field_id": 7, "x": 8, "y": 9}},
    "m": {"__duckdb_field_id": 10, "key": 11, "value": {"__duckdb_field_id": 12, "p": 13}},
    "li": {"__duckdb_field_id": 14, "element": 15},
}
NESTED_OLD_SELECT = (
    "SELECT 1::INT AS id, {'a': 1::INT, 'b': 'bee', 'gone': 'old'} AS s, "
    "[{'x': 1::INT, 'y': 'why'}, NULL] AS l, MAP {'k': {'p': 2.5::FLOAT}} AS m, [1, NULL]::INT[] AS li "
    "UNION ALL SELECT 2, NULL, NULL, NULL, NULL"
)


def nested_schema() -> Schema:
    """Struct member renamed (b -> bb), dropped (gone, 5) and re-added under the old name
    with a new id (gone, 16), added with a default (c, 17); list element struct member
    renamed (y -> yy) and promoted (x int -> long); map value member renamed and promoted."""
    s = StructType(
        (
            F(3, "a", LongType()),
            F(4, "bb", StringType()),
            F(16, "gone", StringType()),
            F(17, "c", IntegerType(), initial_default=7),
        )
    )
    element = StructType((F(8, "x", LongType()), F(9, "yy", StringType())))
    value = StructType((F(13, "pp", DoubleType()),))
    return Schema(
        (
            F(1, "id", IntegerType()),
            F(2, "s", s),
            F(6, "l", ListType(7, element)),
            F(10, "m", MapType(11, StringType(), 12, value)),
            F(14, "li", ListType(15, LongType())),
        )
    )


def test_nested_fields_are_matched_by_id(con: Any, tmp_path: Path) -> None:
    old = write_parquet(con, tmp_path / "old.parquet", NESTED_OLD_SELECT, NESTED_OLD)
    new = write_parquet(
        con,
        tmp_path / "new.parquet",
        "SELECT 3::INT AS id, {'a': 3::BIGINT, 'bb': 'z', 'gone': 'new', 'c': 0::INT} AS s, "
        "[{'x': 5::BIGINT, 'yy': 'q'}] AS l, MAP {'n': {'pp': 1.0::DOUBLE}} AS m, [9]::BIGINT[] AS li",
        {
            "id": 1,
            "s": {"__duckdb_field_id": 2, "a": 3, "bb": 4, "gone": 16, "c": 17},
            "l": {"__duckdb_field_id": 6, "element": {"__duckdb_field_id": 7, "x": 8, "yy": 9}},
            "m": {"__duckdb_field_id": 10, "key": 11, "value": {"__duckdb_field_id": 12, "pp": 13}},
            "li": {"__duckdb_field_id": 14, "element": 15},
        },
    )
    rows = read_rows(con, nested_schema(), [data_task(con, old), data_task(con, new)])
    assert rows == sorted(  # Arrow gives maps as lists of (key, value)
        [
            {"id": 1, "s": {"a": 1, "bb": "bee", "gone": None, "c": 7}, "l": [{"x": 1, "yy": "why"}, None],
             "m": [("k", {"pp": 2.5})], "li": [1, None]},
            {"id": 2, "s": None, "l": None, "m": None, "li": None},
            {"id": 3, "s": {"a": 3, "bb": "z", "gone": "new", "c": 0}, "l": [{"x": 5, "yy": "q"}],
             "m": [("n", {"pp": 1.0})], "li": [9]},
        ],
        key=repr,
    )  # fmt: skip


def test_struct_whose_members_all_changed_keeps_its_nullness(con: Any, tmp_path: Path) -> None:
    path = write_parquet(
        con,
        tmp_path / "a.parquet",
        "SELECT {'old': 1::INT} AS s UNION ALL SELECT NULL",
        {"s": {"__duckdb_field_id": 1, "old": 2}},
    )
    schema = Schema((F(1, "s", StructType((F(3, "new", IntegerType(), initial_default=5),))),))
    assert read_rows(con, schema, [data_task(con, path)]) == [{"s": None}, {"s": {"new": 5}}]


def test_struct_column_added_with_an_empty_struct_default(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "a.parquet", "SELECT 1::INT AS id", {"id": 1})
    point = StructType(
        (F(3, "x", IntegerType(), initial_default=0), F(4, "y", IntegerType(), initial_default=0))
    )
    schema = Schema((F(1, "id", IntegerType()), F(2, "point", point, initial_default={})))
    # spec, "Default values": a {} default "will use field values set from each field's initial-default"
    assert read_rows(con, schema, [data_task(con, path)]) == [{"id": 1, "point": {"x": 0, "y": 0}}]


def test_a_layout_contradicting_the_schema_is_corrupt(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "a.parquet", "SELECT 1::INT AS s", {"s": 1})
    schema = Schema((F(1, "s", StructType((F(2, "a", IntegerType()),))),))
    with pytest.raises(CorruptDataError, match=r"a\.parquet"):
        read_rows(con, schema, [data_task(con, path)])


def test_footers_are_read_once_per_file(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "old.parquet", NESTED_OLD_SELECT, NESTED_OLD)
    cache = LayoutCache()
    plan = ScanPlan(nested_schema(), 1, (data_task(con, path),))
    scan_sql(con, plan, "v", layouts=cache)
    assert len(cache) == 1
    flat = ScanPlan(Schema((F(1, "id", IntegerType()),)), 1, plan.tasks)
    scan_sql(con, flat, "v", layouts=LayoutCache(max_entries=0))  # flat: no footer needed, none read


# -- identity partitions and name mapping ------------------------------------------------------------


def test_identity_partition_values_fill_missing_columns(con: Any, tmp_path: Path) -> None:
    """Hive-migrated files lack their partition columns; the manifest's partition has them."""
    a = write_parquet(con, tmp_path / "a.parquet", "SELECT 1::INT AS id", {"id": 1})
    b = write_parquet(con, tmp_path / "b.parquet", "SELECT 2::INT AS id", {"id": 1})
    c = write_parquet(
        con, tmp_path / "c.parquet", "SELECT 3::INT AS id, 'in-file' AS cat", {"id": 1, "cat": 2}
    )
    schema = Schema((F(1, "id", IntegerType()), F(2, "cat", StringType())))
    tasks = [
        data_task(con, a, identity_values={2: "x"}),
        data_task(con, b, identity_values={2: "y"}),
        data_task(con, c, identity_values={2: "in-file"}),
    ]
    assert read_rows(con, schema, tasks) == [
        {"id": 1, "cat": "x"},
        {"id": 2, "cat": "y"},
        {"id": 3, "cat": "in-file"},
    ]


def test_identity_value_beats_initial_default(con: Any, tmp_path: Path) -> None:
    a = write_parquet(con, tmp_path / "a.parquet", "SELECT 1::INT AS id", {"id": 1})
    b = write_parquet(con, tmp_path / "b.parquet", "SELECT 2::INT AS id, NULL::INT AS p", {"id": 1, "p": 2})
    schema = Schema((F(1, "id", IntegerType()), F(2, "p", IntegerType(), initial_default=9)))
    tasks = [data_task(con, a, identity_values={2: 5}), data_task(con, b, identity_values={2: None})]
    assert read_rows(con, schema, tasks) == [{"id": 1, "p": 5}, {"id": 2, "p": None}]


NAME_MAPPING = json.dumps(
    [
        {"field-id": 1, "names": ["id", "record_id"]},
        {"field-id": 2, "names": ["data"]},
        {"field-id": 3, "names": ["location"], "fields": [
            {"field-id": 4, "names": ["latitude", "lat"]},
            {"field-id": 5, "names": ["longitude", "long"]},
        ]},
        {"field-id": 6, "names": ["tags"], "fields": [{"field-id": 7, "names": ["element"]}]},
    ]
)  # fmt: skip


def test_name_mapping_for_files_without_field_ids(con: Any, tmp_path: Path) -> None:
    """The spec's name-mapping example: aliases, nested fields, a list element."""
    imported = write_parquet(
        con,
        tmp_path / "imported.parquet",
        "SELECT 7::BIGINT AS record_id, {'lat': 1.5::DOUBLE, 'long': 2.5::DOUBLE} AS location, "
        "['a']::VARCHAR[] AS tags, 'unmapped' AS extra",
        None,
    )
    native = write_parquet(
        con,
        tmp_path / "native.parquet",
        "SELECT 8::BIGINT AS id, 'd' AS data",
        {"id": 1, "data": 2},
    )
    location = StructType((F(4, "lat", DoubleType()), F(5, "lon", DoubleType())))
    schema = Schema(
        (
            F(1, "id", LongType()),
            F(2, "data", StringType()),
            F(3, "loc", location),
            F(6, "tags", ListType(7, StringType())),
        )
    )
    rows = read_rows(
        con, schema, [data_task(con, imported), data_task(con, native)], name_mapping=NAME_MAPPING
    )
    assert rows == [
        {"id": 7, "data": None, "loc": {"lat": 1.5, "lon": 2.5}, "tags": ["a"]},
        {"id": 8, "data": "d", "loc": None, "tags": None},
    ]


def test_file_without_ids_and_no_name_mapping_is_an_error(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "a.parquet", "SELECT {'a': 1} AS s", None)
    schema = Schema((F(1, "s", StructType((F(2, "a", IntegerType()),))),))
    with pytest.raises(CorruptDataError, match="no Parquet field ids"):
        read_rows(con, schema, [data_task(con, path)])


# -- metadata columns ---------------------------------------------------------------------------


def test_metadata_columns(con: Any, tmp_path: Path) -> None:
    """``_row_id`` = first_row_id + _pos when null in the file; ``_last_updated_sequence_number``
    = the file's data sequence number when null (spec, "Row Lineage")."""
    a = write_parquet(con, tmp_path / "a.parquet", "SELECT i::INT AS id FROM range(3) t(i)", {"id": 1})
    b = write_parquet(
        con,
        tmp_path / "b.parquet",
        "SELECT 10::INT AS id, 500::BIGINT AS r, NULL::BIGINT AS s UNION ALL SELECT 11, NULL, 3",
        {"id": 1, "r": ROW_ID_ID, "s": LAST_UPDATED_SEQUENCE_NUMBER_ID},
    )
    schema = Schema((F(1, "id", IntegerType()),))
    tasks = (
        data_task(con, a, first_row_id=100, sequence_number=4),
        data_task(con, b, first_row_id=200, sequence_number=5),
    )
    ids = [1, FILE_PATH_ID, POS_ID, ROW_ID_ID, LAST_UPDATED_SEQUENCE_NUMBER_ID]
    rows = sorted(scan_to_arrow(con, ScanPlan(schema, 1, tasks), ids).to_pylist(), key=lambda r: r["id"])
    assert rows == [
        {"id": 0, "_file": str(a), "_pos": 0, "_row_id": 100, "_last_updated_sequence_number": 4},
        {"id": 1, "_file": str(a), "_pos": 1, "_row_id": 101, "_last_updated_sequence_number": 4},
        {"id": 2, "_file": str(a), "_pos": 2, "_row_id": 102, "_last_updated_sequence_number": 4},
        {"id": 10, "_file": str(b), "_pos": 0, "_row_id": 500, "_last_updated_sequence_number": 5},
        {"id": 11, "_file": str(b), "_pos": 1, "_row_id": 201, "_last_updated_sequence_number": 3},
    ]


# -- the view -------------------------------------------------------------------------------------


def test_empty_plan_has_the_columns_and_no_rows(con: Any) -> None:
    plan = ScanPlan(evolved_schema(), None, ())
    register_scan(con, plan, "empty")
    assert con.execute("SELECT count(*) FROM empty").fetchone() == (0,)
    assert [r[0] for r in con.execute("DESCRIBE empty").fetchall()][:3] == ["id", "f", "full_name"]


def test_filters_through_the_view_and_unregister(con: Any, tmp_path: Path) -> None:
    files = [
        write_parquet(
            con,
            tmp_path / f"{n}.parquet",
            f"SELECT (i + {n * 100})::BIGINT AS id FROM range(100) t(i)",
            {"id": 1},
        )
        for n in range(3)
    ]
    plan = ScanPlan(Schema((F(1, "id", LongType()),)), 1, tuple(data_task(con, f) for f in files))
    register_scan(con, plan, "t_1")
    assert con.execute("SELECT count(*), sum(id) FROM t_1 WHERE id % 100 < 10").fetchone() == (
        30,
        3 * 45 + 3000,
    )
    unregister_scan(con, "t_1")
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name LIKE 't_1%'").fetchone() == (0,)


def test_attach_scan_is_a_derived_table(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "a.parquet", "SELECT i::BIGINT AS id FROM range(5) t(i)", {"id": 1})
    plan = ScanPlan(Schema((F(1, "id", LongType()),)), 1, (data_task(con, path),))
    sql = attach_scan(con, plan, "q_1")
    assert con.execute(f"SELECT sum(x.id) FROM ({sql}) AS x WHERE x.id > 1").fetchall() == [(9,)]
    unregister_scan(con, "q_1")  # no view: still drops the variables
    assert con.execute("SELECT count(*) FROM duckdb_variables() WHERE name LIKE 'q_1%'").fetchall() == [(0,)]


def test_missing_and_unsupported_files_are_named(con: Any, tmp_path: Path) -> None:
    schema = Schema((F(1, "id", LongType()),))
    missing = FileScanTask(str(tmp_path / "gone.parquet"), FileFormat.PARQUET, 1, 1, 0, (), 1)
    with pytest.raises(MissingFileError, match=r"gone\.parquet"):
        scan_to_arrow(con, ScanPlan(schema, 1, (missing,)))
    orc = FileScanTask(str(tmp_path / "x.orc"), FileFormat.ORC, 1, 1, 0, (), 1)
    with pytest.raises(UnsupportedError, match=r"orc.*x\.orc"):
        scan_to_arrow(con, ScanPlan(schema, 1, (orc,)))


def test_file_uri_locations(con: Any, tmp_path: Path) -> None:
    path = write_parquet(con, tmp_path / "a.parquet", "SELECT 1::BIGINT AS id", {"id": 1})
    task = data_task(con, path)
    uri_task = FileScanTask("file:" + str(path), FileFormat.PARQUET, 1, task.file_size_in_bytes, 0, (), 1)
    schema = Schema((F(1, "id", LongType()),))
    assert scan_to_arrow(con, ScanPlan(schema, 1, (uri_task,)), [1, FILE_PATH_ID]).to_pylist() == [
        {"id": 1, "_file": "file:" + str(path)}
    ]


def test_name_mapping_with_legacy_list_element_names(con: Any, tmp_path: Path) -> None:
    """Files written by pyarrow without ids name list elements ``item``: the mapping's
    ``element`` entry still applies (DuckDB reads list elements by position)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "legacy.parquet"
    table = pa.table(
        {
            "pts": pa.array(
                [[{"lat": 1.0, "gone": 1}], None],
                pa.list_(pa.struct([("lat", pa.float64()), ("gone", pa.int64())])),
            )
        }
    )
    pq.write_table(table, path, use_compliant_nested_type=False)
    mapping = json.dumps(
        [
            {
                "field-id": 1,
                "names": ["pts"],
                "fields": [
                    {"field-id": 2, "names": ["element"], "fields": [{"field-id": 3, "names": ["lat"]}]}
                ],
            }
        ]
    )
    element = StructType((F(3, "latitude", DoubleType()), F(4, "added", IntegerType(), initial_default=1)))
    schema = Schema((F(1, "points", ListType(2, element)),))
    task = FileScanTask(str(path), FileFormat.PARQUET, 2, path.stat().st_size, 0, (), 1)
    rows = read_rows(con, schema, [task], name_mapping=mapping)
    assert rows == [{"points": None}, {"points": [{"latitude": 1.0, "added": 1}]}]


def test_scans_carry_the_manifests_row_count_to_duckdbs_planner(con: Any, tmp_path: Path) -> None:
    """A ``schema = MAP`` scan hides the row count from DuckDB's optimizer (join orders were
    chosen blind); the planned files' record counts are handed over instead."""
    files = [
        write_parquet(
            con, tmp_path / f"{n}.parquet", f"SELECT i::BIGINT AS id FROM range({1000 * (n + 1)}) t(i)",
            {"id": 1},
        )
        for n in range(3)
    ]
    plan = ScanPlan(Schema((F(1, "id", LongType()),)), 1, tuple(data_task(con, f) for f in files))
    sql = attach_scan(con, plan, "est")
    explained = con.execute(f"EXPLAIN SELECT * FROM ({sql}) AS x").fetchall()[0][1]
    assert "~6,000 rows" in explained, explained
    unregister_scan(con, "est")
