"""Scan planning over the checked-in Spark tables (tests/fixtures/spark), without Spark:
which delete files the planner attaches to which data file (sequence numbers, metrics,
deletion vectors that replaced others), what an old snapshot plans, and partition pruning
against the partitions of Spark's own rows."""

from __future__ import annotations

from typing import Any

import pytest

from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import plan_scan
from iceduck.scan.snapshots import resolve
from iceduck.scan.tasks import MATCH_ALL, FileScanTask, ScanPlan
from iceduck.spec.expressions.predicates import BooleanExpression, EqualTo, GreaterThanOrEqual, LessThan
from iceduck.spec.manifest import FileContent
from tests.fixtures.spark.parsed import metadata, micros, partition_of, snapshots
from tests.fixtures.spark.tables import expected, linked_root


@pytest.fixture(autouse=True, scope="module")
def _linked() -> None:
    """Planning reads the manifests by the paths the metadata records."""
    if linked_root() is None:
        pytest.skip("/tmp/iceduck-spark-fixtures is taken by something other than these fixtures")


def plan(
    identifier: str, row_filter: BooleanExpression = MATCH_ALL, snapshot_id: int | None = None
) -> ScanPlan:
    md = metadata(identifier)
    target = resolve(md, snapshot_id=snapshot_id)
    return plan_scan(
        md, snapshot=target.snapshot, schema=target.schema, row_filter=row_filter, cache=ManifestCache()
    )


def deletes_of(task: FileScanTask) -> list[tuple[str, int, tuple[int, ...]]]:
    """(kind, data sequence number, equality ids) of each delete applied to one data file."""
    found: list[tuple[str, int, tuple[int, ...]]] = [
        ("position", d.sequence_number, ()) for d in task.position_deletes
    ]
    found += [("equality", d.sequence_number, d.equality_ids) for d in task.equality_deletes]
    return sorted(found)


def test_equality_deletes_apply_to_older_data_only() -> None:
    """Data at sequence number 1 (ids 0-14 and 15-29) and 3 (id 7 re-inserted); deletes on
    id at 2, on name at 4, on (id, cat) at 5, Spark's position delete at 6. A delete applies
    to data strictly older than it whose column metrics may hold its keys."""
    tasks = plan("dml.eq_delete_v2").tasks
    found = sorted((t.data_sequence_number, t.record_count, deletes_of(t)) for t in tasks)
    assert found == [
        (1, 15, [("equality", 2, (1,)), ("equality", 4, (2,))]),  # ids 0-14: (id, cat) keys 22-24 pruned
        (1, 15, [("equality", 4, (2,)), ("equality", 5, (1, 3)), ("position", 6, ())]),  # ids 15-29
        (3, 1, []),  # newer than the id delete; 'n7-again' and no NULL name: pruned by metrics
    ]


def test_a_replaced_deletion_vector_is_not_applied() -> None:
    (task,) = plan("deletes.dv_v3").tasks
    dv = task.deletion_vector
    assert dv is not None and not task.position_deletes and not task.equality_deletes
    assert (dv.record_count, dv.sequence_number, dv.content_offset) == (7, 3, 4)
    assert dv.referenced_data_file == task.path
    assert (task.first_row_id, task.data_sequence_number) == (0, 1)


def test_deletes_by_snapshot() -> None:
    first, second = snapshots("deletes.position_v2")
    (before,) = plan("deletes.position_v2", snapshot_id=first.snapshot_id).tasks
    (after,) = plan("deletes.position_v2", snapshot_id=second.snapshot_id).tasks
    assert (before.path, before.has_deletes) == (after.path, False)
    (delete,) = after.position_deletes
    assert (delete.content, delete.record_count, delete.referenced_data_file) == (
        FileContent.POSITION_DELETES,
        5,
        after.path,  # not in the manifest: the file_path bounds are equal (as Java derives it)
    )


@pytest.mark.parametrize(
    "row_filter",
    [
        EqualTo("cat", "a"),
        EqualTo("id", 36),
        GreaterThanOrEqual("ts", 1700179200 * 10**6),  # 2023-11-17
        LessThan("ts", 1700006400 * 10**6),  # before 2023-11-15
    ],
    ids=str,
)
def test_partition_pruning_keeps_exactly_the_matching_partitions(row_filter: BooleanExpression) -> None:
    """Spark's rows that match the filter, mapped through iceduck's transforms, name the
    partitions (one file each) the plan must keep; the others are pruned by partition,
    except a point query's, where the bucket leaves a few and the id bounds decide."""
    md = metadata("part.mixed_v2")
    rows = expected()["part.mixed_v2"]["rows"]
    matching = [r for r in rows if _matches(row_filter, r)]
    wanted = {partition_of(r, md.spec(), md.schema()) for r in matching}
    result = plan("part.mixed_v2", row_filter)
    assert {t.partition for t in result.tasks} == wanted
    assert sum(t.record_count for t in result.tasks) >= len(matching)
    assert (
        result.stats.data_files_read
        + result.stats.data_files_skipped_by_partition
        + (result.stats.data_files_skipped_by_metrics)
        == 26
    )


def _matches(row_filter: BooleanExpression, row: dict[str, Any]) -> bool:
    column, value = row_filter.term, row_filter.literal  # type: ignore[attr-defined]
    actual = micros(row[column]) if column == "ts" else row[column]
    if isinstance(row_filter, EqualTo):
        return actual == value
    if isinstance(row_filter, GreaterThanOrEqual):
        return actual >= value
    return actual < value
