"""Snapshot management across engines: Spark 3.5 + Iceberg 1.10 runs rollback, cherry-pick
and publish on iceduck-written tables, iceduck runs them on Spark-written tables, and Spark
reads iceduck's write-audit-publish stages. After every step both engines read the same
rows, and the snapshot either engine made is the one the other sees as current.

Tables live in namespace ``proc_snap`` of the fixture warehouse (dropped first), which
Spark sees through its ``iceduck`` JDBC catalog (table caching off).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.ops.procedures.registry import find
from iceduck.spec.table_metadata import TableMetadata
from tests.ops.harness import Iceduck
from tests.support.namespaces import drop_namespace_with_tables
from tests.support.scenario_rows import assert_same, iceduck_rows, spark_rows

pytestmark = pytest.mark.spark

NS = "proc_snap"
MOR = ", ".join(f"'write.{op}.mode'='merge-on-read'" for op in ("delete", "update", "merge"))


@pytest.fixture(scope="module")
def ice(spark: Any, spark_warehouse: Any) -> Iterator[Iceduck]:
    engine = Iceduck(spark_warehouse.path)
    drop_namespace_with_tables(engine.con.session.catalog, NS)
    engine.execute(f"CREATE NAMESPACE {NS}")
    yield engine
    engine.close()


def metadata(ice: Iceduck, table: str) -> TableMetadata:
    return ice.con.session.catalog.load_table(TableIdentifier((NS,), table)).metadata


def current(ice: Iceduck, table: str) -> int:
    snapshot_id = metadata(ice, table).current_snapshot_id
    assert snapshot_id is not None
    return snapshot_id


def same_rows(spark: Any, ice: Iceduck, table: str, at: str = "") -> list[tuple[Any, ...]]:
    """Both engines' rows of ``table`` (``at``: a time-travel clause), asserted equal."""
    query = f"SELECT id, cat FROM {NS}.{table} {at}"
    assert_same(
        query,
        iceduck_rows(ice.con, query),
        spark_rows(spark, f"SELECT id, cat FROM iceduck.{NS}.{table} {at}"),
    )
    return sorted(ice.fetch(query))


#: the result columns of each procedure, as Spark names them (checked on every Spark call)
COLUMNS = {
    "rollback_to_snapshot": ["previous_snapshot_id", "current_snapshot_id"],
    "set_current_snapshot": ["previous_snapshot_id", "current_snapshot_id"],
    "cherrypick_snapshot": ["source_snapshot_id", "current_snapshot_id"],
    "publish_changes": ["source_snapshot_id", "current_snapshot_id"],
    "fast_forward": ["branch_updated", "previous_ref", "updated_ref"],
    "ancestors_of": ["snapshot_id", "timestamp"],
}


def spark_call(spark: Any, call: str) -> list[tuple[Any, ...]]:
    """Spark's rows of ``CALL iceduck.system.<call>``, its columns checked against iceduck's."""
    df = spark.sql(f"CALL iceduck.system.{call}")
    procedure = call.split("(", 1)[0]
    assert df.columns == COLUMNS[procedure]
    assert [f.name for f in find(procedure).output] == df.columns
    return [tuple(r) for r in df.collect()]


def create(ice: Iceduck, table: str, version: int, props: str = "") -> None:
    extra = f", {props}" if props else ""
    ice.execute(
        f"CREATE TABLE {NS}.{table} (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (cat) "
        f"TBLPROPERTIES ('format-version'='{version}', {MOR}{extra})"
    )


@pytest.mark.parametrize("version", [2, 3])
def test_spark_rolls_back_and_cherry_picks_an_iceduck_table(spark: Any, ice: Iceduck, version: int) -> None:
    table = f"ice_v{version}"
    create(ice, table, version)
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (1, 'a'), (2, 'a'), (3, 'b')")
    s1 = current(ice, table)
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (4, 'a'), (5, 'b')")
    s2 = current(ice, table)
    ice.execute(f"DELETE FROM {NS}.{table} WHERE id IN (2, 5)")  # position deletes / DVs
    s3 = current(ice, table)
    same_rows(spark, ice, table)

    assert spark_call(spark, f"rollback_to_snapshot('{NS}.{table}', {s1})") == [(s3, s1)]
    assert current(ice, table) == s1
    assert same_rows(spark, ice, table) == [(1, "a"), (2, "a"), (3, "b")]

    ice.execute(f"INSERT INTO {NS}.{table} VALUES (6, 'c')")  # a new lineage from s1
    head = current(ice, table)
    [(source, picked)] = spark_call(spark, f"cherrypick_snapshot('{NS}.{table}', {s2})")
    assert source == s2 and picked == current(ice, table) != s2
    summary = metadata(ice, table).snapshot_by_id(picked).summary
    assert (
        summary["source-snapshot-id"] == str(s2)
        and metadata(ice, table).snapshot_by_id(picked).parent_snapshot_id == head
    )
    assert same_rows(spark, ice, table) == [(1, "a"), (2, "a"), (3, "b"), (4, "a"), (5, "b"), (6, "c")]
    # iceduck refuses the second pick as Spark does
    with pytest.raises(Exception, match="already picked"):
        ice.execute(f"CALL system.cherrypick_snapshot('{NS}.{table}', {s2})")
    with pytest.raises(Exception, match="already picked"):
        spark.sql(f"CALL iceduck.system.cherrypick_snapshot('{NS}.{table}', {s2})").collect()

    assert spark_call(spark, f"set_current_snapshot('{NS}.{table}', {s3})") == [(picked, s3)]
    assert same_rows(spark, ice, table) == [(1, "a"), (3, "b"), (4, "a")]


@pytest.mark.parametrize("version", [2, 3])
def test_iceduck_rolls_back_and_cherry_picks_a_spark_table(spark: Any, ice: Iceduck, version: int) -> None:
    table = f"spark_v{version}"
    name = f"iceduck.{NS}.{table}"
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (cat) "
        f"TBLPROPERTIES ('format-version'='{version}', {MOR})"
    )
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'a'), (3, 'b')")
    s1 = current(ice, table)
    spark.sql(f"INSERT INTO {name} VALUES (4, 'a'), (5, 'b')")
    s2 = current(ice, table)
    spark.sql(f"DELETE FROM {name} WHERE id IN (2, 5)")
    s3 = current(ice, table)
    expected_s3 = same_rows(spark, ice, table)

    assert ice.fetch(f"CALL system.rollback_to_snapshot('{NS}.{table}', {s1})") == [(s3, s1)]
    assert same_rows(spark, ice, table) == [(1, "a"), (2, "a"), (3, "b")]
    spark.sql(f"INSERT INTO {name} VALUES (6, 'c')")
    [(source, picked)] = ice.fetch(f"CALL system.cherrypick_snapshot('{NS}.{table}', {s2})")
    assert source == s2 and picked == current(ice, table)
    assert same_rows(spark, ice, table) == [(1, "a"), (2, "a"), (3, "b"), (4, "a"), (5, "b"), (6, "c")]
    # Spark sees iceduck's pick as the current snapshot, and its lineage
    ancestors = [r[0] for r in spark_call(spark, f"ancestors_of('{NS}.{table}')")]
    assert ancestors[0] == picked and s1 in ancestors and s2 not in ancestors
    assert ice.fetch(f"CALL system.set_current_snapshot('{NS}.{table}', {s3})") == [(picked, s3)]
    assert same_rows(spark, ice, table) == expected_s3


@pytest.mark.parametrize("version", [2, 3])
def test_write_audit_publish_across_engines(spark: Any, ice: Iceduck, version: int) -> None:
    table = f"wap_v{version}"
    create(ice, table, version, "'write.wap.enabled'='true'")
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (1, 'a'), (2, 'b')")
    main = current(ice, table)

    # iceduck stages; Spark audits the staged snapshot and publishes it
    ice.execute("SET iceduck.wap_id = 'ice-1'")
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (3, 'a')")
    ice.execute("RESET iceduck.wap_id")
    [staged] = [s.snapshot_id for s in metadata(ice, table).snapshots if s.summary.get("wap.id") == "ice-1"]
    assert same_rows(spark, ice, table) == [(1, "a"), (2, "b")]
    assert same_rows(spark, ice, table, f"VERSION AS OF {staged}") == [(1, "a"), (2, "b"), (3, "a")]
    assert spark_call(spark, f"publish_changes('{NS}.{table}', 'ice-1')") == [(staged, staged)]
    assert current(ice, table) == staged != main
    assert same_rows(spark, ice, table) == [(1, "a"), (2, "b"), (3, "a")]

    # Spark stages (spark.wap.id); iceduck publishes it over a newer commit of its own
    spark.conf.set("spark.wap.id", "spark-1")
    try:
        spark.sql(f"INSERT INTO iceduck.{NS}.{table} VALUES (4, 'b')")
    finally:
        spark.conf.unset("spark.wap.id")
    assert current(ice, table) == staged  # Spark did not move main
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (5, 'c')")
    spark_staged = next(
        s.snapshot_id for s in metadata(ice, table).snapshots if s.summary.get("wap.id") == "spark-1"
    )
    [(source, published)] = ice.fetch(f"CALL system.publish_changes('{NS}.{table}', 'spark-1')")
    assert source == spark_staged != published == current(ice, table)
    assert metadata(ice, table).snapshot_by_id(published).summary["published-wap-id"] == "spark-1"
    assert same_rows(spark, ice, table) == [(1, "a"), (2, "b"), (3, "a"), (4, "b"), (5, "c")]
    with pytest.raises(Exception, match="published already"):
        spark.sql(f"CALL iceduck.system.publish_changes('{NS}.{table}', 'spark-1')").collect()

    # a WAP branch written by iceduck, fast-forwarded by Spark
    ice.execute("SET iceduck.wap_branch = 'audit'")
    ice.execute(f"DELETE FROM {NS}.{table} WHERE id = 1")
    # with the WAP branch set, both engines read the branch (Spark's SparkReadConf.branch)
    spark.conf.set("spark.wap.branch", "audit")
    try:
        assert same_rows(spark, ice, table) == [(2, "b"), (3, "a"), (4, "b"), (5, "c")]
    finally:
        spark.conf.unset("spark.wap.branch")
    ice.execute("RESET iceduck.wap_branch")
    audit = metadata(ice, table).refs["audit"].snapshot_id
    assert same_rows(spark, ice, table, "VERSION AS OF 'audit'") == [(2, "b"), (3, "a"), (4, "b"), (5, "c")]
    assert spark_call(spark, f"fast_forward('{NS}.{table}', 'main', 'audit')") == [("main", published, audit)]
    assert same_rows(spark, ice, table) == [(2, "b"), (3, "a"), (4, "b"), (5, "c")]


def test_iceduck_publishes_a_spark_staged_dynamic_overwrite(spark: Any, ice: Iceduck) -> None:
    """Spark's dynamic INSERT OVERWRITE stages an ``overwrite`` with ``replace-partitions``;
    iceduck publishes it over a newer commit in another partition, and refuses to once a
    commit touched a partition it replaces (Java's CherryPickOperation)."""
    table = "dyn"
    create(ice, table, 2, "'write.wap.enabled'='true'")
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (1, 'a'), (2, 'a'), (3, 'b')")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        for wap_id, rows in (("ow-1", "(10, 'a')"), ("ow-2", "(20, 'b')")):
            spark.conf.set("spark.wap.id", wap_id)
            spark.sql(f"INSERT OVERWRITE iceduck.{NS}.{table} VALUES {rows}")
    finally:
        spark.conf.unset("spark.wap.id")
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    staged = {s.summary.get("wap.id"): s for s in metadata(ice, table).snapshots if "wap.id" in s.summary}
    assert staged["ow-1"].summary.get("replace-partitions") == "true"
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (4, 'c')")  # another partition: no conflict
    [(source, new)] = ice.fetch(f"CALL system.publish_changes('{NS}.{table}', 'ow-1')")
    assert source == staged["ow-1"].snapshot_id != new
    assert metadata(ice, table).snapshot_by_id(new).operation == "overwrite"
    assert same_rows(spark, ice, table) == [(3, "b"), (4, "c"), (10, "a")]
    ice.execute(f"INSERT INTO {NS}.{table} VALUES (5, 'b')")  # touches the partition ow-2 replaces
    with pytest.raises(Exception, match="Cannot cherry-pick replace partitions with changed partition"):
        ice.execute(f"CALL system.publish_changes('{NS}.{table}', 'ow-2')")
    assert same_rows(spark, ice, table) == [(3, "b"), (4, "c"), (5, "b"), (10, "a")]
