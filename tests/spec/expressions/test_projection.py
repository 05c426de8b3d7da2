"""Projection of whole row filters onto partition specs (Java ``TestProjection``), and the
events table of the metadata-indexing post (seeds/003) planned end to end."""

from __future__ import annotations

import itertools

from iceduck.spec.datetimes import iso_to_days
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.manifest_evaluator import ManifestEvaluator
from iceduck.spec.expressions.metrics_evaluator import InclusiveMetricsEvaluator
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotNull,
    Or,
)
from iceduck.spec.expressions.projection import (
    inclusive_projection,
    project,
    project_strict,
    strict_projection,
)
from iceduck.spec.expressions.row_evaluator import RowEvaluator
from iceduck.spec.manifest import DataFile, FieldSummary, FileContent, FileFormat, ManifestFile
from iceduck.spec.partition import UNPARTITIONED, PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    UnknownTransform,
    VoidTransform,
)
from iceduck.spec.types import IntegerType, LongType, NestedField, StringType, TimestamptzType
from iceduck.spec.values import to_bytes

SCHEMA = Schema(
    (
        NestedField(1, "id", IntegerType(), required=True),
        NestedField(2, "data", StringType()),
        NestedField(3, "ts", TimestamptzType()),
    )
)


def _spec(*fields: PartitionField) -> PartitionSpec:
    return PartitionSpec(1, fields)


def test_identity_projection_keeps_the_predicate_and_negations() -> None:
    spec = _spec(PartitionField(1, 1000, "id", IdentityTransform()))
    for expr in (LessThan("id", 100), NotEqualTo("id", 100), In("id", [1, 2]), NotNull("id")):
        projected = project(expr, spec, SCHEMA)
        assert str(projected) == str(expr).replace("not_null(id)", "true")  # id is required
        assert str(project_strict(expr, spec, SCHEMA)) == str(projected)
    assert str(project(Not(LessThan("id", 100)), spec, SCHEMA)) == "id >= 100"
    projected = project(LessThan("id", 100), spec, SCHEMA)
    assert isinstance(projected, BoundPredicate) and projected.ref.accessor == (0,)
    assert projected.ref.field_id == 1000 and projected.ref.name == "id"


def test_case_insensitive_projection() -> None:
    spec = _spec(PartitionField(1, 1000, "id_part", IdentityTransform()))
    assert str(project(EqualTo("ID", 5), spec, SCHEMA, case_sensitive=False)) == "id_part == 5"


def test_two_fields_on_one_source_combine_with_and_inclusively_or_strictly() -> None:
    spec = _spec(
        PartitionField(3, 1000, "ts_day", DayTransform()),
        PartitionField(3, 1001, "ts_hour", HourTransform()),
    )
    expr = GreaterThan("ts", "2019-01-01T01:00:00Z")
    assert str(project(expr, spec, SCHEMA)) == "(ts_day >= 2019-01-01 and ts_hour >= 429529)"
    assert str(project_strict(expr, spec, SCHEMA)) == "(ts_day > 2019-01-01 or ts_hour > 429529)"
    # "consider (d = 2019-01-01) with bucket(7, d) and bucket(5, d)"
    spec = _spec(
        PartitionField(2, 1000, "b7", BucketTransform(7)), PartitionField(2, 1001, "b5", BucketTransform(5))
    )
    projected = project(EqualTo("data", "2019-01-01"), spec, SCHEMA)
    assert isinstance(projected, And) and {p.ref.name for p in (projected.left, projected.right)} == {
        "b7",
        "b5",
    }


def test_void_and_unknown_transforms_are_ignored() -> None:
    for transform in (VoidTransform(), UnknownTransform("zorder[3]")):
        spec = _spec(PartitionField(1, 1000, "p", transform))
        assert project(EqualTo("id", 1), spec, SCHEMA) == AlwaysTrue()
        assert project_strict(EqualTo("id", 1), spec, SCHEMA) == AlwaysFalse()


def test_unpartitioned_and_unrelated_columns() -> None:
    assert project(EqualTo("id", 1), UNPARTITIONED, SCHEMA) == AlwaysTrue()
    assert project_strict(EqualTo("id", 1), UNPARTITIONED, SCHEMA) == AlwaysFalse()
    spec = _spec(PartitionField(1, 1000, "id", IdentityTransform()))
    assert str(project(And(EqualTo("id", 1), EqualTo("data", "x")), spec, SCHEMA)) == "id == 1"
    assert str(project(Or(EqualTo("id", 1), EqualTo("data", "x")), spec, SCHEMA)) == "true"
    assert str(project_strict(Or(EqualTo("id", 1), EqualTo("data", "x")), spec, SCHEMA)) == "id == 1"


def test_not_is_rewritten_before_projection() -> None:
    """Without pushing NOT down, NOT(bucket-unprojectable) would wrongly become NOT(true)."""
    spec = _spec(PartitionField(1, 1000, "b", BucketTransform(16)))
    assert project(Not(LessThan("id", 5)), spec, SCHEMA) == AlwaysTrue()
    assert (
        str(project(Not(NotEqualTo("id", 5)), spec, SCHEMA))
        == f"b == {BucketTransform(16).apply(IntegerType())(5)}"
    )


def test_projections_are_reusable_per_spec() -> None:
    spec = _spec(
        PartitionField(3, 1000, "ts_day", DayTransform()),
        PartitionField(2, 1001, "data", IdentityTransform()),
    )
    inclusive, strict = inclusive_projection(spec, SCHEMA), strict_projection(spec, SCHEMA)
    assert inclusive.partition_type.fields[0].name == "ts_day"
    assert str(inclusive(IsNull("ts"))) == "is_null(ts_day)"
    assert str(strict(LessThanOrEqual("ts", "2020-01-01T00:00:00Z"))) == "ts_day < 2020-01-01"


# --- the events table, planned from manifest list to data files (seeds/003) ---------------

EVENTS = Schema((NestedField(1, "event_time", TimestamptzType()), NestedField(2, "device_id", LongType())))
EVENTS_SPEC = PartitionSpec(
    0,
    (
        PartitionField(1, 1000, "event_time_day", DayTransform()),
        PartitionField(2, 1001, "device_id_bucket", BucketTransform(64)),
    ),
)
DAYS = [iso_to_days(f"2021-10-{d:02d}") for d in range(1, 8)]
BUCKET_74 = BucketTransform(64).apply(LongType())(74)


def _data_file(day: int, bucket: int) -> DataFile:
    return DataFile(
        FileContent.DATA, f"data/{day}-{bucket}.parquet", FileFormat.PARQUET, (day, bucket), 100, 1
    )


def _manifest(path: str, files: list[DataFile]) -> ManifestFile:
    days = [f.partition[0] for f in files]
    buckets = [f.partition[1] for f in files]

    def summary(values: list[int], t: object) -> FieldSummary:
        return FieldSummary(False, None, to_bytes(t, min(values)), to_bytes(t, max(values)))  # type: ignore[arg-type]

    return ManifestFile(
        path, 1, 0, partitions=[summary(days, IntegerType()), summary(buckets, IntegerType())]
    )


def test_one_device_over_a_few_hours_keeps_one_partition() -> None:
    """Manifests grouped by write time (a few days each), every file one (day, bucket)
    partition: a query for device 74 between 10:00 and 14:00 on 2021-10-02 keeps one
    manifest and, in it, only the files of partition (2021-10-02, bucket(74))."""
    files = [_data_file(day, bucket) for day, bucket in itertools.product(DAYS, range(64))]
    manifests = {
        "m1": _manifest("m1", [f for f in files if f.partition[0] <= DAYS[2]]),
        "m2": _manifest("m2", [f for f in files if DAYS[2] < f.partition[0] <= DAYS[4]]),
        "m3": _manifest("m3", [f for f in files if DAYS[4] < f.partition[0]]),
    }
    query = And(
        EqualTo("device_id", 74),
        And(
            GreaterThanOrEqual("event_time", "2021-10-02T10:00:00Z"),
            LessThan("event_time", "2021-10-02T14:00:00Z"),
        ),
    )
    partition_filter = project(query, EVENTS_SPEC, EVENTS)
    assert str(partition_filter) == (
        f"(device_id_bucket == {BUCKET_74} and "
        "(event_time_day >= 2021-10-02 and event_time_day <= 2021-10-02))"
    )
    kept_manifests = [
        name for name, m in manifests.items() if ManifestEvaluator(EVENTS_SPEC, partition_filter)(m)
    ]
    assert kept_manifests == ["m1"]
    partition_matches = RowEvaluator(partition_filter)
    kept = [f.partition for f in files if f.partition[0] <= DAYS[2] and partition_matches(f.partition)]
    assert kept == [(DAYS[1], BUCKET_74)]
    # the metrics evaluator has nothing to say about files without column metrics
    metrics = InclusiveMetricsEvaluator(EVENTS, query)
    assert all(metrics.may_match(f) for f in files[:5])
