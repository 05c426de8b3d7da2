"""Deletion-vector index files: pypaimon's (32-bit bitmaps) and records built by the rules
of Java's ``BitmapDeletionVector``/``Bitmap64DeletionVector.serializeTo`` (pypaimon writes
no 64-bit ones)."""

from __future__ import annotations

import dataclasses
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from pyroaring import BitMap

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.deletion_vector import serialize_vector
from iceduck.formats.paimon.deletion_vectors import (
    BITMAP32_MAGIC,
    BITMAP64_MAGIC,
    read_deletion_vector,
    read_deletion_vectors,
)
from iceduck.formats.paimon.manifests import read_index_manifest
from iceduck.formats.paimon.paths import index_file_path
from iceduck.formats.paimon.table_files import read_schema, read_snapshot
from iceduck.spec.deletion_vector import DeletionVector
from iceduck.spec.paimon.binary_row import decode_row
from iceduck.spec.paimon.manifest import DeletionVectorRange
from tests.formats.paimon.fixture import table


def test_pypaimon_deletion_vector() -> None:
    """pypaimon deleted rows 1, 4, 5 and 9 of the table's only data file."""
    location = table("dv")
    snapshot = read_snapshot(location, 2)
    assert snapshot.index_manifest is not None
    (entry,) = read_index_manifest(location, snapshot.index_manifest)
    assert entry.dv_ranges is not None
    (dv,) = entry.dv_ranges
    path = index_file_path(location, entry)
    positions = read_deletion_vector(path, dv)
    assert positions.dtype == np.uint64 and positions.tolist() == [1, 4, 5, 9]
    assert {k: v.tolist() for k, v in read_deletion_vectors(path, [dv]).items()} == {
        dv.data_file: [1, 4, 5, 9]
    }


def _record32(positions: list[int]) -> bytes:
    """``BitmapDeletionVector.serializeTo``: length, big-endian magic, portable bitmap, CRC."""
    data = struct.pack(">i", BITMAP32_MAGIC) + BitMap(positions).serialize()
    return struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))


def _record64(positions: list[int]) -> bytes:
    """``Bitmap64DeletionVector.serializeToBytes``: length, little-endian magic, Iceberg's
    portable 64-bit layout, CRC."""
    data = struct.pack("<i", BITMAP64_MAGIC) + serialize_vector(DeletionVector(positions))
    return struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))


def _index_file(tmp_path: Path, records: list[bytes], version: int = 1) -> tuple[str, list[int]]:
    offsets, data = [], bytearray([version])
    for record in records:
        offsets.append(len(data))
        data += record
    path = tmp_path / "index-x-0"
    path.write_bytes(bytes(data))
    return str(path), offsets


BIG = [0, 7, 2**31 - 1, 2**32 + 5, 3 * 2**32]


def test_32_and_64_bit_records(tmp_path: Path) -> None:
    small = list(range(0, 100_000, 3))
    path, (first, second) = _index_file(tmp_path, [_record32(small), _record64(BIG)])
    r32 = DeletionVectorRange("a.parquet", first, len(_record32(small)) - 8, len(small))
    r64 = DeletionVectorRange("b.parquet", second, len(_record64(BIG)), len(BIG))
    assert read_deletion_vector(path, r32).tolist() == small
    assert read_deletion_vector(path, r64).tolist() == BIG
    both = read_deletion_vectors(path, [r64, r32])
    assert both["a.parquet"].tolist() == small and both["b.parquet"].tolist() == BIG


def _corrupt(tmp_path: Path, change: str) -> tuple[str, DeletionVectorRange]:
    record = bytearray(_record32([1, 2, 3]))
    version = 1
    if change == "magic":
        record[4:8] = b"\x00\x00\x00\x01"
    elif change == "crc":
        record[-1] ^= 1
    elif change == "bitmap":
        record[8:12] = b"\xff\xff\xff\xff"
        crc_covered = bytes(record[4:-4])
        record[-4:] = struct.pack(">I", zlib.crc32(crc_covered))
    elif change == "version":
        version = 2
    path, (offset,) = _index_file(
        tmp_path, [bytes(record[:-6]) if change == "truncated" else bytes(record)], version
    )
    dv = DeletionVectorRange("d.parquet", offset, len(record) - 8, 3)
    if change == "length":
        dv = dataclasses.replace(dv, length=dv.length + 1)
    elif change == "cardinality":
        dv = dataclasses.replace(dv, cardinality=4)
    elif change == "offset":
        dv = dataclasses.replace(dv, offset=0)
    return path, dv


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ("magic", "bad magic number 00000001"),
        ("crc", "CRC mismatch"),
        ("bitmap", "no portable roaring cookie"),
        ("truncated", "ended early"),
        ("length", "holds 26 bytes where the index manifest says 27"),
        ("cardinality", "3 positions where the index manifest says 4"),
        ("offset", "inside the header"),
    ],
)
def test_corrupt_vectors_name_the_file(tmp_path: Path, change: str, problem: str) -> None:
    path, dv = _corrupt(tmp_path, change)
    with pytest.raises(CorruptDataError, match=problem) as info:
        read_deletion_vector(path, dv)
    assert path in str(info.value)


def test_unknown_version(tmp_path: Path) -> None:
    path, dv = _corrupt(tmp_path, "version")
    with pytest.raises(UnsupportedError, match="version 2") as info:
        read_deletion_vector(path, dv)
    assert path in str(info.value)


def test_missing_index_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(CorruptDataError, match="does not exist") as info:
        read_deletion_vector(str(tmp_path / "index-gone-0"), DeletionVectorRange("d", 1, 20, None))
    assert "index-gone-0" in str(info.value)


def test_index_file_beside_the_data_files() -> None:
    """``index-file-in-data-file-dir``: pypaimon put the vector in ``dt=x y/bucket-0/``."""
    location = table("dv_beside")
    snapshot = read_snapshot(location, 2)
    schema = read_schema(location, 0)
    assert snapshot.index_manifest is not None
    (entry,) = read_index_manifest(location, snapshot.index_manifest)
    assert entry.dv_ranges is not None
    partition = decode_row(entry.partition, [f.type for f in schema.partition_fields], "p")
    path = index_file_path(location, entry, schema, partition)
    assert path == f"{location}/dt=x y/bucket-0/{entry.file_name}"
    assert read_deletion_vector(path, entry.dv_ranges[0]).tolist() == [0, 3]
