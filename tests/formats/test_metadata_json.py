"""Table metadata JSON v1-v3.

The documents built by :func:`java_doc` are, byte for byte, what Iceberg Java 1.10.2's
``TableMetadataParser.toJson`` writes for them (checked by running Java's
``fromJson``/``toJson`` on them): compact JSON, Java's key order, the deprecated v1
fields, ``-1``/``null`` for no current snapshot, and so on. The strongest property
is then ``write_table_metadata(read_table_metadata(b)) == b``.
"""

from __future__ import annotations

import copy
import gzip
import json
import re

import pytest

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.metadata_json import (
    hadoop_metadata_file_name,
    is_gzip_metadata_name,
    metadata_file_name,
    metadata_file_version,
    read_table_metadata,
    table_metadata_from_json,
    table_metadata_to_json,
    write_table_metadata,
)
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.snapshot import RefType, SnapshotRef
from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.transforms import DayTransform, TruncateTransform, VoidTransform
from iceduck.spec.types import DecimalType, TimestampNanoType

S1 = 3051729675574597004
S2 = 3055729675574597004
PATH = "s3://b/wh/t/metadata/00002-8f3e.metadata.json"


def _field(fid, name, typ, required=False, **extra):
    return {"id": fid, "name": name, "required": required, "type": typ, **extra}


def _defaults(initial, write=None):
    return (
        {"initial-default": initial}
        if write is None
        else {"initial-default": initial, "write-default": write}
    )


MAP_TYPE = {
    "type": "map",
    "key-id": 8,
    "key": "string",
    "value-id": 9,
    "value": "double",
    "value-required": False,
}
POINT_TYPE = {"type": "struct", "fields": [_field(10, "x", "double", True), _field(11, "y", "double", True)]}
V3_FIELDS = [
    _field(13, "status", "string", **_defaults("new", "open")),
    _field(14, "event_ts", "timestamp_ns", **_defaults("2017-11-16T22:31:08.123456789")),
    _field(
        15,
        "u",
        "uuid",
        **_defaults("0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb", "ec5911be-b0a7-458c-8438-c9a3e53cffae"),
    ),
    _field(16, "v", "variant"),
    _field(17, "pt", {"type": "struct", "fields": [_field(18, "x", "int", **_defaults(0, 0))]}),
]


def _schema(schema_id, v, identifier=False):
    fields = [
        _field(1, "id", "long", True),
        _field(2, "ts", "timestamptz", doc="event time"),
        _field(3, "price", "decimal(9, 2)"),
        _field(4, "tags", {"type": "list", "element-id": 7, "element": "string", "element-required": True}),
        _field(5, "attrs", MAP_TYPE),
        _field(6, "point", POINT_TYPE),
    ]
    if schema_id == 1:
        fields.append(_field(12, "note", "string"))
    if schema_id == 1 and v == 3:
        fields += V3_FIELDS
    out = {"type": "struct", "schema-id": schema_id}
    if identifier:
        out["identifier-field-ids"] = [1]
    out["fields"] = fields
    return out


def _pfield(name, transform, source, field_id):
    return {"name": name, "transform": transform, "source-id": source, "field-id": field_id}


SPEC0 = [_pfield("ts_day", "day", 2, 1000), _pfield("id_bucket", "bucket[16]", 1, 1001)]
SPEC1 = [SPEC0[0], _pfield("id_bucket", "void", 1, 1001), _pfield("note_trunc", "truncate[10]", 12, 1002)]
T1, T2 = 1515100955770, 1555100955770
META = "s3://b/wh/t/metadata/"


def _snapshots(v):
    s1 = {"snapshot-id": S1, "timestamp-ms": T1}
    s1["summary"] = {"operation": "append", "added-data-files": "1", "added-records": "10"}
    s2 = {"snapshot-id": S2, "parent-snapshot-id": S1, "timestamp-ms": T2}
    s2["summary"] = {"operation": "overwrite", "spark.app.id": "local-1", "added-records": "5"}
    if v == 1:  # a v1 snapshot may embed its manifests instead of a manifest list
        s1["manifests"] = [META + "m1.avro", META + "m2.avro"]
        s2["manifest-list"] = META + "snap-2.avro"
    else:
        s1 = {"sequence-number": 1, **s1, "manifest-list": META + "snap-1.avro"}
        s2 = {"sequence-number": 2, **s2, "manifest-list": META + "snap-2.avro"}
    s1["schema-id"] = 0
    s2["schema-id"] = 1
    if v == 3:
        s1.update({"first-row-id": 0, "added-rows": 10})
        s2.update({"first-row-id": 10, "added-rows": 5, "key-id": "key-1"})
    return [s1, s2]


def _sort_field(transform, source, direction, null_order):
    return {"transform": transform, "source-id": source, "direction": direction, "null-order": null_order}


def java_doc(v):
    """A realistic table (two schemas, two specs, two sort orders, branches and a tag,
    statistics) as Java writes it for format version ``v``."""
    doc = {"format-version": v, "table-uuid": "fb072c92-a02b-11e9-ae9c-1bb7bc9eca94"}
    doc["location"] = "s3://b/wh/data.db/table"
    if v > 1:
        doc["last-sequence-number"] = 2
    doc["last-updated-ms"] = 1602638573590
    doc["last-column-id"] = 18 if v == 3 else 12
    if v == 1:
        doc["schema"] = _schema(1, v, identifier=True)
    doc["current-schema-id"] = 1
    doc["schemas"] = [_schema(0, v), _schema(1, v, identifier=True)]
    if v == 1:
        doc["partition-spec"] = SPEC1
    doc["default-spec-id"] = 1
    doc["partition-specs"] = [{"spec-id": 0, "fields": SPEC0}, {"spec-id": 1, "fields": SPEC1}]
    doc["last-partition-id"] = 1002
    doc["default-sort-order-id"] = 1
    order = [
        _sort_field("identity", 2, "asc", "nulls-first"),
        _sort_field("bucket[4]", 1, "desc", "nulls-last"),
    ]
    doc["sort-orders"] = [{"order-id": 0, "fields": []}, {"order-id": 1, "fields": order}]
    doc["properties"] = {"write.format.default": "parquet", "commit.retry.num-retries": "4", "c": "café ☃"}
    doc["current-snapshot-id"] = S2
    if v == 3:
        doc["next-row-id"] = 15
        key = {"key-id": "key-1", "encrypted-key-metadata": "aWNlYmVyZwo=", "encrypted-by-id": "kms-1"}
        doc["encryption-keys"] = [
            {**key, "properties": {"kek": "a"}},
            {"key-id": "key-0", "encrypted-key-metadata": "AAEC"},
        ]
    audit = {"snapshot-id": S1, "type": "branch", "min-snapshots-to-keep": 3, "max-snapshot-age-ms": 86400000}
    doc["refs"] = {
        "main": {"snapshot-id": S2, "type": "branch"},
        "audit": {**audit, "max-ref-age-ms": 604800000},
        "v1.0": {"snapshot-id": S1, "type": "tag", "max-ref-age-ms": 10000000},
    }
    doc["snapshots"] = _snapshots(v)
    blob = {"type": "apache-datasketches-theta-v1", "snapshot-id": S2, "sequence-number": 2 if v > 1 else 0}
    stats = {"snapshot-id": S2, "statistics-path": META + "stats-1.puffin", "file-size-in-bytes": 413}
    stats["file-footer-size-in-bytes"] = 42
    stats["blob-metadata"] = [
        {**blob, "fields": [1], "properties": {"ndv": "10"}},
        {**blob, "fields": [2, 3]},
    ]
    doc["statistics"] = [stats]
    partition_stats = {"snapshot-id": S2, "statistics-path": META + "partition-stats-1.parquet"}
    doc["partition-statistics"] = [{**partition_stats, "file-size-in-bytes": 43}]
    doc["snapshot-log"] = [{"timestamp-ms": T1, "snapshot-id": S1}, {"timestamp-ms": T2, "snapshot-id": S2}]
    doc["metadata-log"] = [
        {"timestamp-ms": T1, "metadata-file": META + "00000-a.metadata.json"},
        {"timestamp-ms": T2, "metadata-file": META + "00001-b.metadata.json"},
    ]
    return doc


def java_bytes(doc):
    """Jackson's compact output: no whitespace, UTF-8, non-ASCII unescaped."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


# A table created by Java 1.10.2 (``TableMetadata.newTableMetadata``), before any commit.
def java_new_table(v):
    doc = java_doc(v)
    for key in ("snapshots", "statistics", "partition-statistics", "snapshot-log", "metadata-log"):
        doc[key] = []
    doc["refs"] = {}
    doc["current-snapshot-id"] = None if v == 3 else -1
    doc.pop("encryption-keys", None)
    if v > 1:
        doc["last-sequence-number"] = 0
    if v == 3:
        doc["next-row-id"] = 0
    return doc


# -- round trips --------------------------------------------------------------------------


@pytest.mark.parametrize("v", [1, 2, 3])
def test_java_written_metadata_round_trips_byte_for_byte(v):
    data = java_bytes(java_doc(v))
    md = read_table_metadata(data, PATH)
    assert table_metadata_to_json(md) == json.loads(data)
    assert write_table_metadata(md) == data


@pytest.mark.parametrize("v", [1, 2, 3])
def test_java_new_table_round_trips_byte_for_byte(v):
    data = java_bytes(java_new_table(v))
    md = read_table_metadata(data, PATH)
    assert md.current_snapshot_id is None and md.current_snapshot() is None
    assert md.refs == {}
    assert write_table_metadata(md) == data


def test_version_specific_keys():
    v1, v2, v3 = (
        table_metadata_to_json(read_table_metadata(java_bytes(java_new_table(v)), PATH)) for v in (1, 2, 3)
    )
    assert "schema" in v1 and "partition-spec" in v1 and "last-sequence-number" not in v1
    assert "schema" not in v2 and "partition-spec" not in v2 and v2["last-sequence-number"] == 0
    assert v1["current-snapshot-id"] == -1 and v2["current-snapshot-id"] == -1
    assert v3["current-snapshot-id"] is None and "current-snapshot-id" in v3
    assert v3["next-row-id"] == 0 and "next-row-id" not in v2
    assert "encryption-keys" not in v3
    for doc in (v1, v2, v3):
        for key in ("properties", "refs", "snapshots", "statistics", "partition-statistics", "snapshot-log"):
            assert key in doc


def test_v2_model():
    md = read_table_metadata(java_bytes(java_doc(2)), PATH)
    assert md.format_version == 2
    assert md.table_uuid == "fb072c92-a02b-11e9-ae9c-1bb7bc9eca94"
    assert md.last_sequence_number == 2
    assert md.schema().schema_id == 1 and md.schema().identifier_field_ids == (1,)
    assert md.schema().find_type("price") == DecimalType(9, 2)
    assert md.spec() == PartitionSpec(
        1,
        (
            PartitionField(2, 1000, "ts_day", DayTransform()),
            PartitionField(1, 1001, "id_bucket", VoidTransform()),
            PartitionField(12, 1002, "note_trunc", TruncateTransform(10)),
        ),
    )
    order = md.sort_order()
    assert (
        order.fields[1].direction is SortDirection.DESC and order.fields[1].null_order is NullOrder.NULLS_LAST
    )
    current = md.current_snapshot()
    assert current.snapshot_id == S2 and current.parent_snapshot_id == S1
    assert current.sequence_number == 2 and current.operation == "overwrite"
    assert current.summary == {"operation": "overwrite", "spark.app.id": "local-1", "added-records": "5"}
    assert md.refs["audit"] == SnapshotRef(S1, RefType.BRANCH, 3, 86400000, 604800000)
    assert md.refs["v1.0"].type is RefType.TAG
    assert md.snapshot_for_ref("v1.0").snapshot_id == S1
    stats = md.statistics[0]
    assert stats.blob_metadata[0].properties == {"ndv": "10"} and stats.blob_metadata[1].fields == (2, 3)
    assert md.partition_statistics[0].file_size_in_bytes == 43
    assert md.properties["c"] == "café ☃"
    assert md.next_row_id is None


def test_v1_model_keeps_embedded_manifests():
    md = read_table_metadata(java_bytes(java_doc(1)), PATH)
    first = md.snapshot_by_id(S1)
    assert first.manifest_list is None
    assert first.manifests == ("s3://b/wh/t/metadata/m1.avro", "s3://b/wh/t/metadata/m2.avro")
    assert first.sequence_number == 0 and md.last_sequence_number == 0


def test_v3_model():
    md = read_table_metadata(java_bytes(java_doc(3)), PATH)
    assert md.next_row_id == 15
    current = md.current_snapshot()
    assert (current.first_row_id, current.added_rows, current.key_id) == (10, 5, "key-1")
    assert [k.key_id for k in md.encryption_keys] == ["key-1", "key-0"]
    assert md.encryption_keys[0].encrypted_by_id == "kms-1"
    assert md.encryption_keys[1].properties is None
    schema = md.schema()
    assert schema.find_field("status").initial_default == "new"
    assert schema.find_field("status").write_default == "open"
    assert schema.find_type("event_ts") == TimestampNanoType()
    assert schema.find_field("event_ts").initial_default == 1510871468123456789


# -- Appendix E: defaults when reading older metadata -------------------------------------

LEGACY_V1 = {
    "format-version": 1,
    "location": "s3://b/wh/legacy/",
    "last-updated-ms": 1515100955770,
    "last-column-id": 3,
    "schema": {
        "type": "struct",
        "fields": [
            {"id": 1, "name": "id", "required": True, "type": "long"},
            {"id": 2, "name": "ts", "required": False, "type": "timestamp"},
            {"id": 3, "name": "data", "required": False, "type": "string"},
        ],
    },
    "partition-spec": [
        {"name": "ts_day", "transform": "day", "source-id": 2},
        {"name": "data_trunc", "transform": "truncate[4]", "source-id": 3},
    ],
    "properties": {},
    "current-snapshot-id": 1,
    "snapshots": [
        {"snapshot-id": 1, "timestamp-ms": 1515100955770, "manifests": ["s3://b/wh/legacy/metadata/m0.avro"]}
    ],
}


def test_legacy_v1_gets_appendix_e_defaults():
    md = table_metadata_from_json(LEGACY_V1)
    assert md.table_uuid is None
    assert md.location == "s3://b/wh/legacy"  # Java strips the trailing slash
    assert [s.schema_id for s in md.schemas] == [0] and md.current_schema_id == 0
    assert [s.spec_id for s in md.partition_specs] == [0] and md.default_spec_id == 0
    assert [f.field_id for f in md.spec().fields] == [1000, 1001]
    assert md.last_partition_id == 1001
    assert md.sort_order().is_unsorted and md.default_sort_order_id == 0
    assert md.last_sequence_number == 0
    assert md.current_snapshot().sequence_number == 0
    # "There is always a main branch reference pointing to the current-snapshot-id"
    assert md.refs == {"main": SnapshotRef(1, RefType.BRANCH)}


def test_legacy_v1_is_rewritten_as_java_rewrites_it():
    """What Java 1.10.2's ``toJson(fromJson(LEGACY_V1))`` prints."""
    schema = {"type": "struct", "schema-id": 0, "fields": LEGACY_V1["schema"]["fields"]}
    fields = [
        {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000},
        {"name": "data_trunc", "transform": "truncate[4]", "source-id": 3, "field-id": 1001},
    ]
    expected = {
        "format-version": 1,
        "table-uuid": None,
        "location": "s3://b/wh/legacy",
        "last-updated-ms": 1515100955770,
        "last-column-id": 3,
        "schema": schema,
        "current-schema-id": 0,
        "schemas": [schema],
        "partition-spec": fields,
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": fields}],
        "last-partition-id": 1001,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": 1,
        "refs": {"main": {"snapshot-id": 1, "type": "branch"}},
        "snapshots": LEGACY_V1["snapshots"],
        "statistics": [],
        "partition-statistics": [],
        "snapshot-log": [],
        "metadata-log": [],
    }
    md = read_table_metadata(java_bytes(LEGACY_V1), "v1.metadata.json")
    assert write_table_metadata(md) == java_bytes(expected)


def test_unpartitioned_legacy_v1_last_partition_id_is_999():
    doc = {**LEGACY_V1, "partition-spec": [], "current-snapshot-id": -1, "snapshots": []}
    md = table_metadata_from_json(doc)
    assert md.spec().is_unpartitioned and md.last_partition_id == 999
    assert md.current_snapshot_id is None and md.refs == {}


def test_missing_or_null_current_snapshot_means_none():
    for value in (None, -1):
        doc = java_new_table(2)
        doc["current-snapshot-id"] = value
        assert table_metadata_from_json(doc).current_snapshot_id is None
    doc = java_new_table(2)
    del doc["current-snapshot-id"]
    assert table_metadata_from_json(doc).current_snapshot_id is None


def test_v2_snapshot_without_sequence_number_reads_as_0_and_is_not_written():
    """Java omits ``sequence-number`` when it is 0 (snapshots from before a v1 -> v2 upgrade)."""
    doc = java_doc(2)
    del doc["snapshots"][0]["sequence-number"]
    md = table_metadata_from_json(doc)
    assert md.snapshot_by_id(S1).sequence_number == 0
    assert write_table_metadata(md) == java_bytes(doc)


def test_v3_snapshot_from_before_upgrade_has_no_row_lineage():
    doc = java_doc(3)
    for key in ("first-row-id", "added-rows"):
        del doc["snapshots"][0][key]
    md = table_metadata_from_json(doc)
    assert md.snapshot_by_id(S1).first_row_id is None
    assert write_table_metadata(md) == java_bytes(doc)


def test_refs_without_main_are_kept_as_they_are():
    doc = java_doc(2)
    del doc["refs"]["main"]
    md = table_metadata_from_json(doc)
    assert "main" not in md.refs
    assert md.snapshot_for_ref("main").snapshot_id == S2
    assert table_metadata_to_json(md) == doc


# -- GZIP -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["00001-x.gz.metadata.json", "00001-x.metadata.json.gz", "00001-x.metadata.json"]
)
def test_gzip_is_detected_by_magic_bytes_whatever_the_name(name):
    data = java_bytes(java_doc(2))
    md = read_table_metadata(gzip.compress(data), name)
    assert write_table_metadata(md) == data


def test_write_compressed():
    md = read_table_metadata(java_bytes(java_doc(3)), PATH)
    compressed = write_table_metadata(md, compress=True)
    assert compressed[:2] == b"\x1f\x8b"
    assert gzip.decompress(compressed) == write_table_metadata(md)
    assert write_table_metadata(md, compress=True) == compressed  # deterministic (mtime 0)


def test_truncated_gzip_is_corrupt():
    data = gzip.compress(java_bytes(java_doc(2)))[:40]
    with pytest.raises(CorruptDataError) as info:
        read_table_metadata(data, "t.gz.metadata.json")
    assert info.value.path == "t.gz.metadata.json"


# -- errors -------------------------------------------------------------------------------


def _read_error(doc_or_bytes, exc=CorruptDataError):
    data = doc_or_bytes if isinstance(doc_or_bytes, bytes) else java_bytes(doc_or_bytes)
    with pytest.raises(exc) as info:
        read_table_metadata(data, PATH)
    assert PATH in str(info.value)
    return str(info.value)


def test_malformed_json():
    assert "not valid JSON" in _read_error(b'{"format-version": 2, "location": ')


def test_not_utf8():
    assert "UTF-8" in _read_error(b'{"location": "\xff"}')


def test_top_level_must_be_an_object():
    assert "JSON object" in _read_error(b"[1, 2]")


@pytest.mark.parametrize("version", [4, 0, -1])
def test_unsupported_format_version(version):
    doc = java_doc(3)
    doc["format-version"] = version
    message = _read_error(doc, UnsupportedError)
    assert re.search(rf"\bversion {version}\b", message)


def test_format_version_of_wrong_type():
    doc = java_doc(2)
    doc["format-version"] = "2"
    assert "'format-version'" in _read_error(doc)


def _without(doc, key):
    doc = copy.deepcopy(doc)
    del doc[key]
    return doc


def test_missing_location():
    assert "'location'" in _read_error(_without(java_doc(2), "location"))


def test_wrong_type_of_last_column_id():
    doc = java_doc(2)
    doc["last-column-id"] = "22"
    message = _read_error(doc)
    assert "'last-column-id'" in message and "'22'" in message
    doc["last-column-id"] = 22.0
    assert "'last-column-id'" in _read_error(doc)
    doc["last-column-id"] = True
    assert "'last-column-id'" in _read_error(doc)


V2_REQUIRED = (
    "table-uuid last-sequence-number last-updated-ms last-column-id schemas current-schema-id "
    "partition-specs default-spec-id last-partition-id sort-orders default-sort-order-id"
).split()


@pytest.mark.parametrize("key", V2_REQUIRED)
def test_v2_required_fields(key):
    assert repr(key) in _read_error(_without(java_doc(2), key))


def test_v3_requires_next_row_id_once_row_lineage_is_on():
    doc = _without(java_doc(3), "next-row-id")
    doc["row-lineage"] = True  # what Java 1.8 wrote with row lineage enabled
    assert "'next-row-id'" in _read_error(doc)
    doc["row-lineage"] = "yes"
    assert "'next-row-id'" in _read_error(doc)


def test_a_v3_table_of_java_1_8_without_row_lineage_reads_and_is_written_as_v3():
    """Java 1.8 wrote v3 tables with ``row-lineage`` false and no ``next-row-id`` (tests/
    interop/test_old_runtimes.py reads its real ones): row ids were never assigned, and the
    next write starts them at 0, as for a table upgraded to v3."""
    for flag in ({}, {"row-lineage": False}):
        doc = {**_without(java_doc(3), "next-row-id"), **flag}
        md = read_table_metadata(java_bytes(doc), PATH)
        assert md.next_row_id is None
        assert json.loads(write_table_metadata(md))["next-row-id"] == 0


def test_v1_without_schema_or_schemas():
    doc = _without(_without(java_doc(1), "schemas"), "schema")
    assert "'schema'" in _read_error(doc)


def test_nested_errors_say_where():
    doc = java_doc(2)
    doc["schemas"][1]["fields"][2]["type"] = "decimal(9,x)"
    message = _read_error(doc)
    assert "schemas[1].fields[2]" in message and "decimal(9,x)" in message
    doc = java_doc(2)
    doc["snapshots"][1]["timestamp-ms"] = "yesterday"
    assert "snapshots[1]" in _read_error(doc)
    doc = java_doc(2)
    del doc["snapshots"][1]["manifest-list"]
    assert "'manifest-list'" in _read_error(doc)
    doc = java_doc(2)
    doc["refs"]["audit"]["type"] = "twig"
    assert "refs['audit']" in _read_error(doc)
    doc = java_doc(2)
    doc["properties"]["x"] = 1
    assert "properties" in _read_error(doc)
    doc = java_doc(2)
    del doc["statistics"][0]["blob-metadata"][0]["fields"]
    assert "statistics[0].blob-metadata[0]" in _read_error(doc)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.update({"current-schema-id": 7}), "current-schema-id 7"),
        (lambda d: d.update({"default-spec-id": 7}), "default-spec-id 7"),
        (lambda d: d.update({"default-sort-order-id": 7}), "default-sort-order-id 7"),
        (lambda d: d.update({"current-snapshot-id": 7}), "current-snapshot-id 7"),
        (lambda d: d["refs"]["audit"].update({"snapshot-id": 7}), "unknown snapshot 7"),
        (lambda d: d["refs"]["main"].update({"snapshot-id": S1}), "main branch"),
        (lambda d: d.update({"location": ""}), "'location'"),
    ],
)
def test_inconsistent_metadata_is_corrupt(mutate, needle):
    doc = java_doc(2)
    mutate(doc)
    assert needle in _read_error(doc)


# -- file names -------------------------------------------------------------------------


def test_metadata_file_names():
    name = metadata_file_name(1)
    assert re.fullmatch(r"00001-[0-9a-f-]{36}\.metadata\.json", name)
    assert metadata_file_name(12, compress=True, file_uuid="abc") == "00012-abc.gz.metadata.json"
    assert metadata_file_name(123456).startswith("123456-")
    assert hadoop_metadata_file_name(1) == "v1.metadata.json"
    assert hadoop_metadata_file_name(3, compress=True) == "v3.gz.metadata.json"


@pytest.mark.parametrize(
    ("path", "version"),
    [
        ("s3://b/t/metadata/00042-5c1d.metadata.json", 42),
        ("s3://b/t/metadata/00007-5c1d.gz.metadata.json", 7),
        ("/wh/t/metadata/v3.metadata.json", 3),
        ("v12.gz.metadata.json", 12),
        ("v2.metadata.json.gz", 2),
        ("/wh/t/metadata/version-hint.text", None),
        ("/wh/t/metadata/snap-1.avro", None),
    ],
)
def test_metadata_file_version(path, version):
    assert metadata_file_version(path) == version


def test_is_gzip_metadata_name():
    assert is_gzip_metadata_name("00001-a.gz.metadata.json")
    assert is_gzip_metadata_name("v1.metadata.json.gz")
    assert not is_gzip_metadata_name("00001-a.metadata.json")
