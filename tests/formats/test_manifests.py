"""Manifests: write/read round trips, inheritance rules, summaries and corrupt input."""

from __future__ import annotations

import dataclasses
import io
import json
import uuid
from decimal import Decimal

import pytest

from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.formats.avro_files import parse_header
from iceduck.formats.manifests import (
    DEFAULT_BLOCK_SIZE,
    UNASSIGNED_SEQ,
    read_manifest,
    rewrite_manifest,
    write_manifest,
)
from iceduck.spec.manifest import EntryStatus, FileContent, FileFormat, ManifestContent, ManifestFile
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.types import DecimalType, UUIDType
from tests.formats.manifest_helpers import SCHEMA, data_file, decode, entry, spec_for

ADDED, EXISTING, DELETED = EntryStatus.ADDED, EntryStatus.EXISTING, EntryStatus.DELETED
SNAPSHOT = 7_000_000_000_000_000_001


def _sample_entries(format_version: int):
    spec, samples = spec_for(format_version)
    low = tuple(lo for lo, _ in samples)
    high = tuple(hi for _, hi in samples)
    nulls = tuple(None for _ in samples)
    entries = [
        entry(ADDED, data_file("s3://b/t/data/a.parquet", low, 5)),
        entry(EXISTING, data_file("s3://b/t/data/b.parquet", high, 7), snapshot_id=11, seq=3, file_seq=4),
        entry(DELETED, data_file("s3://b/t/data/c.avro", nulls, 11, file_format=FileFormat.AVRO), 12, 1, 1),
    ]
    return spec, entries


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_data_manifest_round_trip_every_transform(format_version: int) -> None:
    spec, entries = _sample_entries(format_version)
    data, mf = write_manifest(
        entries, spec, SCHEMA, format_version, ManifestContent.DATA, SNAPSHOT, path="m.avro"
    )
    meta, read = read_manifest(data, "m.avro", inherit=False)
    assert meta.format_version == format_version
    assert meta.content is ManifestContent.DATA
    assert meta.spec == spec
    assert meta.schema == SCHEMA
    assert meta.partition_type == spec.partition_type(SCHEMA)
    assert [e.data_file.partition for e in read] == [e.data_file.partition for e in entries]
    for got, want in zip(read, entries, strict=True):
        if format_version == 1:  # v1 stores no sequence numbers; the block size is always written
            want = dataclasses.replace(want, sequence_number=None, file_sequence_number=None)
            want.data_file = dataclasses.replace(want.data_file, block_size_in_bytes=DEFAULT_BLOCK_SIZE)
        assert got == want
    # partition values keep iceduck's representation: no datetime/date objects sneak in
    for value in read[1].data_file.partition:
        assert value is None or isinstance(value, bool | int | float | str | bytes | Decimal | uuid.UUID)
    assert mf.manifest_path == "m.avro"
    assert mf.manifest_length == len(data)
    assert (mf.added_files_count, mf.existing_files_count, mf.deleted_files_count) == (1, 1, 1)
    assert (mf.added_rows_count, mf.existing_rows_count, mf.deleted_rows_count) == (5, 7, 11)
    assert mf.sequence_number == UNASSIGNED_SEQ
    assert mf.min_sequence_number == 3  # the only live entry with an explicit sequence number
    assert mf.added_snapshot_id == SNAPSHOT
    assert len(mf.partitions) == len(spec.fields)


def test_key_value_metadata_like_java() -> None:
    spec, entries = _sample_entries(2)
    data, _ = write_manifest(entries, spec, SCHEMA, 2, ManifestContent.DATA, SNAPSHOT)
    metadata, _ = decode(data)
    assert set(metadata) == {
        "schema",
        "partition-spec",
        "partition-spec-id",
        "format-version",
        "content",
        "iceberg.schema",
        "avro.schema",
        "avro.codec",
    }
    assert metadata["avro.codec"] == "deflate"
    assert metadata["format-version"] == "2"
    assert metadata["content"] == "data"
    assert metadata["partition-spec-id"] == "0"
    assert json.loads(metadata["schema"])["schema-id"] == 3
    assert json.loads(metadata["partition-spec"])[0] == {
        "name": "b_identity_0",
        "transform": "identity",
        "source-id": 1,
        "field-id": 1000,
    }
    v1, _ = decode(write_manifest(entries, spec, SCHEMA, 1, ManifestContent.DATA, SNAPSHOT)[0])
    assert "content" not in v1 and v1["format-version"] == "1"


def test_file_format_written_upper_case_like_java() -> None:
    spec, entries = _sample_entries(2)
    _, records = decode(write_manifest(entries, spec, SCHEMA, 2, ManifestContent.DATA)[0])
    assert [r["data_file"]["file_format"] for r in records] == ["PARQUET", "PARQUET", "AVRO"]


def test_logical_types_on_disk_decode_with_standard_readers() -> None:
    """What iceduck writes as ints is what Avro readers see as dates, decimals, uuids."""
    spec, entries = _sample_entries(3)
    _, records = decode(write_manifest(entries, spec, SCHEMA, 3, ManifestContent.DATA)[0])
    partition = records[1]["data_file"]["partition"]
    assert partition["dec_identity_5"] == Decimal("99.99")
    assert partition["u_identity_12"] == uuid.UUID(int=2).bytes  # fastavro maps only string uuids
    assert str(partition["dt_identity_7"]) == "2024-01-01"
    assert str(partition["tstz_day_22"]) == "2024-01-01"


@pytest.mark.parametrize("format_version", [2, 3])
def test_delete_manifest_round_trip(format_version: int) -> None:
    spec, samples = spec_for(format_version, spec_id=4)
    part = tuple(lo for lo, _ in samples)
    files = [
        data_file(
            "s3://b/t/data/pos.parquet",
            part,
            3,
            FileContent.POSITION_DELETES,
            referenced_data_file="s3://b/t/data/a.parquet",
        ),
        data_file("s3://b/t/data/eq.parquet", part, 2, FileContent.EQUALITY_DELETES, equality_ids=[1, 2]),
    ]
    if format_version == 3:
        files.append(
            data_file(
                "s3://b/t/data/dv.puffin",
                part,
                9,
                FileContent.POSITION_DELETES,
                file_format=FileFormat.PUFFIN,
                referenced_data_file="s3://b/t/data/a.parquet",
                content_offset=4,
                content_size_in_bytes=42,
                column_sizes=None,
                value_counts=None,
                null_value_counts=None,
                nan_value_counts=None,
                lower_bounds=None,
                upper_bounds=None,
                split_offsets=None,
            )
        )
    entries = [entry(ADDED, f) for f in files]
    data, mf = write_manifest(entries, spec, SCHEMA, format_version, ManifestContent.DELETES, SNAPSHOT)
    metadata, _ = decode(data)
    assert metadata["content"] == "deletes"
    assert mf.content is ManifestContent.DELETES and mf.first_row_id is None
    meta, read = read_manifest(data, "d.avro", inherit=False)
    assert meta.content is ManifestContent.DELETES
    assert [e.data_file for e in read] == [dataclasses.replace(f, spec_id=4) for f in files]


def test_java_content_rules_on_write() -> None:
    """Java writes first_row_id only for data files and DV fields only for position deletes."""
    spec, samples = spec_for(3)
    part = tuple(lo for lo, _ in samples)
    eq = data_file("e.parquet", part, 1, FileContent.EQUALITY_DELETES, equality_ids=[1])
    eq.referenced_data_file = "x.parquet"
    eq.first_row_id = 5
    data, _ = write_manifest([entry(ADDED, eq)], spec, SCHEMA, 3, ManifestContent.DELETES)
    (stored,) = read_manifest(data, "d.avro", inherit=False).entries
    assert stored.data_file.referenced_data_file is None
    assert stored.data_file.first_row_id is None


def test_write_validations() -> None:
    spec, entries = _sample_entries(2)
    with pytest.raises(ValidationError):
        write_manifest(entries, spec, SCHEMA, 1, ManifestContent.DELETES)
    with pytest.raises(ValidationError):  # data files in a delete manifest
        write_manifest(entries, spec, SCHEMA, 2, ManifestContent.DELETES)
    with pytest.raises(ValidationError):  # EXISTING without a data sequence number
        write_manifest(
            [dataclasses.replace(entries[1], sequence_number=None)], spec, SCHEMA, 2, ManifestContent.DATA
        )
    with pytest.raises(ValidationError):  # partition tuple of the wrong width
        write_manifest([entry(ADDED, data_file("a", (1,)))], spec, SCHEMA, 2, ManifestContent.DATA)
    with pytest.raises(UnsupportedError):
        write_manifest(entries, spec, SCHEMA, 4, ManifestContent.DATA)
    wrong = list(entries[0].data_file.partition)
    for index, bad in ((1, "not an int"), (5, 1.5), (12, "not a uuid")):  # int, decimal, uuid fields
        value = list(wrong)
        value[index] = bad
        df = dataclasses.replace(entries[0].data_file, partition=tuple(value))
        with pytest.raises(ValidationError):
            write_manifest([entry(ADDED, df)], spec, SCHEMA, 2, ManifestContent.DATA)


# -- inheritance -------------------------------------------------------------------------------


def _manifest_file(**kwargs) -> ManifestFile:
    base = {"manifest_path": "m.avro", "manifest_length": 1, "partition_spec_id": 0, "added_snapshot_id": 99}
    return ManifestFile(**{**base, **kwargs})


def _unpartitioned(entries, format_version: int = 2, content=ManifestContent.DATA) -> bytes:
    return write_manifest(entries, UNPARTITIONED, SCHEMA, format_version, content)[0]


def test_sequence_number_and_snapshot_id_inheritance() -> None:
    data = _unpartitioned(
        [
            entry(ADDED, data_file("a", ())),
            entry(ADDED, data_file("b", ()), snapshot_id=5, seq=2),  # explicit data seq kept
            entry(EXISTING, data_file("c", ()), snapshot_id=6, seq=3, file_seq=3),
            entry(DELETED, data_file("d", ()), snapshot_id=7, seq=1, file_seq=None),
        ]
    )
    entries = read_manifest(data, "m.avro", _manifest_file(sequence_number=8)).entries
    assert [(e.snapshot_id, e.sequence_number, e.file_sequence_number) for e in entries] == [
        (99, 8, 8),
        (5, 2, 8),
        (6, 3, 3),
        (7, 1, None),  # not ADDED: "must include both sequence numbers explicitly", none inherited
    ]
    raw = read_manifest(data, "m.avro", _manifest_file(sequence_number=8), inherit=False).entries
    assert (raw[0].snapshot_id, raw[0].sequence_number, raw[0].file_sequence_number) == (None, None, None)
    assert [e.data_file.spec_id for e in entries] == [0] * 4


def test_v1_manifest_sequence_numbers_default_to_zero() -> None:
    data = _unpartitioned([entry(ADDED, data_file("a", ()), snapshot_id=1)], format_version=1)
    (e,) = read_manifest(data, "m.avro").entries
    assert (e.sequence_number, e.file_sequence_number) == (0, 0)
    (e,) = read_manifest(data, "m.avro", _manifest_file(sequence_number=0)).entries
    assert (e.snapshot_id, e.sequence_number, e.file_sequence_number) == (1, 0, 0)


def test_manifest_with_sequence_number_zero_fills_every_status() -> None:
    """Java: nulls become 0 for any status when the manifest's sequence number is 0 (v1 lists)."""
    data = _unpartitioned([entry(EXISTING, data_file("a", ()), snapshot_id=1, seq=0)])
    (e,) = read_manifest(data, "m.avro", _manifest_file(sequence_number=0)).entries
    assert e.file_sequence_number == 0


def test_uncommitted_manifest_inherits_no_sequence_number() -> None:
    data = _unpartitioned([entry(ADDED, data_file("a", ()))])
    (e,) = read_manifest(data, "m.avro", _manifest_file(sequence_number=UNASSIGNED_SEQ)).entries
    assert e.sequence_number is None and e.snapshot_id == 99


def test_first_row_id_inheritance_spec_example() -> None:
    """Spec "Row Lineage Example": in manifest added1 (first_row_id 1000), EXISTING data1
    keeps 800 and ADDED data2, data3 (50 rows each) are assigned 1000 and 1050."""
    data = _unpartitioned(
        [
            entry(EXISTING, data_file("data1", (), 25, first_row_id=800), snapshot_id=1, seq=1, file_seq=1),
            entry(ADDED, data_file("data2", (), 50)),
            entry(ADDED, data_file("data3", (), 50)),
        ],
        format_version=3,
    )
    added1 = _manifest_file(sequence_number=2, first_row_id=1000)
    entries = read_manifest(data, "added1.avro", added1).entries
    assert [(e.data_file.file_path, e.data_file.first_row_id) for e in entries] == [
        ("data1", 800),
        ("data2", 1000),
        ("data3", 1050),
    ]
    raw = read_manifest(data, "added1.avro", added1, inherit=False).entries
    assert [e.data_file.first_row_id for e in raw] == [800, None, None]


def test_first_row_id_skips_deleted_entries_like_java() -> None:
    data = _unpartitioned(
        [
            entry(DELETED, data_file("gone", (), 30), snapshot_id=1, seq=1, file_seq=1),
            entry(EXISTING, data_file("old", (), 20), snapshot_id=1, seq=1, file_seq=1),
            entry(ADDED, data_file("new", (), 5)),
        ],
        format_version=3,
    )
    entries = read_manifest(data, "m.avro", _manifest_file(sequence_number=2, first_row_id=10)).entries
    assert [e.data_file.first_row_id for e in entries] == [None, 10, 30]


def test_committed_manifest_without_first_row_id_has_no_row_ids() -> None:
    """Tables upgraded to v3: "When first_row_id is null, inherited row ID values are also null"."""
    data = _unpartitioned([entry(EXISTING, data_file("a", (), first_row_id=3), 1, 1, 1)], format_version=3)
    (e,) = read_manifest(data, "m.avro", _manifest_file(sequence_number=2)).entries
    assert e.data_file.first_row_id is None
    (e,) = read_manifest(data, "m.avro", _manifest_file(sequence_number=2), inherit=False).entries
    assert e.data_file.first_row_id == 3


def test_delete_files_never_get_row_ids() -> None:
    data = _unpartitioned(
        [entry(ADDED, data_file("p", (), 4, FileContent.POSITION_DELETES))], 3, ManifestContent.DELETES
    )
    (e,) = read_manifest(data, "m.avro", _manifest_file(sequence_number=2, first_row_id=10)).entries
    assert e.data_file.first_row_id is None


def test_specs_by_id_take_precedence_over_json() -> None:
    spec, entries = _sample_entries(2)
    data, _ = write_manifest(entries, spec, SCHEMA, 2, ManifestContent.DATA)
    other = dataclasses.replace(
        spec, fields=tuple(dataclasses.replace(f, name=f.name + "_x") for f in spec.fields)
    )
    assert read_manifest(data, "m.avro", specs_by_id={0: other}).meta.spec is other
    with pytest.raises(CorruptDataError, match="partition tuple"):
        read_manifest(data, "m.avro", specs_by_id={0: UNPARTITIONED})


def test_rewrite_keeps_stored_values() -> None:
    spec, entries = _sample_entries(3)
    data, _ = write_manifest(entries, spec, SCHEMA, 3, ManifestContent.DATA, SNAPSHOT)
    again = rewrite_manifest(io.BytesIO(data), "m.avro")
    meta1, records1 = decode(data)
    meta2, records2 = decode(again)
    assert repr(records1) == repr(records2)
    assert meta1 == meta2


# -- field summaries ---------------------------------------------------------------------------


def test_field_summaries_of_written_manifest() -> None:
    spec, entries = _sample_entries(2)
    _, mf = write_manifest(entries, spec, SCHEMA, 2, ManifestContent.DATA)
    ptype = spec.partition_type(SCHEMA)
    by_name = {f.name: s for f, s in zip(ptype.fields, mf.partitions, strict=True)}
    dec = by_name["dec_identity_5"]
    assert dec.contains_null and dec.contains_nan is False
    assert dec.lower_bound == (-1234).to_bytes(2, "big", signed=True)
    assert dec.upper_bound == (9999).to_bytes(2, "big", signed=True)
    assert (
        by_name["s_identity_11"].lower_bound == b"" and by_name["s_identity_11"].upper_bound == "zé".encode()
    )
    void = by_name["i_void_24"]
    assert (void.contains_null, void.lower_bound, void.upper_bound) == (True, None, None)
    assert isinstance(ptype.fields[5].field_type, DecimalType)
    assert isinstance(ptype.fields[12].field_type, UUIDType)


# -- corrupt input ----------------------------------------------------------------------------


def _good_manifest() -> bytes:
    spec, entries = _sample_entries(2)
    return write_manifest(entries, spec, SCHEMA, 2, ManifestContent.DATA)[0]


def _with_metadata(data: bytes, **changes: str | None) -> bytes:
    from iceduck.formats.avro_files import encode_header

    metadata, sync, start = parse_header(data, "x")
    for key, value in changes.items():
        key = key.replace("_", "-")
        if value is None:
            metadata.pop(key)
        else:
            metadata[key] = value
    return encode_header(metadata, sync) + data[start:]


@pytest.mark.parametrize("cut", [1, 17, 300])
def test_truncated_manifest(cut: int) -> None:
    data = _good_manifest()
    with pytest.raises(CorruptDataError, match=r"s3://b/m\.avro: truncated") as info:
        read_manifest(data[:-cut], "s3://b/m.avro")
    assert info.value.path == "s3://b/m.avro"


def test_truncated_header_and_not_avro() -> None:
    with pytest.raises(CorruptDataError, match="truncated or corrupt Avro header"):
        read_manifest(_good_manifest()[:100], "m.avro")
    with pytest.raises(CorruptDataError, match="not an Avro file"):
        read_manifest(b'{"format-version": 2}', "m.avro")
    with pytest.raises(CorruptDataError, match="not an Avro file"):
        read_manifest(b"", "m.avro")


def test_damaged_sync_marker() -> None:
    data = bytearray(_good_manifest())
    data[-5] ^= 0xFF  # the block's trailing sync marker
    with pytest.raises(CorruptDataError, match=r"m\.avro"):
        read_manifest(bytes(data), "m.avro")


@pytest.mark.parametrize("key", ["schema", "partition-spec", "partition-spec-id", "content"])
def test_missing_required_metadata(key: str) -> None:
    data = _with_metadata(_good_manifest(), **{key.replace("-", "_"): None})
    with pytest.raises(CorruptDataError, match=f"lacks required '{key}'"):
        read_manifest(data, "m.avro")


def test_bad_metadata_values() -> None:
    with pytest.raises(UnsupportedError, match="format version 4"):
        read_manifest(_with_metadata(_good_manifest(), format_version="4"), "m.avro")
    with pytest.raises(CorruptDataError, match="format-version"):
        read_manifest(_with_metadata(_good_manifest(), format_version="two"), "m.avro")
    with pytest.raises(CorruptDataError, match="content"):
        read_manifest(_with_metadata(_good_manifest(), content="rows"), "m.avro")
    with pytest.raises(CorruptDataError, match="partition-spec"):
        read_manifest(_with_metadata(_good_manifest(), partition_spec="[{"), "m.avro")
    with pytest.raises(CorruptDataError, match=r"avro\.schema"):
        read_manifest(_with_metadata(_good_manifest(), **{"avro.schema": "nope"}), "m.avro")
    meta = read_manifest(_with_metadata(_good_manifest(), schema="{oops"), "m.avro").meta
    with pytest.raises(CorruptDataError, match="'schema' is not valid JSON"):
        _ = meta.schema


def test_delete_file_in_data_manifest_is_corrupt() -> None:
    data = _unpartitioned(
        [entry(ADDED, data_file("p", (), 4, FileContent.POSITION_DELETES))], 2, ManifestContent.DELETES
    )
    with pytest.raises(CorruptDataError, match="POSITION_DELETES file in a DATA manifest"):
        read_manifest(_with_metadata(data, content="data"), "m.avro")
