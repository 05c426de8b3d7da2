"""The deletion-vector-v1 blob: byte layout, round trips, Iceberg Java's bytes, corruption."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from pyiceberg.table.deletion_vector import DeletionVector as PyIcebergDV
from pyiceberg.table.deletion_vector import _extract_vector_payload
from pyroaring import BitMap

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.deletion_vector import (
    DV_MAGIC,
    deserialize_dv,
    deserialize_vector,
    serialize_dv,
    serialize_vector,
)
from iceduck.spec.deletion_vector import MAX_KEY, DeletionVector

TWO_32 = 1 << 32
PATH = "s3://bucket/table/data/dv-00001.puffin"

# RoaringFormatSpec
NO_RUN_COOKIE = 12346
RUN_COOKIE = 12347


def frame(vector: bytes) -> bytes:
    """Wrap vector bytes into a blob with a correct length and CRC (to corrupt the vector only)."""
    body = DV_MAGIC + vector
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def array_bitmap(values: list[int]) -> bytes:
    """A portable 32-bit roaring bitmap with one array container under high bits 0."""
    header = struct.pack("<IIHH", NO_RUN_COOKIE, 1, 0, len(values) - 1)
    offsets = struct.pack("<I", len(header) + 4)
    return header + offsets + struct.pack(f"<{len(values)}H", *values)


def vector(*bitmaps: tuple[int, bytes]) -> bytes:
    return struct.pack("<Q", len(bitmaps)) + b"".join(struct.pack("<I", k) + b for k, b in bitmaps)


# -- byte layout --------------------------------------------------------------------------


def test_layout_of_a_small_vector_byte_by_byte() -> None:
    blob = serialize_dv(DeletionVector([1, 3, 5, 7, 9]))
    body = (
        DV_MAGIC
        + struct.pack("<Q", 1)  # one 32-bit bitmap
        + struct.pack("<I", 0)  # its key
        + struct.pack("<I", NO_RUN_COOKIE)  # portable cookie without run containers
        + struct.pack("<I", 1)  # one container
        + struct.pack("<HH", 0, 5 - 1)  # container key 0, cardinality - 1
        + struct.pack("<I", 16)  # offset of the container from the bitmap start
        + struct.pack("<5H", 1, 3, 5, 7, 9)  # array container
    )
    assert blob == struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))
    assert blob[:4] == bytes.fromhex("0000002a")  # length is big-endian: 42 = magic + vector
    assert blob[4:8] == bytes.fromhex("d1d33964")
    # identical to Iceberg Java's golden file for the same positions (CRC-32 big-endian)
    assert blob[-4:] == bytes.fromhex("b3fb20be")
    assert len(blob) == 50


def test_layout_of_an_empty_vector() -> None:
    blob = serialize_dv(DeletionVector())
    assert blob == bytes.fromhex("0000000cd1d339640000000000000000bf18480c")
    assert len(deserialize_dv(blob, PATH, cardinality=0)) == 0


def test_positions_beyond_32_bits_use_ascending_keys() -> None:
    dv = DeletionVector([7, 5 * TWO_32 + 1, TWO_32 + 2, TWO_32 + 3])
    raw = serialize_vector(dv)
    assert struct.unpack_from("<Q", raw, 0) == (3,)
    keys = []
    offset = 8
    for _ in range(3):
        (key,) = struct.unpack_from("<I", raw, offset)
        keys.append(key)
        bitmap = BitMap.deserialize(raw[offset + 4 :])
        offset += 4 + len(bitmap.serialize())
    assert keys == [0, 1, 5]
    assert offset == len(raw)
    assert deserialize_vector(raw) == dv


def test_all_container_types_match_iceberg_java() -> None:
    """Iceberg Java's TestBitmapPositionDeleteIndex "all container types" vector.

    Arrays, run-optimizable arrays and bitsets in two keys: Java run-length encodes before
    writing, and so do we -- the blob is byte-identical (same length, same CRC).
    """
    container = 1 << 16

    def position(bitmap: int, index: int, value: int) -> int:
        return bitmap * TWO_32 + index * container + value

    dv = DeletionVector([position(0, 0, 5), position(0, 0, 7), position(1, 0, 10), position(1, 0, 20)])
    dv.add_range(position(0, 1, 1), position(0, 1, 1000))
    dv.add_range(position(0, 2, 1), position(0, 2, container - 1))
    dv.add_range(position(1, 1, 10), position(1, 1, 500))
    dv.add_range(position(1, 2, 1), position(1, 2, container - 1))
    blob = serialize_dv(dv)
    assert len(blob) == 94
    assert blob[:4] == bytes.fromhex("00000056")
    assert blob[-4:] == bytes.fromhex("c89be397")
    assert struct.unpack_from("<I", blob, 20)[0] & 0xFFFF == RUN_COOKIE
    assert deserialize_dv(blob, PATH, cardinality=132561) == dv


# -- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "positions",
    [
        [0],
        [TWO_32 - 1, TWO_32],
        list(range(0, 5000, 2)),  # array container at the 4096-value limit and beyond (bitset)
        list(range(10, 70_000)),  # runs spanning two containers
        [MAX_KEY * TWO_32 - 1],
    ],
    ids=["zero", "boundary", "array-bitset", "runs", "largest-java-key"],
)
def test_round_trip(positions: list[int]) -> None:
    dv = DeletionVector(positions)
    assert deserialize_dv(serialize_dv(dv), PATH, cardinality=len(positions)) == dv


def test_round_trip_mixed_containers_with_and_without_offset_header() -> None:
    # fewer than 4 containers with a run container: the portable format omits offsets
    few = DeletionVector.from_range(0, 3000)
    few.add(70_000)
    assert struct.unpack_from("<I", serialize_vector(few), 12)[0] & 0xFFFF == RUN_COOKIE
    assert deserialize_dv(serialize_dv(few)) == few
    # 4+ containers mixing runs, arrays and bitsets: offsets present
    many = DeletionVector.from_range(0, 3000)
    many.update(range(65_536, 65_536 + 10_000, 2))  # bitset
    many.update([3 * 65_536 + 1, 3 * 65_536 + 9])  # array
    many.add_range(5 * 65_536, 6 * 65_536 + 100)  # full run container, then a run
    many.add(TWO_32 + 4)
    assert deserialize_dv(serialize_dv(many)) == many


def test_large_random_round_trip() -> None:
    rng = np.random.default_rng(11)
    positions = np.concatenate([rng.integers(0, 1 << 40, 300_000), rng.integers(0, 20_000_000, 1_000_000)])
    dv = DeletionVector(positions)
    blob = serialize_dv(dv)
    back = deserialize_dv(blob, PATH, cardinality=len(dv))
    assert back == dv
    np.testing.assert_array_equal(back.to_numpy(), np.unique(positions))


def test_reader_accepts_empty_bitmaps_for_unused_keys() -> None:
    """Iceberg Java keeps a dense bitmap array and writes empty bitmaps for lower keys."""
    empty = BitMap().serialize()
    raw = vector((0, empty), (1, empty), (2, array_bitmap([7, 9])))
    dv = deserialize_dv(frame(raw), PATH, cardinality=2)
    assert list(dv) == [2 * TWO_32 + 7, 2 * TWO_32 + 9]


def test_writer_run_length_encodes_like_iceberg_java() -> None:
    dv = DeletionVector()
    for position in range(65_536 + 1, 65_536 + 1000):  # one by one: an array container in memory
        dv.add(position)
    raw = serialize_vector(dv)
    assert struct.unpack_from("<I", raw, 12)[0] == RUN_COOKIE  # one container, run flagged
    # cookie, run-flag byte, (key 1, cardinality - 1), then the run container: 1 run (start 1, length - 1)
    assert raw[16:] == bytes([0b1]) + struct.pack("<HH", 1, 998) + struct.pack("<HHH", 1, 1, 998)
    assert deserialize_vector(raw) == dv


def test_serializing_does_not_change_positions() -> None:
    dv = DeletionVector(range(0, 100_000, 3))
    dv.add_range(200_000, 300_000)
    before = dv.to_numpy()
    serialize_dv(dv)
    np.testing.assert_array_equal(dv.to_numpy(), before)


def test_keys_unreadable_by_iceberg_java_are_refused() -> None:
    dv = DeletionVector([MAX_KEY * TWO_32])
    with pytest.raises(UnsupportedError, match="Java"):
        serialize_dv(dv)


# -- second opinion: PyIceberg reads what we write --------------------------------------


def test_pyiceberg_reads_our_blob() -> None:
    rng = np.random.default_rng(5)
    positions = np.concatenate([rng.integers(0, 100_000, 5_000), np.arange(TWO_32 - 50, TWO_32 + 50)])
    dv = DeletionVector(positions)
    dv.add_range(3 * TWO_32, 3 * TWO_32 + 70_000)
    bitmaps = PyIcebergDV._deserialize_bitmap(_extract_vector_payload(serialize_dv(dv)))
    theirs = sorted((key << 32) | low for key, bitmap in enumerate(bitmaps) for low in bitmap)
    assert theirs == dv.to_numpy().tolist()


# -- corruption -----------------------------------------------------------------------------


def good_blob() -> bytes:
    return serialize_dv(DeletionVector([1, 2, 3, TWO_32 + 8]))


def assert_corrupt(data: bytes, match: str, **kwargs: object) -> None:
    with pytest.raises(CorruptDataError, match=match) as info:
        deserialize_dv(data, PATH, **kwargs)  # type: ignore[arg-type]
    assert info.value.path == PATH
    assert str(info.value).startswith(PATH + ": ")


def test_blob_shorter_than_the_frame() -> None:
    assert_corrupt(good_blob()[:11], "shorter than")


def test_length_field_mismatch() -> None:
    blob = good_blob()
    assert_corrupt(blob[:-1], "length field")
    assert_corrupt(blob + b"\0", "length field")
    assert_corrupt(struct.pack(">I", 999) + blob[4:], "length field says 999")


def test_bad_magic() -> None:
    blob = bytearray(good_blob())
    blob[4] = 0xD2
    assert_corrupt(bytes(blob), "bad deletion vector magic: expected d1d33964, found d2d33964")


def test_bad_crc_names_both_checksums() -> None:
    blob = bytearray(good_blob())
    stored = struct.unpack(">I", blob[-4:])[0]
    blob[-1] ^= 0x01
    assert_corrupt(bytes(blob), rf"CRC mismatch: stored 0x{stored ^ 1:08x}, computed 0x{stored:08x}")


def test_flipped_vector_bit_fails_the_crc() -> None:
    blob = bytearray(good_blob())
    blob[30] ^= 0x40
    assert_corrupt(bytes(blob), "CRC mismatch")


def test_cardinality_mismatch() -> None:
    assert_corrupt(good_blob(), "holds 4 positions but its metadata says cardinality 5", cardinality=5)


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"\0" * 7, "too short for the 8-byte bitmap count"),
        (struct.pack("<Q", 2) + struct.pack("<I", 0) + array_bitmap([1]), "claims 2 bitmaps"),
        (vector((0, array_bitmap([1, 2, 3])))[:-2], "truncated"),
        (vector((0, array_bitmap([1])))[:-1] + b"\0\0\0\0\0\0\0\0\0\0\0\0", "unexpected bytes"),
        (vector((0, array_bitmap([1]))) + b"\0", "1 unexpected bytes after its last bitmap"),
        (vector((3, array_bitmap([1])), (2, array_bitmap([1]))), "not in ascending order: 2 after 3"),
        (vector((3, array_bitmap([1])), (3, array_bitmap([2]))), "not in ascending order"),
        (vector((1 << 31, array_bitmap([1]))), "sign bit"),
        (vector((0, struct.pack("<II", 99, 0))), "no portable roaring cookie"),
        (vector((0, struct.pack("<II", NO_RUN_COOKIE, 70_000))), "70000 containers"),
        (vector((0, array_bitmap([5, 3, 9]))), "not a valid roaring bitmap"),
    ],
    ids=[
        "no-count",
        "count-too-large",
        "truncated-container",
        "short-then-garbage",
        "trailing-byte",
        "descending-keys",
        "duplicate-keys",
        "key-sign-bit",
        "bad-cookie",
        "too-many-containers",
        "unsorted-array",
    ],
)
def test_malformed_vector(raw: bytes, match: str) -> None:
    assert_corrupt(frame(raw), match)


def test_truncated_run_container() -> None:
    raw = serialize_vector(DeletionVector.from_range(0, 3000))
    assert_corrupt(frame(raw[:-2]), "truncated")


def test_errors_without_a_path_still_describe_the_problem() -> None:
    with pytest.raises(CorruptDataError, match="CRC mismatch") as info:
        deserialize_dv(good_blob()[:-4] + b"\0\0\0\0")
    assert info.value.path is None
