"""EXPLAIN lines for a scan plan (iceduck.sql.explain)."""

from __future__ import annotations

from iceduck.scan.tasks import DeleteFile, FileScanTask, ScanPlan, ScanStats
from iceduck.spec.expressions.predicates import EqualTo
from iceduck.spec.manifest import FileContent, FileFormat
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField
from iceduck.sql.explain import ScanExplanation, applied_deletes, explain_scan

SCHEMA = Schema((NestedField(1, "id", LongType()),), schema_id=3)
POS = DeleteFile("/t/pos.parquet", FileContent.POSITION_DELETES, FileFormat.PARQUET, 2, 5, 100)
DV = DeleteFile(
    "/t/dv.puffin",
    FileContent.POSITION_DELETES,
    FileFormat.PUFFIN,
    3,
    2,
    50,
    content_offset=4,
    content_size_in_bytes=9,
)
EQ = DeleteFile(
    "/t/eq.parquet", FileContent.EQUALITY_DELETES, FileFormat.PARQUET, 4, 1, 20, equality_ids=(1,)
)


def task(path: str, **deletes: object) -> FileScanTask:
    return FileScanTask(path, FileFormat.PARQUET, 10, 1000, 0, (), 1, **deletes)  # type: ignore[arg-type]


def plan(tasks: tuple[FileScanTask, ...]) -> ScanPlan:
    stats = ScanStats(
        manifests_total=250,
        manifests_read=1,
        manifests_skipped=249,
        data_files_total=2000,
        data_files_read=len(tasks),
        data_files_skipped_by_partition=7,
        data_files_skipped_by_metrics=1,
        delete_files_applied=3,
    )
    return ScanPlan(SCHEMA, 42, tasks, EqualTo("id", 7), stats)


def test_counts_and_files() -> None:
    tasks = (
        task("/t/a.parquet", position_deletes=(POS,), equality_deletes=(EQ,)),
        task("/t/b.parquet", deletion_vector=DV),
    )
    lines = explain_scan(
        ScanExplanation("iceduck.ns.t", "__iceduck_1", "current snapshot of main", plan(tasks))
    )
    assert lines[:8] == [
        "Iceberg scan of iceduck.ns.t",
        "  snapshot: 42 (current snapshot of main)",
        "  schema id: 3",
        "  pushed filter: id == 7",
        "  manifests: 250 total, 1 read, 249 skipped",
        "  data files: 2 read, 8 skipped (7 by partition, 1 by column metrics)",
        "  rows in files read: 20",
        "  delete files applied: 3 (1 position, 1 deletion vector, 1 equality)",
    ]
    assert "    /t/a.parquet (10 rows, 1 position delete file(s), 1 equality delete file(s))" in lines
    assert "    /t/b.parquet (10 rows, a deletion vector)" in lines
    assert "    /t/eq.parquet (equality, 1 rows)" in lines


def test_many_files_are_not_listed() -> None:
    tasks = tuple(task(f"/t/{n}.parquet") for n in range(3))
    lines = explain_scan(ScanExplanation("t", "v", "s", plan(tasks)), max_files=2)
    assert not any(line.startswith("    /t/") for line in lines)


def test_a_delete_file_shared_by_tasks_counts_once() -> None:
    tasks = (task("/t/a.parquet", equality_deletes=(EQ,)), task("/t/b.parquet", equality_deletes=(EQ,)))
    assert applied_deletes(plan(tasks)) == [EQ]


def test_empty_table() -> None:
    empty = ScanPlan(SCHEMA, None, ())
    lines = explain_scan(ScanExplanation("t", "v", "current snapshot of main", empty))
    assert lines[1] == "  snapshot: none (the table has no snapshot: empty) (current snapshot of main)"
    assert lines[3] == "  pushed filter: none"
