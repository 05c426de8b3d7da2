"""A warehouse of tables written by the reference Spark, built once per test run.

Every table here is the ground truth iceduck's readers, planners and writers are checked
against: Spark 3.5 + Iceberg 1.10.2 wrote each byte, so if iceduck disagrees with one of
these tables, iceduck is wrong. The tables cover the format versions (1, 2, 3), every
partition transform, copy-on-write and merge-on-read DML (position deletes on v2,
deletion vectors on v3), equality deletes committed through the Iceberg Java API (as Flink
does), schema and partition evolution, tags and branches, and every type Spark can write.

Tables are read-only for tests: a test that writes must create its own table.

To add a table, write a builder ``def my_table(w: Builder) -> TableInfo`` and append it to
:data:`TABLE_BUILDERS`. Row counts in :class:`TableInfo` are worked out independently of
Spark (by construction, or by simulating the deletes in Python) so tests can check them.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from tests.support.spark_session import CATALOG

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MOR = ", ".join(f"'write.{op}.mode'='merge-on-read'" for op in ("delete", "update", "merge"))
EMPTY_NAMESPACES = ("empty_ns",)


class SparkWarehouse(NamedTuple):
    """The ``spark_warehouse`` fixture: the warehouse folder and its tables by identifier."""

    path: Path
    tables: dict[str, TableInfo]


@dataclass(frozen=True)
class TableInfo:
    """What one fixture table is and what a correct reader must see in it."""

    name: str  # fully qualified: "iceduck.<namespace>.<table>"
    format_version: int
    description: str
    row_count: int  # rows in the current snapshot of main
    features: tuple[str, ...] = ()  # tags to select tables by, e.g. "delete:equality"
    ref_row_counts: dict[str, int] = field(default_factory=dict)  # rows per tag/branch

    @property
    def identifier(self) -> str:
        """The name without the catalog: ``<namespace>.<table>``."""
        return self.name.split(".", 1)[1]

    @property
    def namespace(self) -> str:
        return self.identifier.rsplit(".", 1)[0]

    @property
    def table(self) -> str:
        return self.identifier.rsplit(".", 1)[1]


class Builder:
    """The handle a table builder gets: Spark SQL plus the Iceberg Java API via py4j."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.jvm = spark._jvm

    def sql(self, *statements: str) -> None:
        for statement in statements:
            self.spark.sql(statement)

    def scalar(self, query: str) -> Any:
        return self.spark.sql(query).collect()[0][0]

    def create(self, identifier: str, columns: str, version: int, extra: str = "", props: str = "") -> str:
        """CREATE TABLE (and its namespace); returns the fully qualified name."""
        name = f"{CATALOG}.{identifier}"
        self.sql(f"CREATE NAMESPACE IF NOT EXISTS {name.rsplit('.', 1)[0]}")
        properties = f"'format-version'='{version}'" + (f", {props}" if props else "")
        self.sql(f"CREATE TABLE {name} ({columns}) USING iceberg {extra} TBLPROPERTIES ({properties})")
        return name

    def java_table(self, name: str) -> Any:
        """The ``org.apache.iceberg.Table`` behind a Spark table name (freshly loaded)."""
        return self.jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(self.spark._jsparkSession, name)

    def add_equality_deletes(
        self, name: str, columns: dict[str, pa.DataType], rows: Sequence[tuple], partition: str | None = None
    ) -> None:
        """Commit one equality-delete file, the way Flink's upsert writer does.

        The Parquet file is written by pyarrow with Iceberg field ids in its schema (spec,
        "Equality Delete Files": delete files "use the table's field ids"), then committed
        with ``RowDelta`` and Parquet-derived metrics, in the delete's ``partition`` (a
        partition path such as ``cat=a``) or unpartitioned.
        """
        table = self.java_table(name)
        schema = table.schema()
        ids = [schema.findField(column).fieldId() for column in columns]
        arrow_schema = pa.schema(
            [
                pa.field(column, dtype, metadata={b"PARQUET:field_id": str(fid).encode()})
                for (column, dtype), fid in zip(columns.items(), ids, strict=True)
            ]
        )
        folder = table.location().removeprefix("file:") + "/data" + (f"/{partition}" if partition else "")
        Path(folder).mkdir(parents=True, exist_ok=True)
        path = f"{folder}/eq-deletes-{uuid.uuid4()}.parquet"
        pq.write_table(
            pa.Table.from_pylist([dict(zip(columns, r, strict=True)) for r in rows], arrow_schema), path
        )
        jvm = self.jvm
        input_file = table.io().newInputFile(path)
        metrics = jvm.org.apache.iceberg.parquet.ParquetUtil.fileMetrics(
            input_file, jvm.org.apache.iceberg.MetricsConfig.forTable(table)
        )
        field_ids = self.spark.sparkContext._gateway.new_array(jvm.int, len(ids))
        for i, fid in enumerate(ids):
            field_ids[i] = fid
        builder = (
            jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
            .ofEqualityDeletes(field_ids)
            .withPath(path)
            .withFormat("PARQUET")
            .withFileSizeInBytes(input_file.getLength())
            .withRecordCount(len(rows))
            .withMetrics(metrics)
        )
        if partition:
            builder = builder.withPartitionPath(partition)
        table.newRowDelta().addDeletes(builder.build()).commit()


def _rows_sql(name: str, lo: int, hi: int) -> str:
    """INSERT rows lo..hi-1 of the standard (id, data, cat, ts) shape."""
    return (
        f"INSERT INTO {name} SELECT id, concat('row-', id), "
        f"element_at(array('a', 'b', 'c'), cast(id % 3 + 1 AS int)), "
        f"timestamp_seconds(1700000000 + id * 5000) FROM range({lo}, {hi})"
    )


STD_COLUMNS = "id bigint NOT NULL, data string, cat string, ts timestamp"


# --- format versions --------------------------------------------------------------------


def unpartitioned(w: Builder, version: int) -> TableInfo:
    name = w.create(f"fmt.v{version}_unpartitioned", STD_COLUMNS, version)
    w.sql(_rows_sql(name, 0, 60))
    if version > 1:
        w.sql(f"ALTER TABLE {name} WRITE ORDERED BY id DESC NULLS LAST")
    w.sql(_rows_sql(name, 60, 100))
    sorted_note = ", a sort order set before the 2nd" if version > 1 else ""
    return TableInfo(name, version, f"unpartitioned, 2 appends{sorted_note}", 100, ("unpartitioned",))


def empty_table(w: Builder) -> TableInfo:
    name = w.create("fmt.empty_v2", STD_COLUMNS, 2, "PARTITIONED BY (cat)")
    return TableInfo(name, 2, "created, never written: no current snapshot", 0, ("empty",))


def nested_namespace(w: Builder) -> TableInfo:
    name = w.create("deep.er.nested_ns_v2", "id bigint, data string", 2)
    w.sql(f"INSERT INTO {name} VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    return TableInfo(name, 2, "a table in a two-level namespace (deep.er)", 3, ("nested-namespace",))


def upgraded(w: Builder) -> TableInfo:
    name = w.create("fmt.upgrade_v1_v2_v3", "id bigint, data string", 1)
    w.sql(
        f"INSERT INTO {name} SELECT id, concat('row-', id) FROM range(0, 20)",
        f"ALTER TABLE {name} SET TBLPROPERTIES ('format-version'='2', {MOR})",
        f"DELETE FROM {name} WHERE id < 3",
        f"INSERT INTO {name} SELECT id, concat('row-', id) FROM range(20, 30)",
        f"ALTER TABLE {name} SET TBLPROPERTIES ('format-version'='3')",
        f"DELETE FROM {name} WHERE id IN (10, 25)",
    )
    desc = "written as v1, upgraded to v2 (MoR delete: position deletes), then to v3 (MoR delete: DV)"
    return TableInfo(name, 3, desc, 25, ("upgrade", "delete:position", "delete:dv"))


# --- partition transforms ---------------------------------------------------------------


def identity_partitions(w: Builder) -> TableInfo:
    name = w.create("part.identity_v2", "id bigint, s string, i int, data string", 2, "PARTITIONED BY (s, i)")
    strings = ["a", "ü", "😀", "a/b", "x=y", "with space", "", None, "%25", "tab\tq", "'quote"]
    ints = [-1, 0, 1, 2147483647, -2147483648, None]
    rows = [(n, strings[n % len(strings)], ints[n % len(ints)], f"d{n}") for n in range(22)]
    schema = w.spark.table(name).schema
    w.spark.createDataFrame(rows, schema).writeTo(name).append()
    desc = "identity(string) x identity(int); path-hostile strings (/ = space % quote), nulls, int extremes"
    return TableInfo(name, 2, desc, len(rows), ("partition:identity",))


TRANSFORM_COLUMNS = (
    "i int, l bigint, dec decimal(9,2), d date, ts timestamp, tsn timestamp_ntz, s string, b binary"
)


def _transform_values(n: int) -> str:
    """One row of TRANSFORM_COLUMNS with negative, pre-epoch and multi-byte values mixed in."""
    if n == 0:
        return "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    sign = -1 if n % 2 else 1
    strings = ["iceberg", "ü€😀x", "a", "", "abcdefgh", "中文字符串"]
    return (
        f"({sign * n * 7}, {sign * n * 1_000_000_007}L, {sign * n * 3.17:.2f}BD, "
        f"date_add(DATE'1970-01-01', {sign * n * 400}), "
        f"timestamp_seconds({sign * n * 90_000_007}) + INTERVAL {n * 13} MICROSECONDS, "
        f"TIMESTAMP_NTZ'1969-12-31 23:59:59.999999' + make_dt_interval({sign * n * 17}, {n}, 0, 0), "
        f"'{strings[n % len(strings)]}{n}', X'{bytes(range(n, n + n % 5)).hex()}')"
    )


# identifier -> (PARTITIONED BY clause, feature tag, description). Time transforms get one
# table each, over every source type they accept: Iceberg refuses two time transforms on one
# source column as redundant.
TRANSFORM_TABLES = {
    "part.bucket_v2": (
        ", ".join(f"bucket(3, {c})" for c in ("i", "l", "dec", "d", "ts", "tsn", "s", "b")),
        "partition:bucket",
        "bucket(3, _) on int, long, decimal, date, timestamptz, timestamp, string, binary",
    ),
    "part.truncate_v2": (
        "truncate(10, i), truncate(10, l), truncate(50, dec), truncate(3, s), truncate(2, b)",
        "partition:truncate",
        "truncate on int, long, decimal, string (multi-byte), binary; negative values",
    ),
    **{
        f"part.{unit}_v2": (
            ", ".join(f"{unit}({c})" for c in ("d", "ts", "tsn") if unit != "hours" or c != "d"),
            f"partition:{unit}",
            f"{unit}() on date / timestamptz / timestamp; pre-epoch values",
        )
        for unit in ("years", "months", "days", "hours")
    },
}


def transforms(w: Builder, identifier: str) -> TableInfo:
    partitioning, feature, desc = TRANSFORM_TABLES[identifier]
    name = w.create(identifier, TRANSFORM_COLUMNS, 2, f"PARTITIONED BY ({partitioning})")
    w.sql(f"INSERT INTO {name} VALUES " + ", ".join(_transform_values(n) for n in range(16)))
    return TableInfo(name, 2, desc, 16, (feature,))


def mixed_partitions(w: Builder, version: int) -> TableInfo:
    name = w.create(
        f"part.mixed_v{version}", STD_COLUMNS, version, "PARTITIONED BY (cat, bucket(4, id), days(ts))"
    )
    w.sql(_rows_sql(name, 0, 40))
    return TableInfo(name, version, "identity + bucket + day partitions", 40, ("partition:mixed",))


# --- row-level DML ----------------------------------------------------------------------


def dml(w: Builder, identifier: str, version: int, mode: str, partitioned: bool) -> TableInfo:
    """DELETE, UPDATE and MERGE on one table, copy-on-write or merge-on-read."""
    props = MOR if mode == "mor" else ""
    name = w.create(identifier, STD_COLUMNS, version, "PARTITIONED BY (cat)" if partitioned else "", props)
    w.sql(
        _rows_sql(name, 0, 60),
        f"DELETE FROM {name} WHERE id % 5 = 0",
        f"UPDATE {name} SET data = upper(data) WHERE id < 20",
        f"MERGE INTO {name} t USING (SELECT id, concat('m-', id) AS data, 'a' AS cat, "
        f"TIMESTAMP'2024-01-01 00:00:00' AS ts FROM range(55, 65)) s ON t.id = s.id "
        f"WHEN MATCHED THEN UPDATE SET t.data = s.data WHEN NOT MATCHED THEN INSERT *",
    )
    ids = {i for i in range(60) if i % 5} | set(range(55, 65))
    deletes = {"cow": "delete:none", "mor": "delete:position" if version == 2 else "delete:dv"}[mode]
    kind = {"cow": "copy-on-write", "mor": "merge-on-read"}[mode]
    part = "partitioned by cat" if partitioned else "unpartitioned"
    desc = f"{kind} DELETE + UPDATE + MERGE, {part}"
    return TableInfo(name, version, desc, len(ids), (f"dml:{mode}", deletes))


def _eq_rows(n: int) -> list[dict[str, Any]]:
    cats = ["a", "b", None]
    return [
        {"id": i, "name": None if i % 5 == 0 else f"n{i}", "cat": cats[i % 3], "seq": 1} for i in range(n)
    ]


def _apply_eq(rows: list[dict], columns: Sequence[str], keys: Sequence[tuple], seq: int) -> list[dict]:
    """Equality-delete semantics: a key matches rows with equal values, NULL matching NULL,
    but only rows of an older data sequence number (spec, "Scan Planning")."""
    return [r for r in rows if r["seq"] >= seq or tuple(r[c] for c in columns) not in set(keys)]


def equality_deletes(w: Builder, version: int) -> TableInfo:
    cols = "id bigint NOT NULL, name string, cat string"
    name = w.create(f"dml.eq_delete_v{version}", cols, version, props=MOR)
    w.sql(
        f"ALTER TABLE {name} SET IDENTIFIER FIELDS id",
        f"INSERT INTO {name} SELECT id, CASE WHEN id % 5 = 0 THEN NULL ELSE concat('n', id) END, "
        f"element_at(array('a', 'b', NULL), cast(id % 3 + 1 AS int)) FROM range(0, 30)",
    )
    rows = _eq_rows(30)
    w.add_equality_deletes(name, {"id": pa.int64()}, [(3,), (7,), (11,)])
    rows = _apply_eq(rows, ["id"], [(3,), (7,), (11,)], seq=2)
    w.sql(f"INSERT INTO {name} VALUES (7, 'n7-again', 'b')")  # newer than the delete: survives
    rows.append({"id": 7, "name": "n7-again", "cat": "b", "seq": 3})
    w.add_equality_deletes(name, {"name": pa.string()}, [(None,), ("n13",)])
    rows = _apply_eq(rows, ["name"], [(None,), ("n13",)], seq=4)
    keys = [(22, "b"), (23, None), (24, "b")]  # 24 has cat 'a': no match
    w.add_equality_deletes(name, {"id": pa.int64(), "cat": pa.string()}, keys)
    rows = _apply_eq(rows, ["id", "cat"], keys, seq=5)
    w.sql(f"DELETE FROM {name} WHERE id = 21")  # Spark's own MoR delete on top
    rows = [r for r in rows if r["id"] != 21]
    spark_delete = "position delete" if version == 2 else "DV"
    desc = (
        "equality deletes via the Java API on id, on name (with NULL) and on (id, cat); "
        f"a re-inserted key that outlives its delete; a Spark MoR {spark_delete} on top"
    )
    features = ("delete:equality", "delete:position" if version == 2 else "delete:dv")
    return TableInfo(name, version, desc, len(rows), features)


def equality_deletes_partitioned(w: Builder) -> TableInfo:
    name = w.create(
        "dml.eq_delete_partitioned_v2", "id bigint, name string, cat string", 2, "PARTITIONED BY (cat)"
    )
    w.sql(
        f"INSERT INTO {name} SELECT id, CASE WHEN id % 5 = 0 THEN NULL ELSE concat('n', id) END, "
        f"CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END FROM range(0, 20)"
    )
    w.add_equality_deletes(name, {"name": pa.string()}, [(None,), ("n2",), ("n3",)], partition="cat=a")
    # Only partition a is affected: 0, 10 (NULL names) and 2 go; 5, 15 (NULL, in b) and 3 (in b) stay.
    desc = "equality delete (NULL + values) scoped to partition cat=a; matching rows in cat=b survive"
    return TableInfo(name, 2, desc, 17, ("delete:equality", "partition:identity"))


# --- evolution --------------------------------------------------------------------------


def schema_evolution(w: Builder) -> TableInfo:
    cols = "id int, f float, dec decimal(10,2), name string, dropped string, s struct<a: int, b: string>"
    name = w.create("evolve.schema_v2", cols, 2)
    w.sql(
        f"INSERT INTO {name} VALUES (1, 1.5, 12.34, 'one', 'gone-1', named_struct('a', 1, 'b', 'x')), "
        "(2, -0.25, -99999999.99, 'two', 'gone-2', NULL), "
        "(NULL, NULL, NULL, NULL, NULL, named_struct('a', NULL, 'b', 'y'))",
        f"ALTER TABLE {name} ALTER COLUMN id TYPE bigint",
        f"ALTER TABLE {name} ALTER COLUMN f TYPE double",
        f"ALTER TABLE {name} ALTER COLUMN dec TYPE decimal(20,2)",
        f"ALTER TABLE {name} RENAME COLUMN name TO full_name",
        f"ALTER TABLE {name} DROP COLUMN dropped",
        f"ALTER TABLE {name} ADD COLUMN added string",
        f"ALTER TABLE {name} ADD COLUMN dropped string",  # same name, new field id: old values must not show
        f"ALTER TABLE {name} ADD COLUMN s.c double",
        f"ALTER TABLE {name} RENAME COLUMN s.b TO bb",
        f"INSERT INTO {name} (id, f, dec, full_name, s, added, dropped) VALUES "
        "(9999999999, 1e300, 123456789012345678.99, 'three', named_struct('a', 3, 'bb', 'z', 'c', 0.5), "
        "'added-3', 'new-3')",
    )
    desc = (
        "int->long, float->double, decimal(10,2)->(20,2), rename, drop, add, "
        "re-add a dropped name (new id: old values must not show), nested add/rename"
    )
    return TableInfo(name, 2, desc, 4, ("schema-evolution",))


def default_values(w: Builder) -> TableInfo:
    name = w.create("evolve.defaults_v3", "id int", 3)
    w.sql(f"INSERT INTO {name} VALUES (1), (2)")
    types, literal = w.jvm.org.apache.iceberg.types.Types, w.jvm.org.apache.iceberg.expressions.Literal
    update = w.java_table(name).updateSchema()
    update.addColumn("c", types.IntegerType.get(), "added with a default", literal.of(42))
    update.addColumn("t", types.StringType.get(), "string default", literal.of("dflt")).commit()
    w.sql(f"INSERT INTO {name} VALUES (3, 7, 'x'), (4, NULL, NULL)")
    desc = "v3 columns added (Java API) with initial/write defaults 42 and 'dflt'; old rows read them"
    return TableInfo(name, 3, desc, 4, ("schema-evolution", "default-values"))


def partition_evolution(w: Builder, version: int) -> TableInfo:
    name = w.create(f"evolve.partition_v{version}", STD_COLUMNS, version)
    steps = [
        f"ALTER TABLE {name} ADD PARTITION FIELD cat",
        f"ALTER TABLE {name} ADD PARTITION FIELD bucket(4, id) AS id_bucket",
        f"ALTER TABLE {name} DROP PARTITION FIELD cat",
        f"ALTER TABLE {name} REPLACE PARTITION FIELD id_bucket WITH days(ts)",
    ]
    w.sql(_rows_sql(name, 0, 10))
    for n, step in enumerate(steps, start=1):
        w.sql(step, _rows_sql(name, n * 10, n * 10 + 10))
    void = " (v1 keeps dropped fields as void transforms)" if version == 1 else ""
    desc = (
        f"specs: none -> +cat -> +bucket(4,id) -> -cat -> bucket replaced by days(ts); data under each{void}"
    )
    return TableInfo(name, version, desc, 50, ("partition-evolution",))


# --- refs -------------------------------------------------------------------------------


def tags_and_branches(w: Builder) -> TableInfo:
    name = w.create("refs.tags_branches_v2", "id bigint, data string", 2)
    insert = f"INSERT INTO {name} SELECT id, concat('row-', id) FROM range"
    w.sql(f"{insert}(0, 10)", f"ALTER TABLE {name} CREATE TAG t_first", f"{insert}(10, 20)")
    first = w.scalar(f"SELECT snapshot_id FROM {name}.snapshots ORDER BY committed_at LIMIT 1")
    w.sql(
        f"ALTER TABLE {name} CREATE BRANCH b_dev",
        f"INSERT INTO {name}.branch_b_dev SELECT id, concat('dev-', id) FROM range(100, 105)",
        f"DELETE FROM {name}.branch_b_dev WHERE id < 3",
        f"{insert}(20, 25)",
        f"ALTER TABLE {name} CREATE TAG t_retained AS OF VERSION {first} RETAIN 7 DAYS",
        f"ALTER TABLE {name} CREATE BRANCH b_retention RETAIN 3 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS",
    )
    refs = {"main": 25, "t_first": 10, "t_retained": 10, "b_dev": 22, "b_retention": 25}
    desc = "tags (one with max-ref-age), branches (one written to and deleted from, one with retention)"
    return TableInfo(name, 2, desc, 25, ("refs",), refs)


# --- types ------------------------------------------------------------------------------

ALL_TYPES_DDL = (
    "id int NOT NULL, b boolean, i int, l bigint, f float, d double, "
    "dec_9_2 decimal(9,2), dec_18_6 decimal(18,6), dec_38_0 decimal(38,0), dec_38_10 decimal(38,10), "
    "dt date, ts timestamp, tsn timestamp_ntz, s string, bin binary, "
    "st struct<a: int, b: string, inner: struct<x: double, y: array<int>>>, "
    "li array<int>, ll array<array<bigint>>, ls array<struct<k: string, v: bigint>>, "
    "m map<string, int>, mn map<string, array<string>>, mi map<int, struct<q: string>>"
)


_UTC = datetime.UTC
# Built from strings: arithmetic on Decimal (even negation) rounds to the context's 28 digits.
_D38, _D38_NEG = Decimal("9" * 38), Decimal("-" + "9" * 38)
_D38_10, _D38_10_NEG = Decimal("9" * 28 + "." + "9" * 10), Decimal("-" + "9" * 28 + "." + "9" * 10)
_F32_MAX = 3.4028234663852886e38
_TS_MAX = datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)

# The rows of types.all_v*, keyed by column; a missing column is NULL. Row 1 is typical, 2 all
# NULL, 3 minimums, 4 maximums, 5-6 and 9 special floats, 7 unicode, 8 around the epoch, 9 NULLs
# inside nested values. Later tests compare iceduck's readers against exactly these values.
# fmt: off
ALL_TYPES_ROWS: list[dict[str, Any]] = [
    {"id": 1, "b": True, "i": 42, "l": 1234567890123, "f": 1.5, "d": 2.25, "dec_9_2": Decimal("1234.56"),
     "dec_18_6": Decimal("123456789012.123456"), "dec_38_0": Decimal("1234567890123456789012345678901234567"),
     "dec_38_10": Decimal("1234567890.0123456789"), "dt": datetime.date(2024, 2, 29),
     "ts": datetime.datetime(2024, 2, 29, 12, 34, 56, 789012, tzinfo=_UTC),
     "tsn": datetime.datetime(2024, 2, 29, 12, 34, 56, 789012), "s": "hello", "bin": b"\x01\x02",
     "st": (1, "x", (0.5, [1, 2])), "li": [1, 2, 3], "ll": [[1], [2, 3], []], "ls": [("k1", 1), ("k2", 2)],
     "m": {"a": 1, "b": 2}, "mn": {"x": ["p", "q"]}, "mi": {7: ("seven",)},
     "u": "8c7a3b2e-5f1d-4c3b-9a2e-0123456789ab", "fx": b"\x00\x01\x02\x03"},
    {"id": 2},
    {"id": 3, "b": False, "i": -(2**31), "l": -(2**63), "f": -_F32_MAX, "d": -1.7976931348623157e308,
     "dec_9_2": Decimal("-9999999.99"), "dec_18_6": Decimal("-999999999999.999999"), "dec_38_0": _D38_NEG,
     "dec_38_10": _D38_10_NEG, "dt": datetime.date(1, 1, 1), "ts": datetime.datetime(1, 1, 1, tzinfo=_UTC),
     "tsn": datetime.datetime(1, 1, 1), "s": "", "bin": b"", "st": (None, None, None), "li": [], "ll": [],
     "ls": [], "m": {}, "mn": {}, "mi": {}, "u": "00000000-0000-0000-0000-000000000000", "fx": b"\x00" * 4},
    {"id": 4, "b": True, "i": 2**31 - 1, "l": 2**63 - 1, "f": _F32_MAX, "d": 1.7976931348623157e308,
     "dec_9_2": Decimal("9999999.99"), "dec_18_6": Decimal("999999999999.999999"), "dec_38_0": _D38,
     "dec_38_10": _D38_10, "dt": datetime.date(9999, 12, 31), "ts": _TS_MAX.replace(tzinfo=_UTC),
     "tsn": _TS_MAX, "s": "\U0010ffff", "bin": b"\xff" * 16,
     "st": (2**31 - 1, "z" * 100, (1e308, [2**31 - 1])),
     "li": [2**31 - 1], "ll": [[2**63 - 1]], "ls": [("", -(2**63))], "m": {"": 0}, "mn": {"k": []},
     "mi": {-(2**31): ("min",)}, "u": "ffffffff-ffff-ffff-ffff-ffffffffffff", "fx": b"\xff" * 4},
    {"id": 5, "i": 0, "l": 0, "f": float("nan"), "d": float("nan"), "dec_9_2": Decimal("0.00"),
     "dec_18_6": Decimal("-0.000001"), "dec_38_0": Decimal(0), "dec_38_10": Decimal("0E-10")},
    {"id": 6, "i": -1, "l": -1, "f": -0.0, "d": -0.0, "dec_9_2": Decimal("0.01"),
     "dec_18_6": Decimal("0.000001"), "dec_38_0": Decimal(-1), "dec_38_10": Decimal("1E-10")},
    {"id": 7, "f": float("inf"), "d": float("-inf"), "bin": "😀".encode(),
     "s": "ü ß Ω≈ç√ 中文 العربية 😀 👩\u200d👩\u200d👧 e\u0301 \x00nul", "st": (None, "🧊🦆", None),
     "ls": [("ключ", None)], "m": {"ключ 🔑": None}, "mn": {"😀": [None, "x"]}},
    {"id": 8, "b": False, "f": float("-inf"), "d": 5e-324, "dt": datetime.date(1969, 12, 31),
     "ts": datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=_UTC),
     "tsn": datetime.datetime(1970, 1, 1),
     "s": "epoch", "st": (0, "", (-0.0, [])), "li": [0], "ll": [[0, None]], "ls": []},
    {"id": 9, "f": 1e-45, "d": 2.2250738585072014e-308, "dt": datetime.date(1582, 10, 4),
     "ts": datetime.datetime(1900, 1, 1, tzinfo=_UTC), "tsn": datetime.datetime(1582, 10, 15),
     "st": (None, None, (None, [None])), "li": [1, None, 3], "ll": [None, [None]], "ls": [None, ("k", None)],
     "m": {"a": None}, "mn": {"b": None}, "mi": {1: None}},
]
# fmt: on


def all_types(w: Builder, version: int) -> TableInfo:
    from pyspark.sql.types import BinaryType, StringType

    name = w.create(f"types.all_v{version}", ALL_TYPES_DDL, version)
    types = w.jvm.org.apache.iceberg.types.Types
    update = w.java_table(name).updateSchema().addColumn("u", types.UUIDType.get())
    update.addColumn("fx", types.FixedType.ofLength(4)).commit()
    schema = w.spark.table(name).schema  # now ends with u (string to Spark) and fx (binary)
    assert [(f.name, f.dataType) for f in schema.fields[-2:]] == [("u", StringType()), ("fx", BinaryType())]
    rows = [tuple(row.get(f.name) for f in schema.fields) for row in ALL_TYPES_ROWS]
    w.spark.createDataFrame(rows, schema).writeTo(name).append()
    desc = "every Spark-writable type, uuid/fixed(4) added via the Java API, nested; extremes, NaN, unicode"
    return TableInfo(name, version, desc, len(rows), ("all-types",))


TABLE_BUILDERS: list[Callable[[Builder], TableInfo]] = [
    partial(unpartitioned, version=1),
    partial(unpartitioned, version=2),
    partial(unpartitioned, version=3),
    empty_table,
    nested_namespace,
    upgraded,
    identity_partitions,
    *(partial(transforms, identifier=identifier) for identifier in TRANSFORM_TABLES),
    partial(mixed_partitions, version=1),
    partial(mixed_partitions, version=3),
    partial(dml, identifier="dml.cow_v2", version=2, mode="cow", partitioned=True),
    partial(dml, identifier="dml.mor_v2", version=2, mode="mor", partitioned=False),
    partial(dml, identifier="dml.mor_partitioned_v2", version=2, mode="mor", partitioned=True),
    partial(dml, identifier="dml.mor_v3", version=3, mode="mor", partitioned=False),
    partial(dml, identifier="dml.mor_partitioned_v3", version=3, mode="mor", partitioned=True),
    partial(equality_deletes, version=2),
    partial(equality_deletes, version=3),
    equality_deletes_partitioned,
    schema_evolution,
    default_values,
    partial(partition_evolution, version=1),
    partial(partition_evolution, version=2),
    tags_and_branches,
    partial(all_types, version=1),
    partial(all_types, version=2),
    partial(all_types, version=3),
]


# --- building and reusing a warehouse -----------------------------------------------------

MANIFEST = "iceduck-fixture.json"


def fingerprint() -> str:
    """Identifies this module's version: a warehouse built by other builders is stale."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def build_warehouse(spark: SparkSession, warehouse: Path) -> dict[str, TableInfo]:
    """Build every table of :data:`TABLE_BUILDERS` in ``warehouse`` (whose catalog ``spark`` serves).

    Returns the tables keyed by identifier (``<namespace>.<table>``) and records them, with
    per-table build times, in ``<warehouse>/iceduck-fixture.json`` for :func:`load_warehouse`.
    """
    manifest: dict[str, Any] = {"fingerprint": fingerprint(), "complete": False}
    (warehouse / MANIFEST).write_text(json.dumps(manifest))  # claims the folder before writing
    builder = Builder(spark)
    for namespace in EMPTY_NAMESPACES:
        builder.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{namespace}")
    tables: dict[str, TableInfo] = {}
    timings: dict[str, float] = {}
    for build in TABLE_BUILDERS:
        started = time.monotonic()
        try:
            info = build(builder)
        except Exception as exc:
            what = getattr(build, "func", build).__name__
            raise RuntimeError(
                f"building fixture table with {what}{getattr(build, 'keywords', '')} failed"
            ) from exc
        if info.identifier in tables:
            raise RuntimeError(f"two fixture builders made {info.identifier}")
        tables[info.identifier] = info
        timings[info.identifier] = round(time.monotonic() - started, 2)
    manifest.update(complete=True, tables=[asdict(i) for i in tables.values()], build_seconds=timings)
    (warehouse / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    return tables


def load_warehouse(warehouse: Path) -> dict[str, TableInfo] | None:
    """The tables of a warehouse completely built earlier by this module version, else None."""
    path = warehouse / MANIFEST
    if not path.is_file():
        return None
    manifest = json.loads(path.read_text())
    if manifest.get("fingerprint") != fingerprint() or not manifest.get("complete"):
        return None
    infos = [TableInfo(**{**t, "features": tuple(t["features"])}) for t in manifest["tables"]]
    return {info.identifier: info for info in infos}
