"""Spark reads snapshots iceduck produced on a Spark-created table, and writes after them.

In namespace ``snap_test`` of the Spark session's catalog: Spark creates and fills a
partitioned table; iceduck commits an append, a merge-on-read delete (a position delete
file on v2, a deletion vector on v3) and a copy-on-write overwrite through the shared
SQLite catalog; Spark must read the same rows, and its ``snapshots``, ``entries`` and
``manifests`` metadata tables must show what iceduck wrote. Spark then appends, and its
totals must continue from iceduck's summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest

from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import DataFile, ManifestContent
from iceduck.spec.snapshot import Operation
from iceduck.txn.manifest_ops import live_data_files
from iceduck.txn.snapshot import SnapshotChanges, produce
from tests.support.spark_session import CATALOG
from tests.txn.snapshot_support import rows, write_data, write_dvs, write_position_deletes

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NAMESPACE = "snap_test"
ROW_ID = 2147483540


def _commit(
    catalog: SqliteCatalog, loaded: LoadedTable, changes: SnapshotChanges, cache: ManifestCache
) -> LoadedTable:
    pending = produce(loaded.metadata, changes, table_location=loaded.metadata.location, cache=cache)
    return catalog.commit_table(loaded, pending.metadata)


def _live(loaded: LoadedTable, cache: ManifestCache) -> dict[str, DataFile]:
    md = loaded.metadata
    head = md.current_snapshot()
    assert head is not None
    return live_data_files(cache.snapshot_manifests(head, md.format_version), cache, md.specs_by_id())


def _spark_file(live: dict[str, DataFile], partition: str) -> DataFile:
    (found,) = [f for f in live.values() if f.partition == (partition,)]
    return found


def _position_of(path: str, row_id: int) -> int:
    return pq.read_table(path, columns=["id"]).column("id").to_pylist().index(row_id)


def _spark_rows(spark: SparkSession, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_spark_reads_iceduck_snapshots(
    spark: SparkSession, spark_warehouse_path: Path, format_version: int
) -> None:
    table = f"{CATALOG}.{NAMESPACE}.t{format_version}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NAMESPACE}")
    spark.sql(f"DROP TABLE IF EXISTS {table} PURGE")
    spark.sql(
        f"CREATE TABLE {table} (id bigint, s string) USING iceberg PARTITIONED BY (s) "
        f"TBLPROPERTIES ('format-version'='{format_version}')"
    )
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'a'), (3, 'b'), (4, 'b'), (5, 'c')")
    catalog = SqliteCatalog(spark_warehouse_path)
    cache = ManifestCache()
    loaded = catalog.load_table(TableIdentifier((NAMESPACE,), f"t{format_version}"))
    spark_head = loaded.metadata.current_snapshot_id

    # 1. append
    added = write_data(loaded.metadata, [6, 7], "a")
    loaded = _commit(catalog, loaded, SnapshotChanges(Operation.APPEND, added_data_files=(added,)), cache)
    # 2. merge-on-read delete of id 3 (v2: a position delete file, v3: a DV; v1 has no deletes)
    if format_version >= 2:
        head = loaded.metadata.current_snapshot_id
        target = _spark_file(_live(loaded, cache), "b")
        pos = _position_of(target.file_path, 3)
        if format_version >= 3:
            (deletes,) = write_dvs(loaded.metadata, {"b": (target, [pos])})
        else:
            deletes = write_position_deletes(loaded.metadata, target, [pos])
        loaded = _commit(
            catalog,
            loaded,
            SnapshotChanges(
                Operation.DELETE,
                added_delete_files=(deletes,),
                validate_from_snapshot_id=head,
                validate_data_files_live=(target.file_path,),
            ),
            cache,
        )
    # 3. copy-on-write overwrite of partitions b and c (on v3, b's DV goes with its file)
    head = loaded.metadata.current_snapshot_id
    live = _live(loaded, cache)
    old_b, old_c = _spark_file(live, "b"), _spark_file(live, "c")
    kept_b = [4] if format_version >= 2 else [3, 4]
    new_b, new_c = write_data(loaded.metadata, kept_b, "b"), write_data(loaded.metadata, [50], "c")
    loaded = _commit(
        catalog,
        loaded,
        SnapshotChanges(
            Operation.OVERWRITE,
            added_data_files=(new_b, new_c),
            removed_data_files=(old_b.file_path, old_c.file_path),
            validate_from_snapshot_id=head,
            validate_no_new_deletes_for=(old_b.file_path, old_c.file_path),
        ),
        cache,
    )

    md = loaded.metadata
    expected = sorted([(1, "a"), (2, "a"), *((i, "b") for i in kept_b), (6, "a"), (7, "a"), (50, "c")])
    assert rows(md, cache) == expected
    assert _spark_rows(spark, f"SELECT id, s FROM {table}") == expected

    # snapshots: ids, parents, operations and summaries as iceduck wrote them
    snapshots = _spark_rows(
        spark, f"SELECT snapshot_id, parent_id, operation, summary FROM {table}.snapshots"
    )
    ours = sorted(
        (
            s.snapshot_id,
            s.parent_snapshot_id,
            s.operation,
            {k: v for k, v in s.summary.items() if k != "operation"},
        )
        for s in md.snapshots
    )  # Spark's summary column leaves out the operation, shown in its own column
    assert snapshots == ours
    mine = [s for s in md.snapshots if s.snapshot_id != spark_head]
    operations = ["append", "overwrite"] if format_version == 1 else ["append", "delete", "overwrite"]
    assert [s.operation for s in mine] == operations
    overwrite = mine[-1].summary
    assert overwrite["deleted-data-files"] == "2" and overwrite["total-data-files"] == "4"
    assert overwrite["total-records"] == str(len(expected))
    if format_version >= 2:
        assert mine[1].summary["added-dvs" if format_version >= 3 else "added-position-delete-files"] == "1"
        # a DV is dropped with its data file (Java's removeDanglingDeletesFor); a v2 position
        # delete file stays until compaction, as in Java
        assert overwrite.get("removed-dvs") == ("1" if format_version >= 3 else None)
        assert overwrite["total-delete-files"] == ("0" if format_version >= 3 else "1")

    # entries and manifests of the current snapshot, as Spark decodes them
    head_snapshot = md.current_snapshot()
    assert head_snapshot is not None
    manifests = cache.snapshot_manifests(head_snapshot, md.format_version)
    specs = md.specs_by_id()
    our_entries = sorted(
        (
            int(e.status),
            e.snapshot_id,
            e.sequence_number,
            e.file_sequence_number,
            e.data_file.file_path,
            int(e.data_file.content),
        )
        for m in manifests
        for e in cache.manifest(m, specs)
    )
    spark_entries = _spark_rows(
        spark,
        f"SELECT status, snapshot_id, sequence_number, file_sequence_number, data_file.file_path, "
        f"data_file.content FROM {table}.entries",
    )
    assert spark_entries == our_entries
    spark_manifests = _spark_rows(
        spark,
        f"SELECT path, content, added_snapshot_id, added_data_files_count, existing_data_files_count, "
        f"deleted_data_files_count, added_delete_files_count, existing_delete_files_count, "
        f"deleted_delete_files_count FROM {table}.manifests",
    )
    our_manifests = sorted(
        (m.manifest_path, int(m.content), m.added_snapshot_id)
        + (
            (m.added_files_count, m.existing_files_count, m.deleted_files_count, 0, 0, 0)
            if m.content is ManifestContent.DATA
            else (0, 0, 0, m.added_files_count, m.existing_files_count, m.deleted_files_count)
        )
        for m in manifests
    )
    assert spark_manifests == our_manifests

    if format_version >= 3:  # row lineage: Spark derives the same _row_id values
        ours_ids = rows(md, cache, extra_ids=(ROW_ID,))
        assert _spark_rows(spark, f"SELECT id, s, _row_id FROM {table}") == ours_ids

    # Spark writes after iceduck: its totals continue from iceduck's summary
    spark.sql(f"INSERT INTO {table} VALUES (8, 'b')")
    after = catalog.load_table(loaded.identifier).metadata
    spark_snapshot = after.current_snapshot()
    assert spark_snapshot is not None and spark_snapshot.parent_snapshot_id == md.current_snapshot_id
    assert spark_snapshot.summary["total-records"] == str(len(expected) + 1)
    assert spark_snapshot.sequence_number == md.last_sequence_number + (1 if format_version >= 2 else 0)
    assert rows(after, cache) == sorted([*expected, (8, "b")])
    catalog.close()
    spark.sql(f"DROP TABLE {table} PURGE")  # leave the session's catalog as other tests expect it
