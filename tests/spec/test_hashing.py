"""Appendix B test values, plus edge cases checked against Iceberg Java 1.10.2.

Values marked "Java" were computed with ``org.apache.iceberg.util.BucketUtil`` from the
iceberg-spark-runtime-3.5 1.10.2 jar, the implementation Spark uses.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
import uuid
from decimal import Decimal

import pytest

from iceduck.errors import UserError
from iceduck.spec.hashing import (
    double_to_long_bits,
    hash_decimal,
    hash_value,
    hasher,
    min_big_endian,
    murmur3_32,
    unscaled_at_scale,
)
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeometryType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def micros(text: str) -> int:
    """Microseconds from the epoch of an ISO timestamp (naive ones read as UTC)."""
    t = dt.datetime.fromisoformat(text)
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    delta = t - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


# Appendix B, "Hash specification" table: (type, value, expected hash).
APPENDIX_B = [
    (IntegerType(), 34, 2017239379),
    (LongType(), 34, 2017239379),
    (DecimalType(4, 2), Decimal("14.20"), -500754589),
    (DateType(), (dt.date(2017, 11, 16) - dt.date(1970, 1, 1)).days, -653330422),
    (TimeType(), (22 * 3600 + 31 * 60 + 8) * 1_000_000, -662762989),
    (TimestampType(), micros("2017-11-16T22:31:08"), -2047944441),
    (TimestampType(), micros("2017-11-16T22:31:08.000001"), -1207196810),
    (TimestamptzType(), micros("2017-11-16T14:31:08-08:00"), -2047944441),
    (TimestamptzType(), micros("2017-11-16T14:31:08.000001-08:00"), -1207196810),
    (TimestampNanoType(), micros("2017-11-16T22:31:08") * 1000, -2047944441),
    (TimestampNanoType(), micros("2017-11-16T22:31:08.000001") * 1000 + 1, -1207196810),
    (TimestamptzNanoType(), micros("2017-11-16T14:31:08-08:00") * 1000, -2047944441),
    (TimestamptzNanoType(), micros("2017-11-16T14:31:08.000001-08:00") * 1000 + 1, -1207196810),
    (StringType(), "iceberg", 1210000089),
    (UUIDType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340),
    (FixedType(4), bytes([0, 1, 2, 3]), -188683207),
    (BinaryType(), bytes([0, 1, 2, 3]), -188683207),
    # "not currently valid for bucketing" table
    (BooleanType(), True, 1392991556),
    (FloatType(), 1.0, -142385009),
    (FloatType(), 0.0, 1669671676),
    (FloatType(), -0.0, 1669671676),
    (DoubleType(), 1.0, -142385009),
    (DoubleType(), 0.0, 1669671676),
    (DoubleType(), -0.0, 1669671676),
]


@pytest.mark.parametrize(("t", "value", "expected"), APPENDIX_B, ids=lambda x: str(x))
def test_appendix_b_test_values(t, value, expected):
    assert hash_value(t, value) == expected
    assert hasher(t)(value) == expected


def test_unknown_type_hashes_to_null():
    """Spec: "unknown: always null"."""
    assert hash_value(UnknownType(), None) is None
    assert hasher(UnknownType())("anything") is None


def test_null_value_hashes_to_null():
    assert hash_value(IntegerType(), None) is None


def test_uuid_bytes_are_big_endian():
    """Note 4: the test UUID encodes as F7 9C 3E 09 67 7C 4B BD A4 79 3F 34 9C B7 85 E7."""
    expected = bytes.fromhex("F79C3E09677C4BBDA4793F349CB785E7")
    assert murmur3_32(expected) == 1488055340


def test_murmur3_is_signed_32_bit():
    assert murmur3_32(b"iceberg") == 1210000089
    assert murmur3_32(bytes([0, 1, 2, 3])) == -188683207
    assert murmur3_32(b"") == 0


@pytest.mark.parametrize("v", [0, 1, -1, 34, 2**31 - 1, -(2**31)])
def test_int_and_long_hashes_are_identical(v):
    """Note 1: "Integer and long hash results must be identical for all integer values"."""
    assert hash_value(IntegerType(), v) == hash_value(LongType(), v)
    assert hash_value(DateType(), v) == hash_value(LongType(), v)


def test_boolean_false_hashes_as_zero():
    assert hash_value(BooleanType(), False) == hash_value(LongType(), 0)


def test_nanos_are_floored_to_micros_before_hashing():
    """Note 3, with Java's floorDiv: -1 ns is the microsecond -1, not 0."""
    assert hash_value(TimestampNanoType(), -1) == hash_value(TimestampType(), -1)
    assert hash_value(TimestampNanoType(), -1) != hash_value(TimestampType(), 0)
    assert hash_value(TimestamptzNanoType(), 999) == hash_value(TimestamptzType(), 0)
    assert hash_value(TimestamptzNanoType(), -1000) == hash_value(TimestamptzType(), -1)
    assert hash_value(TimestamptzNanoType(), -1001) == hash_value(TimestamptzType(), -2)


@pytest.mark.parametrize(
    ("unscaled", "expected"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "0080"),
        (255, "00ff"),
        (-1, "ff"),
        (-128, "80"),
        (-129, "ff7f"),
    ],
)
def test_min_big_endian_matches_java_biginteger(unscaled, expected):
    """Note 2: "the minimum number of bytes required to hold the unscaled value as a
    two's complement big-endian" (Java ``BigInteger.toByteArray``)."""
    assert min_big_endian(unscaled) == bytes.fromhex(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("-1.28"), 267099677),  # Java
        (Decimal("0.00"), 1364076727),  # Java
        (Decimal("1.28"), 1544076949),  # Java
        (Decimal("-12345678901234567890123456789012345.678"), 812574819),  # Java, 38 digits
    ],
)
def test_decimal_hash_matches_java(value, expected):
    assert hash_decimal(value) == expected
    scale = -value.as_tuple().exponent
    assert hash_value(DecimalType(38, scale), value) == expected


def test_decimal_hash_does_not_depend_on_scale():
    """Note 2: "Hash results are not dependent on decimal scale"; only the unscaled value."""
    assert hash_value(DecimalType(9, 3), Decimal("1.420")) == hash_value(DecimalType(4, 2), Decimal("14.20"))


def test_decimal_is_hashed_at_the_column_scale():
    """A decimal(4, 2) value written as 14.2 is still 14.20 (unscaled 1420) in Java."""
    assert hash_value(DecimalType(4, 2), Decimal("14.2")) == -500754589
    assert hash_value(DecimalType(4, 2), Decimal("1420E-2")) == -500754589


def test_decimal_with_too_many_fraction_digits_is_rejected():
    with pytest.raises(UserError):
        unscaled_at_scale(Decimal("1.234"), 2)


def test_string_is_hashed_as_utf8():
    assert hash_value(StringType(), "a\U0001f600b") == -1169923844  # Java, surrogate pair
    assert hash_value(StringType(), "é") == murmur3_32("é".encode())


def test_lone_surrogate_hashes_like_java_replacement():
    """Java encodes an unpaired surrogate as '?': both hash to -499236521 in Java."""
    assert hash_value(StringType(), "a\ud800") == -499236521
    assert hash_value(StringType(), "a?") == -499236521


def test_double_canonicalisation():
    """Note 5: NaNs canonicalised to 0x7ff8000000000000, -0.0 to 0.0."""
    other_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000001))[0]
    assert math.isnan(other_nan)
    assert double_to_long_bits(other_nan) == 0x7FF8000000000000
    assert double_to_long_bits(float("nan")) == 0x7FF8000000000000
    assert double_to_long_bits(-0.0) == 0
    assert hash_value(DoubleType(), other_nan) == 1428788237  # Java BucketUtil.hash(Double.NaN)
    assert hash_value(DoubleType(), -1.5) == -2144416083  # Java


def test_float_hashes_as_the_double_it_widens_to():
    value = struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert hash_value(FloatType(), value) == hash_value(DoubleType(), value)


@pytest.mark.parametrize("t", [VariantType(), GeometryType()])
def test_types_without_a_hash_are_rejected(t):
    """Spec: "A 32-bit hash is not defined for variant"; geometry is not in the tables either."""
    with pytest.raises(UserError, match=str(t)):
        hasher(t)
