"""The Parquet footer codec and the INT32 annotation strip (iceduck.formats.parquet_footer).

* decode + encode is byte-identical on footers DuckDB, pyarrow (with page indexes, bloom-free
  statistics, key-value metadata) and Spark wrote;
* after stripping, pyarrow and DuckDB read the same rows and field ids, the ``int`` columns
  (top level, struct field, list element, map key and value) lose Int(32)/INT_32 and nothing
  else changes (date, decimal, other ids keep theirs);
* iceduck's writer strips every file, so Spark reads an iceduck-written table after
  ``ALTER COLUMN ... TYPE bigint`` (Iceberg 1.10's vectorised reader failed before:
  apache/iceberg#16341).
"""

from __future__ import annotations

import datetime
import decimal
import glob
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import iceduck
from iceduck.errors import CorruptDataError
from iceduck.formats.parquet_footer import (
    BINARY,
    I32,
    LIST,
    MAP,
    STRUCT,
    TRUE,
    ThriftField,
    ThriftList,
    ThriftMap,
    ThriftStruct,
    decode_struct,
    encode_struct,
    int_field_ids,
    read_footer,
    strip_int32_annotations,
)
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    DateType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from tests.support.namespaces import drop_namespace_with_tables

# DuckDB table with every place an Iceberg int can sit, plus INT32 columns that are not ints
DUCK_SQL = """
SELECT i::INTEGER AS n, i::BIGINT AS l, 'v' || i AS s,
       {'a': i::INTEGER, 'b': 'x' || i} AS st,
       [i::INTEGER, NULL, i::INTEGER + 1] AS li,
       MAP {i::INTEGER: i::INTEGER * 2} AS m,
       DATE '2024-01-01' + i::INTEGER AS d,
       (i / 100)::DECIMAL(9, 2) AS dec,
       CASE WHEN i % 3 = 0 THEN NULL ELSE i::INTEGER END AS n2
FROM range(0, 3000) AS r(i)
"""
# Iceberg field ids as DuckDB's FIELD_IDS option takes them
FIELD_IDS = (
    "{n: 1, l: 2, s: 3, st: {__duckdb_field_id: 4, a: 5, b: 6}, li: {__duckdb_field_id: 7, element: 8}, "
    "m: {__duckdb_field_id: 9, key: 10, value: 11}, d: 12, dec: 13, n2: 14}"
)
INT_IDS = {1, 5, 8, 10, 11, 14}


def duck_file(path: Path, **options: str) -> Path:
    extra = "".join(f", {k} {v}" for k, v in options.items())
    duckdb.sql(f"COPY ({DUCK_SQL}) TO '{path}' (FORMAT parquet, FIELD_IDS {FIELD_IDS}{extra})")
    return path


def arrow_table() -> pa.Table:
    n = 2000
    return pa.table(
        {
            "n": pa.array(range(n), pa.int32()),
            "l": pa.array(range(n), pa.int64()),
            "s": pa.array([f"s{i}" if i % 7 else None for i in range(n)]),
            "st": pa.array([{"a": i, "b": [1.5, float("nan")]} for i in range(n)]),
            "m": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int32())),
            "d": pa.array([datetime.date(2020, 1, 1)] * n),
            "ts": pa.array([datetime.datetime(2020, 1, 1, 1, 2, 3)] * n, pa.timestamp("us", "UTC")),
            "dec": pa.array([decimal.Decimal("1.25")] * n, pa.decimal128(20, 2)),
            "flag": pa.array([i % 2 == 0 for i in range(n)]),
            "bin": pa.array([bytes([i % 256]) * 3 for i in range(n)], pa.binary(3)),
        }
    ).replace_schema_metadata({"k": "v" * 100})


def footer_bytes(path: Path | str) -> bytes:
    data = Path(path).read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    return data[-8 - length : -8]


def assert_round_trip(path: Path | str) -> None:
    start, metadata = read_footer(str(path))
    raw = footer_bytes(path)
    assert start == os.path.getsize(path) - 8 - len(raw)
    assert encode_struct(metadata) == raw, path


# -- the codec -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"COMPRESSION": "snappy", "ROW_GROUP_SIZE": "500"}, {"COMPRESSION": "uncompressed"}],
)
def test_duckdb_footers_round_trip(tmp_path: Path, options: dict[str, str]) -> None:
    assert_round_trip(duck_file(tmp_path / "d.parquet", **options))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"write_page_index": True, "row_group_size": 300, "compression": "zstd"},
        {"use_dictionary": False, "write_statistics": False, "version": "1.0"},
        {"store_schema": False, "data_page_version": "2.0", "compression": "gzip"},
    ],
)
def test_pyarrow_footers_round_trip(tmp_path: Path, options: dict[str, Any]) -> None:
    path = tmp_path / "a.parquet"
    pq.write_table(arrow_table(), path, **options)
    assert_round_trip(path)


def test_spark_footers_round_trip(spark_warehouse: Any) -> None:
    files = glob.glob(f"{spark_warehouse.path}/**/*.parquet", recursive=True)
    assert len(files) > 20
    for path in files:
        assert_round_trip(path)


def test_codec_keeps_unusual_encodings() -> None:
    """Long-form headers, >= 15-element lists, bools, negatives, empty maps all survive."""
    inner = ThriftStruct([ThriftField(1, TRUE, False), ThriftField(2, TRUE, True)])
    value = ThriftStruct(
        [
            ThriftField(1, I32, -5),
            ThriftField(3, I32, 7, long_header=True),  # a delta would have fitted
            ThriftField(40, BINARY, b"\x00" * 200),  # delta > 15: long form is required
            ThriftField(41, LIST, ThriftList(I32, list(range(-20, 20)))),
            ThriftField(42, LIST, ThriftList(I32, [1, 2], long_header=True)),
            ThriftField(43, MAP, ThriftMap(0, 0, [])),
            ThriftField(44, MAP, ThriftMap(BINARY, STRUCT, [(b"k", inner)])),
            ThriftField(45, LIST, ThriftList(TRUE, [True, False])),
            ThriftField(-1, STRUCT, inner),  # negative ids exist (e.g. in Thrift exceptions)
        ]
    )
    data = encode_struct(value)
    assert decode_struct(data) == value
    assert encode_struct(decode_struct(data)) == data


def corrupt_copy(source: Path, target: Path, change: Any) -> str:
    data = bytearray(source.read_bytes())
    change(data)
    target.write_bytes(bytes(data))
    return str(target)


def _garble(data: bytearray) -> None:
    length = int.from_bytes(data[-8:-4], "little")
    data[-8 - length : -8] = b"\x1f" * length  # type 15: no such compact type


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.__setitem__(slice(-4, None), b"XXXX"), "no PAR1 magic"),
        (lambda d: d.__setitem__(slice(-8, -4), (10**9).to_bytes(4, "little")), "exceeds the file size"),
        (_garble, "malformed Parquet footer"),
        (lambda d: d.__delitem__(slice(8, -8)), "only|exceeds"),
        (
            lambda d: d.__setitem__(
                slice(-8, -4), (int.from_bytes(d[-8:-4], "little") - 3).to_bytes(4, "little")
            ),
            "malformed Parquet footer",
        ),
    ],
)
def test_corrupt_footers_name_the_file(tmp_path: Path, change: Any, message: str) -> None:
    source = duck_file(tmp_path / "good.parquet")
    broken = corrupt_copy(source, tmp_path / "broken.parquet", change)
    with pytest.raises(CorruptDataError, match=message) as info:
        strip_int32_annotations(broken, INT_IDS)
    assert info.value.path == broken and broken in str(info.value)


# -- stripping -------------------------------------------------------------------------------


def annotations(path: Path) -> dict[str, tuple[str, str]]:
    schema = pq.ParquetFile(path).schema
    return {
        schema.column(i).path: (str(schema.column(i).logical_type), schema.column(i).converted_type)
        for i in range(len(schema))
    }


def duck_view(path: Path) -> tuple[list[Any], list[Any]]:
    con = duckdb.connect()
    rows = con.sql(f"SELECT * FROM read_parquet('{path}') ORDER BY l").fetchall()
    ids = con.sql(f"SELECT name, field_id, type FROM parquet_schema('{path}')").fetchall()
    types = con.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
    return rows, [ids, types]


def test_strip_removes_only_int_annotations(tmp_path: Path) -> None:
    original = duck_file(tmp_path / "orig.parquet", ROW_GROUP_SIZE="1000")
    path = tmp_path / "patched.parquet"
    shutil.copy(original, path)
    before = annotations(path)
    assert before["n"] == ("Int(bitWidth=32, isSigned=true)", "INT_32")  # what DuckDB writes

    assert strip_int32_annotations(str(path), INT_IDS)

    after = annotations(path)
    for column in ("n", "st.a", "li.list.element", "m.key_value.key", "m.key_value.value", "n2"):
        assert after[column] == ("None", "NONE"), column
    for column in ("l", "s", "st.b", "d", "dec"):  # bigint, string, date, decimal keep theirs
        assert after[column] == before[column], column
    assert after["d"][1] == "DATE" and after["dec"][1] == "DECIMAL"
    # the data, statistics and row groups are untouched
    assert pq.read_table(path).equals(pq.read_table(original))
    old, new = pq.read_metadata(original), pq.read_metadata(path)
    assert new.num_row_groups == old.num_row_groups > 1
    for g in range(old.num_row_groups):
        for c in range(old.num_columns):
            assert new.row_group(g).column(c).statistics == old.row_group(g).column(c).statistics
            assert new.row_group(g).column(c).data_page_offset == old.row_group(g).column(c).data_page_offset
    assert duck_view(path) == duck_view(original)
    assert os.path.getsize(path) < os.path.getsize(original)
    assert_round_trip(path)
    assert not strip_int32_annotations(str(path), INT_IDS)  # nothing left to strip


def test_strip_leaves_other_ids_alone(tmp_path: Path) -> None:
    path = duck_file(tmp_path / "d.parquet")
    data = path.read_bytes()
    assert strip_int32_annotations(str(path), {5})
    after = annotations(path)
    assert after["st.a"] == ("None", "NONE")
    assert after["n"] == ("Int(bitWidth=32, isSigned=true)", "INT_32")
    assert not strip_int32_annotations(str(path), {12, 13})  # date and decimal: never touched
    assert not strip_int32_annotations(str(path), set())
    start, _ = read_footer(str(path))
    assert path.read_bytes()[:start] == data[:start]  # only the footer changed


def test_int_field_ids_at_every_depth() -> None:
    schema = Schema(
        (
            NestedField(1, "n", IntegerType(), False),
            NestedField(2, "l", LongType(), False),
            NestedField(3, "st", StructType((NestedField(4, "a", IntegerType(), False),)), False),
            NestedField(5, "li", ListType(6, IntegerType()), False),
            NestedField(7, "m", MapType(8, IntegerType(), 9, ListType(10, IntegerType())), False),
            NestedField(11, "m2", MapType(12, StringType(), 13, DateType()), False),
        )
    )
    assert int_field_ids(schema) == {1, 4, 6, 8, 10}


# -- iceduck's writer ------------------------------------------------------------------------


def data_files(root: Path) -> list[str]:
    return sorted(glob.glob(f"{root}/**/data/**/*.parquet", recursive=True))


def test_writer_files_have_no_int_annotations(tmp_path: Path) -> None:
    con = iceduck.connect(tmp_path)
    con.execute("CREATE NAMESPACE ns")
    con.execute(
        "CREATE TABLE ns.t (n INT, st STRUCT<a: INT, b: DATE>, li ARRAY<INT>, m MAP<INT, INT>, "
        "d DATE, dec DECIMAL(9, 2)) USING iceberg PARTITIONED BY (bucket(2, n))"
    )
    con.execute(
        "INSERT INTO ns.t SELECT i, {'a': i, 'b': DATE '2024-01-01'}, [i], MAP {i: i}, DATE '2024-01-02', "
        "1.5 FROM range(0, 100) AS r(i)"
    )
    files = data_files(tmp_path)
    assert len(files) == 2
    sizes = {
        r[0]: r[1] for r in con.execute("SELECT file_path, file_size_in_bytes FROM ns.t.files").fetchall()
    }
    for f in files:
        found = annotations(Path(f))
        for column in ("n", "st.a", "li.list.element", "m.key_value.key", "m.key_value.value"):
            assert found[column] == ("None", "NONE"), (f, column)
        assert found["d"][1] == "DATE" and found["st.b"][1] == "DATE" and found["dec"][1] == "DECIMAL"
        assert sizes[next(p for p in sizes if p.endswith(os.path.basename(f)))] == os.path.getsize(f)
    assert con.execute("SELECT count(*), sum(n), sum(st.a) FROM ns.t").fetchone() == (100, 4950, 4950)
    con.close()


# -- Spark reads an iceduck table after int -> long ------------------------------------------

NS = "footer_test"


def _drop_namespace(con: Any) -> None:
    catalog = con.session.catalog
    drop_namespace_with_tables(catalog, NS)


@pytest.mark.parametrize(
    ("columns", "values", "promote", "query", "expected"),
    [
        # flat: Spark's vectorised reader, the one that failed (apache/iceberg#16341)
        ("id BIGINT, n INT", "(1, 10), (2, NULL), (3, -7)", ["n"], "id, n", [(1, 10), (2, None), (3, -7)]),
        (
            "id BIGINT, n INT, st STRUCT<a: INT, b: STRING>",
            "(1, 10, {'a': 100, 'b': 'x'}), (2, NULL, NULL), (3, -7, {'a': NULL, 'b': 'y'})",
            ["n", "st.a"],
            "id, n, st.a",
            [(1, 10, 100), (2, None, None), (3, -7, None)],
        ),
    ],
    ids=["flat", "struct"],
)
def test_spark_reads_promoted_int_columns(
    spark: Any,
    spark_warehouse: Any,
    columns: str,
    values: str,
    promote: list[str],
    query: str,
    expected: list[tuple[Any, ...]],
) -> None:
    con = iceduck.connect(spark_warehouse.path)
    _drop_namespace(con)
    try:
        con.execute(f"CREATE NAMESPACE {NS}")
        con.execute(f"CREATE TABLE {NS}.t ({columns}) USING iceberg TBLPROPERTIES ('format-version'='2')")
        con.execute(f"INSERT INTO {NS}.t VALUES {values}")
        for column in promote:
            con.execute(f"ALTER TABLE {NS}.t ALTER COLUMN {column} TYPE bigint")
        rows = spark.sql(f"SELECT {query} FROM iceduck.{NS}.t ORDER BY id").collect()
        assert [tuple(r) for r in rows] == expected
        assert con.execute(f"SELECT {query} FROM {NS}.t ORDER BY id").fetchall() == expected
    finally:
        _drop_namespace(con)
        con.close()
