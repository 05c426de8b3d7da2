"""Paimon's BinaryRow: partition values, min/max keys and statistics in manifests.

Seed 004 ("BinaryRow"): "A row has two parts: fixed-length part and variable-length part.
Fixed-length part contains a 1-byte header, null bit set, and field values. The null bit
set is used for null tracking and is aligned to 8-byte word boundaries. Field values hold
fixed-length primitive types and variable-length values that can be stored in 8 bytes. If
the variable-length field does not fit in 8 bytes, then the fixed-length part stores the
length and the offset of the variable-length part."

The exact layout is Java's ``BinaryRow``/``BinarySegmentUtils`` (little-endian, as every
JVM Paimon runs on writes it):

* the header byte is the row kind; bit ``8 + i`` of the null bit set (bit ``j`` of a byte
  is ``1 << j``) is set when field ``i`` is null; the bit set spans
  ``calculateBitSetWidthInBytes(arity) = ((arity + 63 + 8) / 64) * 8`` bytes, header included;
* field ``i`` has an 8-byte slot at ``bitSetWidth + 8 * i``: BOOLEAN/TINYINT one byte,
  SMALLINT two, INT/DATE (days)/TIME (millis of the day)/FLOAT four, BIGINT/DOUBLE eight;
* CHAR/VARCHAR/BINARY/VARBINARY: a value of at most 7 bytes is stored in the slot itself
  ("compact": the highest bit of the slot's long is set, its length is the 7 bits below
  it, i.e. in the last byte, and the bytes start at the slot); a longer one has its offset
  from the row's start in the slot's high 32 bits and its length in the low 32 bits;
* DECIMAL of precision <= 18 ("compact") is the unscaled long in the slot; a larger one is
  offset/length as above of the unscaled value's big-endian two's-complement bytes;
* TIMESTAMP of precision <= 3 ("compact") is the epoch millisecond in the slot; a larger
  one has the offset of an 8-byte epoch millisecond in the slot's high 32 bits and the
  nanoseconds within that millisecond in the low 32 bits.

A manifest stores a row serialized by ``SerializationUtils.serializeBinaryRow``: a 4-byte
big-endian arity, then the row's bytes.

Values come back in iceduck's representation of the Iceberg type the Paimon type maps to
(:mod:`iceduck.spec.paimon.iceberg_bridge`, :mod:`iceduck.spec.types`): int days for DATE,
int micros of the day for TIME, int micros for TIMESTAMP(0-6), int nanos for
TIMESTAMP(7-9) (both for the WITH LOCAL TIME ZONE variants too, as UTC), ``Decimal``,
``str``, ``bytes``, ``bool``, ``int``, ``float``. Nested values (ARRAY, MAP, ROW, ...)
never appear in partitions, keys or statistics Paimon collects; they decode as None.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.spec.paimon.types import PaimonType

HEADER_SIZE_IN_BITS = 8
#: "the highest bit mark" of a compact variable-length value
_COMPACT_MARK = 1 << 63
_LE_I8 = struct.Struct("<b")
_LE_I16 = struct.Struct("<h")
_LE_I32 = struct.Struct("<i")
_LE_I64 = struct.Struct("<q")
_LE_U64 = struct.Struct("<Q")
_LE_F32 = struct.Struct("<f")
_LE_F64 = struct.Struct("<d")
_BE_I32 = struct.Struct(">i")
_NESTED = frozenset({"ARRAY", "MULTISET", "MAP", "ROW", "VARIANT", "VECTOR", "BLOB"})


def bit_set_width(arity: int) -> int:
    """Java ``BinaryRow.calculateBitSetWidthInBytes``: header and null bits, 8-byte aligned."""
    return ((arity + 63 + HEADER_SIZE_IN_BITS) // 64) * 8


def fixed_length(arity: int) -> int:
    """Java ``BinaryRow.calculateFixPartSizeInBytes``: the bit set and one slot per field."""
    return bit_set_width(arity) + 8 * arity


def decode_row(data: bytes, types: Sequence[PaimonType], path: str) -> tuple[Any, ...]:
    """The values of a serialized BinaryRow (4-byte big-endian arity, then the row) whose
    fields have ``types``. Raises :class:`CorruptDataError` naming ``path`` when the arity
    differs from ``len(types)`` or the bytes are too short for what they claim."""
    if len(data) < 4:
        raise CorruptDataError(f"a serialized BinaryRow needs a 4-byte arity, got {len(data)} bytes", path)
    (arity,) = _BE_I32.unpack_from(data, 0)
    if arity != len(types):
        raise CorruptDataError(f"a BinaryRow has {arity} fields where {len(types)} were expected", path)
    return decode_fields(memoryview(data)[4:], types, path)


def decode_fields(row: bytes | memoryview, types: Sequence[PaimonType], path: str) -> tuple[Any, ...]:
    """The values of an unprefixed BinaryRow of ``len(types)`` fields."""
    arity = len(types)
    width = bit_set_width(arity)
    if len(row) < width + 8 * arity:
        raise CorruptDataError(
            f"a BinaryRow of {arity} fields needs {width + 8 * arity} bytes, it has {len(row)}", path
        )
    return tuple(
        None
        if row[(i + HEADER_SIZE_IN_BITS) >> 3] & (1 << ((i + HEADER_SIZE_IN_BITS) & 7))
        else _field(row, width + 8 * i, t, path)
        for i, t in enumerate(types)
    )


def _field(row: bytes | memoryview, slot: int, t: PaimonType, path: str) -> Any:
    root = t.root
    if root in ("INT", "DATE"):
        return _LE_I32.unpack_from(row, slot)[0]
    if root == "BIGINT":
        return _LE_I64.unpack_from(row, slot)[0]
    if root in ("CHAR", "VARCHAR"):
        raw = _variable(row, slot, path)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptDataError("a BinaryRow string is not valid UTF-8", path) from None
    if root in ("BINARY", "VARBINARY"):
        return _variable(row, slot, path)
    if root == "BOOLEAN":
        return row[slot] != 0
    if root == "TINYINT":
        return _LE_I8.unpack_from(row, slot)[0]
    if root == "SMALLINT":
        return _LE_I16.unpack_from(row, slot)[0]
    if root == "FLOAT":
        return _LE_F32.unpack_from(row, slot)[0]
    if root == "DOUBLE":
        return _LE_F64.unpack_from(row, slot)[0]
    if root == "TIME":
        return _LE_I32.unpack_from(row, slot)[0] * 1000
    if root == "DECIMAL":
        return _decimal(row, slot, t, path)
    if root in ("TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return _timestamp(row, slot, t, path)
    if root in _NESTED:
        return None
    raise CorruptDataError(f"a BinaryRow field of unknown type {t}", path)


def _offset_and_length(row: bytes | memoryview, slot: int, path: str) -> tuple[int, int]:
    word = _LE_U64.unpack_from(row, slot)[0]
    offset, length = word >> 32, word & 0xFFFFFFFF
    if offset + length > len(row):
        raise CorruptDataError(
            f"a BinaryRow value at offset {offset} of length {length} lies beyond the row's {len(row)} bytes",
            path,
        )
    return offset, length


def _variable(row: bytes | memoryview, slot: int, path: str) -> bytes:
    word = _LE_U64.unpack_from(row, slot)[0]
    if word & _COMPACT_MARK:
        length = (word >> 56) & 0x7F
        if length > 7:
            raise CorruptDataError(f"a compact BinaryRow value claims {length} bytes (at most 7)", path)
        return bytes(row[slot : slot + length])
    offset, length = _offset_and_length(row, slot, path)
    return bytes(row[offset : offset + length])


def _decimal(row: bytes | memoryview, slot: int, t: PaimonType, path: str) -> Decimal:
    precision = t.precision if t.precision is not None else 10
    scale = t.scale or 0
    if precision <= 18:
        unscaled = _LE_I64.unpack_from(row, slot)[0]
    else:
        offset, length = _offset_and_length(row, slot, path)
        if length == 0:
            raise CorruptDataError(f"a BinaryRow {t} value has no bytes", path)
        unscaled = int.from_bytes(row[offset : offset + length], "big", signed=True)
    digits = tuple(int(d) for d in str(abs(unscaled)))
    if unscaled != 0 and len(digits) > precision:
        raise CorruptDataError(f"a BinaryRow value {unscaled}E-{scale} does not fit {t}", path)
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


def _timestamp(row: bytes | memoryview, slot: int, t: PaimonType, path: str) -> int:
    precision = t.precision if t.precision is not None else 6
    if precision <= 3:
        millis, nanos_of_milli = _LE_I64.unpack_from(row, slot)[0], 0
    else:
        word = _LE_U64.unpack_from(row, slot)[0]
        offset, nanos_of_milli = word >> 32, word & 0xFFFFFFFF
        if offset + 8 > len(row):
            raise CorruptDataError(f"a BinaryRow timestamp at offset {offset} lies beyond the row", path)
        if nanos_of_milli >= 1_000_000:
            raise CorruptDataError(
                f"a BinaryRow timestamp has {nanos_of_milli} nanoseconds of a millisecond", path
            )
        millis = _LE_I64.unpack_from(row, offset)[0]
    if precision > 6:
        return millis * 1_000_000 + nanos_of_milli
    return millis * 1000 + nanos_of_milli // 1000
