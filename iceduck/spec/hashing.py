"""The 32-bit hash of Iceberg values (spec, "Appendix B: 32-bit Hash Requirements").

"The 32-bit hash implementation is 32-bit Murmur3 hash, x86 variant, seeded with 0."
The bucket transform (spec, "Bucket Transform Details") is built on these hashes, so
they must match Iceberg Java bit for bit or Spark and iceduck would put the same row
in different buckets.

Rules per type, with the reasons the spec gives:

* int, long, date, time, timestamp[tz], boolean: the value as a *long*, 8 bytes
  little-endian. "Integer and long hash results must be identical for all integer
  values" so that promoting int to long does not move rows between buckets. The
  table writes ``hashInt`` for date and boolean, but its own test values
  (2017-11-16 -> -653330422, true -> 1392991556) are the 8-byte hashes, which is also
  what Java's ``BucketUtil.hash(int)`` does (``hashLong``); the test vectors win.
* timestamp[tz]_ns: "converted to microsecond precision before hashing" -- with floor
  division, as Java's ``DateTimeUtil.nanosToMicros`` (``Math.floorDiv``), so a
  pre-1970 nanosecond value lands on the same bucket as its microsecond truncation.
* decimal: ``minBigEndian(unscaled(v))``, the minimum two's-complement big-endian
  bytes of the unscaled value (Java's ``BigInteger.toByteArray``); the scale is part
  of the type, not of the hash.
* string: UTF-8 bytes; uuid: 16 bytes big-endian; fixed, binary: the raw bytes.
* float, double ("not currently valid for bucketing"): ``doubleToLongBits`` of the
  value as a double, NaN canonicalised to ``0x7ff8000000000000`` and -0.0 to 0.0.
* unknown: "always null". variant: "A 32-bit hash is not defined"; geometry and
  geography are not in the tables either.
"""

from __future__ import annotations

import math
import struct
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import mmh3

from iceduck.errors import UserError
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

_LONG = struct.Struct("<q")
_DOUBLE_BITS = struct.Struct("<d")
_CANONICAL_NAN_BITS = 0x7FF8000000000000
_NANOS_PER_MICRO = 1000


def murmur3_32(data: bytes) -> int:
    """Murmur3 x86 32-bit hash of ``data`` with seed 0, as a signed 32-bit int (Java's ``int``)."""
    return mmh3.hash(data, 0, signed=True)


def hash_long(value: int) -> int:
    """``hashLong``: the 8 little-endian bytes of a 64-bit two's-complement integer."""
    return mmh3.hash(_LONG.pack(value), 0, signed=True)


def hash_nanos(value: int) -> int:
    """Nanosecond timestamps hash as their floor-divided microseconds (Appendix B, note 3)."""
    return hash_long(value // _NANOS_PER_MICRO)


def min_big_endian(unscaled: int) -> bytes:
    """The fewest two's-complement big-endian bytes that hold ``unscaled`` (never empty).

    Same bytes as Java's ``BigInteger.toByteArray``: 0 -> ``00``, 128 -> ``00 80``,
    -128 -> ``80``.
    """
    magnitude = unscaled if unscaled >= 0 else ~unscaled
    return unscaled.to_bytes(magnitude.bit_length() // 8 + 1, "big", signed=True)


def unscaled_value(value: Decimal) -> int:
    """The unscaled integer of a decimal: ``Decimal("14.20")`` -> 1420 (its digits and sign)."""
    sign, digits, _exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits))) if digits else 0
    return -unscaled if sign else unscaled


def unscaled_at_scale(value: Decimal, scale: int) -> int:
    """The unscaled integer of ``value`` written with exactly ``scale`` fractional digits.

    A decimal(P, S) value always has scale S in Java, so ``Decimal("14.2")`` in a
    decimal(4, 2) column must hash as 1420, like ``Decimal("14.20")``. Plain integer
    arithmetic keeps all 38 digits (a ``decimal`` context would round at 28). Raises
    :class:`UserError` if the value has more fractional digits than the scale allows.
    """
    _sign, _digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise UserError(f"decimal value {value} is not finite")
    own = unscaled_value(value)
    shift = exponent + scale
    if shift >= 0:
        return own * 10**shift
    divisor = 10**-shift
    if own % divisor:
        raise UserError(f"decimal value {value} has more than {scale} fractional digits")
    return own // divisor


def hash_decimal(value: Decimal, scale: int | None = None) -> int:
    """``hashBytes(minBigEndian(unscaled(v)))`` (Appendix B, note 2).

    With ``scale`` (the column's S) the unscaled value is taken at that scale; without
    it, at the value's own exponent, as Java's ``BucketUtil.hash(BigDecimal)``.
    """
    unscaled = unscaled_value(value) if scale is None else unscaled_at_scale(value, scale)
    return murmur3_32(min_big_endian(unscaled))


def hash_string(value: str) -> int:
    """``hashBytes(utf8Bytes(v))``.

    A lone surrogate cannot be UTF-8; Java's encoder writes ``?`` for it, and so does
    ``errors="replace"``, keeping the hash equal to Java's even for such strings.
    """
    return murmur3_32(value.encode("utf-8", errors="replace"))


def hash_uuid(value: uuid.UUID) -> int:
    """``hashBytes(uuidBytes(v))``: the 16 bytes big-endian (Appendix B, note 4)."""
    return murmur3_32(value.bytes)


def hash_bytes(value: bytes) -> int:
    """``hashBytes(v)`` for fixed and binary values."""
    return murmur3_32(bytes(value))


def double_to_long_bits(value: float) -> int:
    """IEEE 754 bits of a double with NaN and -0.0 canonicalised (Appendix B, note 5)."""
    if math.isnan(value):
        return _CANONICAL_NAN_BITS
    if value == 0.0:
        return 0
    return _LONG.unpack(_DOUBLE_BITS.pack(value))[0]


def hash_double(value: float) -> int:
    """``hashLong(doubleToLongBits(v))``; floats are hashed as the double they widen to."""
    return hash_long(double_to_long_bits(float(value)))


def hash_boolean(value: bool) -> int:
    """false hashes as 0 and true as 1, as 8-byte integers (test value true -> 1392991556)."""
    return hash_long(1 if value else 0)


def _hash_null(_value: Any) -> None:
    return None


def hasher(t: PrimitiveType) -> Callable[[Any], int | None]:
    """The hash function for non-null values of type ``t``, chosen once so that hashing
    many values of one column does not dispatch on the type per value.

    Raises :class:`UserError` for a type that has no 32-bit hash (variant, geometry,
    geography, nested types).
    """
    if isinstance(t, IntegerType | LongType | DateType | TimeType | TimestampType | TimestamptzType):
        return hash_long
    if isinstance(t, TimestampNanoType | TimestamptzNanoType):
        return hash_nanos
    if isinstance(t, DecimalType):
        scale = t.scale
        return lambda value: hash_decimal(value, scale)
    if isinstance(t, StringType):
        return hash_string
    if isinstance(t, UUIDType):
        return hash_uuid
    if isinstance(t, FixedType | BinaryType):
        return hash_bytes
    if isinstance(t, BooleanType):
        return hash_boolean
    if isinstance(t, FloatType | DoubleType):
        return hash_double
    if isinstance(t, UnknownType):
        return _hash_null
    raise UserError(f"no 32-bit hash is defined for type {t}")


def hash_value(t: PrimitiveType, value: Any) -> int | None:
    """The Appendix B hash of ``value`` of type ``t`` (Python representation of
    :mod:`iceduck.spec.types`); ``None`` for a null value and for the unknown type.
    """
    if value is None:
        return None
    return hasher(t)(value)
