"""Schema, partition and sort evolution replayed against Spark 3.5 / Iceberg 1.10.

Each statement runs in Spark on a real table; iceduck parses the same statement,
translates it into change requests (iceduck.ops.alter_requests) and applies them with
iceduck.txn.{schema,spec,sort}_update to the metadata Spark had *before* it. Both must
refuse, or both must produce the same schema (ids, names, types, order, identifier
fields), last-column-id, default spec (spec id, field ids, names, transforms) and sort
order (id, fields) -- what Spark committed next is the reference.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.errors import IceduckError
from iceduck.formats.metadata_json import table_metadata_from_json
from iceduck.formats.schema_json import partition_spec_to_json, schema_to_json, sort_order_to_json
from iceduck.ops.alter_requests import (
    SPEC_ACTIONS,
    distribution_mode,
    evolve_schema,
    partition_terms,
    sort_terms,
    spec_changes,
)
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.properties import WRITE_DISTRIBUTION_MODE
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortOrder
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import NestedField, StructType
from iceduck.sql.ddl import parse_write
from iceduck.sql.statements import AlterTable, CreateTable, WriteOrder
from iceduck.txn.schema_tree import assign_fresh_ids
from iceduck.txn.sort_update import sort_order_from_terms
from iceduck.txn.spec_update import apply_spec_changes, spec_from_terms
from tests.support.spark_session import CATALOG_DB

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "iceduck.evo_test"


@dataclass
class Catalog:
    spark: SparkSession
    db: Path

    def sql(self, text: str) -> object:
        return self.spark.sql(text)

    def metadata(self, table: str) -> TableMetadata:
        """The table's current metadata, located through the JDBC catalog's row (cheaper
        than a Spark query per statement)."""
        with sqlite3.connect(self.db) as con:
            row = con.execute(
                "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?",
                ("evo_test", table),
            ).fetchone()
        assert row is not None, table
        path = row[0].removeprefix("file:")
        with open(path, encoding="utf-8") as f:
            return table_metadata_from_json(json.load(f), path)


@pytest.fixture(scope="module")
def evo(spark: SparkSession, spark_warehouse_path: Path) -> Catalog:
    """Spark with an empty ``evo_test`` namespace (the JDBC catalog cannot drop a
    non-empty namespace, so its tables go first)."""
    if spark.sql("SHOW NAMESPACES IN iceduck LIKE 'evo_test'").count():
        for row in spark.sql(f"SHOW TABLES IN {NS}").collect():
            spark.sql(f"DROP TABLE {NS}.{row.tableName} PURGE")
        spark.sql(f"DROP NAMESPACE {NS}")
    spark.sql(f"CREATE NAMESPACE {NS}")
    return Catalog(spark, spark_warehouse_path / CATALOG_DB)


@dataclass
class Evolved:
    schema: Schema
    last_column_id: int
    spec: PartitionSpec
    order: SortOrder
    distribution: str | None


def evolve(md: TableMetadata, sql: str) -> Evolved:
    """iceduck's result of ``ALTER TABLE t <sql>`` on ``md`` (ids chosen as the builder does)."""
    stmt = parse_write(f"ALTER TABLE db.t {sql}")
    assert isinstance(stmt, AlterTable)
    actions = stmt.actions
    schema, last = evolve_schema(
        md.schema(), md.last_column_id, actions, md.format_version, spec=md.spec(), sort_order=md.sort_order()
    )
    spec = (
        apply_spec_changes(md, schema, spec_changes(actions))
        if any(isinstance(a, SPEC_ACTIONS) for a in actions)
        else md.spec()
    )
    order, distribution = md.sort_order(), None
    for action in actions:
        if isinstance(action, WriteOrder):
            order = sort_order_from_terms(schema, sort_terms(action.terms), 1)
            same = [o for o in md.sort_orders if o.fields == order.fields]
            order_id = same[0].order_id if same else max(o.order_id for o in md.sort_orders) + 1
            order = SortOrder(order_id if order.fields else 0, order.fields)
            distribution = distribution_mode(action)
    return Evolved(schema, last, spec, order, distribution)


def schema_json(schema: Schema) -> dict[str, Any]:
    out = schema_to_json(schema)
    out.pop("schema-id")
    return out


def replay(spark: Catalog, table: str, create: str, statements: Sequence[str]) -> list[str]:
    """Run ``create`` then each ALTER in Spark and compare iceduck's result; returns the
    statements both refused (so a test can check it exercised refusals)."""
    spark.sql(f"CREATE TABLE {NS}.{table} {create}")
    md = spark.metadata(table)
    refused = []
    for sql in statements:
        spark_error: Exception | None = None
        try:
            spark.sql(f"ALTER TABLE {NS}.{table} {sql}")
        except Exception as e:  # any Spark/Java refusal
            spark_error = e
        ours: Evolved | IceduckError
        try:
            ours = evolve(md, sql)
        except IceduckError as e:
            ours = e
        after = spark.metadata(table)
        if spark_error is not None:
            assert isinstance(ours, IceduckError), f"{sql}: Spark refused ({spark_error}), iceduck accepted"
            refused.append(sql)
            continue
        assert not isinstance(ours, IceduckError), f"{sql}: Spark accepted, iceduck refused: {ours}"
        assert schema_json(ours.schema) == schema_json(after.schema()), sql
        assert ours.last_column_id == after.last_column_id, sql
        assert partition_spec_to_json(ours.spec) == partition_spec_to_json(after.spec()), sql
        assert sort_order_to_json(ours.order) == sort_order_to_json(after.sort_order()), sql
        if ours.distribution is not None:
            assert after.properties.get(WRITE_DISTRIBUTION_MODE) == ours.distribution, sql
        md = after
    return refused


NESTED = (
    "(id bigint NOT NULL, s string, ts timestamp, n int, f float, dc decimal(9,2), d date, "
    "st struct<a:int, b:struct<c:int>>, l array<struct<x:int>>, m map<string, struct<v:int>>, "
    "li array<int>, k int NOT NULL) USING iceberg PARTITIONED BY (bucket(16, id), n) "
    "TBLPROPERTIES ('format-version'='2')"
)


def test_columns(evo: Catalog) -> None:
    refused = replay(
        evo,
        "cols",
        NESTED,
        [
            "WRITE ORDERED BY s, days(ts)",
            "SET IDENTIFIER FIELDS k",
            "ADD COLUMN r int NOT NULL",
            "ADD COLUMN z struct<p:int, q:struct<r:int>, w:array<int>> AFTER id",
            "ADD COLUMN st.e string FIRST",
            "ADD COLUMN st.b.g int AFTER c",
            "ADD COLUMN l.element.y int",
            "ADD COLUMN m.value.y int",
            "ADD COLUMN li.element.y int",
            "ADD COLUMN ID int",
            "ADD COLUMN new1 int AFTER nope",
            "ADD COLUMNS (c1 int, c2 string FIRST)",
            "DROP COLUMN n",
            "DROP COLUMN id",
            "DROP COLUMN s",
            "DROP COLUMN ts",
            "DROP COLUMN k",
            "DROP COLUMN st.b.c",
            "DROP COLUMN nope",
            "DROP COLUMN IF EXISTS nope",
            "DROP COLUMN l.element",
            "RENAME COLUMN dc TO DC2",
            "RENAME COLUMN f TO TS",
            "RENAME COLUMN st.a TO a2",
            "RENAME COLUMN k TO `a.b`",
            "ALTER COLUMN n TYPE bigint",
            "ALTER COLUMN f TYPE double",
            "ALTER COLUMN DC2 TYPE decimal(12,2)",
            "ALTER COLUMN DC2 TYPE decimal(12,3)",
            "ALTER COLUMN s TYPE int",
            "ALTER COLUMN d TYPE timestamp",
            "ALTER COLUMN s SET NOT NULL",
            "ALTER COLUMN id DROP NOT NULL",
            "ALTER COLUMN l.element DROP NOT NULL",
            "ALTER COLUMN s COMMENT 'hello'",
            "ALTER COLUMN d FIRST",
            "ALTER COLUMN st.b AFTER e",
            "ALTER COLUMN ts AFTER nope",
            "DROP PARTITION FIELD n",
            "DROP COLUMN n",
            "RENAME COLUMN m.value.v TO v2",
            "ALTER COLUMN l.element.x TYPE bigint",
            "ALTER COLUMN li.element TYPE bigint",
            "ALTER COLUMN m.key COMMENT 'k'",
            "ALTER COLUMN m.value COMMENT 'v'",
            "DROP COLUMN m.value.v2",
            "ALTER COLUMN st.e AFTER b",
            "ADD COLUMN li2 array<struct<q:int not null>>",
            "ADD COLUMN mm map<string, array<int>> COMMENT 'nested'",
        ],
    )
    assert len(refused) == 18


def test_identifier_fields(evo: Catalog) -> None:
    refused = replay(
        evo,
        "ident",
        "(id bigint NOT NULL, k int NOT NULL, f double NOT NULL, o int, st struct<a:int not null> not null, "
        "os struct<a:int not null>, l array<int>) USING iceberg",
        [
            "SET IDENTIFIER FIELDS id, k",
            "SET IDENTIFIER FIELDS f",
            "SET IDENTIFIER FIELDS o",
            "SET IDENTIFIER FIELDS os.a",
            "SET IDENTIFIER FIELDS l.element",
            "SET IDENTIFIER FIELDS st",
            "SET IDENTIFIER FIELDS nope",
            "SET IDENTIFIER FIELDS st.a, id",
            "DROP COLUMN id",
            "DROP COLUMN st",
            "RENAME COLUMN id TO id2",
            "DROP IDENTIFIER FIELDS k",
            "DROP IDENTIFIER FIELDS id2",
        ],
    )
    assert len(refused) == 9


def test_partition_evolution_v2(evo: Catalog) -> None:
    refused = replay(
        evo,
        "parts2",
        "(id bigint, s string, ts timestamp, d date, n int, st struct<a:int, b:int>) USING iceberg "
        "PARTITIONED BY (hours(ts), years(d), bucket(4, id))",
        [
            "ADD PARTITION FIELD bucket(8, id)",
            "ADD PARTITION FIELD truncate(4, s)",
            "ADD PARTITION FIELD days(ts)",
            "ADD PARTITION FIELD id",
            "ADD PARTITION FIELD st.b",
            "ADD PARTITION FIELD bucket(2, st.a)",
            "DROP PARTITION FIELD bucket(4, id)",
            "ADD PARTITION FIELD bucket(4, id)",
            "DROP PARTITION FIELD id",
            "ADD PARTITION FIELD bucket(2, id) AS shard",
            "ADD PARTITION FIELD truncate(2, id) AS shard",
            "ADD PARTITION FIELD bucket(2, id) AS ts",
            "ADD PARTITION FIELD n AS s",
            "ADD PARTITION FIELD bucket(8, id)",
            "ADD PARTITION FIELD days(s)",
            "ADD PARTITION FIELD hours(d)",
            "ADD PARTITION FIELD bucket(3, nope)",
            "DROP PARTITION FIELD bucket(3, id)",
            "DROP PARTITION FIELD nope",
            "REPLACE PARTITION FIELD shard WITH bucket(16, id)",
            "ADD PARTITION FIELD n",
            "REPLACE PARTITION FIELD n WITH n AS nn",
            "REPLACE PARTITION FIELD nn WITH bucket(8, id)",
            "REPLACE PARTITION FIELD nn WITH truncate(8, n) AS nn",
            "DROP PARTITION FIELD nn",
            "ADD PARTITION FIELD n AS nn",
        ],
    )
    assert len(refused) == 10


@pytest.mark.parametrize("version", [1, 3])
def test_partition_evolution_v1_and_v3(evo: Catalog, version: int) -> None:
    replay(
        evo,
        f"parts_v{version}",
        f"(id bigint, ts timestamp, n int) USING iceberg PARTITIONED BY (bucket(4, id), n, days(ts)) "
        f"TBLPROPERTIES ('format-version'='{version}')",
        [
            "DROP PARTITION FIELD bucket(4, id)",
            "ADD PARTITION FIELD bucket(4, id)",
            "DROP PARTITION FIELD n",
            "ADD PARTITION FIELD n",
            "DROP PARTITION FIELD ts_day",
            "REPLACE PARTITION FIELD n WITH truncate(2, n)",
            "ADD PARTITION FIELD hours(ts)",
            "ALTER COLUMN n TYPE bigint",
        ],
    )


def test_write_orders(evo: Catalog) -> None:
    refused = replay(
        evo,
        "orders",
        "(id bigint, s string, ts timestamp, st struct<a:int, b:int>) USING iceberg "
        "PARTITIONED BY (bucket(4, id))",
        [
            "WRITE ORDERED BY s",
            "WRITE LOCALLY ORDERED BY id DESC",
            "WRITE UNORDERED",
            "WRITE DISTRIBUTED BY PARTITION",
            "WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY st.a",
            "WRITE ORDERED BY s",
            "WRITE ORDERED BY bucket(4, s) DESC NULLS FIRST, truncate(2, s), hours(ts)",
            "WRITE ORDERED BY days(s)",
            "WRITE ORDERED BY st",
            "WRITE ORDERED BY S",
        ],
    )
    assert len(refused) == 2


@pytest.mark.parametrize(
    "create",
    [
        "(id bigint, s string, ts timestamp, d date, n int, st struct<a:int, b:struct<c:int>>, "
        "l array<struct<x:int>>, m map<string, struct<v:int>>) USING iceberg "
        "PARTITIONED BY (bucket(16, id), truncate(4, s), days(ts), months(d), n, st.a)",
        "(id bigint, ts timestamp, d date) USING iceberg PARTITIONED BY (hours(ts), years(d), bucket(4, id))",
        "(id bigint, b boolean) USING iceberg PARTITIONED BY (bucket(2, id), truncate(4, id), id)",
    ],
)
def test_create_specs_and_ids(evo: Catalog, create: str) -> None:
    """CREATE TABLE: partition names/ids and Java's fresh-id order (new columns of ADD
    COLUMN are numbered the same way) equal Spark's."""
    table = f"created_{abs(hash(create)) % 10_000}"
    evo.sql(f"CREATE TABLE {NS}.{table} {create}")
    md = evo.metadata(table)
    stmt = parse_write(f"CREATE TABLE db.t {create}")
    assert isinstance(stmt, CreateTable)
    counter = iter(range(1, 1000))
    fields = tuple(NestedField(0, c.name, c.type, c.required, c.comment) for c in stmt.columns)
    fresh = assign_fresh_ids(StructType(fields), lambda: next(counter))
    assert isinstance(fresh, StructType)
    schema = Schema(fresh.fields, 0)
    assert schema_json(schema) == schema_json(md.schema())
    assert partition_spec_to_json(
        spec_from_terms(schema, partition_terms(stmt.partition_by))
    ) == partition_spec_to_json(md.spec())


@pytest.mark.parametrize(
    ("create", "message"),
    [
        ("(id bigint, id_bucket int) USING iceberg PARTITIONED BY (bucket(4, id))", "id_bucket"),
        ("(id bigint, b boolean) USING iceberg PARTITIONED BY (bucket(4, b))", "boolean"),
        ("(id bigint, ts timestamp) USING iceberg PARTITIONED BY (years(ts), hours(ts))", "redundant"),
    ],
)
def test_create_refusals(evo: Catalog, create: str, message: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 -- Spark's refusal, of whatever Java class
        evo.sql(f"CREATE TABLE {NS}.refused {create}")
    stmt = parse_write(f"CREATE TABLE db.t {create}")
    assert isinstance(stmt, CreateTable)
    schema = Schema(tuple(NestedField(i, c.name, c.type) for i, c in enumerate(stmt.columns, 1)), 0)
    with pytest.raises(IceduckError, match=message):
        spec_from_terms(schema, partition_terms(stmt.partition_by))
