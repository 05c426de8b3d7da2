"""The Spark harness itself: the fixture warehouse covers what it claims.

The tests read the SQLite catalog and the metadata JSON with the standard library and ask
Spark for data; they do not use iceduck's readers, so a failure here points at the fixture,
not at iceduck. (The Jackson shim Spark runs with is tested in tests/spark/test_shim.py.)
"""

from __future__ import annotations

import datetime
import json
import math
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.support.spark_session import CATALOG, CATALOG_DB
from tests.support.spark_warehouse import ALL_TYPES_ROWS, EMPTY_NAMESPACES, SparkWarehouse, TableInfo

# --- the warehouse ------------------------------------------------------------------------


def _catalog_rows(path: Path) -> dict[str, tuple[str, str | None, str | None]]:
    with sqlite3.connect(path / CATALOG_DB) as db:
        rows = db.execute(
            "SELECT table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type"
            " FROM iceberg_tables WHERE catalog_name = ?",
            (CATALOG,),
        ).fetchall()
    return {f"{ns}.{name}": (loc, prev, kind) for ns, name, loc, prev, kind in rows}


def _metadata(wh: SparkWarehouse, info: TableInfo) -> dict[str, Any]:
    return json.loads(Path(_catalog_rows(wh.path)[info.identifier][0]).read_text())


def _with(wh: SparkWarehouse, feature: str) -> list[TableInfo]:
    found = [t for t in wh.tables.values() if feature in t.features]
    assert found, f"no fixture table has feature {feature}"
    return found


def _table_files(info: TableInfo, wh: SparkWarehouse, suffix: str) -> list[Path]:
    folder = wh.path.joinpath(*info.identifier.split(".")) / "data"
    return [p for p in folder.rglob(f"*{suffix}") if not p.name.startswith(".")]


def test_every_table_is_in_the_sqlite_catalog(spark_warehouse: SparkWarehouse) -> None:
    # other test modules add their own namespaces to the shared warehouse: only the
    # fixture's tables are the harness's business
    rows = {k: v for k, v in _catalog_rows(spark_warehouse.path).items() if k in spark_warehouse.tables}
    assert set(rows) == set(spark_warehouse.tables)
    for identifier, (location, previous, kind) in rows.items():
        assert Path(location).is_file(), identifier
        assert location.endswith(".metadata.json")
        assert kind == "TABLE"
        assert previous is None or Path(previous).is_file()
    with sqlite3.connect(spark_warehouse.path / CATALOG_DB) as db:
        exists = db.execute(
            "SELECT namespace FROM iceberg_namespace_properties WHERE property_key = 'exists'"
        ).fetchall()
    assert set(EMPTY_NAMESPACES) | {"deep.er"} <= {ns for (ns,) in exists}


def test_format_versions_match(spark_warehouse: SparkWarehouse) -> None:
    versions = set()
    for info in spark_warehouse.tables.values():
        assert _metadata(spark_warehouse, info)["format-version"] == info.format_version, info.name
        versions.add(info.format_version)
    assert versions == {1, 2, 3}


def test_spark_reads_the_expected_row_counts(spark, spark_warehouse: SparkWarehouse) -> None:
    for info in spark_warehouse.tables.values():
        assert spark.table(info.name).count() == info.row_count, info.name
        for ref, count in info.ref_row_counts.items():
            got = spark.sql(f"SELECT count(*) FROM {info.name} VERSION AS OF '{ref}'").collect()[0][0]
            assert got == count, f"{info.name}@{ref}"


def test_marker_is_applied(request: pytest.FixtureRequest, spark) -> None:
    assert request.node.get_closest_marker("spark") is not None


def test_v2_merge_on_read_writes_position_delete_files(spark, spark_warehouse: SparkWarehouse) -> None:
    for info in _with(spark_warehouse, "delete:position"):
        deletes = spark.sql(f"SELECT content, file_format FROM {info.name}.delete_files").collect()
        assert (1, "PARQUET") in {(r.content, r.file_format) for r in deletes}, info.name
        assert _table_files(info, spark_warehouse, "-deletes.parquet"), info.name


def test_v3_merge_on_read_writes_deletion_vectors(spark, spark_warehouse: SparkWarehouse) -> None:
    for info in _with(spark_warehouse, "delete:dv"):
        assert info.format_version == 3
        deletes = spark.sql(
            f"SELECT content, file_format, referenced_data_file, content_offset FROM {info.name}.delete_files"
        ).collect()
        dvs = [r for r in deletes if r.file_format == "PUFFIN"]
        assert dvs and all(r.content == 1 and r.referenced_data_file and r.content_offset for r in dvs)
        puffins = _table_files(info, spark_warehouse, ".puffin")
        assert puffins and all(p.read_bytes()[:4] == b"PFA1" for p in puffins), info.name
    upgraded = spark_warehouse.tables["fmt.upgrade_v1_v2_v3"]
    formats = {r[0] for r in spark.sql(f"SELECT file_format FROM {upgraded.name}.delete_files").collect()}
    assert formats == {"PARQUET", "PUFFIN"}  # a v2 position-delete file lives on next to v3 DVs


def test_copy_on_write_leaves_no_delete_files(spark, spark_warehouse: SparkWarehouse) -> None:
    for info in _with(spark_warehouse, "delete:none"):
        assert spark.sql(f"SELECT * FROM {info.name}.delete_files").count() == 0
        ops = [r[0] for r in spark.sql(f"SELECT operation FROM {info.name}.snapshots").collect()]
        assert "overwrite" in ops, info.name


def test_equality_deletes_apply(spark, spark_warehouse: SparkWarehouse) -> None:
    for info in _with(spark_warehouse, "delete:equality"):
        eq = spark.sql(f"SELECT equality_ids FROM {info.name}.delete_files WHERE content = 2").collect()
        assert eq, info.name
    for version in (2, 3):
        name = spark_warehouse.tables[f"dml.eq_delete_v{version}"].name
        rows = {r.id: (r.name, r.cat) for r in spark.table(name).collect()}
        assert not {3, 11, 13, 21, 22, 23} & set(rows)  # by id, by name, Spark's own, by (id, cat)
        assert rows[7] == ("n7-again", "b")  # re-inserted after its delete: newer sequence number
        assert rows[24] == ("n24", "a")  # (24, 'b') did not match
        assert all(name is not None for name, _ in rows.values())  # NULL matched NULL
    name = spark_warehouse.tables["dml.eq_delete_partitioned_v2"].name
    rows = {r.id: (r.name, r.cat) for r in spark.table(name).collect()}
    assert not {0, 2, 10} & set(rows)
    assert rows[5] == (None, "b") and rows[15] == (None, "b") and rows[3] == ("n3", "b")


def test_partition_evolution_specs(spark_warehouse: SparkWarehouse) -> None:
    for info in _with(spark_warehouse, "partition-evolution"):
        specs = _metadata(spark_warehouse, info)["partition-specs"]
        assert len(specs) == 5, info.name
        transforms = [f["transform"] for f in specs[-1]["fields"]]
        assert transforms == (["void", "void", "day"] if info.format_version == 1 else ["day"]), info.name


def test_schema_evolution_reads_by_field_id(spark, spark_warehouse: SparkWarehouse) -> None:
    name = spark_warehouse.tables["evolve.schema_v2"].name
    rows = {r.id: r for r in spark.table(name).collect()}
    assert rows[1].dropped is None and rows[1].full_name == "one" and rows[1].f == 1.5
    assert rows[9999999999].dropped == "new-3" and rows[9999999999].s.bb == "z"
    name = spark_warehouse.tables["evolve.defaults_v3"].name
    assert sorted(tuple(r) for r in spark.table(name).collect() if r.id < 3) == [
        (1, 42, "dflt"),
        (2, 42, "dflt"),
    ]
    fields = _metadata(spark_warehouse, spark_warehouse.tables["evolve.defaults_v3"])["schemas"][-1]["fields"]
    assert {f["name"]: f.get("initial-default") for f in fields} == {"id": None, "c": 42, "t": "dflt"}


def test_identity_partition_values_round_trip(spark, spark_warehouse: SparkWarehouse) -> None:
    name = spark_warehouse.tables["part.identity_v2"].name
    strings = {r.s for r in spark.table(name).collect()}
    assert {"a/b", "x=y", "with space", "", None, "%25", "😀", "'quote"} <= strings


def _micros(value: datetime.datetime | None) -> int | None:
    if value is None:
        return None
    naive = value.astimezone(datetime.UTC).replace(tzinfo=None) if value.tzinfo else value
    return (naive - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)


def _same(expected: Any, actual: Any, single: bool) -> bool:
    if isinstance(expected, float):
        fmt = "<f" if single else "<d"
        return (math.isnan(expected) and math.isnan(actual)) or struct.pack(fmt, expected) == struct.pack(
            fmt, actual
        )
    return expected == actual


def test_all_types_round_trip_through_spark(spark, spark_warehouse: SparkWarehouse) -> None:
    for info in _with(spark_warehouse, "all-types"):
        columns = [f.name for f in spark.table(info.name).schema.fields]
        assert columns[-2:] == ["u", "fx"]
        # Timestamps as micros: pyspark would convert them through the local time zone.
        select = [f"unix_micros({c}) AS {c}" if c == "ts" else c for c in columns]
        select = ["unix_micros(cast(tsn AS timestamp)) AS tsn" if c == "tsn" else c for c in select]
        got = {r.id: r.asDict() for r in spark.sql(f"SELECT {', '.join(select)} FROM {info.name}").collect()}
        assert len(got) == len(ALL_TYPES_ROWS)
        for row in ALL_TYPES_ROWS:
            for column in columns:
                expected = row.get(column)
                if column in ("ts", "tsn"):
                    expected = _micros(expected)
                actual = got[row["id"]][column]
                assert _same(expected, actual, column == "f"), (info.name, row["id"], column, actual)
        metadata = _metadata(spark_warehouse, info)
        types = {f["name"]: f["type"] for f in metadata["schemas"][-1]["fields"]}
        assert (types["u"], types["fx"], types["ts"], types["tsn"]) == (
            "uuid",
            "fixed[4]",
            "timestamptz",
            "timestamp",
        )
