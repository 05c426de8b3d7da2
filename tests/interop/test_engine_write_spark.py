"""Spark reads the data files write_data_files writes, and they carry the partition values
and metrics Spark itself computes for the same rows.

Two tables with one schema and spec in the namespace ``writer_test``: Spark inserts the rows
into ``t_spark``; iceduck writes the same rows as files of ``t_iceduck``, registered through
the Java API with iceduck's own partition tuples and metrics (``DataFiles.builder ...
withMetrics``; Spark's ``add_files`` would re-derive them).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.engine.connection import open_database
from iceduck.engine.write import FileTarget, write_data_files
from iceduck.formats.metadata_json import read_table_metadata
from iceduck.io.fileio import read_bytes
from iceduck.spec.manifest import DataFile
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import UUIDType
from tests.support.spark_session import CATALOG

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = f"{CATALOG}.writer_test"
COLUMNS = """id BIGINT NOT NULL, ts TIMESTAMP, ntz TIMESTAMP_NTZ, s STRING, dec DECIMAL(9,2),
big DECIMAL(38,6), d DATE, f FLOAT, dbl DOUBLE, b BINARY, flag BOOLEAN, st STRUCT<a: INT, x: DOUBLE>,
li ARRAY<STRING>, m MAP<STRING, BIGINT>"""
SPEC = "days(ts), bucket(4, id), truncate(2, s)"
#: DuckDB rows (in the column order above); Spark inserts the same rows from a Parquet copy
ROWS = """
SELECT i AS id, TIMESTAMPTZ '1969-12-30 22:00:00+00' + to_hours(i * 5) AS ts,
       TIMESTAMP '2024-02-29 23:59:59.999999' + to_minutes(i) AS ntz,
       CASE WHEN i % 6 = 0 THEN NULL
            ELSE ['apple', 'apricot', 'b', '', 'é clair', '😀x'][i % 6] || (i % 3) END AS s,
       (i * 1.37 - 50)::DECIMAL(9,2) AS dec, (i * 123456789.123456)::DECIMAL(38,6) AS big,
       DATE '1969-12-25' + i::INTEGER AS d,
       CASE WHEN i % 7 = 0 THEN 'nan'::FLOAT WHEN i % 11 = 0 THEN NULL ELSE i / 4 - 3 END AS f,
       CASE WHEN i % 5 = 0 THEN 'nan'::DOUBLE WHEN i % 13 = 0 THEN -0.0 ELSE i * 1.5 END AS dbl,
       CASE WHEN i % 4 = 0 THEN NULL ELSE encode('bin' || i) END AS b, i % 2 = 0 AS flag,
       CASE WHEN i % 9 = 0 THEN NULL
            ELSE {'a': i::INTEGER, 'x': CASE WHEN i % 3 = 0 THEN 'nan'::DOUBLE ELSE i END} END AS st,
       CASE WHEN i % 8 = 0 THEN NULL ELSE ['x' || i, NULL] END AS li, MAP {'k': i} AS m
FROM range(60) t(i)
"""


def _java_map(jvm: Any, key_value: str, values: dict[int, Any] | None) -> Any:
    """A ``Map<Integer, Long|ByteBuffer>`` built on the Java side (py4j would box small ints
    as Integer), through Iceberg's JSON single-value parser."""
    if values is None:
        return None
    types = jvm.org.apache.iceberg.types.Types
    value_type = types.LongType.get() if key_value == "long" else types.BinaryType.get()
    map_type = types.MapType.ofRequired(1, 2, types.IntegerType.get(), value_type)
    keys = list(values)
    vals = [values[k] if key_value == "long" else values[k].hex() for k in keys]
    return jvm.org.apache.iceberg.SingleValueParser.fromJson(
        map_type, json.dumps({"keys": keys, "values": vals})
    )


def _partition_data(jvm: Any, table: Any, partition: tuple) -> Any:
    """iceduck's partition tuple as Java's PartitionData (ints, strings and nulls here);
    ``withPartitionPath`` would not URL-decode the path."""
    data = jvm.org.apache.iceberg.PartitionData(table.spec().partitionType())
    for i, value in enumerate(partition):
        data.set(i, value)
    return data


def _register(spark: SparkSession, table: Any, files: list[DataFile]) -> None:
    jvm = spark._jvm
    types = jvm.org.apache.iceberg.types.Types
    append = table.newAppend()
    for f in files:
        metrics = jvm.org.apache.iceberg.Metrics(
            None,
            _java_map(jvm, "long", f.column_sizes),
            _java_map(jvm, "long", f.value_counts),
            _java_map(jvm, "long", f.null_value_counts),
            _java_map(jvm, "long", f.nan_value_counts),
            _java_map(jvm, "binary", f.lower_bounds),
            _java_map(jvm, "binary", f.upper_bounds),
        )
        offsets = jvm.org.apache.iceberg.SingleValueParser.fromJson(
            types.ListType.ofRequired(1, types.LongType.get()), json.dumps(f.split_offsets)
        )
        builder = (
            jvm.org.apache.iceberg.DataFiles.builder(table.spec())
            .withPath(f.file_path)
            .withFormat("PARQUET")
            .withFileSizeInBytes(f.file_size_in_bytes)
            .withMetrics(metrics)
            .withRecordCount(f.record_count)
            .withSplitOffsets(offsets)
            .withPartition(_partition_data(jvm, table, f.partition))
        )
        append = append.appendFile(builder.build())
    append.commit()


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {NS}")
    for name in ("t_spark", "t_iceduck"):
        spark.sql(f"DROP TABLE IF EXISTS {NS}.{name} PURGE")
        spark.sql(f"CREATE TABLE {NS}.{name} ({COLUMNS}) USING iceberg PARTITIONED BY ({SPEC})")
    con = open_database()
    rows_file = tmp_path_factory.mktemp("writer") / "rows.parquet"
    con.execute(f"COPY ({ROWS}) TO '{rows_file}' (FORMAT parquet)")
    spark.read.parquet(str(rows_file)).createOrReplaceTempView("writer_rows")
    spark.sql(
        f"INSERT INTO {NS}.t_spark SELECT id, ts, CAST(ntz AS TIMESTAMP_NTZ), s, dec, big, d, f, dbl, b, "
        "flag, st, li, m FROM writer_rows"
    )
    jtable = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"{NS}.t_iceduck"
    )
    location = jtable.operations().current().metadataFileLocation()
    metadata = read_table_metadata(read_bytes(location), location)
    schema, spec, order = metadata.schema(), metadata.spec(), metadata.sort_order()
    target = FileTarget(
        schema, spec, order, metadata.properties, f"{metadata.location}/data", metadata.format_version
    )
    files = write_data_files(con, f"SELECT * FROM read_parquet('{rows_file}')", target)
    _register(spark, jtable, files)
    return {"files": files, "schema": schema}


def _rows(spark: SparkSession, name: str) -> list[Any]:
    return sorted(map(tuple, spark.sql(f"SELECT * FROM {NS}.{name}").collect()), key=repr)


def test_spark_reads_the_written_files(spark: SparkSession, tables: dict[str, Any]):
    spark_rows, iceduck_rows = _rows(spark, "t_spark"), _rows(spark, "t_iceduck")
    assert len(iceduck_rows) == 60
    assert repr(iceduck_rows) == repr(spark_rows)  # repr: NaN equals NaN


def test_spark_prunes_with_the_written_metrics(spark: SparkSession, tables: dict[str, Any]):
    for where in [
        "id = 17",
        "s = 'apple1'",
        "dbl > 80",
        "ts < TIMESTAMP '1970-01-01 00:00:00 UTC'",
        "st.a = 4",
    ]:
        got = spark.sql(f"SELECT id FROM {NS}.t_iceduck WHERE {where} ORDER BY id").collect()
        expected = spark.sql(f"SELECT id FROM {NS}.t_spark WHERE {where} ORDER BY id").collect()
        assert got == expected, where


def test_partitions_and_metrics_equal_sparks(spark: SparkSession, tables: dict[str, Any]):
    columns = (
        "partition, record_count, value_counts, null_value_counts, nan_value_counts, lower_bounds, "
        "upper_bounds"
    )
    spark_files = {
        repr(r["partition"]): r for r in spark.sql(f"SELECT {columns} FROM {NS}.t_spark.files").collect()
    }
    ours = {
        repr(r["partition"]): r for r in spark.sql(f"SELECT {columns} FROM {NS}.t_iceduck.files").collect()
    }
    assert len(spark_files) == len(
        spark.sql(f"SELECT * FROM {NS}.t_spark.files").collect()
    )  # 1 file/partition
    assert ours.keys() == spark_files.keys()
    for key, theirs in spark_files.items():
        mine = ours[key]
        for column in columns.split(", ")[1:]:
            assert mine[column] == theirs[column], (key, column)


def test_file_paths_look_like_javas(tables: dict[str, Any], spark: SparkSession):
    spark_dirs = {
        Path(r["file_path"].removeprefix("file:")).parent.name + "|" + Path(r["file_path"]).parent.parent.name
        for r in spark.sql(f"SELECT file_path FROM {NS}.t_spark.files").collect()
    }
    ours = {
        Path(f.file_path).parent.name + "|" + Path(f.file_path).parent.parent.name for f in tables["files"]
    }
    assert ours == spark_dirs


@pytest.mark.parametrize("version", [2, 3])
def test_spark_reads_every_type_written_by_iceduck(spark: SparkSession, spark_warehouse: Any, version: int):
    """Copy ``types.all_v<version>`` (uuid, fixed, decimals of every width, timestamps, nested
    lists/maps/structs, NaNs) row for row into a new table with the same schema; Spark must
    read the copy exactly as the original."""
    jvm = spark._jvm
    source_name = f"{CATALOG}.types.all_v{version}"
    source = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, source_name)
    catalog = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergCatalog(spark._jsparkSession, CATALOG)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {NS}")
    spark.sql(f"DROP TABLE IF EXISTS {NS}.types_v{version} PURGE")
    props = jvm.java.util.HashMap()
    props.put("format-version", str(version))
    ident = jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"writer_test.types_v{version}")
    table = catalog.createTable(ident, source.schema(), source.spec(), props)
    location = source.operations().current().metadataFileLocation()
    source_meta = read_table_metadata(read_bytes(location), location)
    location = table.operations().current().metadataFileLocation()
    metadata = read_table_metadata(read_bytes(location), location)
    snapshot = source_meta.current_snapshot()
    paths = [
        r["file_path"]
        for r in spark.sql(f"SELECT file_path FROM {source_name}.files WHERE content = 0").collect()
    ]
    assert snapshot is not None and paths
    target = FileTarget(
        metadata.schema(),
        metadata.spec(),
        metadata.sort_order(),
        metadata.properties,
        f"{metadata.location}/data",
        metadata.format_version,
    )
    con = open_database()
    files = write_data_files(con, f"SELECT * FROM read_parquet({paths!r})", target)
    _register(spark, table, files)
    original = _json_rows(spark, source_name)
    copy = _json_rows(spark, f"{NS}.types_v{version}")
    assert len(copy) == len(original) > 0
    assert copy == original


def _json_rows(spark: SparkSession, name: str) -> list[str]:
    """Rows as Spark's JSON text (year-1 timestamps do not convert to Python datetimes)."""
    return sorted(r[0] for r in spark.sql(f"SELECT to_json(struct(*)) FROM {name}").collect())


FLAT_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "u", "required": False, "type": "uuid"},
        {"id": 3, "name": "fx", "required": False, "type": "fixed[4]"},
        {"id": 4, "name": "d38", "required": False, "type": "decimal(38, 10)"},
        {"id": 5, "name": "s", "required": False, "type": "string"},
    ],
}
FLAT_SPEC = {
    "spec-id": 0,
    "fields": [
        {"name": "u_bucket", "transform": "bucket[4]", "source-id": 2, "field-id": 1000},
        {"name": "fx_bucket", "transform": "bucket[3]", "source-id": 3, "field-id": 1001},
        {"name": "d38_bucket", "transform": "bucket[5]", "source-id": 4, "field-id": 1002},
        {"name": "s_bucket", "transform": "bucket[6]", "source-id": 5, "field-id": 1003},
    ],
}


def test_vectorised_read_of_uuid_fixed_decimal_and_java_buckets(spark: SparkSession):
    """A flat table (Spark's vectorised Parquet reader): uuid, fixed (written as binary),
    decimal(38); every partition value equals Java's ``system.bucket`` of the row."""
    jvm = spark._jvm
    catalog = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergCatalog(spark._jsparkSession, CATALOG)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {NS}")
    spark.sql(f"DROP TABLE IF EXISTS {NS}.flat PURGE")
    schema = jvm.org.apache.iceberg.SchemaParser.fromJson(json.dumps(FLAT_SCHEMA))
    spec = jvm.org.apache.iceberg.PartitionSpecParser.fromJson(schema, json.dumps(FLAT_SPEC))
    table = catalog.createTable(
        jvm.org.apache.iceberg.catalog.TableIdentifier.parse("writer_test.flat"), schema, spec
    )
    location = table.operations().current().metadataFileLocation()
    metadata = read_table_metadata(read_bytes(location), location)
    target = FileTarget(
        metadata.schema(),
        metadata.spec(),
        metadata.sort_order(),
        metadata.properties,
        f"{metadata.location}/data",
        metadata.format_version,
    )
    rows = """SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE md5(i::VARCHAR)::UUID END,
                     CASE WHEN i % 7 = 0 THEN NULL ELSE encode(right('000' || i, 4)) END,
                     (i * 987654321.0123456789 - 1e12)::DECIMAL(38, 10), 'é' || i
              FROM range(200) t(i)"""
    _register(spark, table, write_data_files(open_database(), rows, target))
    got = spark.sql(
        f"SELECT id, CAST(u AS STRING) AS u, hex(fx) AS fx, CAST(d38 AS STRING) AS d38, s, "
        "_partition.u_bucket AS u_bucket, "
        f"_partition.fx_bucket = {CATALOG}.system.bucket(3, fx) AS ok_fx, "
        f"_partition.d38_bucket = {CATALOG}.system.bucket(5, d38) AS ok_d, "
        f"_partition.s_bucket = {CATALOG}.system.bucket(6, s) AS ok_s FROM {NS}.flat ORDER BY id"
    ).collect()
    assert len(got) == 200
    expected = (
        open_database()
        .execute(
            "SELECT CAST(c1 AS VARCHAR), hex(c2), CAST(c3 AS VARCHAR) "
            f"FROM ({rows}) t(c0, c1, c2, c3, c4) ORDER BY c0"
        )
        .fetchall()
    )
    assert [(r["u"], r["fx"], r["d38"]) for r in got] == expected
    # Spark reads uuid as a string, so its system.bucket hashes text: compare with the spec's
    bucket_uuid = parse_transform("bucket[4]").apply(UUIDType())
    assert [r["u_bucket"] for r in got] == [bucket_uuid(r["u"] and uuid.UUID(r["u"])) for r in got]
    checks = {k: [r[k] for r in got] for k in ("ok_fx", "ok_d", "ok_s")}
    assert {k: sorted(set(v), key=repr) for k, v in checks.items()} == {
        "ok_fx": [None, True],
        "ok_d": [True],
        "ok_s": [True],
    }
