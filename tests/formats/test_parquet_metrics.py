"""parquet_metrics: footer -> Iceberg metrics, with Java's metrics modes (files written by
pyarrow with field ids, so the module is tested without DuckDB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from iceduck.formats.parquet_metrics import (
    COUNTS,
    DEFAULT_MODE,
    FULL,
    NONE,
    FloatStats,
    MetricsMode,
    file_metrics,
    metrics_config,
    parse_mode,
)
from iceduck.spec import values
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortField, SortOrder
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import (
    BinaryType,
    DoubleType,
    FixedType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)


def _field(name: str, t: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable, metadata={b"PARQUET:field_id": str(fid).encode()})


SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), True),
        NestedField(2, "s", StringType()),
        NestedField(3, "d", DoubleType()),
        NestedField(4, "st", StructType((NestedField(5, "a", IntegerType()),))),
        NestedField(6, "li", ListType(7, IntegerType())),
        NestedField(8, "bin", BinaryType()),
        NestedField(9, "fx", FixedType(3)),
    )
)
ARROW = pa.schema(
    [
        _field("id", pa.int64(), 1, False),
        _field("s", pa.string(), 2),
        _field("d", pa.float64(), 3),
        _field("st", pa.struct([_field("a", pa.int32(), 5)]), 4),
        _field("li", pa.list_(_field("element", pa.int32(), 7)), 6),
        _field("bin", pa.binary(), 8),
        _field("fx", pa.binary(3), 9),
    ]
)
ROWS = {
    "id": [3, 1, 2, 10],
    "s": ["banana-split-with-cream", None, "apple", "zebra\U0010ffff"],
    "d": [1.5, float("nan"), None, -2.0],
    "st": [{"a": 5}, None, {"a": None}, {"a": -7}],
    "li": [[1, 2], None, [], [None]],
    "bin": [b"\x00\x01", b"\xff" * 20, None, b"a" * 17],
    "fx": [b"abc", b"\xff\xff\xff", None, b"abd"],
}


@pytest.fixture
def footer(tmp_path: Path) -> pq.FileMetaData:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table(ROWS, schema=ARROW), path, row_group_size=2)
    return pq.read_metadata(path)


def test_counts_and_bounds_with_default_mode(footer: Any):
    m = file_metrics(footer, SCHEMA, {}, float_stats={3: FloatStats(1, -2.0, 1.5)})
    assert m.record_count == 4
    assert set(m.column_sizes) == {1, 2, 3, 5, 7, 8, 9}  # every leaf, list children included
    assert m.value_counts == {1: 4, 2: 4, 3: 4, 5: 4, 8: 4, 9: 4}  # no list/map children (Java)
    assert m.null_value_counts == {1: 0, 2: 1, 3: 1, 5: 2, 8: 1, 9: 1}
    assert m.nan_value_counts == {3: 1}
    lower = {k: v for k, v in m.lower_bounds.items()}
    assert values.from_bytes(LongType(), lower[1]) == 1
    assert values.from_bytes(LongType(), m.upper_bounds[1]) == 10  # combined over 2 row groups
    assert lower[2] == b"apple"
    assert m.upper_bounds[2] == "zebra\U0010ffff".encode()  # 6 code points: not truncated
    assert values.from_bytes(DoubleType(), lower[3]) == -2.0  # from the writer's NaN-free stats
    assert (
        values.from_bytes(IntegerType(), lower[5]) == -7
        and values.from_bytes(IntegerType(), m.upper_bounds[5]) == 5
    )
    assert 7 not in lower and 7 not in m.upper_bounds
    assert lower[8] == b"\x00\x01" and 8 not in m.upper_bounds  # max is 0xff * 20: no upper bound
    assert lower[9] == b"abc" and m.upper_bounds[9] == b"\xff\xff\xff"
    assert len(m.split_offsets) == 2 and m.split_offsets == sorted(m.split_offsets)


def test_upper_bound_of_all_ff_binary_is_omitted(tmp_path: Path):
    schema = Schema((NestedField(1, "b", BinaryType()),))
    path = tmp_path / "b.parquet"
    pq.write_table(pa.table({"b": [b"\xff" * 20]}, schema=pa.schema([_field("b", pa.binary(), 1)])), path)
    m = file_metrics(pq.read_metadata(path), schema, {})
    assert m.lower_bounds == {1: b"\xff" * 16} and m.upper_bounds == {}


def test_truncate_string_bounds(footer: Any):
    m = file_metrics(footer, SCHEMA, {"write.metadata.metrics.default": "truncate(3)"})
    assert m.lower_bounds[2] == b"app" and m.upper_bounds[2] == b"zec"


def test_full_mode_keeps_whole_values(footer: Any):
    m = file_metrics(footer, SCHEMA, {"write.metadata.metrics.default": "full"})
    assert m.upper_bounds[8] == b"\xff" * 20 and m.lower_bounds[2] == b"apple"


def test_per_column_modes(footer: Any):
    props = {
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.s": "truncate(2)",
        "write.metadata.metrics.column.st.a": "none",
        "write.metadata.metrics.column.d": "full",
    }
    m = file_metrics(footer, SCHEMA, props, float_stats={3: FloatStats(1, -2.0, 1.5)})
    assert set(m.lower_bounds) == {2, 3}
    assert m.lower_bounds[2] == b"ap"
    assert 5 not in m.value_counts and 5 in m.column_sizes
    assert m.value_counts[1] == 4 and m.nan_value_counts == {3: 1}


def test_none_mode_keeps_only_sizes(footer: Any):
    m = file_metrics(
        footer, SCHEMA, {"write.metadata.metrics.default": "none"}, float_stats={3: FloatStats(1)}
    )
    assert m.value_counts == {} and m.null_value_counts == {} and m.nan_value_counts == {}
    assert m.lower_bounds == {} and len(m.column_sizes) == 7


def test_float_without_non_nan_values_has_no_bounds(footer: Any):
    m = file_metrics(footer, SCHEMA, {}, float_stats={3: FloatStats(3, None, None)})
    assert m.nan_value_counts == {3: 3} and 3 not in m.lower_bounds


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("none", NONE),
        ("Counts", COUNTS),
        ("FULL", FULL),
        ("truncate(16)", DEFAULT_MODE),
        ("truncate(1)", MetricsMode("truncate", 1)),
        ("truncate(0)", None),
        ("bogus", None),
    ],
)
def test_parse_mode(text: str, mode: MetricsMode | None):
    assert parse_mode(text) == mode


def test_invalid_modes_fall_back_to_default():
    cfg = metrics_config(
        {"write.metadata.metrics.default": "bogus", "write.metadata.metrics.column.s": "x"}, SCHEMA
    )
    assert cfg.default == DEFAULT_MODE and cfg.mode(SCHEMA, 2) == DEFAULT_MODE


def test_max_inferred_column_defaults():
    wide = Schema(tuple(NestedField(i, f"c{i}", LongType()) for i in range(1, 6)))
    cfg = metrics_config({"write.metadata.metrics.max-inferred-column-defaults": "3"}, wide)
    assert [cfg.mode(wide, i) for i in range(1, 6)] == [DEFAULT_MODE] * 3 + [NONE] * 2
    explicit = metrics_config(
        {
            "write.metadata.metrics.max-inferred-column-defaults": "3",
            "write.metadata.metrics.default": "full",
        },
        wide,
    )
    assert explicit.mode(wide, 5) == FULL


def test_sorted_columns_get_at_least_truncate_16():
    order = SortOrder(
        1, (SortField(2, parse_transform("identity")), SortField(1, parse_transform("bucket[4]")))
    )
    cfg = metrics_config({"write.metadata.metrics.default": "none"}, SCHEMA, order)
    assert cfg.mode(SCHEMA, 2) == DEFAULT_MODE
    assert cfg.mode(SCHEMA, 1) == NONE  # bucket does not preserve order
    cfg = metrics_config({"write.metadata.metrics.default": "full"}, SCHEMA, order)
    assert cfg.mode(SCHEMA, 2) == FULL
