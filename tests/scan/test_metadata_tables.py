"""Metadata tables over small in-memory tables: the rules of Iceberg Java 1.10 one by one.

The Spark comparison (``tests/interop/test_scan_metadata_tables_spark.py``) covers what Spark-written tables
contain; these tests pin the cases those tables do not reach: rollbacks and expired
snapshots, v1 ``void`` partition fields, dropped partition sources, files of several specs
sharing projected values, NaN partition values, promoted bounds, UUIDs, manifests shared
between snapshots, and the errors.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest

from iceduck.errors import CorruptDataError, NotFoundError, UnsupportedError
from iceduck.scan.metadata.arrow import arrow_type
from iceduck.scan.metadata.partitioning import table_partition_type
from iceduck.scan.metadata.schemas import metric_columns
from iceduck.scan.metadata_tables import METADATA_TABLE_KINDS, metadata_table
from iceduck.spec.manifest import (
    DataFile,
    EntryStatus,
    FieldSummary,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import (
    MetadataLogEntry,
    RefType,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
)
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import BucketTransform, DayTransform, IdentityTransform, VoidTransform
from iceduck.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    TimestamptzType,
    UUIDType,
)

LOCATION = "/wh/t/metadata/00009-x.metadata.json"
SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "x", DoubleType()),
        NestedField(5, "u", UUIDType()),
    ),
    schema_id=0,
)
UNPARTITIONED = PartitionSpec(0, ())
BY_CAT = PartitionSpec(1, (PartitionField(2, 1000, "cat", IdentityTransform()),))
BY_X = PartitionSpec(2, (PartitionField(4, 1001, "x", IdentityTransform()),))


def snap(sid: int, ms: int, parent: int | None = None, **summary: str) -> Snapshot:
    return Snapshot(sid, ms, dict(summary), parent, sid, f"/wh/t/metadata/snap-{sid}.avro", schema_id=0)


def table(
    snapshots: Sequence[Snapshot] = (),
    current: int | None = None,
    specs: Sequence[PartitionSpec] = (UNPARTITIONED,),
    schema: Schema = SCHEMA,
    **kwargs: Any,
) -> TableMetadata:
    return TableMetadata(
        format_version=2,
        table_uuid=str(uuid.uuid4()),
        location="/wh/t",
        last_updated_ms=9_000,
        last_column_id=schema.highest_field_id,
        schemas=(schema,),
        current_schema_id=schema.schema_id,
        partition_specs=tuple(specs),
        default_spec_id=specs[-1].spec_id,
        last_partition_id=1010,
        sort_orders=(UNSORTED,),
        default_sort_order_id=0,
        current_snapshot_id=current,
        snapshots=tuple(snapshots),
        **kwargs,
    )


def data_file(
    path: str,
    partition: tuple[Any, ...] = (),
    spec_id: int = 0,
    content: FileContent = FileContent.DATA,
    records: int = 10,
    **metrics: Any,
) -> DataFile:
    return DataFile(
        content, path, FileFormat.PARQUET, partition, records, 100 * records, spec_id=spec_id, **metrics
    )


def entry(df: DataFile, snapshot_id: int, status: EntryStatus = EntryStatus.ADDED) -> ManifestEntry:
    return ManifestEntry(status, snapshot_id, df, sequence_number=1, file_sequence_number=1)


class FakeSource:
    """A ManifestSource over dicts: manifest-list path -> rows, manifest path -> entries."""

    def __init__(self, lists: dict[str, list[ManifestFile]], manifests: dict[str, list[ManifestEntry]]):
        self.lists, self.manifests = lists, manifests
        self.read: list[str] = []
        self.requested: list[ManifestFile] = []

    def manifest_list(self, path: str, format_version: int | None = None) -> list[ManifestFile]:
        return self.lists[path]

    def manifest(self, manifest_file: ManifestFile, specs_by_id: dict) -> list[ManifestEntry]:
        self.read.append(manifest_file.manifest_path)
        self.requested.append(manifest_file)
        return self.manifests[manifest_file.manifest_path]


def manifest(
    path: str, spec_id: int = 0, content: ManifestContent = ManifestContent.DATA, **kw: Any
) -> ManifestFile:
    return ManifestFile(path, 1234, spec_id, content, added_snapshot_id=kw.pop("added", 1), **kw)


# -- dispatch and errors ------------------------------------------------------------------------


def test_unknown_kind_names_the_valid_ones() -> None:
    with pytest.raises(NotFoundError) as e:
        metadata_table("snapshotz", table(), LOCATION)
    assert "snapshotz" in str(e.value)
    assert all(kind in str(e.value) for kind in METADATA_TABLE_KINDS)


def test_snapshot_selection_rules() -> None:
    md = table([snap(1, 1000)], current=1)
    source = FakeSource({"/wh/t/metadata/snap-1.avro": []}, {})
    assert metadata_table("FILES", md, LOCATION, reader=source).num_rows == 0  # case-insensitive
    with pytest.raises(NotFoundError, match="42"):
        metadata_table("files", md, LOCATION, snapshot_id=42, reader=source)
    with pytest.raises(UnsupportedError, match="all_files"):
        metadata_table("all_files", md, LOCATION, snapshot_id=1, reader=source)
    # the metadata-only kinds show every snapshot whatever the one asked for
    assert metadata_table("snapshots", md, LOCATION, snapshot_id=1).num_rows == 1


def test_empty_table_has_typed_empty_tables() -> None:
    md = table(specs=(BY_CAT,))
    for kind in METADATA_TABLE_KINDS:
        result = metadata_table(kind, md, LOCATION, reader=FakeSource({}, {}))
        assert result.num_rows == (1 if kind == "metadata_log_entries" else 0), kind
    files = metadata_table("files", md, LOCATION)
    assert files.schema.field("partition").type == pa.struct([pa.field("cat", pa.string())])
    assert not files.schema.field("partition").nullable


# -- metadata-only tables ---------------------------------------------------------------------


def test_snapshots_summary_without_operation() -> None:
    md = table([snap(1, 1000, operation="append", **{"added-records": "5"}), snap(2, 2000, 1)], current=2)
    result = metadata_table("snapshots", md, LOCATION)
    assert result.schema.field("committed_at").type == pa.timestamp("us", tz="UTC")
    assert result.schema.field("summary").type == pa.map_(pa.string(), pa.field("value", pa.string(), False))
    assert result.to_pylist()[0]["summary"] == [("added-records", "5")]
    assert result.column("operation").to_pylist() == ["append", None]
    assert result.column("summary").to_pylist()[1] is None  # a snapshot without summary
    assert result.column("committed_at").cast(pa.int64()).to_pylist() == [1_000_000, 2_000_000]


def test_history_after_rollback_and_expiry() -> None:
    # 0 expired; 1 -> 2 -> 3 committed, then rolled back to 2
    log = tuple(
        SnapshotLogEntry(ms, sid) for ms, sid in ((500, 0), (1000, 1), (2000, 2), (3000, 3), (4000, 2))
    )
    md = table([snap(1, 1000, 0), snap(2, 2000, 1), snap(3, 3000, 2)], current=2, snapshot_log=log)
    result = metadata_table("history", md, LOCATION).to_pylist()
    assert [(r["snapshot_id"], r["parent_id"], r["is_current_ancestor"]) for r in result] == [
        (0, None, False),
        (1, 0, True),
        (2, 1, True),
        (3, 2, False),
        (2, 1, True),
    ]


def test_refs() -> None:
    refs = {
        "main": SnapshotRef(2, RefType.BRANCH),
        "t": SnapshotRef(1, RefType.TAG, max_ref_age_ms=7),
        "b": SnapshotRef(2, RefType.BRANCH, min_snapshots_to_keep=2, max_snapshot_age_ms=9, max_ref_age_ms=3),
    }
    md = table([snap(1, 1000), snap(2, 2000, 1)], current=2, refs=refs)
    result = metadata_table("refs", md, LOCATION)
    assert result.schema.field("min_snapshots_to_keep").type == pa.int32()
    assert sorted(tuple(r.values()) for r in result.to_pylist()) == [
        ("b", "BRANCH", 2, 3, 2, 9),
        ("main", "BRANCH", 2, None, None, None),
        ("t", "TAG", 1, 7, None, None),
    ]


def test_metadata_log_entries_find_the_snapshot_current_at_each_file() -> None:
    log = (SnapshotLogEntry(1000, 1), SnapshotLogEntry(2000, 2))
    files = (
        MetadataLogEntry(500, "m0.json"),
        MetadataLogEntry(1500, "m1.json"),
        MetadataLogEntry(2000, "m2.json"),
    )
    md = table([snap(2, 2000, 1)], current=2, snapshot_log=log, metadata_log=files)  # 1 was expired
    result = metadata_table("metadata_log_entries", md, LOCATION).to_pylist()
    got = [
        (r["file"], r["latest_snapshot_id"], r["latest_schema_id"], r["latest_sequence_number"])
        for r in result
    ]
    assert got == [
        ("m0.json", None, None, None),
        ("m1.json", 1, None, None),
        ("m2.json", 2, 0, 2),
        (LOCATION, 2, 0, 2),
    ]
    assert result[-1]["timestamp"].timestamp() == 9.0  # last-updated-ms of the current file


# -- partition type --------------------------------------------------------------------------


def test_table_partition_type_unites_specs() -> None:
    """Names from the newest spec, a v1 void field typed by its live spec, dropped sources out."""
    specs = (
        PartitionSpec(0, (PartitionField(2, 1000, "category", IdentityTransform()),)),
        PartitionSpec(
            1,
            (
                PartitionField(2, 1000, "cat", VoidTransform()),
                PartitionField(1, 1001, "id_bucket", BucketTransform(4)),
                PartitionField(99, 1003, "gone", IdentityTransform()),
            ),
        ),
        PartitionSpec(
            2, (PartitionField(2, 1000, "cat", VoidTransform()), PartitionField(3, 1002, "d", DayTransform()))
        ),
    )
    t = table_partition_type(table(specs=specs))
    assert [(f.field_id, f.name, str(f.field_type)) for f in t.fields] == [
        (1000, "cat", "string"),
        (1001, "id_bucket", "int"),
        (1002, "d", "date"),
    ]
    assert not any(f.required for f in t.fields)


# -- partitions ----------------------------------------------------------------------------


def test_partitions_group_by_spec_and_value() -> None:
    """Java keys partitions by the projected tuple *and* how many table fields the spec has:
    an unpartitioned file and a cat=null file differ; NaN equals NaN; deleted entries don't count."""
    md = table([snap(1, 1000), snap(2, 2000, 1)], current=2, specs=(UNPARTITIONED, BY_CAT, BY_X))
    entries = {
        "m0": [entry(data_file("a", (), 0), 1), entry(data_file("gone", (), 0), 1, EntryStatus.DELETED)],
        "m1": [entry(data_file("b", (None,), 1), 1), entry(data_file("c", ("z",), 1), 2)],
        "m2": [entry(data_file("d", (float("nan"),), 2), 1), entry(data_file("e", (float("nan"),), 2), 2)],
        "d1": [
            entry(data_file("p1", ("z",), 1, FileContent.POSITION_DELETES, 3), 2),
            entry(data_file("p2", ("z",), 1, FileContent.POSITION_DELETES, 4), 2),
            entry(data_file("q", ("z",), 1, FileContent.EQUALITY_DELETES, 5), 99),  # snapshot expired
        ],
    }
    rows = [manifest("m0"), manifest("m1", 1), manifest("m2", 2), manifest("d1", 1, ManifestContent.DELETES)]
    source = FakeSource({"/wh/t/metadata/snap-2.avro": rows}, entries)
    result = metadata_table("partitions", md, LOCATION, reader=source)
    assert result.schema.names[:3] == ["partition", "spec_id", "record_count"]
    assert result.schema.field("partition").type == pa.struct([("cat", pa.string()), ("x", pa.float64())])
    got = sorted(
        (
            repr(tuple(r["partition"].values())),
            r["spec_id"],
            r["record_count"],
            r["file_count"],
            r["position_delete_record_count"],
            r["position_delete_file_count"],
            r["equality_delete_record_count"],
            r["equality_delete_file_count"],
            r["last_updated_snapshot_id"],
        )
        for r in result.to_pylist()
    )
    assert got == [
        ("('z', None)", 1, 10, 1, 7, 2, 5, 1, 2),  # deletes summed; q's snapshot expired
        ("(None, None)", 0, 10, 1, 0, 0, 0, 0, 1),  # "a"; its DELETED neighbour not counted
        ("(None, None)", 1, 10, 1, 0, 0, 0, 0, 1),  # cat = null: not the unpartitioned row
        ("(None, nan)", 2, 20, 2, 0, 0, 0, 0, 2),  # both NaN files in one partition
    ]


def test_partitions_of_unpartitioned_table_is_one_row() -> None:
    md = table([snap(1, 1000)], current=1)
    m = {"m": [entry(data_file("a"), 1), entry(data_file("b", records=5), 1)]}
    source = FakeSource({"/wh/t/metadata/snap-1.avro": [manifest("m")]}, m)
    result = metadata_table("partitions", md, LOCATION, reader=source)
    assert result.schema.names[0] == "record_count"
    assert "spec_id" not in result.schema.names
    assert result.to_pylist()[0]["record_count"] == 15
    assert result.to_pylist()[0]["last_updated_at"].timestamp() == 1.0


# -- manifests -------------------------------------------------------------------------------


def test_manifests_show_summaries_as_human_strings() -> None:
    spec = PartitionSpec(
        3,
        (
            PartitionField(3, 1002, "ts_day", DayTransform()),
            PartitionField(1, 1001, "id_bucket", BucketTransform(4)),
            PartitionField(2, 1000, "cat", VoidTransform()),
        ),
    )
    day = struct.pack("<i", 19675)
    summaries = [
        FieldSummary(False, False, day, day),
        FieldSummary(False, False, struct.pack("<i", 0), struct.pack("<i", 3)),
        FieldSummary(True, None, None, None),
    ]
    rows = [
        manifest(
            "m", 3, added_files_count=2, existing_files_count=1, deleted_files_count=0, partitions=summaries
        ),
        manifest(
            "d",
            3,
            ManifestContent.DELETES,
            added_files_count=4,
            existing_files_count=5,
            deleted_files_count=6,
        ),
    ]
    md = table([snap(1, 1000)], current=1, specs=(UNPARTITIONED, spec))
    result = metadata_table(
        "manifests", md, LOCATION, reader=FakeSource({"/wh/t/metadata/snap-1.avro": rows}, {})
    )
    data, deletes = result.to_pylist()
    counts = [k for k in result.schema.names if k.endswith("_count")]
    assert [data[k] for k in counts] == [2, 1, 0, 0, 0, 0]
    assert [deletes[k] for k in counts] == [0, 0, 0, 4, 5, 6]
    assert data["partition_summaries"] == [
        {
            "contains_null": False,
            "contains_nan": False,
            "lower_bound": "2023-11-14",
            "upper_bound": "2023-11-14",
        },
        {"contains_null": False, "contains_nan": False, "lower_bound": "0", "upper_bound": "3"},
        {"contains_null": True, "contains_nan": None, "lower_bound": "null", "upper_bound": "null"},
    ]
    assert deletes["partition_summaries"] is None
    all_manifests = metadata_table(
        "all_manifests", md, LOCATION, reader=FakeSource({"/wh/t/metadata/snap-1.avro": rows}, {})
    )
    assert all_manifests.column("reference_snapshot_id").to_pylist() == [1, 1]


def test_manifest_of_unknown_spec_is_corrupt() -> None:
    rows = [manifest("m", 7, partitions=[])]
    md = table([snap(1, 1000)], current=1)
    with pytest.raises(CorruptDataError, match="spec 7"):
        metadata_table("manifests", md, LOCATION, reader=FakeSource({"/wh/t/metadata/snap-1.avro": rows}, {}))


# -- files and entries -----------------------------------------------------------------------


def _two_snapshot_table() -> tuple[TableMetadata, FakeSource]:
    """Snapshot 1 adds a1 (m1); snapshot 2 keeps m1, deletes b0 and adds b1 (m2), adds a delete file."""
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    metrics = {
        "column_sizes": {1: 11, 4: 44},
        "value_counts": {1: 10, 4: 10},
        "null_value_counts": {1: 0, 4: 1},
        "nan_value_counts": {4: 2},
        "lower_bounds": {1: struct.pack("<i", -7), 5: u.bytes},  # written as int before int -> long
        "upper_bounds": {1: struct.pack("<q", 2**40), 5: u.bytes},
    }
    a1 = data_file("a1", ("x",), 1, **metrics)
    m = {
        "m1": [entry(a1, 1)],
        "m2": [entry(data_file("b0", (None,), 1), 2, EntryStatus.DELETED), entry(data_file("b1"), 2)],
        "d1": [entry(data_file("p", ("x",), 1, FileContent.POSITION_DELETES, 1), 2)],
    }
    lists = {
        "/wh/t/metadata/snap-1.avro": [manifest("m1", 1)],
        "/wh/t/metadata/snap-2.avro": [
            manifest("m1", 1),
            manifest("m2"),
            manifest("d1", 1, ManifestContent.DELETES),
        ],
    }
    md = table([snap(1, 1000), snap(2, 2000, 1)], current=2, specs=(UNPARTITIONED, BY_CAT))
    return md, FakeSource(lists, m)


def test_files_families_read_live_files() -> None:
    md, source = _two_snapshot_table()
    paths = {
        kind: sorted(metadata_table(kind, md, LOCATION, reader=source).column("file_path").to_pylist())
        for kind in ("files", "data_files", "delete_files", "all_files", "all_data_files", "all_delete_files")
    }
    assert paths["files"] == paths["all_files"] == ["a1", "b1", "p"]  # m1 read once for all_files
    assert paths["data_files"] == paths["all_data_files"] == ["a1", "b1"]
    assert paths["delete_files"] == paths["all_delete_files"] == ["p"]
    old = metadata_table("files", md, LOCATION, snapshot_id=1, reader=source)
    assert old.column("file_path").to_pylist() == ["a1"]


def test_entries_keep_deleted_entries() -> None:
    md, source = _two_snapshot_table()
    entries = metadata_table("entries", md, LOCATION, reader=source)
    got = sorted((r["data_file"]["file_path"], r["status"], r["snapshot_id"]) for r in entries.to_pylist())
    assert got == [("a1", 1, 1), ("b0", 2, 2), ("b1", 1, 2), ("p", 1, 2)]
    assert entries.schema.names == [
        "status",
        "snapshot_id",
        "sequence_number",
        "file_sequence_number",
        "data_file",
        "readable_metrics",
    ]
    source.read.clear()
    assert metadata_table("all_entries", md, LOCATION, reader=source).num_rows == 4
    assert sorted(source.read) == ["d1", "m1", "m2"]  # each distinct manifest once


def test_all_kinds_read_a_relisted_manifest_with_its_newest_row() -> None:
    """After an upgrade to v3 the next list assigns old manifests a first_row_id: the
    inherited ids in effect are the newest list's."""
    md, source = _two_snapshot_table()
    source.lists["/wh/t/metadata/snap-2.avro"][0] = manifest("m1", 1, first_row_id=100)
    metadata_table("all_data_files", md, LOCATION, reader=source)
    assert [(m.manifest_path, m.first_row_id) for m in source.requested] == [("m1", 100), ("m2", None)]


def test_file_columns_partition_and_readable_metrics() -> None:
    md, source = _two_snapshot_table()
    result = metadata_table("files", md, LOCATION, reader=source)
    assert result.schema.field("partition").type == pa.struct([("cat", pa.string())])
    assert result.schema.field("file_format").type == pa.string()
    rows = {r["file_path"]: r for r in result.to_pylist()}
    a1 = rows["a1"]
    assert a1["file_format"] == "PARQUET"
    assert a1["partition"] == {"cat": "x"}
    assert rows["b1"]["partition"] == {"cat": None}  # unpartitioned spec: null in the table's type
    assert a1["spec_id"] == 1
    metrics = a1["readable_metrics"]
    assert list(metrics) == ["cat", "id", "ts", "u", "x"]  # primitive columns by name
    assert metrics["id"] == {
        "column_size": 11,
        "value_count": 10,
        "null_value_count": 0,
        "nan_value_count": None,
        "lower_bound": -7,
        "upper_bound": 2**40,
    }
    assert metrics["x"]["nan_value_count"] == 2
    assert metrics["u"]["lower_bound"] == "12345678-1234-5678-1234-567812345678"
    assert rows["p"]["readable_metrics"]["id"] == dict.fromkeys(metrics["id"])
    metrics_type = result.schema.field("readable_metrics").type
    assert metrics_type.field("u").type.field("lower_bound").type == pa.string()
    assert metrics_type.field("ts").type.field("upper_bound").type == pa.timestamp("us", tz="UTC")


def test_corrupt_bound_names_the_manifest() -> None:
    md, source = _two_snapshot_table()
    source.manifests["m1"][0].data_file.lower_bounds = {1: b"\x01\x02\x03"}
    with pytest.raises(CorruptDataError) as e:
        metadata_table("files", md, LOCATION, reader=source)
    assert e.value.path == "m1" and "a1" in str(e.value)


# -- schemas -----------------------------------------------------------------------------------


def test_readable_metrics_columns_in_java_string_order() -> None:
    """Nested primitives by dotted name, sorted by UTF-16 code units as Java's compareTo."""
    schema = Schema(
        (
            NestedField(1, "\uffff", IntegerType()),
            NestedField(2, "😀", IntegerType()),
            NestedField(3, "l", ListType(4, MapType(5, StringType(), 6, LongType()))),
            NestedField(7, "a", IntegerType()),
        )
    )
    assert [name for name, _ in metric_columns(schema)] == [
        "a",
        "l.element.key",
        "l.element.value",
        "😀",
        "\uffff",
    ]


def test_arrow_types_follow_spark() -> None:
    from iceduck.spec.types import BinaryType, DateType, DecimalType, FixedType, TimestampType

    assert arrow_type(UUIDType()) == pa.string()
    assert arrow_type(FixedType(4)) == pa.binary()
    assert arrow_type(BinaryType()) == pa.binary()
    assert arrow_type(DateType()) == pa.date32()
    assert arrow_type(TimestampType()) == pa.timestamp("us")
    assert arrow_type(DecimalType(38, 10)) == pa.decimal128(38, 10)
    assert arrow_type(ListType(1, LongType(), element_required=True)) == pa.list_(
        pa.field("element", pa.int64(), False)
    )
    assert arrow_type(MapType(1, IntegerType(), 2, LongType())) == pa.map_(pa.int32(), pa.int64())
