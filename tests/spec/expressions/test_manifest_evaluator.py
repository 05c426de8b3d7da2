"""ManifestEvaluator: skipping manifests by partition field summaries.

The fixture and most cases are Iceberg Java's ``TestInclusiveManifestEvaluator``: one
identity partition field per column, and one manifest whose summaries exercise
nulls, NaNs and bounds.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest

from iceduck.errors import CorruptDataError, NotFoundError, ValidationError
from iceduck.spec.expressions.manifest_evaluator import ManifestEvaluator
from iceduck.spec.expressions.predicates import (
    AlwaysTrue,
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
from iceduck.spec.manifest import FieldSummary, ManifestFile
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from iceduck.spec.types import (
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
    UUIDType,
)
from iceduck.spec.values import to_bytes

COLUMNS = [
    ("id", IntegerType()),
    ("all_nulls_missing_nan", StringType()),
    ("some_nulls", StringType()),
    ("no_nulls", StringType()),
    ("float", FloatType()),
    ("all_nulls_double", DoubleType()),
    ("all_nulls_no_nans", FloatType()),
    ("all_nans", DoubleType()),
    ("both_nan_and_null", FloatType()),
    ("no_nan_or_null", DoubleType()),
    ("all_nulls_missing_nan_float", FloatType()),
    ("all_same_value_or_null", StringType()),
    ("no_nulls_same_value_a", StringType()),
    ("single_value_with_nan", FloatType()),
    ("single_value_nan_unknown", FloatType()),
    ("single_value_no_nan", FloatType()),
]
SCHEMA = Schema(
    tuple(NestedField(i + 1, name, t, required=(name == "id")) for i, (name, t) in enumerate(COLUMNS))
)
SPEC = PartitionSpec(
    0,
    tuple(PartitionField(i + 1, 1000 + i, name, IdentityTransform()) for i, (name, _) in enumerate(COLUMNS)),
)
INT_MIN, INT_MAX = 30, 79


def _i(v: int) -> bytes:
    return to_bytes(IntegerType(), v)


def _s(v: str) -> bytes:
    return v.encode()


def _f(v: float) -> bytes:
    return struct.pack("<f", v)


def _fs(
    contains_null: bool, lower: bytes | None, upper: bytes | None, nan: bool | None = None
) -> FieldSummary:
    return FieldSummary(contains_null, nan, lower, upper)


SUMMARIES = [
    _fs(False, _i(INT_MIN), _i(INT_MAX)),
    _fs(True, None, None),
    _fs(True, _s("a"), _s("z")),
    _fs(False, _s("a"), _s("z")),
    _fs(False, _f(0.0), _f(20.0)),
    _fs(True, None, None),
    _fs(True, None, None, nan=False),
    _fs(False, None, None, nan=True),
    _fs(True, None, None, nan=True),
    _fs(False, _f(0.0), _f(20.0), nan=False),
    _fs(True, None, None),
    _fs(True, _s("a"), _s("a")),
    _fs(False, _s("a"), _s("a")),
    _fs(False, _f(5.0), _f(5.0), nan=True),
    _fs(False, _f(5.0), _f(5.0)),
    _fs(False, _f(5.0), _f(5.0), nan=False),
]
FILE = ManifestFile("manifest.avro", 1024, 0, added_files_count=5, partitions=SUMMARIES)
NO_STATS = ManifestFile("no-stats.avro", 1024, 0, partitions=None)


def may_contain(expr: Any, manifest: ManifestFile = FILE, case_sensitive: bool = True) -> bool:
    return ManifestEvaluator.for_row_filter(SPEC, SCHEMA, expr, case_sensitive).may_contain(manifest)


@pytest.mark.parametrize(
    "expr, expected",
    [
        # all nulls
        (NotNull("all_nulls_missing_nan"), False),
        (NotNull("all_nulls_missing_nan_float"), True),  # no NaN information: NaN may be there
        (NotNull("some_nulls"), True),
        (NotNull("no_nulls"), True),
        (StartsWith("all_nulls_missing_nan", "asad"), False),
        (NotStartsWith("all_nulls_missing_nan", "asad"), True),
        # no nulls
        (IsNull("all_nulls_missing_nan"), True),
        (IsNull("some_nulls"), True),
        (IsNull("no_nulls"), False),
        (IsNull("both_nan_and_null"), True),
        # NaN
        (IsNaN("float"), True),
        (IsNaN("all_nulls_double"), True),
        (IsNaN("all_nulls_missing_nan_float"), True),
        (IsNaN("all_nulls_no_nans"), False),
        (IsNaN("all_nans"), True),
        (IsNaN("both_nan_and_null"), True),
        (IsNaN("no_nan_or_null"), False),
        (NotNaN("float"), True),
        (NotNaN("all_nulls_double"), True),
        (NotNaN("all_nulls_no_nans"), True),
        (NotNaN("all_nans"), False),
        (NotNaN("both_nan_and_null"), True),
        (NotNaN("no_nan_or_null"), True),
        # boolean structure
        (Not(LessThan("id", INT_MIN - 25)), True),
        (Not(GreaterThan("id", INT_MIN - 25)), False),
        (And(LessThan("id", INT_MIN - 25), GreaterThanOrEqual("id", INT_MIN - 30)), False),
        (And(GreaterThan("id", INT_MIN - 25), LessThanOrEqual("id", INT_MIN)), True),
        (Or(LessThan("id", INT_MIN - 25), GreaterThanOrEqual("id", INT_MAX + 1)), False),
        (Or(LessThan("id", INT_MIN - 25), GreaterThanOrEqual("id", INT_MAX - 19)), True),
        # integer ranges
        (LessThan("id", INT_MIN - 25), False),
        (LessThan("id", INT_MIN), False),
        (LessThan("id", INT_MIN + 1), True),
        (LessThanOrEqual("id", INT_MIN - 1), False),
        (LessThanOrEqual("id", INT_MIN), True),
        (GreaterThan("id", INT_MAX), False),
        (GreaterThan("id", INT_MAX - 1), True),
        (GreaterThanOrEqual("id", INT_MAX + 1), False),
        (GreaterThanOrEqual("id", INT_MAX), True),
        (EqualTo("id", INT_MIN - 1), False),
        (EqualTo("id", INT_MIN), True),
        (EqualTo("id", INT_MAX - 4), True),
        (EqualTo("id", INT_MAX), True),
        (EqualTo("id", INT_MAX + 1), False),
        (NotEqualTo("id", INT_MIN), True),
        (Not(EqualTo("id", INT_MAX)), True),
        # strings
        (StartsWith("some_nulls", "a"), True),
        (StartsWith("some_nulls", "aa"), True),
        (StartsWith("some_nulls", "dddd"), True),
        (StartsWith("some_nulls", "z"), True),
        (StartsWith("no_nulls", "a"), True),
        (StartsWith("some_nulls", "zzzz"), False),
        (StartsWith("some_nulls", "1"), False),
        (NotStartsWith("some_nulls", "a"), True),
        (NotStartsWith("no_nulls", "a"), True),
        (NotStartsWith("all_same_value_or_null", "a"), True),
        (NotStartsWith("no_nulls_same_value_a", "a"), False),
        # IN / NOT IN
        (In("id", [INT_MIN - 25, INT_MIN - 24]), False),
        (In("id", [INT_MIN - 2, INT_MIN - 1]), False),
        (In("id", [INT_MIN - 1, INT_MIN]), True),
        (In("id", [INT_MAX - 4, INT_MAX - 3]), True),
        (In("id", [INT_MAX, INT_MAX + 1]), True),
        (In("id", [INT_MAX + 1, INT_MAX + 2]), False),
        (In("all_nulls_missing_nan", ["abc", "def"]), False),
        (In("some_nulls", ["abc", "def"]), True),
        (NotIn("id", [INT_MIN - 1, INT_MIN]), True),
        (NotIn("all_nulls_missing_nan", ["abc", "def"]), True),
        # a single value in every partition
        (NotEqualTo("no_nulls", "a"), True),
        (NotEqualTo("no_nulls_same_value_a", "a"), False),
        (NotEqualTo("no_nulls_same_value_a", "b"), True),
        (NotEqualTo("all_same_value_or_null", "a"), True),
        (NotEqualTo("single_value_with_nan", 5.0), True),
        (NotEqualTo("single_value_nan_unknown", 5.0), True),
        (NotEqualTo("single_value_no_nan", 5.0), False),
        (NotIn("no_nulls_same_value_a", ["a", "b"]), False),
        (NotIn("no_nulls_same_value_a", ["b", "c"]), True),
        (NotIn("single_value_no_nan", [5.0, 10.0]), False),
        (NotIn("single_value_with_nan", [5.0, 10.0]), True),
        # IS NULL on a required column binds to false
        (IsNull("id"), False),
        (AlwaysTrue(), True),
    ],
    ids=str,
)
def test_java_manifest_cases(expr: Any, expected: bool) -> None:
    assert may_contain(expr) is expected


@pytest.mark.parametrize(
    "expr",
    [
        LessThan("id", 5),
        LessThanOrEqual("id", 30),
        EqualTo("id", 70),
        GreaterThan("id", 78),
        IsNull("some_nulls"),
    ],
    ids=str,
)
def test_missing_summaries_may_match(expr: Any) -> None:
    assert may_contain(expr, NO_STATS) is True


def test_in_larger_than_limit_is_not_evaluated() -> None:
    assert may_contain(In("id", range(INT_MAX + 1, INT_MAX + 202))) is True
    assert may_contain(In("id", range(INT_MAX + 1, INT_MAX + 200))) is False


def test_case_insensitive_binding() -> None:
    assert may_contain(Not(EqualTo("ID", INT_MIN - 25)), case_sensitive=False) is True
    with pytest.raises(NotFoundError, match="ID"):
        may_contain(Not(EqualTo("ID", 5)))


def test_missing_column_names_the_column() -> None:
    with pytest.raises(NotFoundError, match="missing"):
        may_contain(LessThan("missing", 5))


def test_summary_count_mismatch_is_corrupt_and_names_the_manifest() -> None:
    bad = ManifestFile("bad-manifest.avro", 1024, 0, partitions=SUMMARIES[:3])
    with pytest.raises(CorruptDataError, match=r"bad-manifest\.avro"):
        may_contain(EqualTo("id", 40), bad)


def test_bad_bound_bytes_are_corrupt_and_name_the_manifest() -> None:
    bad = ManifestFile(
        "bad-bounds.avro", 1024, 0, partitions=[_fs(False, b"\x01\x02", _i(3)), *SUMMARIES[1:]]
    )
    with pytest.raises(CorruptDataError, match=r"bad-bounds.avro.*field 1000"):
        may_contain(EqualTo("id", 40), bad)


def test_wrong_spec_is_refused() -> None:
    other = ManifestFile("m.avro", 1024, 7, partitions=SUMMARIES)
    with pytest.raises(ValidationError, match="spec 7"):
        may_contain(EqualTo("id", 40), other)


def test_promoted_partition_bounds_decode_by_length() -> None:
    """identity(x) on an int column later promoted to long: old summaries hold 4-byte ints."""
    schema = Schema((NestedField(1, "x", LongType()),))
    spec = PartitionSpec(0, (PartitionField(1, 1000, "x", IdentityTransform()),))
    manifest = ManifestFile("m.avro", 1, 0, partitions=[_fs(False, _i(10), _i(20))])
    assert ManifestEvaluator.for_row_filter(spec, schema, EqualTo("x", 15)).may_contain(manifest)
    assert not ManifestEvaluator.for_row_filter(spec, schema, EqualTo("x", 25)).may_contain(manifest)


def test_uuid_bounds_keep_a_manifest_either_order_keeps() -> None:
    """Java <= 1.10 wrote UUID bounds in signed order: lower 0x80.. > upper 0x7f.. unsigned."""
    schema = Schema((NestedField(1, "u", UUIDType()),))
    spec = PartitionSpec(0, (PartitionField(1, 1000, "u", IdentityTransform()),))
    low, high = (
        uuid.UUID("80000000-0000-0000-0000-000000000000"),
        uuid.UUID("7fffffff-0000-0000-0000-000000000000"),
    )
    signed = ManifestFile("m.avro", 1, 0, partitions=[_fs(False, low.bytes, high.bytes)])
    inside = uuid.UUID("00000000-0000-0000-0000-000000000001")  # between them in signed order
    assert ManifestEvaluator.for_row_filter(spec, schema, EqualTo("u", inside)).may_contain(signed)
    unsigned = ManifestFile("m.avro", 1, 0, partitions=[_fs(False, high.bytes, low.bytes)])
    assert ManifestEvaluator.for_row_filter(spec, schema, EqualTo("u", inside)).may_contain(unsigned) is False


def test_all_null_partition_field_skips_comparisons() -> None:
    for expr in (
        EqualTo("some_nulls", "q"),
        LessThan("all_nulls_missing_nan", "q"),
        GreaterThan("float", 30.0),
    ):
        manifest = ManifestFile(
            "m.avro", 1, 0, partitions=[*SUMMARIES[:2], _fs(True, None, None), *SUMMARIES[3:]]
        )
        assert may_contain(expr, manifest) is False


# --- the events table of the metadata-indexing post (seeds/003) ---------------------------

EVENTS = Schema((NestedField(1, "event_time", TimestamptzType()), NestedField(2, "device_id", LongType())))
EVENTS_SPEC = PartitionSpec(
    0,
    (
        PartitionField(1, 1000, "event_time_day", DayTransform()),
        PartitionField(2, 1001, "device_id_bucket", BucketTransform(64)),
    ),
)
QUERY = And(
    EqualTo("device_id", 74),
    And(
        GreaterThan("event_time", "2021-10-01T10:00:00+00:00"),
        LessThan("event_time", "2021-10-04T20:00:00+00:00"),
    ),
)


def _day(iso: str) -> bytes:
    from iceduck.spec.datetimes import iso_to_days

    return to_bytes(IntegerType(), iso_to_days(iso))


def test_events_query_keeps_only_the_overlapping_manifest() -> None:
    """ "each data file contains all 64 device ID buckets ... only manifest-1.avro overlaps"."""
    all_buckets = _fs(False, _i(0), _i(63))
    manifest_1 = ManifestFile(
        "manifest-1.avro", 1, 0, partitions=[_fs(False, _day("2021-09-30"), _day("2021-10-02")), all_buckets]
    )
    manifest_2 = ManifestFile(
        "manifest-2.avro", 1, 0, partitions=[_fs(False, _day("2021-10-05"), _day("2021-10-09")), all_buckets]
    )
    evaluator = ManifestEvaluator.for_row_filter(EVENTS_SPEC, EVENTS, QUERY)
    assert str(evaluator.partition_filter) == (
        "(device_id_bucket == 1 and (event_time_day >= 2021-10-01 and event_time_day <= 2021-10-04))"
    )
    assert [m.manifest_path for m in (manifest_1, manifest_2) if evaluator.may_contain(m)] == [
        "manifest-1.avro"
    ]


def test_partition_filter_on_partition_names() -> None:
    manifest = ManifestFile(
        "m.avro",
        1,
        0,
        partitions=[_fs(False, _day("2021-09-30"), _day("2021-10-02")), _fs(False, _i(5), _i(9))],
    )
    keep = ManifestEvaluator.for_partition_filter(EVENTS_SPEC, EVENTS, EqualTo("device_id_bucket", 7))
    skip = ManifestEvaluator.for_partition_filter(EVENTS_SPEC, EVENTS, EqualTo("device_id_bucket", 1))
    assert keep.may_contain(manifest) and not skip.may_contain(manifest)


def test_truncate_partition_summary_with_string_prefix() -> None:
    schema = Schema((NestedField(1, "s", StringType()),))
    spec = PartitionSpec(0, (PartitionField(1, 1000, "s_trunc", TruncateTransform(3)),))
    manifest = ManifestFile("m.avro", 1, 0, partitions=[_fs(False, _s("abc"), _s("abd"))])
    assert ManifestEvaluator.for_row_filter(spec, schema, StartsWith("s", "abcdef")).may_contain(manifest)
    assert not ManifestEvaluator.for_row_filter(spec, schema, StartsWith("s", "abe")).may_contain(manifest)
    assert not ManifestEvaluator.for_row_filter(spec, schema, EqualTo("s", "xyz1")).may_contain(manifest)
