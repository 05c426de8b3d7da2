"""Partition field summaries (spec "Manifest Lists", field_summary and its notes)."""

from __future__ import annotations

import struct
import uuid
from decimal import Decimal

from iceduck.formats.partition_summary import field_summaries, field_summary
from iceduck.spec.manifest import FieldSummary
from iceduck.spec.types import (
    BooleanType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
    UUIDType,
)


def _d(x: float) -> bytes:
    return struct.pack("<d", x)


def test_negative_zero_rule() -> None:
    """Spec: "If -0.0 is a value of the partition field, the lower_bound must not be +0.0, and if
    +0.0 is a value of the partition field, the upper_bound must not be -0.0"."""
    both = field_summary(DoubleType(), [0.0, -0.0])
    assert both.lower_bound == _d(-0.0) and both.upper_bound == _d(0.0)
    assert field_summary(DoubleType(), [-0.0, 0.0]) == both
    only_negative = field_summary(DoubleType(), [-0.0])
    assert only_negative.lower_bound == only_negative.upper_bound == _d(-0.0)
    floats = field_summary(FloatType(), [0.0, -0.0, -1.5])
    assert floats.lower_bound == struct.pack("<f", -1.5) and floats.upper_bound == struct.pack("<f", 0.0)


def test_nan_and_null_are_flagged_not_bounds() -> None:
    nan = float("nan")
    s = field_summary(DoubleType(), [nan, None, 2.5, -1.0])
    assert s == FieldSummary(True, True, _d(-1.0), _d(2.5))
    assert field_summary(DoubleType(), [nan]) == FieldSummary(False, True, None, None)
    assert field_summary(DoubleType(), [None]) == FieldSummary(True, False, None, None)


def test_types_without_nan_say_false_like_java() -> None:
    s = field_summary(IntegerType(), [3, -2, None])
    assert s == FieldSummary(True, False, struct.pack("<i", -2), struct.pack("<i", 3))


def test_strings_booleans_decimals() -> None:
    assert field_summary(StringType(), ["b", "a", "é"]) == FieldSummary(False, False, b"a", "é".encode())
    assert field_summary(BooleanType(), [True, False]) == FieldSummary(False, False, b"\x00", b"\x01")
    dec = field_summary(DecimalType(9, 2), [Decimal("-1.00"), Decimal("3.50")])
    assert dec.lower_bound == b"\x9c" and dec.upper_bound == b"\x01\x5e"  # minimal two's complement


def test_uuid_bounds_only_when_signed_and_unsigned_orders_agree() -> None:
    """Iceberg Java <= 1.10 compares UUIDs as signed longs, the spec as unsigned bytes."""
    low, high = uuid.UUID(int=1), uuid.UUID(int=2)
    assert field_summary(UUIDType(), [high, low]) == FieldSummary(False, False, low.bytes, high.bytes)
    negative = uuid.UUID(int=(1 << 127) + 5)  # top bit set: largest unsigned, smallest signed
    assert field_summary(UUIDType(), [low, negative]) == FieldSummary(False, False, None, None)


def test_unknown_type_and_all_fields() -> None:
    assert field_summary(UnknownType(), [None, None]) == FieldSummary(True, False, None, None)
    ptype = StructType((NestedField(1000, "a", IntegerType()), NestedField(1001, "b", StringType())))
    assert field_summaries(ptype, [(1, "x"), (2, None)]) == [
        FieldSummary(False, False, struct.pack("<i", 1), struct.pack("<i", 2)),
        FieldSummary(True, False, b"x", b"x"),
    ]
    assert field_summaries(ptype, []) == [FieldSummary(False, False, None, None)] * 2
