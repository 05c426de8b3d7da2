"""iceduck's DDL against Spark 3.5 + Iceberg 1.10 on the shared JDBC catalog.

Each test runs the same DDL in Spark (on a twin table) and in iceduck, then compares the
metadata both wrote (field ids, specs, orders, properties, refs), and checks that Spark
reads, describes and writes the iceduck table. Tables live in namespace ``ops_ddl`` of
the fixture warehouse (dropped first), so Spark sees them through its ``iceduck`` catalog.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import ValidationError
from iceduck.session.session import Session
from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import (
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)
from iceduck.sql import statements as st
from tests.ops.ddl_support import col, name, rows, run

NS = "ops_ddl"
SPARK_DDL = (
    "(id bigint NOT NULL COMMENT 'key', s struct<x:bigint, y:string>, l array<struct<p:bigint>>, "
    "m map<string,bigint>, ts timestamp) USING iceberg PARTITIONED BY (bucket(16, id), days(ts)) "
    "COMMENT 'twin' TBLPROPERTIES ('format-version'='2', 'k'='v')"
)
ICEDUCK_COLUMNS = (
    col("id", LongType(), True, "key"),
    col("s", StructType((NestedField(1, "x", LongType()), NestedField(2, "y", StringType())))),
    col("l", ListType(3, StructType((NestedField(4, "p", LongType()),)))),
    col("m", MapType(5, StringType(), 6, LongType())),
    col("ts", TimestamptzType()),
)
ICEDUCK_PARTITIONING = (
    st.PartitionTerm(parse_transform("bucket[16]"), ("id",)),
    st.PartitionTerm(parse_transform("day"), ("ts",)),
)


@pytest.fixture(scope="module")
def session(spark: Any, spark_warehouse_path: Path) -> Iterator[Session]:
    s = Session(spark_warehouse_path, "iceduck")
    if s.catalog.namespace_exists((NS,)):
        for table in s.catalog.list_tables((NS,)):
            s.catalog.drop_table(table, purge=True)
        run(s, st.DropNamespace((NS,)))
    run(s, st.CreateNamespace((NS,)))
    yield s
    s.close()


def meta(session: Session, table: str) -> TableMetadata:
    return session.catalog.load_table(TableIdentifier((NS,), table)).metadata


def spark_rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(sql).collect()]


def create_pair(spark: Any, session: Session, twin: str, table: str) -> None:
    spark.sql(f"CREATE TABLE iceduck.{NS}.{twin} {SPARK_DDL}")
    run(
        session,
        st.CreateTable(
            name(f"{NS}.{table}"),
            columns=ICEDUCK_COLUMNS,
            partition_by=ICEDUCK_PARTITIONING,
            properties={"format-version": "2", "k": "v"},
            comment="twin",
        ),
    )


def same_layout(a: TableMetadata, b: TableMetadata) -> None:
    assert a.schema().fields == b.schema().fields
    assert a.schema().identifier_field_ids == b.schema().identifier_field_ids
    assert a.partition_specs == b.partition_specs and a.default_spec_id == b.default_spec_id
    assert a.last_partition_id == b.last_partition_id and a.last_column_id == b.last_column_id
    assert a.sort_orders == b.sort_orders and a.default_sort_order_id == b.default_sort_order_id
    assert a.format_version == b.format_version
    spark_props = {k: v for k, v in b.properties.items() if k != "owner"}  # Spark adds its user
    assert a.properties == spark_props


def test_create_table_matches_spark(spark: Any, session: Session) -> None:
    create_pair(spark, session, "twin_create", "created")
    same_layout(meta(session, "created"), meta(session, "twin_create"))
    described = {r[0]: r[1] for r in spark_rows(spark, f"DESCRIBE TABLE EXTENDED iceduck.{NS}.created")}
    assert described["Part 0"] == "bucket(16, id)" and described["Part 1"] == "days(ts)"
    assert described["Comment"] == "twin"
    props = dict(spark_rows(spark, f"SHOW TBLPROPERTIES iceduck.{NS}.created"))
    assert props["k"] == "v" and props["format-version"] == "2"
    assert props["write.parquet.compression-codec"] == "zstd"
    # Spark writes into the iceduck table, iceduck reads it
    spark.sql(
        f"INSERT INTO iceduck.{NS}.created (id, s, l, m, ts) VALUES "
        "(1, named_struct('x', 2, 'y', 'a'), array(named_struct('p', 3)), map('k', 4), "
        "timestamp'2024-01-02 03:04:05')"
    )
    assert rows(session, f"SELECT id, s.y, l[1].p, m['k'] FROM {NS}.created") == [(1, "a", 3, 4)]
    assert (
        spark_rows(spark, f"SELECT partition.id_bucket, record_count FROM iceduck.{NS}.created.partitions")[
            0
        ][1]
        == 1
    )


def test_ctas_and_rtas_read_by_spark(spark: Any, session: Session) -> None:
    run(
        session,
        st.CreateTable(
            name(f"{NS}.ctas"),
            as_query="SELECT i::BIGINT AS id, 'v' || (i % 3) AS cat FROM range(30) r(i)",
            partition_by=(st.PartitionTerm(parse_transform("identity"), ("cat",)),),
            properties={"format-version": "3"},
        ),
    )
    assert spark_rows(spark, f"SELECT count(*), sum(id) FROM iceduck.{NS}.ctas") == [(30, 435)]
    parts = spark_rows(
        spark, f"SELECT partition.cat, record_count FROM iceduck.{NS}.ctas.partitions ORDER BY 1"
    )
    assert parts == [("v0", 10), ("v1", 10), ("v2", 10)]
    spark.sql(f"INSERT INTO iceduck.{NS}.ctas VALUES (100, 'v9')")
    assert rows(session, f"SELECT count(*) FROM {NS}.ctas WHERE cat = 'v9'") == [(1,)]
    run(
        session,
        st.CreateTable(
            name(f"{NS}.ctas"), as_query=f"SELECT id, cat FROM {NS}.ctas WHERE id < 5", replace=True
        ),
    )
    assert spark_rows(spark, f"SELECT count(*) FROM iceduck.{NS}.ctas") == [(5,)]
    history = spark_rows(
        spark, f"SELECT operation, parent_id FROM iceduck.{NS}.ctas.snapshots ORDER BY committed_at"
    )
    assert [h[0] for h in history] == ["append", "append", "overwrite"] and history[-1][1] is None


def test_alter_matches_spark(spark: Any, session: Session) -> None:
    create_pair(spark, session, "twin_alter", "altered")
    t, twin = f"{NS}.altered", f"iceduck.{NS}.twin_alter"
    steps: list[tuple[str, tuple[st.AlterAction, ...]]] = [
        (
            "ADD COLUMN n struct<a:bigint, b:string> AFTER id",
            (
                st.AddColumn(
                    ("n",),
                    col(
                        "n", StructType((NestedField(1, "a", LongType()), NestedField(2, "b", StringType())))
                    ),
                    st.ColumnPosition(st.Position.AFTER, "id"),
                ),
            ),
        ),
        ("RENAME COLUMN m TO mm", (st.RenameColumn(("m",), "mm"),)),
        (
            "ADD PARTITION FIELD truncate(4, s.y)",
            (st.AddPartitionField(st.PartitionTerm(parse_transform("truncate[4]"), ("s", "y"))),),
        ),
        (
            "DROP PARTITION FIELD days(ts)",
            (st.DropPartitionField(st.PartitionTerm(parse_transform("day"), ("ts",))),),
        ),
        (
            "WRITE ORDERED BY id DESC NULLS LAST, ts",
            (
                st.WriteOrder(
                    (
                        st.SortTerm(
                            parse_transform("identity"), ("id",), SortDirection.DESC, NullOrder.NULLS_LAST
                        ),
                        st.SortTerm(parse_transform("identity"), ("ts",)),
                    )
                ),
            ),
        ),
        ("SET IDENTIFIER FIELDS id", (st.SetIdentifierFields((("id",),)),)),
        (
            "SET TBLPROPERTIES ('format-version'='3', 'p'='q')",
            (st.SetProperties({"format-version": "3", "p": "q"}),),
        ),
        ("UNSET TBLPROPERTIES ('k')", (st.UnsetProperties(("k",)),)),
    ]
    for spark_action, actions in steps:
        spark.sql(f"ALTER TABLE {twin} {spark_action}")
        run(session, st.AlterTable(name(t), actions))
        same_layout(meta(session, "altered"), meta(session, "twin_alter"))
    described = spark_rows(spark, f"DESCRIBE TABLE iceduck.{t}")
    assert [r[0] for r in described[:6]] == ["id", "n", "s", "l", "mm", "ts"]
    spark.sql(f"INSERT INTO iceduck.{t} (id, n, s, l, mm, ts) VALUES (7, null, null, null, null, null)")
    assert rows(session, f"SELECT id FROM {t}") == [(7,)]


def test_refs_match_spark(spark: Any, session: Session) -> None:
    run(session, st.CreateTable(name(f"{NS}.reffed"), as_query="SELECT 1::BIGINT AS id"))
    t = name(f"{NS}.reffed")
    run(
        session,
        st.CreateRef(t, st.RefKind.BRANCH, "b", max_ref_age_ms=2 * 86_400_000, min_snapshots_to_keep=3),
    )
    run(session, st.CreateRef(t, st.RefKind.TAG, "v1", max_ref_age_ms=86_400_000))
    head = meta(session, "reffed").current_snapshot_id
    got = spark_rows(spark, f"SELECT * FROM iceduck.{NS}.reffed.refs ORDER BY name")
    assert got == [
        ("b", "BRANCH", head, 2 * 86_400_000, 3, None),
        ("main", "BRANCH", head, None, None, None),
        ("v1", "TAG", head, 86_400_000, None, None),
    ]
    spark.sql(f"INSERT INTO iceduck.{NS}.reffed.branch_b VALUES (2)")
    assert rows(session, f"SELECT id FROM {NS}.reffed.branch_b ORDER BY id") == [(1,), (2,)]
    run(session, st.DropRef(t, st.RefKind.TAG, "v1"))
    assert [r[0] for r in spark_rows(spark, f"SELECT name FROM iceduck.{NS}.reffed.refs ORDER BY name")] == [
        "b",
        "main",
    ]
    # a branch of an empty table: an empty snapshot, as Spark makes one
    run(session, st.CreateTable(name(f"{NS}.empty"), columns=(col("id", LongType()),)))
    run(session, st.CreateRef(name(f"{NS}.empty"), st.RefKind.BRANCH, "b"))
    spark.sql(f"INSERT INTO iceduck.{NS}.empty.branch_b VALUES (5)")
    assert rows(session, f"SELECT id FROM {NS}.empty.branch_b") == [(5,)]
    assert rows(session, f"SELECT count(*) FROM {NS}.empty") == [(0,)]


def test_rename_and_drop_seen_by_spark(spark: Any, session: Session) -> None:
    run(session, st.CreateTable(name(f"{NS}.to_rename"), as_query="SELECT 1 AS a"))
    run(session, st.RenameTable(name(f"{NS}.to_rename"), ("renamed",)))
    assert spark_rows(spark, f"SELECT a FROM iceduck.{NS}.renamed") == [(1,)]
    run(session, st.DropTable(name(f"{NS}.renamed"), purge=True))
    names = [r[1] for r in spark_rows(spark, f"SHOW TABLES IN iceduck.{NS}")]
    assert "renamed" not in names and "to_rename" not in names


def test_create_or_replace_matches_spark(spark: Any, session: Session) -> None:
    first = "(a int, c string) USING iceberg PARTITIONED BY (c) TBLPROPERTIES ('format-version'='2', 'k'='v')"
    second = "(b string, a int) USING iceberg PARTITIONED BY (bucket(4, a)) TBLPROPERTIES ('z'='1')"
    spark.sql(f"CREATE TABLE iceduck.{NS}.twin_replace {first}")
    spark.sql(f"INSERT INTO iceduck.{NS}.twin_replace VALUES (1, 'x')")
    spark.sql(f"CREATE OR REPLACE TABLE iceduck.{NS}.twin_replace {second}")
    t = name(f"{NS}.replaced")
    identity, bucket = parse_transform("identity"), parse_transform("bucket[4]")
    run(
        session,
        st.CreateTable(
            t,
            columns=(col("a", IntegerType()), col("c", StringType())),
            partition_by=(st.PartitionTerm(identity, ("c",)),),
            properties={"format-version": "2", "k": "v"},
        ),
    )
    run(session, st.Insert(t, "SELECT 1, 'x'"))
    run(
        session,
        st.CreateTable(
            t,
            columns=(col("b", StringType()), col("a", IntegerType())),
            partition_by=(st.PartitionTerm(bucket, ("a",)),),
            properties={"z": "1"},
            or_replace=True,
        ),
    )
    ours, theirs = meta(session, "replaced"), meta(session, "twin_replace")
    same_layout(ours, theirs)
    assert [s.fields for s in ours.schemas] == [s.fields for s in theirs.schemas]
    assert ours.current_snapshot_id is None and theirs.current_snapshot_id is None
    assert len(ours.snapshots) == len(theirs.snapshots) == 1
    assert spark_rows(spark, f"SELECT count(*) FROM iceduck.{NS}.replaced") == [(0,)]


def test_v1_table_and_upgrades_read_by_spark(spark: Any, session: Session) -> None:
    t = name(f"{NS}.v1")
    run(
        session,
        st.CreateTable(
            t,
            as_query="SELECT i::BIGINT AS id, (i % 2)::INT AS c FROM range(6) r(i)",
            partition_by=(st.PartitionTerm(parse_transform("identity"), ("c",)),),
            properties={"format-version": "1"},
        ),
    )
    assert spark_rows(spark, f"SELECT c, count(*) FROM iceduck.{NS}.v1 GROUP BY c ORDER BY c") == [
        (0, 3),
        (1, 3),
    ]
    run(session, st.AlterTable(t, (st.SetProperties({"format-version": "2"}),)))
    spark.sql(f"INSERT INTO iceduck.{NS}.v1 VALUES (10, 0)")
    run(session, st.AlterTable(t, (st.SetProperties({"format-version": "3"}),)))
    spark.sql(f"INSERT INTO iceduck.{NS}.v1 VALUES (11, 1)")
    props = dict(spark_rows(spark, f"SHOW TBLPROPERTIES iceduck.{NS}.v1"))
    assert props["format-version"] == "3"
    assert rows(session, f"SELECT count(*), sum(id) FROM {NS}.v1") == [(8, 36)]
    assert spark_rows(spark, f"SELECT count(*) FROM iceduck.{NS}.v1.partitions") == [(2,)]


#: property values Java refuses when they are set, and the start of Spark's message
JAVA_REFUSES = [
    ("'commit.retry.num-retries'='-1'", "Table property commit.retry.num-retries must have non negative"),
    ("'commit.retry.min-wait-ms'='soon'", "Table property commit.retry.min-wait-ms must have integer value"),
    ("'write.metadata.metrics.column.nope'='full'", "Invalid metrics config, could not find column nope"),
]
#: values Java stores and fails on (or silently misreads) only later; iceduck refuses them
#: when they are set, so a table never holds a value that breaks its writes
ICEDUCK_STRICTER = [
    "'write.target-file-size-bytes'='-5'",
    "'write.parquet.row-group-size-bytes'='0'",
    "'write.delete.mode'='merge_on_read'",
    "'commit.manifest-merge.enabled'='yes'",
]


@pytest.mark.parametrize(("value", "spark_says"), JAVA_REFUSES)
def test_properties_java_refuses_are_refused(
    spark: Any, session: Session, value: str, spark_says: str
) -> None:
    table = f"props_refused_{JAVA_REFUSES.index((value, spark_says))}"
    with pytest.raises(Exception, match=spark_says):
        spark.sql(f"CREATE TABLE iceduck.{NS}.{table} (a int) USING iceberg TBLPROPERTIES ({value})")
    with pytest.raises(ValidationError, match="table property"):
        session.execute(f"CREATE TABLE {NS}.{table} (a int) USING iceberg TBLPROPERTIES ({value})")
    assert not session.catalog.table_exists(TableIdentifier((NS,), table))
    if "metrics" in value:  # Java's UpdateProperties checks the columns too
        session.execute(f"CREATE TABLE {NS}.{table} (a int) USING iceberg")
        with pytest.raises(Exception, match=spark_says):
            spark.sql(f"ALTER TABLE iceduck.{NS}.{table} SET TBLPROPERTIES ({value})")
        with pytest.raises(ValidationError, match="names column 'nope'"):
            session.execute(f"ALTER TABLE {NS}.{table} SET TBLPROPERTIES ({value})")


@pytest.mark.parametrize("value", ICEDUCK_STRICTER)
def test_properties_iceduck_refuses_before_java(spark: Any, session: Session, value: str) -> None:
    table = f"props_stricter_{ICEDUCK_STRICTER.index(value)}"
    spark.sql(f"CREATE TABLE iceduck.{NS}.{table} (a int) USING iceberg TBLPROPERTIES ({value})")
    with pytest.raises(ValidationError, match="table property"):
        session.execute(f"CREATE TABLE {NS}.{table}_ice (a int) USING iceberg TBLPROPERTIES ({value})")
    # the table Spark created with it stays readable by iceduck (Spark's own INSERT fails on
    # some: "Row group size must be > 0")
    assert rows(session, f"SELECT count(*) FROM {NS}.{table}") == [(0,)]
