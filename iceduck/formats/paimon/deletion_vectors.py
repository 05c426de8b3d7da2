"""Paimon's deletion-vector index files (``index/index-<uuid>-<n>``).

Java's ``DeletionVectorsIndexFile`` and ``DeletionVectorIndexFileWriter``: the file starts
with a version byte (``VERSION_ID_V1`` = 1, the only one; Java refuses any other), then
one record per data file, where the index manifest's ``_DELETIONS_VECTORS_RANGES`` entry
(:class:`~iceduck.spec.paimon.manifest.DeletionVectorRange`) gives the record's offset.
Each record is ``DeletionVector.serializeTo``'s output:

* a 4-byte big-endian length, of the magic number and the bitmap that follow;
* the magic number: ``BitmapDeletionVector.MAGIC_NUMBER`` = 1581511376, big-endian, for a
  32-bit RoaringBitmap in its portable serialization (the default), or
  ``Bitmap64DeletionVector.MAGIC_NUMBER`` = 1681511377, little-endian, for a 64-bit one
  (option ``deletion-vectors.bitmap64``) in Iceberg's portable layout (an 8-byte
  little-endian count, then per 32-bit key a 4-byte little-endian key and a portable
  32-bit bitmap);
* a 4-byte big-endian CRC-32 of the magic number and the bitmap.

The range's length is the record's first field for a 32-bit vector (magic and bitmap),
but the whole record (length field and CRC included) for a 64-bit one, as Java's
``DeletionVector.read`` checks. Anything that does not add up raises
:class:`CorruptDataError` naming the index file.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, BinaryIO

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.io.fileio import open_input, storage_errors
from iceduck.spec.paimon.manifest import DeletionVectorRange

if TYPE_CHECKING:
    import numpy as np

#: ``DeletionVectorsIndexFile.VERSION_ID_V1``
VERSION_ID_V1 = 1
#: ``BitmapDeletionVector.MAGIC_NUMBER`` (32-bit RoaringBitmap), written big-endian
BITMAP32_MAGIC = 1581511376
#: ``Bitmap64DeletionVector.MAGIC_NUMBER`` (64-bit, Iceberg's layout), written little-endian
BITMAP64_MAGIC = 1681511377

_BE_I32 = struct.Struct(">i")
_BE_U32 = struct.Struct(">I")
_LE_I32 = struct.Struct("<i")
_LE_U64 = struct.Struct("<Q")


def read_deletion_vector(path: str, dv: DeletionVectorRange) -> np.ndarray:
    """The deleted row positions of one data file (sorted ``uint64``), from the index
    file at ``path``."""
    with open_input(path) as stream:
        _check_version(stream, path)
        return _read_record(stream, dv, path)


def read_deletion_vectors(path: str, ranges: Iterable[DeletionVectorRange]) -> dict[str, np.ndarray]:
    """The deleted positions of several data files of one index file, by data file name."""
    with open_input(path) as stream:
        _check_version(stream, path)
        return {dv.data_file: _read_record(stream, dv, path) for dv in ranges}


def _read(stream: BinaryIO, offset: int, length: int, path: str) -> bytes:
    with storage_errors(path):
        stream.seek(offset)
        data = stream.read(length)
    if len(data) != length:
        raise CorruptDataError(
            f"deletion-vector index file ended early: wanted {length} bytes at offset {offset}, "
            f"got {len(data)}",
            path,
        )
    return data


def _check_version(stream: BinaryIO, path: str) -> None:
    version = _read(stream, 0, 1, path)[0]
    if version != VERSION_ID_V1:
        raise UnsupportedError(
            f"{path}: deletion-vector index file version {version} is not supported "
            f"(expected {VERSION_ID_V1})"
        )


def _read_record(stream: BinaryIO, dv: DeletionVectorRange, path: str) -> np.ndarray:
    import numpy as np

    from iceduck.formats.deletion_vector import deserialize_vector

    if dv.offset < 1:
        raise CorruptDataError(
            f"deletion vector of {dv.data_file} at offset {dv.offset}, inside the header", path
        )
    head = _read(stream, dv.offset, 8, path)
    (length,) = _BE_I32.unpack_from(head, 0)
    where = f"deletion vector of {dv.data_file} at offset {dv.offset}"
    if _BE_I32.unpack_from(head, 4)[0] == BITMAP32_MAGIC:
        expected = dv.length
    elif _LE_I32.unpack_from(head, 4)[0] == BITMAP64_MAGIC:
        expected = dv.length - 8
    else:
        raise CorruptDataError(f"{where}: bad magic number {head[4:8].hex()}", path)
    if length != expected or length < 4:
        raise CorruptDataError(
            f"{where}: its record holds {length} bytes where the index manifest says {expected}", path
        )
    body = head[4:] + _read(stream, dv.offset + 8, length, path)  # magic, bitmap, CRC
    data, (crc,) = body[:length], _BE_U32.unpack_from(body, length)
    if zlib.crc32(data) != crc:
        raise CorruptDataError(f"{where}: CRC mismatch", path)
    if _BE_I32.unpack_from(data, 0)[0] == BITMAP32_MAGIC:
        # a 32-bit bitmap is the 64-bit layout's bitmap of key 0
        vector = deserialize_vector(_LE_U64.pack(1) + bytes(4) + data[4:], f"{path} ({where})")
    else:
        vector = deserialize_vector(data[4:], f"{path} ({where})")
    positions = vector.to_numpy().astype(np.uint64)
    if dv.cardinality is not None and dv.cardinality != len(positions):
        raise CorruptDataError(
            f"{where}: {len(positions)} positions where the index manifest says {dv.cardinality}", path
        )
    return positions
