"""MetadataBuilder, new_table_metadata and replace_table_metadata: Java's TableMetadata rules."""

from __future__ import annotations

import dataclasses

import pytest

from iceduck.errors import CommitConflictError, NotFoundError, UnsupportedError, ValidationError
from iceduck.formats.metadata_json import read_table_metadata, write_table_metadata
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import MAIN_BRANCH, RefType, Snapshot, SnapshotRef
from iceduck.spec.sort import UNSORTED, NullOrder, SortDirection, SortField, SortOrder
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
    TimestampNanoType,
)
from iceduck.txn.builder import MetadataBuilder, new_table_metadata, replace_table_metadata

# Input ids are arbitrary (as a parser would make them); only names and shape matter.
NESTED_INPUT = Schema(
    (
        NestedField(101, "a", IntegerType()),
        NestedField(
            102,
            "s",
            StructType(
                (
                    NestedField(103, "x", IntegerType()),
                    NestedField(104, "y", StructType((NestedField(105, "z", IntegerType()),))),
                )
            ),
        ),
        NestedField(106, "l", ListType(107, StructType((NestedField(108, "p", IntegerType()),)))),
        NestedField(
            109, "m", MapType(110, StringType(), 111, StructType((NestedField(112, "q", IntegerType()),)))
        ),
        NestedField(113, "b", LongType(), required=True),
        NestedField(114, "mm", MapType(115, IntegerType(), 116, ListType(117, IntegerType()))),
    ),
    identifier_field_ids=(113,),
)
#: the ids Spark 3.5 / Iceberg 1.10 gave this very CREATE TABLE (see tests/interop/test_txn_builder_spark.py,
#: which checks it live): a struct's own fields first, then each field's type in order
SPARK_IDS = {
    "a": 1, "s": 2, "l": 3, "m": 4, "b": 5, "mm": 6, "s.x": 7, "s.y": 8, "s.y.z": 9,
    "l.element": 10, "l.element.p": 11, "m.key": 12, "m.value": 13, "m.value.q": 14,
    "mm.key": 15, "mm.value": 16, "mm.value.element": 17,
}  # fmt: skip
BUCKET_B_AND_A = PartitionSpec(
    0,
    (
        PartitionField(113, 5000, "b_bucket", parse_transform("bucket[4]")),
        PartitionField(101, 5001, "a", parse_transform("identity")),
    ),
)


def _ids(schema: Schema) -> dict[str, int]:
    return {schema.column_name(i): i for i in schema.field_ids()}


def _table(**properties: str) -> TableMetadata:
    return new_table_metadata(NESTED_INPUT, BUCKET_B_AND_A, UNSORTED, "/w/t/", properties, now_ms=5)


def _snapshot(sid: int, seq: int, parent: int | None, ts: int = 100, **kw: int) -> Snapshot:
    return Snapshot(sid, ts, {"operation": "append"}, parent, seq, f"/w/t/metadata/snap-{sid}.avro", **kw)


# -- new tables ----------------------------------------------------------------------------------


def test_new_table_assigns_ids_as_spark_does() -> None:
    md = _table()
    schema = md.schema()
    assert _ids(schema) == SPARK_IDS
    assert md.last_column_id == 17
    assert schema.schema_id == 0 and schema.identifier_field_ids == (5,)
    assert md.partition_specs == (
        PartitionSpec(
            0,
            (
                PartitionField(5, 1000, "b_bucket", parse_transform("bucket[4]")),
                PartitionField(1, 1001, "a", parse_transform("identity")),
            ),
        ),
    )
    assert md.last_partition_id == 1001
    assert md.sort_orders == (UNSORTED,) and md.default_sort_order_id == 0
    assert md.location == "/w/t" and md.last_updated_ms == 5
    assert md.current_snapshot_id is None and md.snapshots == () and md.refs == {}


def test_new_table_properties_as_java() -> None:
    md = _table(**{"format-version": "3", "foo": "bar", "current-snapshot-id": "7"})
    assert md.format_version == 3 and md.next_row_id == 0
    assert md.properties == {"write.parquet.compression-codec": "zstd", "foo": "bar"}
    assert _table(**{"write.parquet.compression-codec": "snappy"}).properties == {
        "write.parquet.compression-codec": "snappy"
    }
    v1 = _table(**{"format-version": "1"})
    assert v1.format_version == 1 and v1.next_row_id is None
    with pytest.raises(UnsupportedError, match="format-version 4"):
        _table(**{"format-version": "4"})
    with pytest.raises(ValidationError, match="format-version must be"):
        _table(**{"format-version": "two"})


def test_new_table_sorted_and_unpartitioned() -> None:
    order = SortOrder(
        9, (SortField(113, parse_transform("identity"), SortDirection.DESC, NullOrder.NULLS_LAST),)
    )
    md = new_table_metadata(NESTED_INPUT, PartitionSpec(0, ()), order, "/w/t", {})
    assert md.sort_orders == (
        SortOrder(1, (SortField(5, parse_transform("identity"), SortDirection.DESC, NullOrder.NULLS_LAST),)),
    )
    assert md.default_sort_order_id == 1
    assert md.last_partition_id == 999


def test_new_table_refuses_v3_types_in_v2() -> None:
    schema = Schema((NestedField(1, "ts", TimestampNanoType()),))
    with pytest.raises(ValidationError, match=r"'ts'.*needs format-version 3"):
        new_table_metadata(schema, PartitionSpec(0, ()), UNSORTED, "/w/t", {})
    assert new_table_metadata(schema, PartitionSpec(0, ()), UNSORTED, "/w/t", {}, format_version=3)


def test_new_table_spec_on_unknown_column() -> None:
    spec = PartitionSpec(0, (PartitionField(999, 1000, "x", parse_transform("identity")),))
    with pytest.raises(ValidationError, match="field id 999"):
        new_table_metadata(NESTED_INPUT, spec, UNSORTED, "/w/t", {})


def test_new_table_metadata_round_trips_through_json() -> None:
    for version in ("1", "2", "3"):
        md = _table(**{"format-version": version})
        assert read_table_metadata(write_table_metadata(md), "x") == md


# -- builder: schemas, specs, orders, properties -------------------------------------------------


def test_add_schema_reuses_equal_and_numbers_new() -> None:
    md = _table()
    b = MetadataBuilder(md)
    assert b.add_schema(dataclasses.replace(md.schema(), schema_id=42)) == 0
    assert b.build() is md  # nothing changed
    wider = Schema((*md.schema().fields, NestedField(18, "c", StringType())), 0, (5,))
    assert b.add_schema(wider) == 1
    b.set_current_schema(1)
    out = b.build(now_ms=9)
    assert out.current_schema_id == 1 and out.last_column_id == 18 and out.last_updated_ms == 9
    assert [s.schema_id for s in out.schemas] == [0, 1]
    # dropping a column keeps last-column-id
    b2 = MetadataBuilder(out)
    narrow = Schema(md.schema().fields[:1], 0)
    b2.set_current_schema(b2.add_schema(narrow))
    assert b2.build().last_column_id == 18
    with pytest.raises(NotFoundError):
        MetadataBuilder(md).set_current_schema(7)


def test_add_partition_spec_and_sort_order_ids() -> None:
    md = _table()
    b = MetadataBuilder(md)
    assert b.add_partition_spec(dataclasses.replace(md.spec(), spec_id=3)) == 0
    by_a = PartitionSpec(0, (PartitionField(1, 1002, "a_trunc", parse_transform("truncate[2]")),))
    assert b.add_partition_spec(by_a) == 1
    b.set_default_spec(1)
    assert b.add_sort_order(UNSORTED) == 0
    order = SortOrder(0, (SortField(1, parse_transform("identity")),))
    assert b.add_sort_order(order) == 1
    assert b.add_sort_order(SortOrder(5, order.fields)) == 1
    b.set_default_sort_order(1)
    out = b.build()
    assert out.default_spec_id == 1 and out.last_partition_id == 1002
    assert out.default_sort_order_id == 1 and [o.order_id for o in out.sort_orders] == [0, 1]
    with pytest.raises(ValidationError, match="does not exist"):
        b.add_partition_spec(PartitionSpec(0, (PartitionField(77, 1003, "x", parse_transform("identity")),)))


def test_v1_specs_need_sequential_ids() -> None:
    b = MetadataBuilder(_table(**{"format-version": "1"}))
    gap = PartitionSpec(0, (PartitionField(1, 1005, "a", parse_transform("identity")),))
    with pytest.raises(ValidationError, match="1000, 1001"):
        b.add_partition_spec(gap)


def test_properties_and_format_version() -> None:
    md = _table(keep="1", drop="2")
    b = MetadataBuilder(md)
    b.set_properties({"new": "3", "format-version": "3"})
    b.remove_properties(["drop", "absent"])
    out = b.build()
    assert out.properties == {"write.parquet.compression-codec": "zstd", "keep": "1", "new": "3"}
    assert out.format_version == 3 and out.next_row_id == 0
    with pytest.raises(ValidationError, match="cannot downgrade a v3 table to v2"):
        MetadataBuilder(out).upgrade_format_version(2)
    with pytest.raises(ValidationError, match="reserved"):
        MetadataBuilder(out).set_properties({"uuid": "x"})
    v3 = read_table_metadata(write_table_metadata(out), "x")
    assert v3.format_version == 3 and "format-version" not in v3.properties


# -- builder: snapshots and refs -----------------------------------------------------------------


def test_snapshots_refs_and_snapshot_log() -> None:
    md = _table()
    b = MetadataBuilder(md)
    b.add_snapshot(_snapshot(11, 1, None, ts=100))
    b.set_ref(MAIN_BRANCH, SnapshotRef(11, RefType.BRANCH))
    s1 = b.build(now_ms=150)
    assert s1.current_snapshot_id == 11 and s1.last_sequence_number == 1
    assert [(e.timestamp_ms, e.snapshot_id) for e in s1.snapshot_log] == [(100, 11)]

    b = MetadataBuilder(s1)
    b.add_snapshot(_snapshot(12, 2, 11, ts=200))
    b.set_ref("audit", SnapshotRef(12, RefType.BRANCH))
    b.set_ref("v1", SnapshotRef(11, RefType.TAG))
    s2 = b.build(now_ms=250)
    assert s2.current_snapshot_id == 11 and set(s2.refs) == {"main", "audit", "v1"}
    assert len(s2.snapshot_log) == 1  # only main is logged

    b = MetadataBuilder(s2)
    b.set_ref(MAIN_BRANCH, SnapshotRef(12, RefType.BRANCH))  # fast-forward: time of the change
    b.remove_ref("v1")
    s3 = b.build(now_ms=300)
    assert [(e.timestamp_ms, e.snapshot_id) for e in s3.snapshot_log] == [(100, 11), (300, 12)]
    assert "v1" not in s3.refs
    assert read_table_metadata(write_table_metadata(s3), "x") == s3

    with pytest.raises(ValidationError, match="main branch cannot be removed"):
        MetadataBuilder(s3).remove_ref(MAIN_BRANCH)
    with pytest.raises(NotFoundError, match="'nope'"):
        MetadataBuilder(s3).remove_ref("nope")
    with pytest.raises(ValidationError, match="unknown snapshot 99"):
        MetadataBuilder(s3).set_ref("x", SnapshotRef(99, RefType.TAG))
    with pytest.raises(ValidationError, match="tag"):
        MetadataBuilder(s3).set_ref(MAIN_BRANCH, SnapshotRef(11, RefType.TAG))


def test_intermediate_snapshots_leave_the_log() -> None:
    b = MetadataBuilder(_table())
    b.add_snapshot(_snapshot(1, 1, None, ts=10))
    b.set_ref(MAIN_BRANCH, SnapshotRef(1, RefType.BRANCH))
    b.add_snapshot(_snapshot(2, 2, 1, ts=20))
    b.set_ref(MAIN_BRANCH, SnapshotRef(2, RefType.BRANCH))
    out = b.build()
    assert [e.snapshot_id for e in out.snapshot_log] == [2]


def test_stale_sequence_number_is_a_conflict() -> None:
    b = MetadataBuilder(_table())
    b.add_snapshot(_snapshot(1, 1, None))
    with pytest.raises(CommitConflictError, match="sequence number 1"):
        b.add_snapshot(_snapshot(2, 1, 1))
    with pytest.raises(ValidationError, match="already exists"):
        b.add_snapshot(_snapshot(1, 5, None))


def test_v3_row_lineage() -> None:
    b = MetadataBuilder(_table(**{"format-version": "3"}))
    b.add_snapshot(_snapshot(1, 1, None, first_row_id=0, added_rows=10))
    b.set_ref(MAIN_BRANCH, SnapshotRef(1, RefType.BRANCH))
    out = b.build()
    assert out.next_row_id == 10
    b = MetadataBuilder(out)
    with pytest.raises(CommitConflictError, match="first-row-id 5 is behind"):
        b.add_snapshot(_snapshot(2, 2, 1, first_row_id=5, added_rows=1))
    with pytest.raises(ValidationError, match="first-row-id and added-rows"):
        b.add_snapshot(_snapshot(3, 2, 1))
    b.add_snapshot(_snapshot(4, 2, 1, first_row_id=10, added_rows=3))
    assert b.build().next_row_id == 13


def test_upgrade_v2_with_history_to_v3() -> None:
    b = MetadataBuilder(_table())
    b.add_snapshot(_snapshot(1, 1, None))
    b.set_ref(MAIN_BRANCH, SnapshotRef(1, RefType.BRANCH))
    b.upgrade_format_version(3)
    out = b.build()
    assert out.format_version == 3 and out.next_row_id == 0


# -- replace -------------------------------------------------------------------------------------


def test_replace_keeps_history_and_ids_of_same_names() -> None:
    b = MetadataBuilder(_table(old="1"))
    b.add_snapshot(_snapshot(1, 1, None))
    b.set_ref(MAIN_BRANCH, SnapshotRef(1, RefType.BRANCH))
    b.set_ref("tag", SnapshotRef(1, RefType.TAG))
    base = b.build(now_ms=10)
    new_schema = Schema(
        (
            NestedField(1, "b", LongType(), required=True),
            NestedField(2, "new", StringType()),
            NestedField(
                3, "s", StructType((NestedField(4, "x", IntegerType()), NestedField(5, "w", LongType())))
            ),
        )
    )
    spec = PartitionSpec(
        0,
        (
            PartitionField(2, 1, "new", parse_transform("identity")),
            PartitionField(1, 2, "b_bucket", parse_transform("bucket[4]")),
        ),
    )
    out = replace_table_metadata(base, new_schema, spec, UNSORTED, {"format-version": "3", "new": "2"})
    assert out.current_snapshot_id is None and MAIN_BRANCH not in out.refs and "tag" in out.refs
    assert out.snapshots == base.snapshots and out.snapshot_log == base.snapshot_log
    assert _ids(out.schema()) == {"b": 5, "new": 18, "s": 2, "s.x": 7, "s.w": 19}
    assert out.current_schema_id == 1 and out.last_column_id == 19
    assert [(f.source_id, f.field_id) for f in out.spec().fields] == [(18, 1002), (5, 1000)]
    assert out.default_spec_id == 1 and out.last_partition_id == 1002
    assert out.format_version == 3 and out.next_row_id == 0
    assert out.properties == {"write.parquet.compression-codec": "zstd", "old": "1", "new": "2"}
    assert out.table_uuid == base.table_uuid
    assert read_table_metadata(write_table_metadata(out), "x") == out
    with pytest.raises(ValidationError, match="downgrade"):
        replace_table_metadata(out, new_schema, spec, UNSORTED, {"format-version": "2"})


def test_replace_with_the_same_schema_reuses_its_id() -> None:
    base = _table()
    out = replace_table_metadata(base, NESTED_INPUT, BUCKET_B_AND_A, UNSORTED, {})
    assert out.current_schema_id == 0 and len(out.schemas) == 1 and out.last_column_id == 17
    assert out.default_spec_id == 0 and len(out.partition_specs) == 1


def test_replace_v1_keeps_dropped_partition_fields_as_void() -> None:
    base = _table(**{"format-version": "1"})
    spec = PartitionSpec(0, (PartitionField(101, 1, "a", parse_transform("identity")),))
    out = replace_table_metadata(base, NESTED_INPUT, spec, UNSORTED, {})
    assert [(f.name, str(f.transform), f.field_id) for f in out.spec().fields] == [
        ("b_bucket", "void", 1000),
        ("a", "identity", 1001),
    ]
