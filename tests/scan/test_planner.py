"""Scan planning on small tables written with iceduck's writers: pruning at every level of
the metadata index, the delete scope rules end to end, residuals and identity values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iceduck.errors import CorruptDataError, NotFoundError
from iceduck.formats.manifests import write_manifest
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import plan_scan
from iceduck.scan.snapshots import resolve
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    and_,
    or_,
)
from iceduck.spec.manifest import EntryStatus, ManifestContent, ManifestEntry
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import DoubleType, LongType, NestedField, StringType
from tests.scan.builder import (
    DAY_MICROS,
    EVENTS_DAY0,
    TableBuilder,
    data_file,
    deletion_vector,
    equality_deletes,
    events_table,
    long_bound,
    position_deletes,
)

HOUR_MICROS = 3_600_000_000

SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType()),
        NestedField(3, "x", DoubleType()),
    )
)
UNPARTITIONED = PartitionSpec(0, ())
BY_CAT = PartitionSpec(1, (PartitionField(2, 1000, "cat", parse_transform("identity")),))


def ids(path: str, cat: str | None, lo: int, hi: int, partitioned: bool = True) -> object:
    """A data file holding ids lo..hi of one category."""
    n = hi - lo + 1
    return data_file(
        path,
        (cat,) if partitioned else (),
        n,
        lower={1: long_bound(lo)} | ({2: cat.encode()} if cat else {}),
        upper={1: long_bound(hi)} | ({2: cat.encode()} if cat else {}),
        value_counts={1: n, 2: n},
        null_counts={1: 0, 2: 0 if cat else n},
    )


def paths(plan: object) -> list[str]:
    return sorted(t.path for t in plan.tasks)  # type: ignore[attr-defined]


@pytest.fixture
def by_cat(tmp_path: Path) -> TableBuilder:
    """Three appends, one manifest each: cat a (ids 0-9, 10-19), b (20-29), c (30-39)."""
    t = TableBuilder(tmp_path, SCHEMA, (BY_CAT,), default_spec_id=1)
    t.commit([ids("a1", "a", 0, 9), ids("a2", "a", 10, 19)])
    t.commit([ids("b1", "b", 20, 29)])
    t.commit([ids("c1", "c", 30, 39)])
    return t


# -- pruning levels ------------------------------------------------------------------------------


def test_a_full_scan_reads_every_live_file(by_cat: TableBuilder) -> None:
    plan = plan_scan(by_cat.metadata, cache=ManifestCache())
    assert paths(plan) == ["a1", "a2", "b1", "c1"]
    s = plan.stats
    assert (s.manifests_total, s.manifests_read, s.manifests_skipped) == (3, 3, 0)
    assert (s.data_files_total, s.data_files_read) == (4, 4)
    assert all(isinstance(t.residual, AlwaysTrue) for t in plan.tasks)
    assert plan.snapshot_id == by_cat.metadata.current_snapshot_id
    assert plan.schema == SCHEMA


def test_partition_summaries_skip_manifests(by_cat: TableBuilder) -> None:
    plan = plan_scan(by_cat.metadata, row_filter=EqualTo("cat", "a"), cache=ManifestCache())
    assert paths(plan) == ["a1", "a2"]
    s = plan.stats
    assert (s.manifests_total, s.manifests_read, s.manifests_skipped) == (3, 1, 2)
    assert (s.data_files_total, s.data_files_read) == (4, 2)
    # identity partition: the partition decides the predicate, nothing left for the rows
    assert all(isinstance(t.residual, AlwaysTrue) for t in plan.tasks)
    assert all(t.identity_values == {2: "a"} for t in plan.tasks)


def test_column_metrics_skip_files(by_cat: TableBuilder) -> None:
    flt = and_(EqualTo("cat", "a"), GreaterThanOrEqual("id", 15))
    plan = plan_scan(by_cat.metadata, row_filter=flt, cache=ManifestCache())
    assert paths(plan) == ["a2"]
    assert plan.stats.data_files_skipped_by_metrics == 1
    (task,) = plan.tasks
    assert isinstance(task.residual, BoundPredicate) and task.residual.ref.field_id == 1


def test_partition_tuples_skip_files_inside_a_manifest(tmp_path: Path) -> None:
    t = TableBuilder(tmp_path, SCHEMA, (BY_CAT,), default_spec_id=1)
    t.commit([ids("a1", "a", 0, 9), ids("b1", "b", 0, 9), ids("n1", None, 0, 9)])
    plan = plan_scan(t.metadata, row_filter=In("cat", ["b", "z"]), cache=ManifestCache())
    assert paths(plan) == ["b1"]
    s = plan.stats
    assert (s.manifests_read, s.data_files_skipped_by_partition, s.data_files_skipped_by_metrics) == (1, 2, 0)


def test_a_filter_on_a_non_partition_column_reads_every_manifest(by_cat: TableBuilder) -> None:
    plan = plan_scan(by_cat.metadata, row_filter=EqualTo("id", 25), cache=ManifestCache())
    assert paths(plan) == ["b1"]
    assert plan.stats.manifests_read == 3
    assert plan.stats.data_files_skipped_by_metrics == 3


def test_or_filters_keep_files_either_side_may_match(by_cat: TableBuilder) -> None:
    flt = or_(EqualTo("cat", "c"), LessThan("id", 5))
    assert paths(plan_scan(by_cat.metadata, row_filter=flt, cache=ManifestCache())) == ["a1", "c1"]


def test_a_false_filter_plans_nothing(by_cat: TableBuilder) -> None:
    for flt in (AlwaysFalse(), and_(EqualTo("cat", "a"), EqualTo("cat", "b"))):
        plan = plan_scan(by_cat.metadata, row_filter=flt, cache=ManifestCache())
        assert plan.tasks == ()
        assert plan.stats.data_files_read == 0 and plan.stats.data_files_total == 4


def test_unknown_columns_in_the_filter_are_named(by_cat: TableBuilder) -> None:
    with pytest.raises(NotFoundError, match="'nope'"):
        plan_scan(by_cat.metadata, row_filter=EqualTo("nope", 1))
    plan = plan_scan(by_cat.metadata, row_filter=EqualTo("CAT", "a"), case_sensitive=False)
    assert paths(plan) == ["a1", "a2"]


def test_an_empty_table_plans_no_tasks(tmp_path: Path) -> None:
    md = TableBuilder(tmp_path, SCHEMA).metadata
    plan = plan_scan(md, row_filter=EqualTo("id", 1))
    assert plan.tasks == () and plan.snapshot_id is None and plan.schema == SCHEMA


def test_manifests_of_older_specs_are_projected_with_their_own_spec(tmp_path: Path) -> None:
    """Spec: "Conversion uses the partition spec that was used to write the manifest file"."""
    t = TableBuilder(tmp_path, SCHEMA, (UNPARTITIONED, BY_CAT), default_spec_id=0)
    t.commit([ids("u1", "a", 0, 9, partitioned=False), ids("u2", "b", 10, 19, partitioned=False)], spec_id=0)
    t.default_spec_id = 1
    t.commit([ids("a1", "a", 20, 29), ids("b1", "b", 30, 39)], spec_id=1)
    plan = plan_scan(t.metadata, row_filter=EqualTo("cat", "a"), cache=ManifestCache())
    assert paths(plan) == ["a1", "u1"]  # u2 goes by its cat metrics, b1 by its partition
    by_path = {task.path: task for task in plan.tasks}
    assert isinstance(by_path["a1"].residual, AlwaysTrue)
    assert isinstance(by_path["u1"].residual, BoundPredicate)
    assert by_path["u1"].identity_values == {} and by_path["u1"].spec_id == 0


def test_deleted_entries_are_not_scanned(tmp_path: Path) -> None:
    t = TableBuilder(tmp_path, SCHEMA)
    s1 = t.commit([data_file("old"), data_file("kept")])
    entries = [
        ManifestEntry(EntryStatus.DELETED, s1.snapshot_id + 1, data_file("old"), 1, 1),
        ManifestEntry(EntryStatus.EXISTING, s1.snapshot_id, data_file("kept"), 1, 1),
    ]
    rewritten = dataclasses.replace(t.write_manifest(entries), added_snapshot_id=s1.snapshot_id + 1)
    deletes = [
        ManifestEntry(EntryStatus.DELETED, s1.snapshot_id + 1, position_deletes("gone-deletes"), 1, 1),
        ManifestEntry(EntryStatus.EXISTING, s1.snapshot_id, position_deletes("live", targets=["zz"]), 1, 1),
    ]
    gone = dataclasses.replace(
        t.write_manifest(deletes, ManifestContent.DELETES), added_snapshot_id=s1.snapshot_id + 1
    )
    t.commit(replace_manifests=[], extra_manifests=[rewritten, gone], operation="delete")
    plan = plan_scan(t.metadata, cache=ManifestCache())
    assert paths(plan) == ["kept"]
    assert plan.tasks[0].data_sequence_number == 1 and not plan.tasks[0].has_deletes


def test_time_travel_plans_the_snapshot_with_its_schema(by_cat: TableBuilder) -> None:
    md = by_cat.metadata
    first = md.snapshots[0]
    target = resolve(md, snapshot_id=first.snapshot_id)
    plan = plan_scan(md, snapshot=target.snapshot, schema=target.schema, cache=ManifestCache())
    assert paths(plan) == ["a1", "a2"] and plan.snapshot_id == first.snapshot_id
    assert paths(plan_scan(md, snapshot=first)) == ["a1", "a2"]


def test_the_name_mapping_property_is_passed_on(tmp_path: Path) -> None:
    t = TableBuilder(tmp_path, SCHEMA, properties={"schema.name-mapping.default": '[{"field-id": 1}]'})
    t.commit([data_file("f")])
    assert plan_scan(t.metadata).name_mapping == '[{"field-id": 1}]'


def test_v1_snapshots_listing_manifests_directly(tmp_path: Path) -> None:
    """v1 "manifests": no manifest list; Java reads them as spec 0 without summaries."""
    t = TableBuilder(tmp_path, SCHEMA, (UNPARTITIONED, BY_CAT), format_version=1, default_spec_id=1)
    location = str(tmp_path / "metadata" / "v1-manifest.avro")
    files = [ids("a1", "a", 0, 9), ids("b1", "b", 10, 19)]
    data, _ = write_manifest(
        [ManifestEntry(EntryStatus.ADDED, 7, f) for f in files],
        BY_CAT,
        SCHEMA,
        1,
        ManifestContent.DATA,
        7,
    )  # fmt: skip
    Path(location).write_bytes(data)
    snapshot = Snapshot(snapshot_id=7, timestamp_ms=1, manifests=(location,))
    md = dataclasses.replace(t.metadata, snapshots=(snapshot,), current_snapshot_id=7, refs={})
    plan = plan_scan(md, row_filter=EqualTo("cat", "b"), cache=ManifestCache())
    assert paths(plan) == ["b1"]
    assert plan.tasks[0].spec_id == 1 and plan.tasks[0].data_sequence_number == 0


def test_manifests_of_an_unknown_spec_are_corrupt(by_cat: TableBuilder) -> None:
    md = dataclasses.replace(by_cat.metadata, partition_specs=(UNPARTITIONED,), default_spec_id=0)
    with pytest.raises(CorruptDataError, match="partition spec 1"):
        plan_scan(md, row_filter=EqualTo("cat", "a"), cache=ManifestCache())


# -- deletes end to end ----------------------------------------------------------------------------


def delete_paths(task: object) -> tuple[str | None, list[str], list[str]]:
    dv = task.deletion_vector  # type: ignore[attr-defined]
    return (
        dv.path if dv else None,
        [d.path for d in task.position_deletes],  # type: ignore[attr-defined]
        [d.path for d in task.equality_deletes],  # type: ignore[attr-defined]
    )


def test_delete_scope_by_sequence_number(tmp_path: Path) -> None:
    t = TableBuilder(tmp_path, SCHEMA)
    t.commit([data_file("d1")])  # seq 1
    t.commit(  # seq 2: data, position and equality deletes in one commit
        [data_file("d2")],
        [position_deletes("p2", targets=["d1", "d2"]), equality_deletes("e2", ids=(1,))],
        operation="overwrite",
    )
    t.commit(deletes=[equality_deletes("e3", ids=(2,))], operation="delete")  # seq 3, global
    plan = plan_scan(t.metadata, cache=ManifestCache())
    by_path = {task.path: delete_paths(task) for task in plan.tasks}
    assert by_path["d1"] == (None, ["p2"], ["e2", "e3"])
    # same commit: position deletes apply, equality deletes do not
    assert by_path["d2"] == (None, ["p2"], ["e3"])
    assert plan.stats.delete_files_applied == 3
    e3 = next(d for d in plan.tasks[0].equality_deletes if d.path == "e3")
    assert e3.equality_ids == (2,) and e3.sequence_number == 3


def test_deletes_are_scoped_to_their_partition_unless_global(by_cat: TableBuilder) -> None:
    by_cat.commit(
        deletes=[position_deletes("pos-b", ("b",)), equality_deletes("eq-a", ("a",), ids=(1,))],
        spec_id=1,
        operation="delete",
    )
    plan = plan_scan(by_cat.metadata, cache=ManifestCache())
    by_path = {task.path: delete_paths(task) for task in plan.tasks}
    assert by_path == {
        "a1": (None, [], ["eq-a"]),
        "a2": (None, [], ["eq-a"]),
        "b1": (None, ["pos-b"], []),
        "c1": (None, [], []),
    }


def test_a_deletion_vector_replaces_position_deletes(tmp_path: Path) -> None:
    t = TableBuilder(tmp_path, SCHEMA, format_version=3)
    t.commit([data_file("d1"), data_file("d2")])
    t.commit(deletes=[position_deletes("p", targets=["d1", "d2"])], operation="delete")
    t.commit(deletes=[deletion_vector("dv.puffin", "d1", offset=4)], operation="delete")
    plan = plan_scan(t.metadata, cache=ManifestCache())
    by_path = {task.path: task for task in plan.tasks}
    assert delete_paths(by_path["d1"]) == ("dv.puffin", [], [])
    dv = by_path["d1"].deletion_vector
    assert dv is not None and (dv.content_offset, dv.content_size_in_bytes) == (4, 40)
    assert dv.referenced_data_file == "d1"
    assert delete_paths(by_path["d2"]) == (None, ["p"], [])
    assert by_path["d1"].first_row_id is not None  # v3 row lineage is carried


def test_delete_manifests_and_files_are_pruned_by_the_filter(by_cat: TableBuilder) -> None:
    by_cat.commit(deletes=[position_deletes("pos-b", ("b",))], spec_id=1, operation="delete")
    eq = equality_deletes(
        "eq-a-15", ("a",), ids=(1,), lower={1: long_bound(15)}, upper={1: long_bound(200)},
        value_counts={1: 2}, null_counts={1: 0},
    )  # fmt: skip
    by_cat.commit(deletes=[eq], spec_id=1, operation="delete")
    plan = plan_scan(by_cat.metadata, row_filter=EqualTo("cat", "a"), cache=ManifestCache())
    # data manifest of a; the delete manifest of a is read; the delete manifest of b is
    # skipped by its partition summary. The deletes' ids (15-200) overlap a2's only.
    assert plan.stats.manifests_read == 2 and plan.stats.manifests_total == 5
    by_path = {task.path: delete_paths(task) for task in plan.tasks}
    assert by_path == {"a1": (None, [], []), "a2": (None, [], ["eq-a-15"])}
    plan = plan_scan(by_cat.metadata, row_filter=EqualTo("id", 17), cache=ManifestCache())
    assert paths(plan) == ["a2"] and delete_paths(plan.tasks[0]) == (None, [], ["eq-a-15"])
    plan = plan_scan(by_cat.metadata, row_filter=LessThan("id", 12), cache=ManifestCache())
    assert paths(plan) == ["a1", "a2"]
    assert not any(task.has_deletes for task in plan.tasks)  # no deleted id is < 12


def test_delete_files_older_than_every_planned_data_file_are_not_read(tmp_path: Path) -> None:
    t = TableBuilder(tmp_path, SCHEMA)
    t.commit([data_file("d1")])
    t.commit(deletes=[position_deletes("p", targets=["d1"])], operation="delete")
    rewritten = t.commit([data_file("d1-compacted")], replace_manifests=[], operation="replace")
    deletes = [m for m in t.manifests_of[rewritten.snapshot_id - 1] if m.content is ManifestContent.DELETES]
    t.commit(extra_manifests=deletes, operation="append")  # the stale delete manifest is still listed
    cache = ManifestCache()
    plan = plan_scan(t.metadata, cache=cache)
    assert paths(plan) == ["d1-compacted"] and not plan.tasks[0].has_deletes
    assert plan.stats.manifests_read == 1  # the old delete manifest was not even opened


# -- the metadata-indexing post -----------------------------------------------------------------------


def test_one_device_over_a_few_hours_reads_one_manifest_and_one_file(tmp_path: Path) -> None:
    """The post's events table: ``day(ts), bucket(8, device_id)``, one manifest per daily
    append. The day summaries leave one manifest, the bucket one file of it."""
    table = events_table(tmp_path, days=30)
    day = EVENTS_DAY0 + 17
    flt = and_(
        EqualTo("device_id", 74),
        GreaterThan("ts", day * DAY_MICROS + 10 * HOUR_MICROS),
        LessThan("ts", day * DAY_MICROS + 14 * HOUR_MICROS),
    )
    cache = ManifestCache()
    plan = plan_scan(table.metadata, row_filter=flt, cache=cache)
    s = plan.stats
    assert (s.manifests_total, s.manifests_read, s.manifests_skipped) == (30, 1, 29)
    assert (s.data_files_total, s.data_files_read, s.data_files_skipped_by_partition) == (240, 1, 7)
    (task,) = plan.tasks
    bucket = parse_transform("bucket[8]").apply(LongType())(74)
    assert task.partition == (day, bucket)
    assert cache.manifests_parsed == 1
    # the residual keeps what the partition does not decide: the device and the hours
    assert {p.ref.name for p in _leaves(task.residual)} == {"device_id", "ts"}


def test_cached_manifests_are_never_parsed_again(tmp_path: Path) -> None:
    """2,000 files in 250 manifests: once parsed, neither a full nor a point plan parses a
    manifest again, and the point plan reads one manifest and one file. (Speed is measured
    in bench/, never asserted here.)"""
    table = events_table(tmp_path, days=250, history=False)
    md, cache = table.metadata, ManifestCache()
    day = EVENTS_DAY0 + 100
    point = and_(
        EqualTo("device_id", 74),
        GreaterThan("ts", day * DAY_MICROS + 10 * HOUR_MICROS),
        LessThan("ts", day * DAY_MICROS + 20 * HOUR_MICROS),
    )
    assert len(plan_scan(md, cache=cache).tasks) == 2000
    parsed = cache.manifests_parsed
    assert len(plan_scan(md, cache=cache).tasks) == 2000
    selective = plan_scan(md, row_filter=point, cache=cache)
    assert cache.manifests_parsed == parsed == 250  # nothing parsed twice
    assert len(selective.tasks) == 1
    assert selective.stats.manifests_read == 1


def _leaves(expr: object) -> list[BoundPredicate]:
    if isinstance(expr, BoundPredicate):
        return [expr]
    return [*_leaves(getattr(expr, "left", None)), *_leaves(getattr(expr, "right", None))] if expr else []
