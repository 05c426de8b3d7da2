"""The manifest-list index: it narrows the rows the evaluator tests and never changes a plan.

The invariant: every row the :class:`ManifestEvaluator` would keep is a candidate. Checked
on random manifest lists and filters (wide and narrow intervals, missing summaries and
bounds, strings, ORs and NOTs), then end to end: plans with the index equal plans testing
every row, and a point query on a long history opens only the manifests that can match.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from iceduck.io import fileio
from iceduck.scan import manifest_index
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.manifest_index import ManifestListIndex
from iceduck.scan.planner import SpecFilter, plan_scan
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import (
    AlwaysTrue,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    and_,
    or_,
)
from iceduck.spec.manifest import FieldSummary, ManifestContent, ManifestFile
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import DateType, IntegerType, LongType, NestedField, StringType, TimestamptzType
from iceduck.spec.values import to_bytes
from tests.scan.builder import DAY_MICROS, EVENTS_DAY0, EVENTS_SCHEMA, events_table, late_events_table

HOUR = 3_600_000_000
SCHEMA = Schema(
    (
        NestedField(1, "ts", TimestamptzType()),
        NestedField(2, "device_id", LongType()),
        NestedField(3, "region", StringType()),
    )
)
SPEC = PartitionSpec(
    0,
    (
        PartitionField(1, 1000, "ts_day", parse_transform("day")),
        PartitionField(2, 1001, "device_id_bucket", parse_transform("bucket[8]")),
        PartitionField(3, 1002, "region", parse_transform("identity")),
    ),
)
OLD_SPEC = PartitionSpec(1, (PartitionField(2, 1003, "device_id", parse_transform("identity")),))
REGIONS = ["eu", "us", "ap", "sa"]


def _summary(rng: random.Random, lo: Any, hi: Any, encode: Any) -> FieldSummary:
    roll = rng.random()
    if roll < 0.04:
        return FieldSummary(True, None, None, None)  # all null
    if roll < 0.06:
        return FieldSummary(False, None, encode(lo), None)  # no upper bound
    return FieldSummary(rng.random() < 0.1, None, encode(lo), encode(hi))


def _row(rng: random.Random, i: int, spec: PartitionSpec) -> ManifestFile:
    partitions: list[FieldSummary] | None = None
    if spec is OLD_SPEC:
        lo = rng.randrange(0, 100)
        partitions = [_summary(rng, lo, lo + rng.randrange(0, 20), lambda v: to_bytes(LongType(), v))]
    elif rng.random() > 0.03:
        day = rng.randrange(0, 300)
        width = rng.choice([0, 0, 0, 0, 1, 3, 7]) if rng.random() > 0.02 else rng.randrange(50, 400)
        b = rng.randrange(0, 8)
        r = sorted(rng.sample(REGIONS, 2))
        partitions = [
            _summary(rng, day, day + width, lambda v: to_bytes(DateType(), v)),
            _summary(rng, b, min(7, b + rng.randrange(0, 8)), lambda v: to_bytes(IntegerType(), v)),
            _summary(rng, r[0], r[1], lambda v: v.encode()),
        ]
    return ManifestFile(
        manifest_path=f"m{i}.avro",
        manifest_length=1,
        partition_spec_id=spec.spec_id,
        content=ManifestContent.DATA if rng.random() > 0.05 else ManifestContent.DELETES,
        sequence_number=i,
        min_sequence_number=i,
        added_snapshot_id=i,
        added_files_count=1,
        existing_files_count=0,
        deleted_files_count=0,
        partitions=partitions,
    )


def _leaf(rng: random.Random) -> BooleanExpression:
    column = rng.choice(["ts", "ts", "device_id", "region"])
    if column == "region":
        return rng.choice([EqualTo, NotEqualTo, LessThan])("region", rng.choice(REGIONS))
    if column == "device_id":
        if rng.random() < 0.15:
            return In("device_id", set(rng.sample(range(120), rng.randrange(2, 5))))
        ops = [EqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual, NotEqualTo]
        return rng.choice(ops)("device_id", rng.randrange(0, 120))
    at = (rng.randrange(-20, 320) * DAY_MICROS) + rng.randrange(0, DAY_MICROS)
    choice = rng.randrange(7)
    if choice == 5:
        return In("ts", {at + k * DAY_MICROS for k in range(rng.randrange(1, 4))})
    if choice == 6:
        return IsNull("ts")
    return [EqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual][choice]("ts", at)


def _filter(rng: random.Random, depth: int = 0) -> BooleanExpression:
    roll = rng.random()
    if depth > 2 or roll < 0.35:
        return _leaf(rng)
    if roll < 0.8:
        return and_(_filter(rng, depth + 1), _filter(rng, depth + 1))
    if roll < 0.93:
        return or_(_filter(rng, depth + 1), _filter(rng, depth + 1))
    return Not(_filter(rng, depth + 1))


def test_every_row_the_evaluator_keeps_is_a_candidate() -> None:
    rng = random.Random(7)
    narrowed = 0
    for trial in range(60):
        rows = [_row(rng, i, OLD_SPEC if rng.random() < 0.2 else SPEC) for i in range(300)]
        index = ManifestListIndex(rows)
        for _ in range(25):
            bound = bind(SCHEMA, _filter(rng), True)
            filters = {s.spec_id: SpecFilter(s, SCHEMA, bound, True) for s in (SPEC, OLD_SPEC)}
            required = {k: f.required for k, f in filters.items() if f.required}
            candidates = index.data_candidates(required)
            data = [m for m in rows if m.content is ManifestContent.DATA]
            kept = [
                m
                for m in data
                if m.partitions is None or filters[m.partition_spec_id].manifest_evaluator.may_contain(m)
            ]
            chosen = {m.manifest_path for m in candidates}
            missing = [m.manifest_path for m in kept if m.manifest_path not in chosen]
            assert not missing, f"trial {trial}: {bound} lost {missing}"
            order = [m.manifest_path for m in data if m.manifest_path in chosen]
            assert [m.manifest_path for m in candidates] == order  # list order, no duplicates
            narrowed += len(candidates) < len(data)
    assert narrowed > 100  # the index does narrow (the test would pass vacuously otherwise)


def test_a_day_range_finds_overlapping_intervals_of_every_width() -> None:
    def row(i: int, lo: int, hi: int) -> ManifestFile:
        summary = FieldSummary(False, None, to_bytes(DateType(), lo), to_bytes(DateType(), hi))
        return ManifestFile(f"m{i}", 1, 0, ManifestContent.DATA, i, i, i, 1, 0, 0, partitions=[summary])

    days = [(d, d) for d in range(1000)]
    late = [(d - 3, d) for d in range(0, 1000, 10)]
    compacted = [(0, 999), (400, 420)]
    rows = [row(i, lo, hi) for i, (lo, hi) in enumerate(days + late + compacted)]
    index = ManifestListIndex(rows)
    spec = PartitionSpec(0, (PartitionField(1, 1000, "d", parse_transform("identity")),))
    schema = Schema((NestedField(1, "d", DateType()),))
    for lo, hi in [(500, 500), (405, 407), (0, 0), (998, 2000), (-5, -1), (600, 590)]:
        flt = SpecFilter(
            spec,
            schema,
            bind(schema, and_(GreaterThanOrEqual("d", lo), LessThanOrEqual("d", hi)), True),
            True,
        )
        found = {m.manifest_path for m in index.data_candidates({0: flt.required})}
        expected = {f"m{i}" for i, (a, b) in enumerate(days + late + compacted) if a <= hi and b >= lo}
        assert found == expected, (lo, hi)


@pytest.mark.parametrize("late", [False, True])
def test_plans_with_the_index_equal_plans_testing_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: bool
) -> None:
    table = (
        late_events_table(tmp_path, days=60, lag=3)
        if late
        else events_table(tmp_path, days=60, history=False)
    )
    md = table.metadata
    day = EVENTS_DAY0 + 40
    filters = [
        AlwaysTrue(),
        and_(
            EqualTo("device_id", 74),
            GreaterThanOrEqual("ts", day * DAY_MICROS + 10 * HOUR),
            LessThan("ts", day * DAY_MICROS + 20 * HOUR),
        ),
        and_(GreaterThan("ts", day * DAY_MICROS), LessThan("ts", (day - 5) * DAY_MICROS)),  # contradiction
        or_(EqualTo("ts", day * DAY_MICROS), EqualTo("ts", (day + 3) * DAY_MICROS)),
        In("ts", {(day + k) * DAY_MICROS for k in (0, 7, 9)}),
        GreaterThanOrEqual("ts", (EVENTS_DAY0 + 58) * DAY_MICROS),
        Not(LessThan("ts", (EVENTS_DAY0 + 58) * DAY_MICROS)),
        EqualTo("device_id", 3),
    ]
    indexed = [plan_scan(md, row_filter=f, cache=ManifestCache()) for f in filters]

    def every_row(self: ManifestListIndex, required: Any) -> list[ManifestFile]:
        return [self.rows[i] for i in self.data]

    monkeypatch.setattr(ManifestListIndex, "data_candidates", every_row)
    for f, plan in zip(filters, indexed, strict=True):
        brute = plan_scan(md, row_filter=f, cache=ManifestCache())
        assert plan.tasks == brute.tasks, f
        assert plan.stats == brute.stats, f


def _point(day: int) -> BooleanExpression:
    start = (EVENTS_DAY0 + day) * DAY_MICROS + 10 * HOUR
    return and_(EqualTo("device_id", 74), GreaterThanOrEqual("ts", start), LessThan("ts", start + 10 * HOUR))


class CountingReader:
    """``ManifestCache``'s reader, counting reads per path."""

    def __init__(self) -> None:
        self.reads: dict[str, int] = {}

    def __call__(self, path: str) -> bytes:
        self.reads[path] = self.reads.get(path, 0) + 1
        return fileio.read_bytes(path)


@pytest.mark.parametrize("late", [False, True])
def test_a_point_query_opens_only_the_manifests_that_can_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: bool
) -> None:
    """400 daily manifests; late data makes a day's files arrive in up to 4 of them."""
    if late:
        table = late_events_table(tmp_path, days=400, lag=3)
    else:
        table = events_table(tmp_path, days=400, history=False)
    md = table.metadata
    snapshot = md.current_snapshot()
    assert snapshot is not None
    rows = ManifestCache().snapshot_manifests(snapshot)
    bound = bind(EVENTS_SCHEMA, _point(300), True)
    evaluator = SpecFilter(md.spec(), md.schema(), bound, True).manifest_evaluator
    overlapping = [m for m in rows if evaluator.may_contain(m)]
    assert len(overlapping) == (2 if late else 1)

    tested: list[str] = []
    build = SpecFilter.__init__

    def counting(self: SpecFilter, *args: Any) -> None:
        build(self, *args)
        test = self.manifest_evaluator.may_contain
        self.manifest_evaluator.may_contain = lambda m: tested.append(m.manifest_path) or test(m)  # type: ignore[method-assign]

    monkeypatch.setattr(SpecFilter, "__init__", counting)
    reader = CountingReader()
    cache = ManifestCache(read=reader)
    plan = plan_scan(md, row_filter=_point(300), cache=cache)
    assert len(plan.tasks) == 1
    assert plan.stats.manifests_total == len(rows) and plan.stats.data_files_total == 400 * 8
    assert plan.stats.manifests_read == len(overlapping)
    # read: the list and the manifests that can match, nothing else
    assert sorted(reader.reads) == sorted([snapshot.manifest_list, *(m.manifest_path for m in overlapping)])
    # tested: the rows whose day range overlaps (the bucket summary then rules some out)
    assert len(overlapping) <= len(tested) <= 4


def test_the_manifest_list_is_read_once_per_snapshot(tmp_path: Path) -> None:
    table = events_table(tmp_path, days=20)  # a snapshot per day: 20 manifest lists
    md = table.metadata
    reader = CountingReader()
    cache = ManifestCache(read=reader)
    for day in (3, 5, 17, 3):
        plan_scan(md, row_filter=_point(day), cache=cache)
    plan_scan(md, cache=cache)
    lists = [p for p in reader.reads if "/snap-" in p]
    assert len(lists) == 1 and reader.reads[lists[0]] == 1 and cache.lists_parsed == 1
    assert all(n == 1 for n in reader.reads.values())  # every manifest read once too
    older = md.snapshots[9]
    plan_scan(md, snapshot=older, row_filter=_point(3), cache=cache)
    plan_scan(md, snapshot=older, row_filter=_point(4), cache=cache)
    assert cache.lists_parsed == 2 and all(n == 1 for n in reader.reads.values())


def test_fields_that_do_not_compare_as_integers_are_not_indexed() -> None:
    assert manifest_index.integer_domain(StringType(), 3) is None
    assert manifest_index.integer_domain(LongType(), 2) is not None
