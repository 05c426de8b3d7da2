"""Literal conversion to a column's type (Java ``Literal.to`` and its tests, plus ``Between``)."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

import pytest

from iceduck.errors import ValidationError
from iceduck.spec.expressions.literals import (
    FLOAT32_MAX,
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    Between,
    convert_literal,
)
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
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

UUID_TEXT = "f79c3e09-677c-4bbd-a479-3f349cb785e7"


@pytest.mark.parametrize(
    "value, t, expected",
    [
        (34, IntegerType(), 34),
        (34, LongType(), 34),
        (2**31, IntegerType(), Between(INT_MAX, None)),  # Java: aboveMax
        (-(2**31) - 1, IntegerType(), Between(None, INT_MIN)),  # Java: belowMin
        (2**63, LongType(), Between(LONG_MAX, None)),
        (float(2**63 - 1), LongType(), Between(LONG_MAX, None)),  # the double is exactly 2**63
        (2.5, LongType(), Between(2, 3)),
        (-2.5, LongType(), Between(-3, -2)),
        (3.0, IntegerType(), 3),
        (Decimal("7.00"), IntegerType(), 7),
        (math.inf, IntegerType(), Between(INT_MAX, None)),
        (34, FloatType(), 34.0),
        (0.1, FloatType(), 0.10000000149011612),  # nearest float32, as Java's DoubleLiteral.to(FLOAT)
        (1e300, FloatType(), Between(FLOAT32_MAX, math.inf)),
        (-1e300, FloatType(), Between(-math.inf, -FLOAT32_MAX)),
        (math.inf, FloatType(), math.inf),
        (34, DoubleType(), 34.0),
        (Decimal("0.5"), DoubleType(), 0.5),
        (34, DecimalType(9, 2), Decimal("34.00")),
        (Decimal("1.2"), DecimalType(9, 2), Decimal("1.20")),
        (1.234, DecimalType(9, 2), Between(Decimal("1.23"), Decimal("1.24"))),
        (-1.234, DecimalType(9, 2), Between(Decimal("-1.24"), Decimal("-1.23"))),
        ("3.14", DecimalType(9, 2), Decimal("3.14")),
        (Decimal("12345678.99"), DecimalType(9, 2), Between(Decimal("9999999.99"), None)),
        (Decimal("1" * 37 + ".5"), DecimalType(38, 0), Between(int("1" * 37), int("1" * 37) + 1)),
        ("2017-11-16", DateType(), 17486),
        (dt.date(1969, 12, 31), DateType(), -1),
        (17486, DateType(), 17486),
        ("2017-11-16T00:00:00", DateType(), 17486),
        ("2017-11-16T10:00:00", DateType(), Between(17486, 17487)),
        ("22:31:08", TimeType(), 81068000000),
        (dt.time(22, 31, 8, 5), TimeType(), 81068000005),
        ("2017-11-16T22:31:08", TimestampType(), 1510871468000000),
        ("2017-11-16T22:31:08.000001", TimestampType(), 1510871468000001),
        ("2017-11-16T22:31:08.0000015", TimestampType(), Between(1510871468000001, 1510871468000002)),
        ("2017-11-16", TimestampType(), 1510790400000000),
        (dt.datetime(2017, 11, 16, 22, 31, 8), TimestampType(), 1510871468000000),
        ("2017-11-16T22:31:08+00:00", TimestamptzType(), 1510871468000000),
        ("2017-11-16T14:31:08-08:00", TimestamptzType(), 1510871468000000),
        ("2017-11-16T22:31:08Z", TimestamptzType(), 1510871468000000),
        ("2017-11-16T22:31:08", TimestamptzType(), 1510871468000000),  # no offset: UTC
        (dt.datetime(2017, 11, 16, 23, 31, 8, tzinfo=dt.timezone(dt.timedelta(hours=1))), TimestamptzType(),
         1510871468000000),
        ("2017-11-16T22:31:08.123456789", TimestampNanoType(), 1510871468123456789),
        (1510871468123456789, TimestampNanoType(), 1510871468123456789),  # ints are nanos here
        ("abc", StringType(), "abc"),
        (True, BooleanType(), True),
        (UUID_TEXT, UUIDType(), uuid.UUID(UUID_TEXT)),
        (b"\x00\x01", FixedType(2), b"\x00\x01"),
        (b"\x00\x01", BinaryType(), b"\x00\x01"),
    ],
    ids=lambda v: repr(v)[:40],
)  # fmt: skip
def test_conversions(value: Any, t: Any, expected: Any) -> None:
    assert convert_literal(value, t) == expected


@pytest.mark.parametrize(
    "value, t",
    [
        (True, IntegerType()),  # bool is not a number here
        ("34", IntegerType()),
        (34, StringType()),
        (1, BooleanType()),
        ("2017-13-01", DateType()),
        ("2017-11-16T22:31:08+01:00", TimestampType()),  # no offsets without zone (Java)
        (dt.datetime(2017, 1, 1, tzinfo=dt.UTC), TimestampType()),
        (b"\x00", FixedType(2)),
        ("not-a-uuid", UUIDType()),
        ("x", StructType(())),
        (1.5, TimeType()),
    ],
    ids=repr,
)
def test_mismatches_are_validation_errors(value: Any, t: Any) -> None:
    with pytest.raises(ValidationError):
        convert_literal(value, t)
