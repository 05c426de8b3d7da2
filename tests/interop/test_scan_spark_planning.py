"""Planning every Spark-written fixture table, every ref and every snapshot, checked against Spark.

* files: with no filter, iceduck plans exactly the data files Spark lists in
  ``<table>.data_files`` for the same version (``VERSION AS OF`` a snapshot id or ref);
* deletes: applying the planned delete files to the planned data files (positions from
  deletion vectors and position delete files, keys from equality delete files, as a test
  oracle in pyarrow) leaves exactly as many rows as Spark's ``count(*)`` of that version;
  the engine's tests compare the rows themselves;
* filters: a filtered plan keeps every file in which Spark finds a matching row
  (``input_file_name()`` of the filtered query), and prunes somewhere.

Uses the session fixtures ``spark`` and ``spark_warehouse`` (read only).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq
import pytest

from iceduck.formats.metadata_json import read_table_metadata
from iceduck.formats.puffin import read_deletion_vector
from iceduck.io.fileio import read_bytes, to_local_path
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import plan_scan
from iceduck.scan.snapshots import resolve
from iceduck.scan.tasks import FileScanTask, ScanPlan
from iceduck.spec.expressions.predicates import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    IsNull,
    LessThan,
)
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import DateType, IntegerType, LongType, StringType, TimestamptzType
from tests.support.spark_warehouse import SparkWarehouse, TableInfo

pytestmark = pytest.mark.spark

FIELD_ID = b"PARQUET:field_id"


@dataclass(frozen=True)
class Version:
    """One readable version of a table: its label, Spark's AS OF clause and iceduck's plan."""

    label: str
    as_of: str
    plan: ScanPlan


def load_metadata(warehouse: SparkWarehouse, info: TableInfo) -> TableMetadata:
    uri = f"file:{warehouse.path / 'catalog.db'}?mode=ro"
    namespace, table = info.identifier.rsplit(".", 1)
    with sqlite3.connect(uri, uri=True) as db:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            (info.name.split(".", 1)[0], namespace, table),
        ).fetchone()
    assert row is not None, f"{info.name} is not in the catalog"
    return read_table_metadata(read_bytes(row[0]), row[0])


def versions(md: TableMetadata, cache: ManifestCache) -> Iterator[Version]:
    target = resolve(md)
    yield Version("main", "", plan_scan(md, snapshot=target.snapshot, schema=target.schema, cache=cache))
    for name in sorted(md.refs):
        target = resolve(md, version=name)
        plan = plan_scan(md, snapshot=target.snapshot, schema=target.schema, cache=cache)
        yield Version(f"ref {name}", f"VERSION AS OF '{name}'", plan)
    for s in md.snapshots:
        target = resolve(md, snapshot_id=s.snapshot_id)
        plan = plan_scan(md, snapshot=target.snapshot, schema=target.schema, cache=cache)
        yield Version(f"snapshot {s.snapshot_id}", f"VERSION AS OF {s.snapshot_id}", plan)


@pytest.fixture(scope="module")
def planned(spark_warehouse: SparkWarehouse) -> dict[str, tuple[TableInfo, list[Version]]]:
    cache = ManifestCache()
    out = {}
    for identifier, info in sorted(spark_warehouse.tables.items()):
        md = load_metadata(spark_warehouse, info)
        out[identifier] = (info, list(versions(md, cache)))
    return out


def _union(parts: list[str]) -> str:
    return " UNION ALL ".join(parts)


def test_every_version_plans_the_data_files_spark_lists(spark: Any, planned: dict) -> None:
    checked = 0
    for info, vs in planned.values():
        query = _union(
            [f"SELECT {i} AS v, file_path FROM {info.name}.data_files {v.as_of}" for i, v in enumerate(vs)]
        )
        spark_files: dict[int, set[str]] = {i: set() for i in range(len(vs))}
        for v, path in spark.sql(query).collect():
            spark_files[v].add(path)
        for i, v in enumerate(vs):
            ours = [t.path for t in v.plan.tasks]
            assert len(ours) == len(set(ours)), f"{info.name} {v.label}: a file planned twice"
            assert set(ours) == spark_files[i], f"{info.name} {v.label}"
            assert v.plan.stats.data_files_read == len(ours)
            checked += 1
    assert checked > 50


def test_planned_deletes_leave_the_rows_spark_counts(spark: Any, planned: dict) -> None:
    with_deletes = 0
    for info, vs in planned.values():
        query = _union([f"SELECT {i} AS v, count(*) FROM {info.name} {v.as_of}" for i, v in enumerate(vs)])
        counts = dict(spark.sql(query).collect())
        assert counts[0] == info.row_count, info.name
        for i, v in enumerate(vs):
            assert live_rows(v.plan) == counts[i], f"{info.name} {v.label}"
            with_deletes += any(t.has_deletes for t in v.plan.tasks)
    assert with_deletes > 10


def test_ref_row_counts_match_the_fixture(planned: dict) -> None:
    for info, vs in planned.values():
        by_label = {v.label: v for v in vs}
        for ref, rows in info.ref_row_counts.items():
            assert live_rows(by_label[f"ref {ref}"].plan) == rows, f"{info.name} {ref}"


def test_delete_kinds_show_up_where_the_fixture_says(planned: dict) -> None:
    for info, vs in planned.values():
        main = vs[0].plan
        if "delete:dv" in info.features and info.format_version == 3:
            assert any(t.deletion_vector is not None for t in main.tasks), info.name
        if "delete:equality" in info.features:
            assert any(t.equality_deletes for t in main.tasks), info.name
        if "delete:position" in info.features and info.format_version == 2:
            assert any(t.position_deletes for t in main.tasks), info.name


# (column, its type, iceduck predicate, the same predicate in Spark SQL), for the fixture's
# usual columns
FILTERS = [
    ("id", LongType, LessThan("id", 10), "id < 10"),
    ("id", LongType, EqualTo("id", 21), "id = 21"),
    ("cat", StringType, EqualTo("cat", "a"), "cat = 'a'"),
    ("cat", StringType, IsNull("cat"), "cat IS NULL"),
    (
        "ts",
        TimestamptzType,
        GreaterThan("ts", "2023-11-16T00:00:00+00:00"),
        "ts > TIMESTAMP '2023-11-16 00:00:00'",
    ),
    ("s", StringType, EqualTo("s", "a"), "s = 'a'"),
    ("i", IntegerType, GreaterThanOrEqual("i", 0), "i >= 0"),
    ("d", DateType, LessThan("d", "1970-01-01"), "d < DATE '1970-01-01'"),
]


def test_filtered_plans_keep_every_file_with_a_matching_row(
    spark: Any, planned: dict, spark_warehouse
) -> None:
    cache = ManifestCache()
    checked = pruned = 0
    for info, _ in planned.values():
        md = load_metadata(spark_warehouse, info)
        types = {f.name: f.field_type for f in md.schema().fields}
        for column, kind, predicate, sql in FILTERS:
            if not isinstance(types.get(column), kind) or md.current_snapshot() is None:
                continue
            plan = plan_scan(md, row_filter=predicate, cache=cache)
            ours = {to_local_path(t.path) for t in plan.tasks}
            rows = spark.sql(f"SELECT DISTINCT input_file_name() FROM {info.name} WHERE {sql}").collect()
            needed = {to_local_path(r[0]) for r in rows if r[0]}
            assert needed <= ours, f"{info.name} WHERE {sql}: dropped {sorted(needed - ours)}"
            s = plan.stats
            assert (
                s.data_files_read + s.data_files_skipped_by_partition + s.data_files_skipped_by_metrics
                <= (s.data_files_total)
            )
            pruned += s.data_files_read < s.data_files_total
            checked += 1
    assert checked > 30 and pruned > 10


# -- a test oracle for deletes: pyarrow, one data file at a time ------------------------------------


def live_rows(plan: ScanPlan) -> int:
    return sum(task.record_count - len(deleted_positions(task, plan)) for task in plan.tasks)


def deleted_positions(task: FileScanTask, plan: ScanPlan) -> set[int]:
    deleted: set[int] = set()
    if task.deletion_vector is not None:
        dv = task.deletion_vector
        assert dv.content_offset is not None and dv.content_size_in_bytes is not None
        vector = read_deletion_vector(
            to_local_path(dv.path), dv.content_offset, dv.content_size_in_bytes, cardinality=dv.record_count
        )
        deleted.update(vector)
    for pos in task.position_deletes:
        table = pq.read_table(to_local_path(pos.path), columns=["file_path", "pos"]).to_pydict()
        deleted.update(p for f, p in zip(table["file_path"], table["pos"], strict=True) if f == task.path)
    if task.equality_deletes:
        data = pq.read_table(to_local_path(task.path))
        by_id = {
            int(f.metadata[FIELD_ID]): f.name for f in data.schema if f.metadata and FIELD_ID in f.metadata
        }
        columns = data.to_pydict()
        for eq in task.equality_deletes:
            keys = _equality_keys(eq.path, eq.equality_ids)
            rows = zip(
                *(columns[by_id[fid]] if fid in by_id else [None] * data.num_rows for fid in eq.equality_ids),
                strict=True,
            )
            deleted.update(i for i, row in enumerate(rows) if row in keys)
    return deleted


def _equality_keys(path: str, ids: tuple[int, ...]) -> set[tuple[Any, ...]]:
    table = pq.read_table(to_local_path(path))
    by_id = {int(f.metadata[FIELD_ID]): f.name for f in table.schema if f.metadata and FIELD_ID in f.metadata}
    columns = table.to_pydict()
    return set(zip(*(columns[by_id[fid]] for fid in ids), strict=True))
