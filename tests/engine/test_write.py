"""write_data_files: Parquet layout, partition split and paths, sort order, rolling,
metrics and validation."""

from __future__ import annotations

import os
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from iceduck.engine.connection import open_database
from iceduck.engine.write import FileTarget, escape_path_segment, write_data_files
from iceduck.errors import ValidationError
from iceduck.formats.parquet_metrics import leaf_field_ids
from iceduck.spec import values
from iceduck.spec.partition import UNPARTITIONED, PartitionField, PartitionSpec
from iceduck.spec.schema import LAST_UPDATED_SEQUENCE_NUMBER_ID, ROW_ID_ID, Schema
from iceduck.spec.sort import UNSORTED, NullOrder, SortDirection, SortField, SortOrder
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

ALL_TYPES = Schema(
    (
        NestedField(1, "id", LongType(), True),
        NestedField(2, "i", IntegerType()),
        NestedField(3, "f", FloatType()),
        NestedField(4, "d", DoubleType()),
        NestedField(5, "dec", DecimalType(9, 2)),
        NestedField(6, "dec38", DecimalType(38, 10)),
        NestedField(7, "dt", DateType()),
        NestedField(8, "t", TimeType()),
        NestedField(9, "ts", TimestampType()),
        NestedField(10, "tz", TimestamptzType()),
        NestedField(11, "s", StringType()),
        NestedField(12, "u", UUIDType()),
        NestedField(13, "b", BinaryType()),
        NestedField(14, "fx", FixedType(4)),
        NestedField(
            15, "st", StructType((NestedField(16, "a", IntegerType()), NestedField(17, "x", DoubleType())))
        ),
        NestedField(18, "li", ListType(19, StringType())),
        NestedField(20, "m", MapType(21, StringType(), 22, LongType())),
        NestedField(23, "tsn", TimestampNanoType()),
        NestedField(24, "tzn", TimestamptzNanoType()),
    )
)
ALL_TYPES_ROWS = """
SELECT i, i::INTEGER, CASE WHEN i = 2 THEN 'nan'::FLOAT ELSE i / 2 END, CASE WHEN i = 1 THEN NULL ELSE -i END,
       (i * 1.25)::DECIMAL(9,2), 12345678901234567890.5, DATE '2020-01-01' + i::INTEGER,
       TIME '12:00:00.000001',
       TIMESTAMP '2020-01-01 10:00:00' + to_hours(i), TIMESTAMPTZ '2020-01-01 10:00:00+00', 'str' || i,
       'f79c3e09-677c-4bbd-a479-3f349cb785e7'::UUID, 'ab'::BLOB, 'abcd'::BLOB,
       {'a': i::INTEGER, 'x': CASE WHEN i = 0 THEN 'nan'::DOUBLE ELSE 1.5 END},
       ['x', NULL], MAP {'k': i}, TIMESTAMP_NS '2020-01-01 00:00:00.123456789',
       TIMESTAMPTZ_NS '2020-01-01 00:00:00.123456789+00'
FROM range(4) t(i)
"""


@pytest.fixture
def con() -> Any:
    return open_database()


def _target(
    tmp_path: Path,
    schema: Schema,
    spec: PartitionSpec = UNPARTITIONED,
    order: SortOrder = UNSORTED,
    **properties: str,
) -> FileTarget:
    return FileTarget(schema, spec, order, dict(properties), str(tmp_path / "data"), 2)


def test_parquet_types_and_field_ids(con: Any, tmp_path: Path):
    files = write_data_files(con, ALL_TYPES_ROWS, _target(tmp_path, ALL_TYPES))
    assert len(files) == 1 and files[0].record_count == 4
    pf = pq.ParquetFile(files[0].file_path)
    columns = {pf.schema.column(i).path: pf.schema.column(i) for i in range(pf.schema.__len__())}
    assert "isAdjustedToUTC=true, timeUnit=microseconds" in str(columns["tz"].logical_type)
    assert "isAdjustedToUTC=false, timeUnit=microseconds" in str(columns["ts"].logical_type)
    assert "isAdjustedToUTC=false, timeUnit=nanoseconds" in str(columns["tsn"].logical_type)
    assert "isAdjustedToUTC=true, timeUnit=nanoseconds" in str(columns["tzn"].logical_type)
    assert "Time(isAdjustedToUTC=false, timeUnit=microseconds)" in str(columns["t"].logical_type)
    assert columns["u"].physical_type == "FIXED_LEN_BYTE_ARRAY" and "UUID" in str(columns["u"].logical_type)
    assert columns["dec"].physical_type == "INT32" and "precision=9, scale=2" in str(
        columns["dec"].logical_type
    )
    assert columns["dec38"].physical_type == "FIXED_LEN_BYTE_ARRAY"
    assert "precision=38, scale=10" in str(columns["dec38"].logical_type)
    assert columns["dt"].physical_type == "INT32" and "Date" in str(columns["dt"].logical_type)
    arrow = pf.schema_arrow
    ids = {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in arrow}
    ids.update(leaf_field_ids(arrow))
    assert ids["st.a"] == 16 and ids["st.x"] == 17 and ids["li.list.element"] == 19 and ids["li"] == 18
    assert ids["m"] == 20 and ids["m.key_value.key"] == 21 and ids["m.key_value.value"] == 22
    assert [ids[f.name] for f in ALL_TYPES.fields] == [f.field_id for f in ALL_TYPES.fields]


def test_metrics_of_written_file(con: Any, tmp_path: Path):
    (f,) = write_data_files(con, ALL_TYPES_ROWS, _target(tmp_path, ALL_TYPES))
    assert f.file_size_in_bytes == os.path.getsize(f.file_path)
    assert f.nan_value_counts == {3: 1, 4: 0, 17: 1}
    assert f.null_value_counts[4] == 1 and f.value_counts[4] == 4
    assert values.from_bytes(FloatType(), f.lower_bounds[3]) == 0.0
    assert values.from_bytes(FloatType(), f.upper_bounds[3]) == 1.5  # NaN is never a bound
    assert values.from_bytes(DoubleType(), f.lower_bounds[17]) == 1.5
    assert values.from_bytes(LongType(), f.upper_bounds[1]) == 3
    assert values.from_bytes(DecimalType(38, 10), f.lower_bounds[6]) == Decimal(
        "12345678901234567890.5000000000"
    )
    assert values.from_bytes(UUIDType(), f.lower_bounds[12]) == uuid.UUID(
        "f79c3e09-677c-4bbd-a479-3f349cb785e7"
    )
    assert 19 not in f.lower_bounds and 19 not in f.value_counts and 19 in f.column_sizes  # list child
    assert f.split_offsets == [4]
    assert f.sort_order_id == 0 and f.spec_id == 0 and f.partition == ()


def test_metrics_modes_from_properties(con: Any, tmp_path: Path):
    schema = Schema((NestedField(1, "s", StringType()), NestedField(2, "n", LongType())))
    target = _target(
        tmp_path,
        schema,
        **{"write.metadata.metrics.default": "truncate(2)", "write.metadata.metrics.column.n": "counts"},
    )
    (f,) = write_data_files(con, "SELECT 'abcdef' || i, i FROM range(3) t(i)", target)
    assert f.lower_bounds == {1: b"ab"} and f.upper_bounds == {1: b"ac"}
    assert f.value_counts == {1: 3, 2: 3}


PARTITION_SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), True),
        NestedField(2, "ts", TimestamptzType()),
        NestedField(3, "s", StringType()),
        NestedField(4, "dec", DecimalType(9, 2)),
        NestedField(5, "d", DateType()),
    )
)
PARTITION_ROWS = """
SELECT i, TIMESTAMPTZ '1969-12-31 20:00:00+00' + to_hours(i * 7), CASE WHEN i % 4 = 0 THEN NULL
       ELSE ['a b', 'x/y=z', '😀', '', '%25'][i % 5 + 1] END, (i * 3.17 - 20)::DECIMAL(9,2),
       DATE '1969-11-20' + (i * 9)::INTEGER
FROM range(40) t(i)
"""


@pytest.mark.parametrize(
    "fields",
    [
        [(1, "id_bucket", "bucket[5]")],
        [(2, "ts_hour", "hour"), (3, "s", "identity")],
        [(2, "ts_day", "day"), (1, "id_trunc", "truncate[10]")],
        [(5, "d_month", "month"), (4, "dec_trunc", "truncate[500]")],
        [(5, "d_year", "year"), (3, "s_trunc", "truncate[1]"), (4, "dec", "identity")],
        [(2, "ts", "identity"), (3, "s_bucket", "bucket[3]"), (1, "id_null", "void")],
    ],
)
def test_partitioned_files_hold_one_partition_each(
    con: Any, tmp_path: Path, fields: list[tuple[int, str, str]]
):
    spec = PartitionSpec(
        3, tuple(PartitionField(s, 1000 + i, n, parse_transform(t)) for i, (s, n, t) in enumerate(fields))
    )
    target = _target(tmp_path, PARTITION_SCHEMA, spec)
    files = write_data_files(con, PARTITION_ROWS, target)
    assert sum(f.record_count for f in files) == 40
    assert len({f.partition for f in files}) == len(files)
    for f in files:
        assert f.spec_id == 3
        rows = con.execute(
            "SELECT id, epoch_us(ts), s, dec, d - DATE '1970-01-01' "
            f"FROM read_parquet('{f.file_path}', hive_partitioning = false)"
        ).fetchall()
        for row in rows:
            by_id = dict(zip([1, 2, 3, 4, 5], row, strict=True))
            expected = tuple(
                pf.transform.apply(PARTITION_SCHEMA.find_type(pf.source_id))(by_id[pf.source_id])
                for pf in spec.fields
            )
            assert expected == f.partition
        segments = []
        for pf, v in zip(spec.fields, f.partition, strict=True):
            human = pf.transform.to_human_string(
                pf.transform.result_type(PARTITION_SCHEMA.find_type(pf.source_id)), v
            )
            segments.append(f"{escape_path_segment(pf.name)}={escape_path_segment(human)}")
        assert f.file_path.startswith(str(tmp_path / "data") + "/" + "/".join(segments) + "/")
    assert not [p for p in os.listdir(tmp_path / "data") if p.startswith(".")]  # no temporary folder left


def test_java_escaping_of_path_segments():
    assert escape_path_segment("a b") == "a+b"
    assert escape_path_segment("x/y=z") == "x%2Fy%3Dz"
    assert escape_path_segment("%25") == "%2525"
    assert escape_path_segment("😀") == "%F0%9F%98%80"
    assert escape_path_segment("2020-01-01T10:00:00+00:00") == "2020-01-01T10%3A00%3A00%2B00%3A00"
    assert escape_path_segment("a.b-c_d*e~") == "a.b-c_d*e%7E"


def test_sorted_by_the_sort_order_within_each_file(con: Any, tmp_path: Path):
    schema = Schema(
        (NestedField(1, "id", LongType()), NestedField(2, "v", LongType()), NestedField(3, "s", StringType()))
    )
    spec = PartitionSpec(0, (PartitionField(1, 1000, "id_bucket", parse_transform("bucket[3]")),))
    order = SortOrder(
        1,
        (
            SortField(3, parse_transform("truncate[1]"), SortDirection.ASC, NullOrder.NULLS_LAST),
            SortField(2, parse_transform("identity"), SortDirection.DESC, NullOrder.NULLS_FIRST),
        ),
    )
    target = _target(tmp_path, schema, spec, order)
    files = write_data_files(
        con,
        "SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE hash(i) % 1000 END, chr(97 + (i % 5)::INTEGER) "
        "FROM range(300000) t(i)",
        target,
    )
    assert len(files) == 3 and all(f.sort_order_id == 1 for f in files)
    for f in files:
        assert pq.read_schema(f.file_path).names == ["id", "v", "s"]  # no partition key columns
        got = con.execute(
            f"SELECT s, v FROM read_parquet('{f.file_path}', hive_partitioning = false)"
        ).fetchall()
        key = [(s, v is not None, -(v or 0)) for s, v in got]
        assert key == sorted(key)


def test_files_roll_at_target_size(con: Any, tmp_path: Path):
    schema = Schema((NestedField(1, "id", LongType()), NestedField(2, "s", StringType())))
    target = _target(tmp_path, schema, **{"write.target-file-size-bytes": "200000"})
    files = write_data_files(con, "SELECT i, md5(i::VARCHAR) FROM range(100000) t(i)", target)
    assert len(files) > 3
    assert sum(f.record_count for f in files) == 100000
    assert len({f.file_path for f in files}) == len(files)


def test_compression_codec_property(con: Any, tmp_path: Path):
    schema = Schema((NestedField(1, "id", LongType()),))
    for codec, parquet_name in [
        ("zstd", "ZSTD"),
        ("snappy", "SNAPPY"),
        ("gzip", "GZIP"),
        ("uncompressed", "UNCOMPRESSED"),
    ]:
        target = _target(tmp_path / codec, schema, **{"write.parquet.compression-codec": codec})
        (f,) = write_data_files(con, "SELECT 1", target)
        assert pq.read_metadata(f.file_path).row_group(0).column(0).compression == parquet_name


def test_empty_input_writes_nothing(con: Any, tmp_path: Path):
    schema = Schema((NestedField(1, "id", LongType()),))
    spec = PartitionSpec(0, (PartitionField(1, 1000, "id", parse_transform("identity")),))
    assert write_data_files(con, "SELECT 1 WHERE false", _target(tmp_path, schema, spec)) == []
    assert os.listdir(tmp_path / "data") == []


def test_row_lineage_columns(con: Any, tmp_path: Path):
    schema = Schema((NestedField(1, "id", LongType()),))
    target = _target(tmp_path, schema)
    (f,) = write_data_files(con, "SELECT 1, 7, NULL UNION ALL SELECT 2, NULL, 3", target, row_lineage=True)
    ids = [int(fl.metadata[b"PARQUET:field_id"]) for fl in pq.read_schema(f.file_path)]
    assert ids == [1, ROW_ID_ID, LAST_UPDATED_SEQUENCE_NUMBER_ID]


def test_parameters_are_passed(con: Any, tmp_path: Path):
    schema = Schema((NestedField(1, "id", LongType()),))
    (f,) = write_data_files(con, "SELECT ?::BIGINT", _target(tmp_path, schema), params=[42])
    assert con.execute(
        f"SELECT id FROM read_parquet('{f.file_path}', hive_partitioning = false)"
    ).fetchall() == [(42,)]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT 1, 'not a number'", "column n"),
        ("SELECT NULL, 1", "null value in required column id"),
        ("SELECT 1, 2, 3 UNION ALL SELECT 4, 5, 6", "yields 3 columns"),
    ],
)
def test_bad_rows_fail_naming_the_column_and_leave_nothing(
    con: Any, tmp_path: Path, query: str, message: str
):
    schema = Schema((NestedField(1, "id", LongType(), True), NestedField(2, "n", IntegerType())))
    spec = PartitionSpec(0, (PartitionField(2, 1000, "n", parse_transform("identity")),))
    with pytest.raises(ValidationError, match=message):
        write_data_files(
            con, f"SELECT * FROM ({query}) UNION ALL SELECT * FROM ({query})", _target(tmp_path, schema, spec)
        )
    assert not any(files for _, _, files in os.walk(tmp_path))


def test_nested_required_field_and_fixed_length_are_checked(con: Any, tmp_path: Path):
    schema = Schema(
        (
            NestedField(1, "st", StructType((NestedField(2, "a", IntegerType(), True),))),
            NestedField(3, "fx", FixedType(2)),
        )
    )
    target = _target(tmp_path, schema)
    assert len(write_data_files(con, "SELECT NULL::STRUCT(a INTEGER), 'ab'::BLOB", target)) == 1
    with pytest.raises(ValidationError, match=r"required column st\.a"):
        write_data_files(con, "SELECT {'a': NULL::INTEGER}, 'ab'::BLOB", target)
    with pytest.raises(ValidationError, match="fixed"):
        write_data_files(con, "SELECT {'a': 1}, 'abc'::BLOB", target)


def test_writes_through_cursors_of_one_database(tmp_path: Path):
    """The session runs each statement on its own cursor; the hash functions live per cursor."""
    database = open_database()
    schema = Schema((NestedField(1, "id", LongType()),))
    spec = PartitionSpec(0, (PartitionField(1, 1000, "id_bucket", parse_transform("bucket[2]")),))
    for n in range(2):
        cursor = database.cursor()
        files = write_data_files(cursor, "SELECT * FROM range(10)", _target(tmp_path / str(n), schema, spec))
        assert sum(f.record_count for f in files) == 10 and {f.partition for f in files} == {(0,), (1,)}


def _hash_functions(con: Any) -> list[str]:
    """The murmur3 UDFs the connection holds (the ones a bucket transform calls)."""
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_name LIKE '__iceduck_murmur3_%'"
    ).fetchall()
    return sorted(r[0] for r in rows)


def _ids_schema() -> Schema:
    return Schema((NestedField(1, "id", LongType()), NestedField(2, "s", StringType())))


@pytest.mark.parametrize(
    "transforms",
    [[], ["identity"], ["truncate[2]"]],
    ids=["unpartitioned", "identity", "truncate"],
)
def test_no_hash_functions_without_a_bucket(con: Any, tmp_path: Path, transforms: list[str]):
    """Creating the murmur3 UDFs costs about 0.7 ms a write: only a bucket transform needs them."""
    spec = PartitionSpec(
        0, tuple(PartitionField(1, 1000 + i, f"p{i}", parse_transform(t)) for i, t in enumerate(transforms))
    )
    for n in range(3):
        write_data_files(con, f"SELECT {n}, 'x'", _target(tmp_path, _ids_schema(), spec))
    assert _hash_functions(con) == []


def test_hash_functions_for_a_bucket_partition_or_sort_field(tmp_path: Path):
    """A bucket partition field, or a bucket sort field of an unpartitioned table, creates them."""
    bucket = parse_transform("bucket[4]")
    partitioned = PartitionSpec(0, (PartitionField(1, 1000, "b", bucket),))
    by_bucket = SortOrder(1, (SortField(1, bucket, SortDirection.ASC, NullOrder.NULLS_FIRST),))
    for spec, order in ((partitioned, UNSORTED), (UNPARTITIONED, by_bucket)):
        con = open_database()
        files = write_data_files(con, "SELECT 7, 'x'", _target(tmp_path, _ids_schema(), spec, order))
        assert sum(f.record_count for f in files) == 1
        assert _hash_functions(con) == [
            "__iceduck_murmur3_bytes",
            "__iceduck_murmur3_decimal",
            "__iceduck_murmur3_long",
        ]
