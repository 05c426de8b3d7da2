"""Manifest lists: round trips, v1 defaults, sequence-number and first-row-id assignment."""

from __future__ import annotations

import dataclasses
import io

import pytest

from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.formats.avro_files import encode_header, parse_header
from iceduck.formats.manifest_list import (
    assign_first_row_ids,
    open_manifest_list,
    read_manifest_list,
    rewrite_manifest_list,
    write_manifest_list,
)
from iceduck.formats.manifests import UNASSIGNED_SEQ
from iceduck.spec.manifest import FieldSummary, ManifestContent, ManifestFile
from tests.formats.manifest_helpers import decode

SNAP = 5_000_000_000_000_000_005
PARENT = 4_000_000_000_000_000_004


def _mf(path: str, **kwargs) -> ManifestFile:
    base = {
        "manifest_path": path,
        "manifest_length": 1000,
        "partition_spec_id": 1,
        "content": ManifestContent.DATA,
        "sequence_number": 3,
        "min_sequence_number": 2,
        "added_snapshot_id": PARENT,
        "added_files_count": 1,
        "existing_files_count": 2,
        "deleted_files_count": 0,
        "added_rows_count": 10,
        "existing_rows_count": 20,
        "deleted_rows_count": 0,
        "partitions": [
            FieldSummary(False, False, b"\x01\x00\x00\x00", b"\x09\x00\x00\x00"),
            FieldSummary(True),
        ],
    }
    return ManifestFile(**{**base, **kwargs})


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_round_trip(format_version: int) -> None:
    rows = [_mf("a.avro", first_row_id=7 if format_version == 3 else None), _mf("b.avro", key_metadata=b"k")]
    if format_version >= 2:
        rows.append(_mf("d.avro", content=ManifestContent.DELETES))
    data = write_manifest_list(rows, format_version, SNAP, PARENT, 9, first_row_id=100)
    listing = open_manifest_list(data, "snap.avro")
    assert listing.format_version == format_version
    assert (listing.snapshot_id, listing.parent_snapshot_id) == (SNAP, PARENT)
    got = listing.manifests
    if format_version == 1:  # not stored in v1: "must default to 0"
        rows = [dataclasses.replace(m, sequence_number=0, min_sequence_number=0) for m in rows]
    if format_version == 3:
        assert listing.first_row_id == 100
        rows[1] = dataclasses.replace(rows[1], first_row_id=100)  # assigned: b lacked one
    assert got == rows
    assert got[1].partitions[1] == FieldSummary(True, None, None, None)


def test_metadata_like_java() -> None:
    meta, _ = decode(write_manifest_list([_mf("a.avro")], 3, SNAP, None, 9, first_row_id=100))
    assert {k: v for k, v in meta.items() if not k.startswith(("avro.", "iceberg."))} == {
        "snapshot-id": str(SNAP),
        "parent-snapshot-id": "null",
        "sequence-number": "9",
        "first-row-id": "100",
        "format-version": "3",
    }
    assert meta["avro.codec"] == "deflate"
    v1, _ = decode(write_manifest_list([_mf("a.avro")], 1, SNAP, PARENT, None))
    assert "sequence-number" not in v1 and v1["parent-snapshot-id"] == str(PARENT)


def test_unassigned_sequence_numbers_take_the_snapshots() -> None:
    new = _mf(
        "new.avro", added_snapshot_id=SNAP, sequence_number=UNASSIGNED_SEQ, min_sequence_number=UNASSIGNED_SEQ
    )
    mixed = _mf("mixed.avro", added_snapshot_id=SNAP, sequence_number=UNASSIGNED_SEQ, min_sequence_number=4)
    old = _mf("old.avro")
    data = write_manifest_list([new, mixed, old], 2, SNAP, PARENT, 9)
    got = read_manifest_list(data, "snap.avro")
    assert [(m.sequence_number, m.min_sequence_number) for m in got] == [(9, 9), (9, 4), (3, 2)]
    stolen = _mf("x.avro", sequence_number=UNASSIGNED_SEQ)  # added by another snapshot
    with pytest.raises(ValidationError, match=r"x\.avro"):
        write_manifest_list([stolen], 2, SNAP, PARENT, 9)


def test_first_row_id_assignment_spec_example() -> None:
    """Spec "Row Lineage Example": existing keeps 925; added1, added2, added3 get 1000,
    1125, 1225; the table's next-row-id becomes 1,000 + 375 = 1,375."""
    rows = [
        _mf("existing", added_rows_count=75, existing_rows_count=0, first_row_id=925),
        _mf("added1", added_rows_count=100, existing_rows_count=25),
        _mf("added2", added_rows_count=0, existing_rows_count=100),
        _mf("deletes", content=ManifestContent.DELETES, added_rows_count=5, existing_rows_count=0),
        _mf("added3", added_rows_count=125, existing_rows_count=25),
    ]
    assigned, next_row_id = assign_first_row_ids(rows, 1000)
    assert [m.first_row_id for m in assigned] == [925, 1000, 1125, None, 1225]
    assert next_row_id == 1375
    data = write_manifest_list(rows, 3, SNAP, PARENT, 9, first_row_id=1000)
    assert [m.first_row_id for m in read_manifest_list(data, "snap.avro")] == [925, 1000, 1125, None, 1225]


def test_write_validations() -> None:
    with pytest.raises(ValidationError, match="delete manifest"):
        write_manifest_list([_mf("d", content=ManifestContent.DELETES)], 1, SNAP, None, None)
    with pytest.raises(ValidationError, match="added_files_count"):
        write_manifest_list([_mf("a", added_files_count=None)], 2, SNAP, None, 1)
    with pytest.raises(ValidationError, match="first-row-id"):
        write_manifest_list([_mf("a")], 3, SNAP, None, 1)
    with pytest.raises(ValidationError, match="sequence number"):
        write_manifest_list([_mf("a")], 2, SNAP, None, None)
    with pytest.raises(ValidationError, match="added_snapshot_id"):
        write_manifest_list([_mf("a", added_snapshot_id=-1)], 2, SNAP, None, 1)
    with pytest.raises(UnsupportedError):
        write_manifest_list([], 4, SNAP, None, 1)


def test_v1_list_with_null_counts() -> None:
    """v1 counts are optional; "when null is assumed to be non-zero"."""
    row = _mf("a", added_files_count=None, existing_rows_count=None, partitions=None)
    (got,) = read_manifest_list(write_manifest_list([row], 1, SNAP, None, None), "snap.avro")
    assert got.added_files_count is None and got.existing_rows_count is None and got.partitions is None
    assert got.has_added_files() and got.content is ManifestContent.DATA
    assert (got.sequence_number, got.min_sequence_number) == (0, 0)


def test_format_version_from_hint_or_schema_when_metadata_lacks_it() -> None:
    data = write_manifest_list([_mf("a")], 2, SNAP, None, 1)
    metadata, sync, start = parse_header(data, "x")
    del metadata["format-version"]
    stripped = encode_header(metadata, sync) + data[start:]
    assert open_manifest_list(stripped, "snap.avro").format_version == 2
    assert open_manifest_list(stripped, "snap.avro", format_version_hint=3).format_version == 3


def test_rewrite_is_identical() -> None:
    data = write_manifest_list([_mf("a"), _mf("d", content=ManifestContent.DELETES)], 3, SNAP, PARENT, 9, 100)
    again = rewrite_manifest_list(io.BytesIO(data), "snap.avro")
    assert decode(again) == decode(data)


def test_corrupt_lists() -> None:
    data = write_manifest_list([_mf("a")], 2, SNAP, PARENT, 9)
    with pytest.raises(CorruptDataError, match=r"snap\.avro: truncated"):
        read_manifest_list(data[:-3], "snap.avro")
    with pytest.raises(CorruptDataError, match="not an Avro file"):
        read_manifest_list(b"PAR1", "snap.avro")
    metadata, sync, start = parse_header(data, "x")
    with pytest.raises(UnsupportedError, match="version 9"):
        read_manifest_list(
            encode_header({**metadata, "format-version": "9"}, sync) + data[start:], "snap.avro"
        )
    with pytest.raises(CorruptDataError, match="snapshot-id"):
        open_manifest_list(encode_header({**metadata, "snapshot-id": "x"}, sync) + data[start:], "snap.avro")
