"""Manifest lists, data manifests and index manifests written by pypaimon, and by an
older writer's schema (only the seed's fields)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.avro_files import read_avro, write_avro
from iceduck.formats.paimon.manifests import read_index_manifest, read_manifest, read_manifest_list
from iceduck.formats.paimon.table_files import read_schema, read_snapshot, snapshot_ids
from iceduck.spec.paimon.binary_row import decode_row
from iceduck.spec.paimon.manifest import FileKind
from tests.formats.paimon.fixture import copy_table, files_of, table


@pytest.mark.parametrize("name", ["app", "pk", "typed", "dv", "stats"])
def test_live_files_hold_the_snapshot_record_count(name: str) -> None:
    """pypaimon records each snapshot's ``totalRecordCount``: the rows of its live files."""
    location = table(name)
    for snapshot_id in snapshot_ids(location):
        snapshot = read_snapshot(location, snapshot_id)
        files = files_of(location, snapshot)
        assert sum(e.file.row_count for e in files) == snapshot.total_record_count
        assert all(e.kind == FileKind.ADD for e in files)


def test_manifest_list_rows() -> None:
    location = table("pk")
    snapshot = read_snapshot(location, 3)
    base = read_manifest_list(location, snapshot.base_manifest_list)
    delta = read_manifest_list(location, snapshot.delta_manifest_list)
    assert len(base) == 2 and len(delta) == 1
    assert all(m.file_name.startswith("manifest-") and m.num_deleted_files == 0 for m in base + delta)
    # the last commit (ids 1 and 5, under schema 1) wrote one file, in bucket 0
    assert delta[0].num_added_files == 1 and delta[0].schema_id == 1
    (entry,) = read_manifest(location, delta[0].file_name)
    assert (delta[0].min_bucket, delta[0].max_bucket, delta[0].min_level) == (entry.bucket, entry.bucket, 0)
    assert entry.file.schema_id == 1 and entry.file.row_count == 2


def test_primary_key_entries() -> None:
    location = table("pk")
    schema = read_schema(location, 0)
    keys = [f.type for f in schema.trimmed_primary_key_fields]
    files = files_of(location, read_snapshot(location, 1))
    assert sorted(e.bucket for e in files) == [0, 1] and {e.total_buckets for e in files} == {2}
    spans = []
    for entry in files:
        f = entry.file
        assert decode_row(entry.partition, [], "p") == ()
        low, high = decode_row(f.min_key, keys, "k"), decode_row(f.max_key, keys, "k")
        assert decode_row(f.key_stats.min_values, keys, "k") == low
        assert f.key_stats.null_counts == (0,) and f.value_stats_cols == ()
        assert f.level == 0 and f.schema_id == 0 and f.extra_files == () and f.external_path is None
        spans.append((low[0], high[0], f.row_count, f.min_sequence_number, f.max_sequence_number))
    # ids 1-4 hashed into two buckets, each numbering its rows from sequence number 0
    assert sum(s[2] for s in spans) == 4 and min(s[0] for s in spans) == 1 and max(s[1] for s in spans) == 4
    assert all((s[3], s[4]) == (0, s[2] - 1) for s in spans)


def test_partitions_and_value_stats() -> None:
    typed = table("typed")
    schema = read_schema(typed, 0)
    types = [f.type for f in schema.partition_fields]
    partitions = {decode_row(e.partition, types, "p") for e in files_of(typed, read_snapshot(typed, 1))}
    assert partitions == {
        (7, 19723, True, Decimal("12.34"), "short"),
        (-3, -1, False, Decimal("-0.05"), "a longer string"),
    }

    stats = table("stats")
    schema = read_schema(stats, 0)
    (entry,) = files_of(stats, read_snapshot(stats, 1))
    f = entry.file
    assert f.value_stats_cols is None  # statistics of every column, in the schema's order
    types = [field.type for field in schema.fields]
    low = decode_row(f.value_stats.min_values, types, "v")
    high = decode_row(f.value_stats.max_values, types, "v")
    assert f.value_stats.null_counts == (1,) * 17
    assert low[:4] == (-5, -300, -70000, -(2**40)) and high[:4] == (7, 300, 70000, 2**40)
    assert (low[7], high[7]) == ("a much longer string", "abc")
    assert (low[11], high[11]) == (
        Decimal("-1234567890123456789.12345"),
        Decimal("98765432109876543210.00001"),
    )


def test_index_manifest() -> None:
    location = table("dv")
    snapshot = read_snapshot(location, 2)
    assert snapshot.index_manifest is not None
    (entry,) = read_index_manifest(location, snapshot.index_manifest)
    (data_file,) = files_of(location, snapshot)
    assert entry.index_type == "DELETION_VECTORS" and entry.kind == FileKind.ADD and entry.bucket == 0
    assert entry.file_name.startswith("index-") and entry.row_count == 1
    assert entry.dv_ranges is not None
    (dv,) = entry.dv_ranges
    assert dv.data_file == data_file.file.file_name and (dv.offset, dv.cardinality) == (1, 4)
    assert entry.file_size == 1 + 4 + dv.length + 4  # version byte, length, vector, CRC


# what an older writer puts in a manifest: the seed's fields, none of the newer ones
_OLD_STATS = {
    "type": "record",
    "name": "stats",
    "fields": [
        {"name": "_MIN_VALUES", "type": "bytes"},
        {"name": "_MAX_VALUES", "type": "bytes"},
        {"name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}]},
    ],
}
_OLD_ENTRY = {
    "type": "record",
    "name": "entry",
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_TOTAL_BUCKETS", "type": "int"},
        {
            "name": "_FILE",
            "type": {
                "type": "record",
                "name": "file",
                "fields": [
                    {"name": "_FILE_NAME", "type": "string"},
                    {"name": "_FILE_SIZE", "type": "long"},
                    {"name": "_ROW_COUNT", "type": "long"},
                    {"name": "_MIN_KEY", "type": "bytes"},
                    {"name": "_MAX_KEY", "type": "bytes"},
                    {"name": "_KEY_STATS", "type": _OLD_STATS},
                    {"name": "_VALUE_STATS", "type": "stats"},
                    {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
                    {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
                    {"name": "_SCHEMA_ID", "type": "long"},
                    {"name": "_LEVEL", "type": "int"},
                    {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
                ],
            },
        },
    ],
}
_EMPTY_ROW = bytes(12)


def _old_record(version: int = 2, kind: int = 0) -> dict[str, object]:
    stats = {"_MIN_VALUES": _EMPTY_ROW, "_MAX_VALUES": _EMPTY_ROW, "_NULL_COUNTS": None}
    file = {
        "_FILE_NAME": "data-1.orc",
        "_FILE_SIZE": 10,
        "_ROW_COUNT": 3,
        "_MIN_KEY": _EMPTY_ROW,
        "_MAX_KEY": _EMPTY_ROW,
        "_KEY_STATS": stats,
        "_VALUE_STATS": stats,
        "_MIN_SEQUENCE_NUMBER": 0,
        "_MAX_SEQUENCE_NUMBER": 2,
        "_SCHEMA_ID": 0,
        "_LEVEL": 0,
        "_EXTRA_FILES": [],
    }
    return {
        "_VERSION": version,
        "_KIND": kind,
        "_PARTITION": _EMPTY_ROW,
        "_BUCKET": 0,
        "_TOTAL_BUCKETS": 1,
        "_FILE": file,
    }


def test_older_writer_fields_are_optional(tmp_path: Path) -> None:
    (tmp_path / "manifest").mkdir()
    (tmp_path / "manifest" / "manifest-old-0").write_bytes(
        write_avro(_OLD_ENTRY, [_old_record()], {}, "null")
    )
    (entry,) = read_manifest(str(tmp_path), "manifest-old-0")
    f = entry.file
    assert (f.file_name, f.row_count, f.key_stats.null_counts) == ("data-1.orc", 3, None)
    assert (f.creation_time_ms, f.delete_row_count, f.file_source, f.value_stats_cols, f.external_path) == (
        None,
    ) * 5


@pytest.mark.parametrize(
    ("record", "error", "problem"),
    [
        (_old_record(version=1), UnsupportedError, "version 1"),
        (_old_record(kind=3), CorruptDataError, "_KIND is 3"),
    ],
)
def test_bad_records_name_the_file(
    tmp_path: Path, record: dict[str, object], error: type, problem: str
) -> None:
    (tmp_path / "manifest").mkdir()
    (tmp_path / "manifest" / "manifest-bad-0").write_bytes(write_avro(_OLD_ENTRY, [record], {}, "null"))
    with pytest.raises(error, match=problem) as info:
        read_manifest(str(tmp_path), "manifest-bad-0")
    assert "manifest-bad-0" in str(info.value)


def test_missing_required_field_names_the_file(tmp_path: Path) -> None:
    schema = json.loads(json.dumps(_OLD_ENTRY))
    schema["fields"] = [f for f in schema["fields"] if f["name"] != "_TOTAL_BUCKETS"]
    record = _old_record()
    del record["_TOTAL_BUCKETS"]
    (tmp_path / "manifest").mkdir()
    (tmp_path / "manifest" / "manifest-x-0").write_bytes(write_avro(schema, [record], {}, "null"))
    with pytest.raises(CorruptDataError, match="_TOTAL_BUCKETS is missing") as info:
        read_manifest(str(tmp_path), "manifest-x-0")
    assert "manifest-x-0" in str(info.value)


def test_truncated_manifest_names_the_file(tmp_path: Path) -> None:
    location = copy_table("pk", tmp_path)
    snapshot = read_snapshot(location, 3)
    (meta,) = read_manifest_list(location, snapshot.delta_manifest_list)
    path = tmp_path / "pk" / "manifest" / meta.file_name
    data = path.read_bytes()
    assert read_avro(data, str(path)).records  # whole, it reads
    path.write_bytes(data[: len(data) - 40])  # cut inside the (only) data block
    with pytest.raises(CorruptDataError) as info:
        read_manifest(location, meta.file_name)
    assert str(path) in str(info.value)


def test_missing_manifest_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(CorruptDataError, match="does not exist") as info:
        read_manifest_list(str(tmp_path), "manifest-list-gone-0")
    assert "manifest-list-gone-0" in str(info.value)
