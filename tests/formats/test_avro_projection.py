"""Metadata read by field id (spec: fields are identified by id, not name): other writers'
names, no ids at all, fields in another order, unknown extra fields, missing fields."""

from __future__ import annotations

from typing import Any

import pytest

from iceduck.errors import CorruptDataError
from iceduck.formats.avro_projection import project_record
from iceduck.formats.manifest_list import open_manifest_list, read_manifest_list, write_manifest_list
from iceduck.formats.manifests import read_manifest, write_manifest
from iceduck.spec.manifest import EntryStatus, FieldSummary, FileContent, ManifestContent, ManifestFile
from iceduck.spec.types import IntegerType, ListType, LongType, NestedField, StringType, StructType
from tests.formats.manifest_helpers import SCHEMA, data_file, entry, spec_for
from tests.formats.old_writers import (
    JAVA_1_4_V2_MANIFEST_LIST,
    decode,
    java_1_4_manifest_list,
    map_fields,
    with_schema,
    without_ids,
    write,
)

SNAP = 6_000_000_000_000_000_006
PARENT = 5_000_000_000_000_000_005


def _mf(path: str, **kwargs: Any) -> ManifestFile:
    base: dict[str, Any] = {
        "manifest_path": path,
        "manifest_length": 1000,
        "partition_spec_id": 0,
        "content": ManifestContent.DATA,
        "sequence_number": 3,
        "min_sequence_number": 2,
        "added_snapshot_id": PARENT,
        "added_files_count": 4,
        "existing_files_count": 5,
        "deleted_files_count": 6,
        "added_rows_count": 40,
        "existing_rows_count": 50,
        "deleted_rows_count": 60,
        "partitions": [FieldSummary(False, False, b"\x01", b"\x09"), FieldSummary(True)],
    }
    return ManifestFile(**{**base, **kwargs})


def _list(format_version: int) -> tuple[bytes, list[ManifestFile]]:
    rows = [_mf("m0.avro"), _mf("m1.avro", content=ManifestContent.DELETES, added_files_count=0)]
    if format_version == 1:
        rows = rows[:1]
    data = write_manifest_list(rows, format_version, SNAP, PARENT, 7, 100)
    return data, read_manifest_list(data, "snap.avro")


def _renamed(field: dict[str, Any]) -> dict[str, Any]:
    return {**field, "name": f"other_{field['name']}"}


def test_java_1_4_manifest_list_reads_its_counts() -> None:
    data, want = _list(2)
    old = java_1_4_manifest_list(data)
    _, schema, records = decode(old)
    assert schema == JAVA_1_4_V2_MANIFEST_LIST
    assert records[0]["added_data_files_count"] == 4 and "added_files_count" not in records[0]
    got = read_manifest_list(old, "snap.avro")
    assert got == want
    assert [(m.added_files_count, m.existing_files_count, m.deleted_files_count) for m in got] == [
        (4, 5, 6),
        (0, 5, 6),
    ]


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_manifest_list_with_other_names_and_the_right_ids(format_version: int) -> None:
    data, want = _list(format_version)
    _, schema, _ = decode(data)
    other = with_schema(data, map_fields(schema, _renamed))
    assert "other_added_files_count" in {f["name"] for f in decode(other)[1]["fields"]}
    listing = open_manifest_list(other, "snap.avro")
    assert listing.manifests == want and listing.format_version == format_version


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_manifest_list_without_ids_reads_by_name(format_version: int) -> None:
    data, want = _list(format_version)
    _, schema, _ = decode(data)
    assert read_manifest_list(with_schema(data, without_ids(schema)), "snap.avro") == want


def test_manifest_list_in_another_order_with_unknown_fields() -> None:
    """Order does not matter; unknown fields are skipped even when named like a known one."""
    data, want = _list(2)
    metadata, schema, records = decode(data)
    decoy = {"name": "added_files_count", "type": "string", "field-id": 9001}
    shuffled = {**schema, "fields": [decoy, *reversed(schema["fields"])]}
    fields = {f["name"] for f in schema["fields"]}
    shuffled = map_fields(shuffled, lambda f: _renamed(f) if f.get("field-id") == 504 else f)
    rows = [
        {
            "added_files_count": "x",
            **{(f"other_{k}" if k == "added_files_count" else k): v for k, v in r.items()},
        }
        for r in records
    ]
    assert fields <= {k.removeprefix("other_") for k in rows[0]}
    assert read_manifest_list(write(shuffled, rows, metadata), "snap.avro") == want


def test_manifest_list_lacking_fields() -> None:
    """A missing optional field reads as null (v1 lists have no sequence numbers, counts may
    be absent); a missing required one is an error naming the file, the id and the name."""
    fields = [f for f in JAVA_1_4_V2_MANIFEST_LIST["fields"] if f["field-id"] in (500, 501, 502, 503)]
    row = {"manifest_path": "m.avro", "manifest_length": 1, "partition_spec_id": 0, "added_snapshot_id": SNAP}
    (got,) = read_manifest_list(
        write({**JAVA_1_4_V2_MANIFEST_LIST, "fields": fields}, [row], {}), "snap.avro"
    )
    assert (got.manifest_path, got.added_files_count, got.partitions, got.sequence_number) == (
        "m.avro",
        None,
        None,
        0,
    )
    without_path = [f for f in fields if f["field-id"] != 500]
    data = write({**JAVA_1_4_V2_MANIFEST_LIST, "fields": without_path}, [row], {})
    with pytest.raises(CorruptDataError, match=r"snap\.avro: required field 500 'manifest_path' is missing"):
        read_manifest_list(data, "snap.avro")


def test_a_field_of_the_wrong_type_is_an_error() -> None:
    data, _ = _list(2)
    _, schema, _ = decode(data)
    bad = map_fields(schema, lambda f: {**f, "type": "string"} if f.get("field-id") == 504 else f)
    with pytest.raises(
        CorruptDataError, match=r"snap\.avro: field 504 'added_files_count' has Avro type 'string'"
    ):
        read_manifest_list(with_schema(data, bad), "snap.avro")


# -- manifests ---------------------------------------------------------------------------------


def _manifest(format_version: int) -> bytes:
    spec, samples = spec_for(format_version)
    low = tuple(s[0] for s in samples)
    entries = [
        entry(EntryStatus.ADDED, data_file("a.parquet", low), SNAP if format_version == 1 else None),
        entry(EntryStatus.EXISTING, data_file("b.parquet", low, 3, distinct_counts=None), PARENT, 1, 1),
    ]
    data, _ = write_manifest(entries, spec, SCHEMA, format_version, ManifestContent.DATA, SNAP)
    return data


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_manifest_with_other_names_or_no_ids(format_version: int) -> None:
    data = _manifest(format_version)
    want = read_manifest(data, "m.avro", inherit=False).entries
    _, schema, _ = decode(data)
    renamed = map_fields(schema, _renamed)
    assert renamed != schema
    assert read_manifest(with_schema(data, renamed), "m.avro", inherit=False).entries == want
    assert read_manifest(with_schema(data, without_ids(schema)), "m.avro", inherit=False).entries == want


def test_v1_manifest_with_the_old_specs_deprecated_fields() -> None:
    """The older spec's v1 ``data_file`` has ``file_ordinal`` (106), ``sort_columns`` (107,
    "Do not write") and ``distinct_counts`` (111): the first two are skipped, the last read."""
    data = _manifest(1)
    metadata, schema, records = decode(data)
    (df_field,) = [f for f in schema["fields"] if f["field-id"] == 2]
    extra = [
        {"name": "file_ordinal", "type": ["null", "int"], "default": None, "field-id": 106},
        {"name": "sort_columns", "type": ["null", {"type": "array", "items": "int", "element-id": 112}],
         "default": None, "field-id": 107},
        {"name": "distinct_counts", "type": ["null", {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "k123_v124", "fields": [
                {"name": "key", "type": "int", "field-id": 123},
                {"name": "value", "type": "long", "field-id": 124}]}}], "default": None, "field-id": 111},
    ]  # fmt: skip
    df_field["type"]["fields"][6:6] = extra
    for r in records:
        r["data_file"].update(file_ordinal=7, sort_columns=[1], distinct_counts=[{"key": 1, "value": 9}])
    _, entries = read_manifest(write(schema, records, metadata), "m.avro", inherit=False)
    assert [e.data_file.distinct_counts for e in entries] == [{1: 9}, {1: 9}]
    assert [e.data_file.file_path for e in entries] == ["a.parquet", "b.parquet"]
    assert entries[0].data_file.content is FileContent.DATA


def test_manifest_lacking_a_required_field() -> None:
    data = _manifest(2)
    _, schema, _ = decode(data)
    no_id = map_fields(
        schema, lambda f: {k: v for k, v in f.items() if k != "field-id"} if f.get("field-id") == 103 else f
    )
    renamed = map_fields(no_id, lambda f: {**f, "name": "rows"} if f["name"] == "record_count" else f)
    with pytest.raises(
        CorruptDataError, match=r"m\.avro: required field 103 'record_count' in field 2 'data_file'"
    ):
        read_manifest(with_schema(data, renamed), "m.avro")


# -- the projection itself ----------------------------------------------------------------------


def test_projection_renames_by_id_and_leaves_the_rest() -> None:
    expected = StructType(
        (
            NestedField(1, "id", LongType(), required=True),
            NestedField(2, "tags", ListType(3, StructType((NestedField(4, "tag", StringType()),)), True)),
            NestedField(5, "absent", IntegerType()),
        )
    )
    tag = {"type": "record", "name": "r3", "fields": [{"name": "label", "type": "string", "field-id": 4}]}
    tags = {"type": "array", "element-id": 3, "items": tag}
    writer = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "x", "type": "string", "field-id": 99},
            {"name": "ident", "type": "int", "field-id": 1},
            {"name": "t", "type": tags, "field-id": 2},
        ],
    }
    got = project_record(writer, expected, "f.avro")
    assert [f["name"] for f in got["fields"]] == ["_iceduck_ignored_1", "id", "tags"]
    assert got["fields"][2]["type"]["items"]["fields"][0]["name"] == "tag"
    assert writer["fields"][1]["name"] == "ident"  # the writer schema is not changed
