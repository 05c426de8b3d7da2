"""iceduck merges manifests as Spark (Iceberg Java 1.10's MergeAppend) does.

In namespace ``merge_test`` of the Spark session's catalog, Spark creates two identical
tables with ``commit.manifest.min-count-to-merge`` lowered to 5 (so merges happen every few
commits, keeping the test short); Spark runs single-row INSERTs into one, iceduck the same
INSERTs into the other. After each of the last commits the two tables must have the same
manifest layout: Spark's ``manifests`` metadata table (count, added/existing/deleted files
per manifest, in manifest-list order) and the manifest-list rows iceduck reads (row counts,
sequence numbers, and on v3 the first row ids). Spark must read iceduck's table as its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.scan.manifest_cache import ManifestCache
from tests.support.spark_session import CATALOG

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NAMESPACE = "merge_test"
PROPS = "'commit.manifest.min-count-to-merge'='5'"
#: commits after which the layouts are compared (the last ones; all of them would be slow)
COMPARE_LAST = 12


def _drop_namespace(spark: SparkSession) -> None:
    """Iceberg's JDBC catalog refuses ``DROP NAMESPACE ... CASCADE``: tables go first."""
    if not spark.sql(f"SHOW NAMESPACES IN {CATALOG} LIKE '{NAMESPACE}'").collect():
        return
    for row in spark.sql(f"SHOW TABLES IN {CATALOG}.{NAMESPACE}").collect():
        spark.sql(f"DROP TABLE {CATALOG}.{NAMESPACE}.{row.tableName} PURGE")
    spark.sql(f"DROP NAMESPACE {CATALOG}.{NAMESPACE}")


@pytest.fixture
def namespace(spark: SparkSession) -> Iterator[str]:
    _drop_namespace(spark)
    spark.sql(f"CREATE NAMESPACE {CATALOG}.{NAMESPACE}")
    yield NAMESPACE
    _drop_namespace(spark)


def _spark_manifests(spark: SparkSession, table: str) -> list[tuple[Any, ...]]:
    sql = (
        "SELECT content, partition_spec_id, added_data_files_count, existing_data_files_count, "
        f"deleted_data_files_count FROM {CATALOG}.{NAMESPACE}.{table}.manifests"
    )
    return [tuple(r) for r in spark.sql(sql).collect()]


def _list_rows(catalog: SqliteCatalog, table: str) -> list[tuple[Any, ...]]:
    md = catalog.load_table(TableIdentifier((NAMESPACE,), table)).metadata
    head = md.current_snapshot()
    assert head is not None
    return [
        (
            m.content,
            m.sequence_number,
            m.min_sequence_number,
            m.added_files_count,
            m.existing_files_count,
            m.deleted_files_count,
            m.added_rows_count,
            m.existing_rows_count,
            m.first_row_id,
        )
        for m in ManifestCache().snapshot_manifests(head, md.format_version)
    ]


def _summary(catalog: SqliteCatalog, table: str) -> dict[str, str]:
    md = catalog.load_table(TableIdentifier((NAMESPACE,), table)).metadata
    head = md.current_snapshot()
    assert head is not None
    return dict(head.summary)


@pytest.mark.parametrize(("format_version", "inserts"), [(2, 105), (3, 20)])
def test_iceduck_merges_manifests_like_spark(
    spark: SparkSession, spark_warehouse_path: Path, namespace: str, format_version: int, inserts: int
) -> None:
    for name in ("by_spark", "by_iceduck"):
        spark.sql(
            f"CREATE TABLE {CATALOG}.{namespace}.{name} (id bigint, s string) USING iceberg "
            f"TBLPROPERTIES ('format-version'='{format_version}', {PROPS})"
        )
    catalog = SqliteCatalog(spark_warehouse_path)
    with iceduck.connect(spark_warehouse_path) as con:
        for i in range(inserts):
            spark.sql(f"INSERT INTO {CATALOG}.{namespace}.by_spark VALUES ({i}, 'v{i}')")
            con.execute(f"INSERT INTO {namespace}.by_iceduck VALUES ({i}, 'v{i}')")
            if i < inserts - COMPARE_LAST:
                continue
            when = f"after insert {i + 1}"
            assert _spark_manifests(spark, "by_iceduck") == _spark_manifests(spark, "by_spark"), when
            assert _list_rows(catalog, "by_iceduck") == _list_rows(catalog, "by_spark"), when
    assert len(_spark_manifests(spark, "by_spark")) < 5  # merging happened at all

    expected = sorted((i, f"v{i}") for i in range(inserts))
    got = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {CATALOG}.{namespace}.by_iceduck").collect())
    assert got == expected
    entries = f"SELECT status, count(*) FROM {CATALOG}.{namespace}.%s.entries GROUP BY status ORDER BY status"
    assert [tuple(r) for r in spark.sql(entries % "by_iceduck").collect()] == [
        tuple(r) for r in spark.sql(entries % "by_spark").collect()
    ]
    # Iceberg 1.10 writes no manifest counters into append summaries; neither does iceduck
    for table in ("by_spark", "by_iceduck"):
        summary = _summary(catalog, table)
        assert not {"manifests-created", "manifests-kept", "manifests-replaced"} & summary.keys()
    if format_version >= 3:
        ours_md = catalog.load_table(TableIdentifier((NAMESPACE,), "by_iceduck")).metadata
        theirs_md = catalog.load_table(TableIdentifier((NAMESPACE,), "by_spark")).metadata
        assert ours_md.next_row_id == theirs_md.next_row_id
