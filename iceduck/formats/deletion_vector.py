"""The ``deletion-vector-v1`` Puffin blob <-> :class:`DeletionVector`.

Puffin spec, "``deletion-vector-v1`` blob type":

    The serialized blob contains:

    * Combined length of the vector and magic bytes stored as 4 bytes, big-endian
    * A 4-byte magic sequence, ``D1 D3 39 64``
    * The vector, serialized as described below
    * A CRC-32 checksum of the magic bytes and serialized vector as 4 bytes, big-endian

    The position vector is serialized using the Roaring bitmap "portable" format. This
    representation consists of:

    * The number of 32-bit Roaring bitmaps, serialized as 8 bytes, little-endian
    * For each 32-bit Roaring bitmap, ordered by unsigned comparison of the 32-bit keys:
      - The key stored as 4 bytes, little-endian
      - A 32-bit Roaring bitmap

    Note that the length and CRC fields are stored using big-endian, but the Roaring
    bitmap format uses little-endian values.

Each 32-bit bitmap is the standard portable Roaring format (RoaringFormatSpec), which
pyroaring's ``BitMap.serialize``/``deserialize`` read and write. Like Iceberg Java
(``BitmapPositionDeleteIndex.serialize`` calls ``runLengthEncode()`` first) the writer
run-optimizes before serializing; the reader accepts any container mix, and also the
empty bitmaps Java writes for keys below the largest one (its bitmap array is dense).

This module only knows the blob bytes; Puffin files holding them are
:mod:`iceduck.formats.puffin`.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
from pyroaring import BitMap

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.spec.deletion_vector import MAX_KEY, DeletionVector

#: Puffin blob type of a deletion vector.
DV_BLOB_TYPE = "deletion-vector-v1"
#: ``D1 D3 39 64``: the magic after the length field.
DV_MAGIC = b"\xd1\xd3\x39\x64"

_BE_U32 = struct.Struct(">I")
_LE_U16 = struct.Struct("<H")
_LE_U32 = struct.Struct("<I")
_LE_U64 = struct.Struct("<Q")

# Iceberg Java (RoaringPositionBitmap.readKey) rejects keys above Integer.MAX_VALUE - 1.
_JAVA_MAX_KEY = (1 << 31) - 2
# Length and CRC frame: 4-byte length + 4-byte magic ... 4-byte CRC.
_FRAME_OVERHEAD = 12
_MAX_SIGNED_INT = (1 << 31) - 1

# RoaringFormatSpec constants.
_SERIAL_COOKIE_NO_RUNCONTAINER = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_CONTAINER_MAX = 4096
_BITSET_CONTAINER_BYTES = 8192
_MAX_CONTAINERS = 1 << 16


# -- writing -------------------------------------------------------------------------------


def serialize_vector(dv: DeletionVector) -> bytes:
    """The 64-bit portable Roaring serialization of ``dv`` (no length/magic/CRC frame).

    Run-optimizes ``dv``'s bitmaps in place first (representation only).
    """
    bitmaps = dv.bitmaps()
    if bitmaps and bitmaps[-1][0] > _JAVA_MAX_KEY:
        raise UnsupportedError(
            f"deletion vector position {dv.max()} is too large for Iceberg Java readers "
            f"(largest key {_JAVA_MAX_KEY})"
        )
    dv.run_optimize()
    parts = [_LE_U64.pack(len(bitmaps))]
    for key, bitmap in bitmaps:
        parts.append(_LE_U32.pack(key))
        parts.append(bitmap.serialize())
    return b"".join(parts)


def serialize_dv(dv: DeletionVector) -> bytes:
    """The complete ``deletion-vector-v1`` blob: length, magic, vector, CRC-32."""
    body = DV_MAGIC + serialize_vector(dv)
    if len(body) > _MAX_SIGNED_INT:
        raise UnsupportedError(f"deletion vector of {len(body)} bytes exceeds the 2 GiB blob limit")
    return _BE_U32.pack(len(body)) + body + _BE_U32.pack(zlib.crc32(body))


# -- reading -------------------------------------------------------------------------------


def deserialize_dv(
    data: bytes | bytearray | memoryview, path: str | None = None, *, cardinality: int | None = None
) -> DeletionVector:
    """Parse a ``deletion-vector-v1`` blob (exactly the blob's bytes).

    ``cardinality``, when given (the blob's ``cardinality`` property or the manifest
    entry's ``record_count``), must match the number of positions read, as Iceberg Java
    checks. Raises :class:`CorruptDataError` naming ``path`` for any malformed blob.
    """
    view = memoryview(data).cast("B")
    size = len(view)
    if size < _FRAME_OVERHEAD:
        raise CorruptDataError(
            f"deletion vector blob is {size} bytes, shorter than its {_FRAME_OVERHEAD}-byte "
            "length/magic/CRC frame",
            path,
        )
    (length,) = _BE_U32.unpack_from(view, 0)
    if length + 8 != size:
        raise CorruptDataError(
            f"deletion vector length field says {length} bytes of magic and vector, "
            f"but the blob holds {size - 8}",
            path,
        )
    magic = bytes(view[4:8])
    if magic != DV_MAGIC:
        raise CorruptDataError(
            f"bad deletion vector magic: expected {DV_MAGIC.hex()}, found {magic.hex()}", path
        )
    (stored_crc,) = _BE_U32.unpack_from(view, 4 + length)
    computed_crc = zlib.crc32(view[4 : 4 + length])
    if stored_crc != computed_crc:
        raise CorruptDataError(
            f"deletion vector CRC mismatch: stored 0x{stored_crc:08x}, computed 0x{computed_crc:08x}",
            path,
        )
    dv = deserialize_vector(view[8 : 4 + length], path)
    if cardinality is not None and len(dv) != cardinality:
        raise CorruptDataError(
            f"deletion vector holds {len(dv)} positions but its metadata says cardinality {cardinality}",
            path,
        )
    return dv


def deserialize_vector(data: bytes | bytearray | memoryview, path: str | None = None) -> DeletionVector:
    """Parse a 64-bit portable Roaring bitmap (the vector inside the blob frame)."""
    view = memoryview(data).cast("B")
    size = len(view)
    if size < 8:
        raise CorruptDataError(
            f"deletion vector truncated: {size} bytes, too short for the 8-byte bitmap count", path
        )
    (count,) = _LE_U64.unpack_from(view, 0)
    # every 32-bit bitmap takes at least a 4-byte key and an 8-byte header
    if count > (size - 8) // 12:
        raise CorruptDataError(
            f"deletion vector claims {count} bitmaps but only {size - 8} bytes follow", path
        )
    position = 8
    last_key = -1
    bitmaps = []
    for _ in range(count):
        _require(view, position, 4, path)
        (key,) = _LE_U32.unpack_from(view, position)
        position += 4
        if key > MAX_KEY:
            raise CorruptDataError(
                f"deletion vector key {key} sets the sign bit of the 64-bit positions", path
            )
        if key <= last_key:
            raise CorruptDataError(
                f"deletion vector keys are not in ascending order: {key} after {last_key}", path
            )
        end = _portable_bitmap_end(view, position, path)
        try:
            bitmap = BitMap.deserialize(view[position:end])  # type: ignore[arg-type]  # any buffer, no copy
        except ValueError as exc:
            raise CorruptDataError(
                f"deletion vector bitmap for key {key} is not a valid roaring bitmap: {exc}", path
            ) from None
        if bitmap:
            bitmaps.append((key, bitmap))
        position = end
        last_key = key
    if position != size:
        raise CorruptDataError(
            f"deletion vector has {size - position} unexpected bytes after its last bitmap", path
        )
    return DeletionVector.from_bitmaps(bitmaps)


def _require(view: memoryview, offset: int, length: int, path: str | None) -> None:
    if offset + length > len(view):
        raise CorruptDataError(
            f"deletion vector truncated: needs {offset + length} bytes, has {len(view)}", path
        )


def _portable_bitmap_end(view: memoryview, start: int, path: str | None) -> int:
    """Offset just past the portable 32-bit Roaring bitmap starting at ``start``.

    Walks the headers of the RoaringFormatSpec layout: a cookie (with the container
    count and a run-container bitset, or followed by a 32-bit count), one (key,
    cardinality - 1) pair of uint16 per container, an offset header of uint32 per
    container (absent when there are run containers and fewer than 4 containers), then
    the containers: arrays of 2-byte values (cardinality <= 4096), 8 KiB bitsets, or
    runs (uint16 count, then 4 bytes per run). The size must be known because the
    bitmaps are concatenated without lengths.
    """
    _require(view, start, 4, path)
    (cookie,) = _LE_U32.unpack_from(view, start)
    position = start + 4
    run_flags = None
    if cookie & 0xFFFF == _SERIAL_COOKIE:
        containers = (cookie >> 16) + 1
        flag_bytes = (containers + 7) // 8
        _require(view, position, flag_bytes, path)
        run_flags = np.unpackbits(
            np.frombuffer(view[position : position + flag_bytes], dtype=np.uint8), bitorder="little"
        )[:containers].astype(bool)
        position += flag_bytes
        has_offsets = containers >= _NO_OFFSET_THRESHOLD
    elif cookie == _SERIAL_COOKIE_NO_RUNCONTAINER:
        _require(view, position, 4, path)
        (containers,) = _LE_U32.unpack_from(view, position)
        position += 4
        has_offsets = True
        if containers > _MAX_CONTAINERS:
            raise CorruptDataError(
                f"deletion vector bitmap claims {containers} containers (at most {_MAX_CONTAINERS})", path
            )
    else:
        raise CorruptDataError(
            f"deletion vector bitmap at byte {start} has no portable roaring cookie (0x{cookie:08x})", path
        )
    _require(view, position, 4 * containers, path)
    header = np.frombuffer(view[position : position + 4 * containers], dtype="<u2").reshape(containers, 2)
    cardinalities = header[:, 1].astype(np.int64) + 1
    position += 4 * containers
    if has_offsets:
        position += 4 * containers
    sizes = np.where(cardinalities <= _ARRAY_CONTAINER_MAX, 2 * cardinalities, _BITSET_CONTAINER_BYTES)
    if run_flags is None or not run_flags.any():
        position += int(sizes.sum())
    else:
        # run containers are sized by their own run count: step over them one by one,
        # summing the fixed-size containers between them
        fixed_before = np.concatenate(([0], np.cumsum(np.where(run_flags, 0, sizes))))
        run_bytes = 0
        for index in np.flatnonzero(run_flags).tolist():
            run_start = position + int(fixed_before[index]) + run_bytes
            _require(view, run_start, 2, path)
            (runs,) = _LE_U16.unpack_from(view, run_start)
            run_bytes += 2 + 4 * runs
        position += int(fixed_before[-1]) + run_bytes
    _require(view, start, position - start, path)
    return position
