"""InclusiveMetricsEvaluator: skipping data files by column metrics.

Fixtures and most cases follow Iceberg Java's ``TestInclusiveMetricsEvaluator``; the rest
cover iceduck's own points: bounds decoded by length after a type promotion, truncated
string bounds, NaN bounds written by ORC, UUID orders, and the events table of the
metadata-indexing post.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any

import pytest

from iceduck.errors import CorruptDataError, NotFoundError
from iceduck.spec.expressions.metrics_evaluator import InclusiveMetricsEvaluator
from iceduck.spec.expressions.predicates import (
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
)
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from iceduck.spec.values import to_bytes

SCHEMA = Schema(
    (
        NestedField(1, "id", IntegerType(), required=True),
        NestedField(2, "no_stats", IntegerType()),
        NestedField(3, "required", StringType(), required=True),
        NestedField(4, "all_nulls", StringType()),
        NestedField(5, "some_nulls", StringType()),
        NestedField(6, "no_nulls", StringType()),
        NestedField(7, "all_nans", DoubleType()),
        NestedField(8, "some_nans", FloatType()),
        NestedField(9, "no_nans", FloatType()),
        NestedField(10, "all_nulls_double", DoubleType()),
        NestedField(11, "all_nans_v1_stats", FloatType()),
        NestedField(12, "nan_and_null_only", DoubleType()),
        NestedField(13, "no_nan_stats", DoubleType()),
        NestedField(14, "some_empty", StringType()),
    )
)
INT_MIN, INT_MAX = 30, 79


def _f(v: float) -> bytes:
    return struct.pack("<f", v)


def _d(v: float) -> bytes:
    return struct.pack("<d", v)


def data_file(
    path: str,
    records: int,
    values: dict[int, int] | None = None,
    nulls: dict[int, int] | None = None,
    nans: dict[int, int] | None = None,
    lower: dict[int, bytes] | None = None,
    upper: dict[int, bytes] | None = None,
) -> DataFile:
    return DataFile(
        FileContent.DATA, path, FileFormat.PARQUET, (), records, 1024,
        value_counts=values, null_value_counts=nulls, nan_value_counts=nans,
        lower_bounds=lower, upper_bounds=upper,
    )  # fmt: skip


FILE = data_file(
    "file.avro",
    50,
    values={i: 50 for i in range(4, 15)},
    nulls={4: 50, 5: 10, 6: 0, 10: 50, 11: 0, 12: 1, 14: 0},
    nans={7: 50, 8: 10, 9: 0},
    lower={1: to_bytes(IntegerType(), INT_MIN), 11: _f(math.nan), 12: _d(math.nan), 14: b""},
    upper={
        1: to_bytes(IntegerType(), INT_MAX),
        11: _f(math.nan),
        12: _d(math.nan),
        14: "房东整租霍营小区二层两居室".encode(),
    },
)


def _strings(path: str, low: str, high: str) -> DataFile:
    return data_file(path, 50, {3: 50}, {3: 0}, None, {3: low.encode()}, {3: high.encode()})


FILE_2 = _strings("file_2.avro", "aa", "dC")
FILE_3 = _strings("file_3.avro", "1str1", "3str3")
FILE_4 = _strings("file_4.avro", "abc", "イロハニホヘト")
FILE_5 = _strings("file_5.avro", "abc", "abcdefghi")
RANGE_OF_VALUES = data_file("range.avro", 10, {3: 10}, {3: 0}, None, {3: b"aaa"}, {3: b"zzz"})
SINGLE_VALUE = data_file("single.avro", 10, {3: 10}, {3: 0}, None, {3: b"abc"}, {3: b"abc"})
SINGLE_VALUE_WITH_NULLS = data_file(
    "single_nulls.avro", 10, {14: 10}, {14: 2}, None, {14: b"abc"}, {14: b"abc"}
)
SINGLE_VALUE_WITH_NAN = data_file("single_nan.avro", 10, {9: 10}, {9: 0}, {9: 2}, {9: _f(5.0)}, {9: _f(5.0)})
SINGLE_VALUE_NAN_BOUNDS = data_file(
    "nan_bounds.avro", 10, {9: 10}, {9: 0}, {9: 0}, {9: _f(math.nan)}, {9: _f(math.nan)}
)
MISSING_STATS = data_file("missing.parquet", 50)
EMPTY_FILE = data_file("empty.parquet", 0)


def may_match(expr: Any, f: DataFile = FILE, schema: Schema = SCHEMA, case_sensitive: bool = True) -> bool:
    return InclusiveMetricsEvaluator(schema, expr, case_sensitive).may_match(f)


@pytest.mark.parametrize(
    "expr, f, expected",
    [
        # all nulls
        (NotNull("all_nulls"), FILE, False),
        (LessThan("all_nulls", "a"), FILE, False),
        (LessThanOrEqual("all_nulls", "a"), FILE, False),
        (GreaterThan("all_nulls", "a"), FILE, False),
        (GreaterThanOrEqual("all_nulls", "a"), FILE, False),
        (EqualTo("all_nulls", "a"), FILE, False),
        (StartsWith("all_nulls", "a"), FILE, False),
        (StartsWith("all_nulls", ""), FILE, False),
        (NotStartsWith("all_nulls", "a"), FILE, True),
        (NotNull("some_nulls"), FILE, True),
        (NotNull("no_nulls"), FILE, True),
        # no nulls
        (IsNull("all_nulls"), FILE, True),
        (IsNull("some_nulls"), FILE, True),
        (IsNull("no_nulls"), FILE, False),
        # NaN
        (IsNaN("all_nans"), FILE, True),
        (IsNaN("some_nans"), FILE, True),
        (IsNaN("no_nans"), FILE, False),
        (IsNaN("all_nulls_double"), FILE, False),
        (IsNaN("no_nan_stats"), FILE, True),
        (IsNaN("all_nans_v1_stats"), FILE, True),
        (IsNaN("nan_and_null_only"), FILE, True),
        (NotNaN("all_nans"), FILE, False),
        (NotNaN("some_nans"), FILE, True),
        (NotNaN("no_nans"), FILE, True),
        (NotNaN("all_nulls_double"), FILE, True),
        (NotNaN("no_nan_stats"), FILE, True),
        (NotNaN("all_nans_v1_stats"), FILE, True),
        (NotNaN("nan_and_null_only"), FILE, True),
        # required column
        (NotNull("required"), FILE, True),
        (IsNull("required"), FILE, False),
        # boolean structure
        (Not(LessThan("id", INT_MIN - 25)), FILE, True),
        (Not(GreaterThan("id", INT_MIN - 25)), FILE, False),
        (And(LessThan("id", INT_MIN - 25), GreaterThanOrEqual("id", INT_MIN - 30)), FILE, False),
        (And(GreaterThan("id", INT_MIN - 25), LessThanOrEqual("id", INT_MIN)), FILE, True),
        (Or(LessThan("id", INT_MIN - 25), GreaterThanOrEqual("id", INT_MAX + 1)), FILE, False),
        (Or(LessThan("id", INT_MIN - 25), GreaterThanOrEqual("id", INT_MAX - 19)), FILE, True),
        # integer ranges
        (LessThan("id", INT_MIN), FILE, False),
        (LessThan("id", INT_MIN + 1), FILE, True),
        (LessThanOrEqual("id", INT_MIN - 1), FILE, False),
        (LessThanOrEqual("id", INT_MIN), FILE, True),
        (GreaterThan("id", INT_MAX), FILE, False),
        (GreaterThan("id", INT_MAX - 1), FILE, True),
        (GreaterThanOrEqual("id", INT_MAX + 1), FILE, False),
        (GreaterThanOrEqual("id", INT_MAX), FILE, True),
        (EqualTo("id", INT_MIN - 1), FILE, False),
        (EqualTo("id", INT_MIN), FILE, True),
        (EqualTo("id", INT_MAX), FILE, True),
        (EqualTo("id", INT_MAX + 1), FILE, False),
        (NotEqualTo("id", INT_MIN), FILE, True),
        (Not(EqualTo("id", INT_MAX)), FILE, True),
        # strings and prefixes
        (StartsWith("required", "a"), FILE, True),
        (StartsWith("required", "a"), FILE_2, True),
        (StartsWith("required", "aa"), FILE_2, True),
        (StartsWith("required", "aaa"), FILE_2, True),
        (StartsWith("required", "1s"), FILE_3, True),
        (StartsWith("required", "1str1x"), FILE_3, True),
        (StartsWith("required", "ff"), FILE_4, True),
        (StartsWith("required", "aB"), FILE_2, False),
        (StartsWith("required", "dWX"), FILE_2, False),
        (StartsWith("required", "5"), FILE_3, False),
        (StartsWith("required", "3str3x"), FILE_3, False),
        (StartsWith("some_empty", "房东整租霍"), FILE, True),
        (NotStartsWith("required", "a"), FILE, True),
        (NotStartsWith("required", "aB"), FILE_2, True),
        (NotStartsWith("required", "3str3x"), FILE_3, True),
        (NotStartsWith("required", "abc"), FILE_5, False),
        (NotStartsWith("required", "abcd"), FILE_5, True),
        # IN / NOT IN
        (In("id", [INT_MIN - 25, INT_MIN - 24]), FILE, False),
        (In("id", [INT_MIN - 1, INT_MIN]), FILE, True),
        (In("id", [INT_MAX - 4, INT_MAX - 3]), FILE, True),
        (In("id", [INT_MAX + 1, INT_MAX + 2]), FILE, False),
        (In("all_nulls", ["abc", "def"]), FILE, False),
        (In("some_nulls", ["abc", "def"]), FILE, True),
        (In("id", range(-400, 0)), FILE, True),  # over the 200-value limit: not evaluated
        (NotIn("id", [INT_MIN - 1, INT_MIN]), FILE, True),
        (NotIn("all_nulls", ["abc", "def"]), FILE, True),
        # a single value
        (NotEqualTo("required", "aaa"), RANGE_OF_VALUES, True),
        (NotEqualTo("required", "abc"), SINGLE_VALUE, False),
        (NotEqualTo("required", "def"), SINGLE_VALUE, True),
        (NotEqualTo("some_empty", "abc"), SINGLE_VALUE_WITH_NULLS, True),
        (NotEqualTo("no_nans", 5.0), SINGLE_VALUE_WITH_NAN, True),
        (NotEqualTo("no_nans", 5.0), SINGLE_VALUE_NAN_BOUNDS, True),
        (NotIn("required", ["abc", "def"]), SINGLE_VALUE, False),
        (NotIn("required", ["def", "ghi"]), SINGLE_VALUE, True),
        (NotIn("some_empty", ["abc", "def"]), SINGLE_VALUE_WITH_NULLS, True),
        (NotIn("no_nans", [5.0, 10.0]), SINGLE_VALUE_WITH_NAN, True),
        # NaN bounds (ORC) carry no information
        (LessThan("all_nans_v1_stats", 1.0), FILE, True),
        (GreaterThan("all_nans_v1_stats", 1.0), FILE, True),
        (EqualTo("all_nans_v1_stats", 1.0), FILE, True),
        (In("nan_and_null_only", [1.0, 2.0]), FILE, True),
        (LessThan("all_nans", 1.0), FILE, False),  # NaN only: no comparison is true
    ],
    ids=lambda x: x.file_path if isinstance(x, DataFile) else str(x),
)
def test_java_metrics_cases(expr: Any, f: DataFile, expected: bool) -> None:
    assert may_match(expr, f) is expected


@pytest.mark.parametrize(
    "expr",
    [
        LessThan("no_stats", 5),
        EqualTo("no_stats", 70),
        IsNull("no_stats"),
        NotNull("no_stats"),
        IsNaN("some_nans"),
    ],
    ids=str,
)
def test_missing_stats_may_match(expr: Any) -> None:
    assert may_match(expr, MISSING_STATS) is True


@pytest.mark.parametrize(
    "expr", [LessThan("id", 5), EqualTo("id", 70), IsNull("some_nulls"), NotNull("no_stats")]
)
def test_zero_record_file_never_matches(expr: Any) -> None:
    assert may_match(expr, EMPTY_FILE) is False


def test_negative_record_count_means_unknown() -> None:
    assert (
        may_match(EqualTo("id", 0), data_file("imported.avro", -1, lower={1: to_bytes(IntegerType(), 5)}))
        is True
    )


def test_case_sensitivity() -> None:
    assert may_match(Not(EqualTo("ID", INT_MIN - 25)), case_sensitive=False) is True
    with pytest.raises(NotFoundError, match="ID"):
        may_match(Not(EqualTo("ID", 5)))


NESTED = Schema(
    (
        NestedField(100, "required_address", StructType((
            NestedField(102, "required_street1", StringType(), required=True),
            NestedField(103, "optional_street1", StringType()),
        )), required=True),
        NestedField(101, "optional_address", StructType((
            NestedField(104, "required_street2", StringType(), required=True),
            NestedField(105, "optional_street2", StringType()),
        ))),
    )
)  # fmt: skip
FILE_6 = data_file("file_6.avro", 10, {102: 5, 103: 5, 104: 5, 105: 5}, {103: 5, 104: 5, 105: 5})


@pytest.mark.parametrize(
    "expr, expected",
    [
        (IsNull("required_address"), False),
        (IsNull("required_address.required_street1"), False),
        (IsNull("required_address.optional_street1"), True),
        (IsNull("optional_address"), True),
        (IsNull("optional_address.required_street2"), True),
        (IsNull("optional_address.optional_street2"), True),
        (NotNull("required_address"), True),
        (NotNull("required_address.required_street1"), True),
        (NotNull("required_address.optional_street1"), False),
        (NotNull("optional_address"), True),
        (NotNull("optional_address.required_street2"), False),
        (NotNull("optional_address.optional_street2"), False),
    ],
    ids=str,
)
def test_nested_struct_nulls(expr: Any, expected: bool) -> None:
    assert may_match(expr, FILE_6, NESTED) is expected


def test_bounds_written_before_int_to_long_promotion_decode_by_length() -> None:
    schema = Schema((NestedField(1, "x", LongType()),))
    old = data_file(
        "old.parquet",
        10,
        {1: 10},
        {1: 0},
        None,
        {1: to_bytes(IntegerType(), 100)},
        {1: to_bytes(IntegerType(), 200)},
    )
    assert may_match(EqualTo("x", 150), old, schema) is True
    assert may_match(EqualTo("x", 250), old, schema) is False
    assert may_match(GreaterThan("x", 2**40), old, schema) is False


def test_bounds_written_before_float_and_date_promotions() -> None:
    schema = Schema((NestedField(1, "d", DoubleType()), NestedField(2, "ts", TimestampType())))
    old = data_file(
        "old.parquet", 10, {1: 10, 2: 10}, {1: 0, 2: 0}, {1: 0},
        {1: _f(1.5), 2: to_bytes(IntegerType(), 17_000)}, {1: _f(2.5), 2: to_bytes(IntegerType(), 17_001)},
    )  # fmt: skip
    assert may_match(LessThan("d", 1.25), old, schema) is False
    assert may_match(LessThan("d", 1.75), old, schema) is True
    day = 17_000 * 86_400_000_000
    assert may_match(LessThan("ts", day), old, schema) is False
    assert may_match(LessThanOrEqual("ts", day), old, schema) is True


def test_decimal_bounds_after_precision_widening() -> None:
    schema = Schema((NestedField(1, "amount", DecimalType(20, 2)),))
    f = data_file(
        "d.parquet", 10, {1: 10}, {1: 0}, None,
        {1: to_bytes(DecimalType(9, 2), Decimal("1.50"))}, {1: to_bytes(DecimalType(9, 2), Decimal("9.99"))},
    )  # fmt: skip
    assert may_match(LessThan("amount", Decimal("1.50")), f, schema) is False
    assert may_match(LessThan("amount", "1.51"), f, schema) is True
    assert may_match(GreaterThan("amount", 9.99), f, schema) is False


def test_truncated_string_bounds() -> None:
    """truncate(16) metrics: lower is a prefix of the minimum, upper a prefix incremented."""
    values = ["abcdefghijklmnopXYZ", "abcdefghijklmnopZZZ"]
    f = _strings("long.parquet", values[0][:16], "abcdefghijklmnoq")
    for value in values:
        assert may_match(EqualTo("required", value), f)
        assert may_match(StartsWith("required", value[:18]), f)
    assert may_match(StartsWith("required", "abcdefghijklmnopqrst"), f)  # cannot be excluded by a prefix
    assert not may_match(StartsWith("required", "abcdefghijklmnoqa"), f)
    assert not may_match(GreaterThan("required", "abcdefghijklmnoq"), f)
    assert not may_match(LessThan("required", "abcdefghijklmnop"), f)
    assert not may_match(NotStartsWith("required", "abcdefghijklmno"), f)


def test_string_bounds_compare_in_code_point_order() -> None:
    f = _strings("u.parquet", "\uffff", "\U0001f600")  # UTF-16 would order these the other way
    assert may_match(EqualTo("required", "\U0001f000"), f)
    assert not may_match(EqualTo("required", "\ufffe"), f)


def test_float_zero_signs_compare_as_numbers() -> None:
    """Bounds put -0.0 before 0.0 (spec note 2); -0.0 = 0.0 as numbers, so neither prunes."""
    schema = Schema((NestedField(1, "f", DoubleType()),))
    f = data_file("z.parquet", 2, {1: 2}, {1: 0}, {1: 0}, {1: _d(-0.0)}, {1: _d(-0.0)})
    assert may_match(EqualTo("f", 0.0), f, schema)
    assert may_match(GreaterThanOrEqual("f", 0.0), f, schema)
    assert not may_match(NotEqualTo("f", 0.0), f, schema)


def test_bad_bound_is_corrupt_and_names_the_file() -> None:
    f = data_file("broken.parquet", 5, lower={1: b"\x01\x02\x03"})
    with pytest.raises(CorruptDataError, match=r"broken.parquet.*field 1"):
        may_match(EqualTo("id", 3), f)


# --- the events table of the metadata-indexing post (seeds/003) ---------------------------

EVENTS = Schema((NestedField(1, "event_time", TimestamptzType()), NestedField(2, "device_id", LongType())))


def test_events_query_skips_the_file_whose_device_range_misses() -> None:
    """ "This final filter step removes file 02-data.parquet because its range of device_ids
    doesn't include the target ID, 74" -- the range was "basically 0 to 1,000,000"."""
    query = And(
        EqualTo("device_id", 74),
        And(
            GreaterThan("event_time", "2021-10-01T10:00:00Z"), LessThan("event_time", "2021-10-04T20:00:00Z")
        ),
    )
    ts = 1_633_082_400_000_000  # 2021-10-01T10:00:00Z

    def events_file(path: str, device_low: int, device_high: int) -> DataFile:
        return data_file(
            path, 100, {1: 100, 2: 100}, {1: 0, 2: 0}, None,
            {1: to_bytes(TimestamptzType(), ts + 3_600_000_000), 2: to_bytes(LongType(), device_low)},
            {1: to_bytes(TimestamptzType(), ts + 7_200_000_000), 2: to_bytes(LongType(), device_high)},
        )  # fmt: skip

    evaluator = InclusiveMetricsEvaluator(EVENTS, query)
    files = [events_file("02-data.parquet", 75, 1_000_000), events_file("65-data.parquet", 0, 1_000_000)]
    assert [f.file_path for f in files if evaluator.may_match(f)] == ["65-data.parquet"]
