"""Metadata tables built by iceduck equal the ones Spark 3.5 + Iceberg 1.10 shows.

For a representative set of the Spark fixture warehouse's tables (partitioned v1, every
partition transform, v2 merge-on-read position deletes, v3 deletion vectors, equality
deletes, partition and schema evolution, refs, an empty table, a table upgraded v1 -> v3,
every type) and every metadata table kind, Spark's ``SELECT * FROM <table>.<kind>`` is
collected as Arrow (Spark's own Arrow schema: names, order, types, nullability, nested
fields) and compared with :func:`metadata_table`'s table: same schema, same rows (as
multisets; maps compared as sorted pairs, timestamps as UTC instants).

Spark cannot show ``readable_metrics`` of a table with a ``uuid`` column (Iceberg Java
casts the UUID bound to a string and fails), so for ``types.all_v*`` the comparison
leaves ``readable_metrics`` out and a second test compares it without the uuid column.
"""

from __future__ import annotations

import datetime
import decimal
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest

from iceduck.formats.metadata_json import read_table_metadata
from iceduck.io.fileio import read_bytes
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.metadata_tables import METADATA_TABLE_KINDS, DirectManifestSource, metadata_table
from iceduck.spec.table_metadata import TableMetadata
from tests.support.spark_session import CATALOG, CATALOG_DB
from tests.support.spark_warehouse import SparkWarehouse

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

TABLES = [
    "part.mixed_v1",
    "part.identity_v2",
    "part.bucket_v2",
    "part.truncate_v2",
    "part.years_v2",
    "part.months_v2",
    "part.days_v2",
    "part.hours_v2",
    "part.mixed_v3",
    "dml.cow_v2",
    "dml.mor_partitioned_v2",
    "dml.mor_v3",
    "dml.mor_partitioned_v3",
    "dml.eq_delete_v2",
    "dml.eq_delete_v3",
    "dml.eq_delete_partitioned_v2",
    "evolve.partition_v1",
    "evolve.partition_v2",
    "evolve.schema_v2",
    "evolve.defaults_v3",
    "refs.tags_branches_v2",
    "fmt.empty_v2",
    "fmt.v1_unpartitioned",
    "fmt.upgrade_v1_v2_v3",
    "types.all_v2",
    "types.all_v3",
]
#: tables whose readable_metrics Spark cannot show (a uuid column)
UUID_TABLES = {"types.all_v1", "types.all_v2", "types.all_v3"}


# -- fixtures and helpers ----------------------------------------------------------------------


def load_metadata(warehouse: SparkWarehouse, identifier: str) -> tuple[TableMetadata, str]:
    """The table's current metadata, located through the catalog's SQLite rows (read-only)."""
    namespace, table = identifier.rsplit(".", 1)
    uri = f"file:{Path(warehouse.path) / CATALOG_DB}?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            (CATALOG, namespace, table),
        ).fetchone()
    assert row is not None, f"{identifier} is not in the fixture catalog"
    location = row[0]
    return read_table_metadata(read_bytes(location), location), location


def relisted_with_new_row_ids(metadata: TableMetadata) -> bool:
    """Whether some manifest is listed by two snapshots with different ``first_row_id``."""
    source = DirectManifestSource()
    seen: dict[str, set[int | None]] = {}
    for snapshot in metadata.snapshots:
        if snapshot.manifest_list is None:
            continue
        for m in source.manifest_list(snapshot.manifest_list, metadata.format_version):
            seen.setdefault(m.manifest_path, set()).add(m.first_row_id)
    return any(len(ids) > 1 for ids in seen.values())


def spark_arrow_type(t: Any) -> pa.DataType:
    """Spark's own Arrow mapping (``ArrowUtils.toArrowType``, UTC session) of a Spark type."""
    from pyspark.sql import types as st

    simple = {
        st.BooleanType: pa.bool_(),
        st.IntegerType: pa.int32(),
        st.LongType: pa.int64(),
        st.FloatType: pa.float32(),
        st.DoubleType: pa.float64(),
        st.StringType: pa.string(),
        st.BinaryType: pa.binary(),
        st.DateType: pa.date32(),
        st.TimestampType: pa.timestamp("us", tz="UTC"),
        st.TimestampNTZType: pa.timestamp("us"),
    }
    if type(t) in simple:
        return simple[type(t)]
    if isinstance(t, st.DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, st.ArrayType):
        return pa.list_(pa.field("element", spark_arrow_type(t.elementType), t.containsNull))
    if isinstance(t, st.MapType):
        value = pa.field("value", spark_arrow_type(t.valueType), t.valueContainsNull)
        return pa.map_(spark_arrow_type(t.keyType), value)
    if isinstance(t, st.StructType):
        return pa.struct([pa.field(f.name, spark_arrow_type(f.dataType), f.nullable) for f in t.fields])
    raise AssertionError(f"no Arrow mapping for Spark type {t}")


def spark_table(df: DataFrame) -> pa.Table:
    """Collect a Spark DataFrame as Arrow, with Spark's schema even when it has no rows."""
    schema = pa.schema([pa.field(f.name, spark_arrow_type(f.dataType), f.nullable) for f in df.schema.fields])
    batches = df._collect_as_arrow()
    if not batches:
        return schema.empty_table()
    table = pa.Table.from_batches(batches)
    assert table.schema.equals(schema), "the test's Spark -> Arrow mapping disagrees with Spark's"
    return table


def normalize(value: Any, ignore: frozenset[str] = frozenset()) -> Any:
    """A comparable, hashable form: maps as sorted pairs, NaN/-0.0 spelled out, instants in
    UTC; struct fields named in ``ignore`` (at any depth) compare equal whatever they hold."""
    if isinstance(value, dict):
        return tuple((k, "<ignored>" if k in ignore else normalize(v, ignore)) for k, v in value.items())
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):  # a map's pairs
            pairs = ((normalize(k), normalize(v, ignore)) for k, v in value)
            return ("map", tuple(sorted(pairs, key=repr)))
        return tuple(normalize(v, ignore) for v in value)
    if isinstance(value, float):
        return repr(value)  # NaN == NaN, -0.0 != 0.0
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC)
        return ("ts", value.isoformat())
    if isinstance(value, datetime.date | decimal.Decimal):
        return (type(value).__name__, str(value))
    return value


def rows(table: pa.Table, ignore: frozenset[str] = frozenset()) -> list[Any]:
    return sorted((normalize(r, ignore) for r in table.to_pylist()), key=repr)


def assert_same(ours: pa.Table, theirs: pa.Table, what: str, ignore: frozenset[str] = frozenset()) -> None:
    assert ours.schema.equals(theirs.schema), f"{what}: schema\nours:\n{ours.schema}\nspark:\n{theirs.schema}"
    assert ours.num_rows == theirs.num_rows, f"{what}: {ours.num_rows} rows, Spark has {theirs.num_rows}"
    mine, spark = rows(ours, ignore), rows(theirs, ignore)
    for a, b in zip(mine, spark, strict=True):
        assert a == b, f"{what}: first differing row\nours:  {a}\nspark: {b}"


def query(
    spark: SparkSession, identifier: str, kind: str, columns: str = "*", version: int | None = None
) -> Any:
    travel = f" VERSION AS OF {version}" if version is not None else ""
    return spark.sql(f"SELECT {columns} FROM {CATALOG}.{identifier}.{kind}{travel}")


# -- tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("identifier", TABLES)
def test_every_kind_matches_spark(
    spark: SparkSession, spark_warehouse: SparkWarehouse, identifier: str
) -> None:
    metadata, location = load_metadata(spark_warehouse, identifier)
    # Java lists a manifest that several lists hold with whichever row it meets first; when
    # those rows assign different first row ids (upgrade to v3), Spark's all_* answer varies.
    varying = frozenset({"first_row_id"}) if relisted_with_new_row_ids(metadata) else frozenset()
    for kind in METADATA_TABLE_KINDS:
        ours = metadata_table(kind, metadata, location)
        if identifier in UUID_TABLES and "readable_metrics" in ours.schema.names:
            ours = ours.drop_columns(["readable_metrics"])
            theirs = spark_table(query(spark, identifier, kind, ", ".join(ours.schema.names)))
        else:
            theirs = spark_table(query(spark, identifier, kind))
        assert_same(ours, theirs, f"{identifier}.{kind}", varying if kind.startswith("all_") else frozenset())


@pytest.mark.parametrize("identifier", sorted(UUID_TABLES & set(TABLES)))
def test_readable_metrics_of_every_type(
    spark: SparkSession, spark_warehouse: SparkWarehouse, identifier: str
) -> None:
    """Bounds of every Spark-writable type (NaN, infinities, decimals, nested elements, map keys)
    decoded as Java does; the uuid column left out (Spark fails on it)."""
    metadata, location = load_metadata(spark_warehouse, identifier)
    files = metadata_table("files", metadata, location)
    metrics = files.column("readable_metrics").combine_chunks()
    kept = [f for f in metrics.type if f.name != "u"]
    assert len(kept) == metrics.type.num_fields - 1 > 20
    ours = pa.Table.from_arrays(
        [files.column("file_path"), *(metrics.field(f.name) for f in kept)],
        schema=pa.schema([files.schema.field("file_path"), *kept]),
    )
    selected = ", ".join(f"readable_metrics.`{f.name}` AS `{f.name}`" for f in kept)
    theirs = spark_table(query(spark, identifier, "files", f"file_path, {selected}"))
    assert_same(ours, theirs, f"{identifier}.files readable_metrics")


@pytest.mark.parametrize("identifier", ["dml.mor_partitioned_v2", "dml.eq_delete_v3", "evolve.partition_v2"])
def test_time_travel_matches_spark(
    spark: SparkSession, spark_warehouse: SparkWarehouse, identifier: str
) -> None:
    """``snapshot_id`` selects the snapshot of the snapshot-scoped kinds, as VERSION AS OF does."""
    metadata, location = load_metadata(spark_warehouse, identifier)
    assert len(metadata.snapshots) > 1
    for snapshot in metadata.snapshots[:-1]:
        for kind in ("files", "data_files", "delete_files", "entries", "manifests", "partitions"):
            ours = metadata_table(kind, metadata, location, snapshot_id=snapshot.snapshot_id)
            theirs = spark_table(query(spark, identifier, kind, version=snapshot.snapshot_id))
            assert_same(ours, theirs, f"{identifier}.{kind} at {snapshot.snapshot_id}")


def test_manifest_cache_serves_metadata_tables(spark_warehouse: SparkWarehouse) -> None:
    """The session's manifest cache plugs in as the reader: same tables, files parsed once."""
    metadata, location = load_metadata(spark_warehouse, "dml.mor_partitioned_v3")
    cache = ManifestCache()
    for kind in ("files", "entries", "partitions", "manifests", "all_files"):
        direct = metadata_table(kind, metadata, location)
        cached = metadata_table(kind, metadata, location, reader=cache)
        assert cached.equals(direct), kind
    parsed = cache.manifests_parsed
    metadata_table("all_entries", metadata, location, reader=cache)
    assert cache.manifests_parsed == parsed  # every reachable manifest was already parsed
