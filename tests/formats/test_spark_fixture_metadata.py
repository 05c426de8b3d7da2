"""Metadata JSON written by Spark 3.5 + Iceberg 1.10.2 (tests/fixtures/spark), parsed by
iceduck: format versions, snapshot lineage and sequence numbers, v3 row lineage, schemas
after evolution and partition specs, checked against what Spark recorded."""

from __future__ import annotations

import pytest

from iceduck.spec.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from iceduck.spec.types import DecimalType, DoubleType, FloatType, IntegerType, LongType, StringType
from tests.fixtures.spark.parsed import metadata, snapshots
from tests.fixtures.spark.tables import expected

TABLES = sorted(expected())


@pytest.mark.parametrize("identifier", TABLES)
def test_snapshots_are_spark_s_in_commit_order(identifier: str) -> None:
    recorded = expected()[identifier]
    md = metadata(identifier)
    ids = [s.snapshot_id for s in snapshots(identifier)]
    assert ids == [int(i) for i in recorded["snapshot_row_counts"]]
    assert md.format_version == recorded["format_version"]
    assert md.location == recorded["location"]
    assert md.current_snapshot_id == ids[-1]
    assert md.refs["main"].snapshot_id == ids[-1]
    parents = [s.parent_snapshot_id for s in snapshots(identifier)]
    assert parents == [None, *ids[:-1]]


@pytest.mark.parametrize(
    ("identifier", "sequence_numbers", "operations"),
    [
        ("fmt.v1_unpartitioned", [0, 0], ["append", "append"]),  # v1: no sequence numbers
        ("part.mixed_v2", [1], ["append"]),
        ("deletes.position_v2", [1, 2], ["append", "delete"]),
        ("deletes.dv_v3", [1, 2, 3], ["append", "delete", "delete"]),
        (
            "dml.eq_delete_v2",
            [1, 2, 3, 4, 5, 6],
            ["append", "delete", "append", "delete", "delete", "delete"],
        ),
        ("evolve.schema_v2", [1, 2], ["append", "append"]),
    ],
)
def test_sequence_numbers_and_operations(
    identifier: str, sequence_numbers: list[int], operations: list[str]
) -> None:
    md = metadata(identifier)
    assert [s.sequence_number for s in snapshots(identifier)] == sequence_numbers
    assert [s.operation for s in snapshots(identifier)] == operations
    assert md.last_sequence_number == sequence_numbers[-1]


def test_v3_row_lineage() -> None:
    """The append assigns rows 0-19; deletes add no rows, so first-row-id stays at 20."""
    md = metadata("deletes.dv_v3")
    assert md.next_row_id == 20
    assert [(s.first_row_id, s.added_rows) for s in snapshots("deletes.dv_v3")] == [(0, 20), (20, 0), (20, 0)]
    assert metadata("deletes.position_v2").next_row_id is None


def test_merge_on_read_properties() -> None:
    properties = metadata("deletes.dv_v3").properties
    assert {properties[f"write.{op}.mode"] for op in ("delete", "update", "merge")} == {"merge-on-read"}
    assert metadata("fmt.v1_unpartitioned").properties["write.parquet.compression-codec"] == "zstd"


def test_schema_evolution_keeps_ids_and_history() -> None:
    md = metadata("evolve.schema_v2")
    assert [s.schema_id for s in md.schemas] == list(range(10))
    assert md.current_schema_id == 9
    first, current = md.schemas[0], md.schema()
    assert [(f.field_id, f.name, f.field_type) for f in first.fields[:5]] == [
        (1, "id", IntegerType()),
        (2, "f", FloatType()),
        (3, "dec", DecimalType(10, 2)),
        (4, "name", StringType()),
        (5, "dropped", StringType()),
    ]
    # promoted in place, renamed, dropped (5) and re-added under a new id (10)
    assert [(f.field_id, f.name) for f in current.fields] == [
        (1, "id"), (2, "f"), (3, "dec"), (4, "full_name"), (6, "s"), (9, "added"), (10, "dropped"),
    ]  # fmt: skip
    assert current.find_type(1) == LongType()
    assert current.find_type(2) == DoubleType()
    assert current.find_type(3) == DecimalType(20, 2)
    struct = current.find_field("s").field_type
    assert [(f.field_id, f.name) for f in struct.fields] == [(7, "a"), (8, "bb"), (11, "c")]  # type: ignore[attr-defined]
    assert md.last_column_id == 11


def test_identifier_fields_of_the_equality_delete_table() -> None:
    schema = metadata("dml.eq_delete_v2").schema()
    assert schema.identifier_field_ids == (1,)
    assert schema.find_field(1).required


def test_partition_specs() -> None:
    mixed = metadata("part.mixed_v2").spec()
    assert [(f.source_id, f.field_id, f.name, f.transform) for f in mixed.fields] == [
        (3, 1000, "cat", IdentityTransform()),
        (1, 1001, "id_bucket", BucketTransform(4)),
        (4, 1002, "ts_day", DayTransform()),
    ]
    truncate = metadata("part.truncate_v2").spec()
    assert [(f.name, f.transform) for f in truncate.fields] == [
        ("i_trunc", TruncateTransform(10)),
        ("l_trunc", TruncateTransform(10)),
        ("dec_trunc", TruncateTransform(50)),
        ("s_trunc", TruncateTransform(3)),
        ("b_trunc", TruncateTransform(2)),
    ]
    assert metadata("deletes.dv_v3").spec().fields == ()
