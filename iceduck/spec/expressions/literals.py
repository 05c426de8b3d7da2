"""Converting a predicate's Python literal to the type of the column it is compared with.

Iceberg Java converts literals when binding (``Literal.to(Type)``): an int literal
compares with a long column, a string with a date, a double with a float... A value the
column type cannot hold is not an error there but the sentinel ``aboveMax``/``belowMin``,
which binding folds into a constant (``int_col < 2**40`` is true for every non-null row).

iceduck generalises the sentinel to :class:`Between`: the literal lies strictly between
two adjacent values of the column's type, so every comparison with it has an exact
equivalent on one of them (``long_col < 2.5`` is ``long_col <= 2``, ``dec(9,2)_col >
1.234`` is ``>= 1.24``, ``date_col < '2017-12-01T10:00'`` is ``<= 2017-12-01``). Java
rounds in some of these cases (``HALF_UP`` for decimals, flooring timestamps to dates),
which can drop matching rows; this never does. ``aboveMax`` is ``Between(MAX, None)``.

Accepted literals per column type (anything else raises :class:`ValidationError`):

==================  =======================================================================
boolean             ``bool``
int, long           ``int``, ``float``, ``Decimal``
float, double       ``int``, ``float``, ``Decimal`` (float: rounded to the nearest float32,
                    as Java's ``DoubleLiteral.to(FLOAT)``)
decimal(P, S)       ``int``, ``float`` (its shortest repr), ``Decimal``, numeric ``str``
date                ``int`` days, ``datetime.date``/``datetime``, ISO date or timestamp ``str``
time                ``int`` micros, ``datetime.time``, ISO time ``str``
timestamp[tz]       ``int`` micros, ``datetime``/``date``, ISO ``str``
timestamp[tz]_ns    ``int`` **nanos** (iceduck's representation; Java reads an int as micros)
string              ``str``;  uuid: ``UUID`` or its ``str``;  binary: ``bytes``;
fixed(L)            ``bytes`` of length L
==================  =======================================================================

Timestamps: a ``timestamp`` literal must not carry a zone offset (as Java); a
``timestamptz`` literal may carry any offset and is converted to UTC, and one without
an offset is read as UTC (Java requires the offset; iceduck's SQL layer resolves session
time zones before binding).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
import uuid
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from iceduck.errors import ValidationError
from iceduck.spec.datetimes import (
    NANOS_PER_DAY,
    date_to_days,
    iso_time_to_micros,
    iso_timestamp_to_nanos,
    iso_to_days,
    time_to_micros,
    timestamp_to_micros,
)
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
FLOAT32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
DOUBLE_MAX = 1.7976931348623157e308
_F32 = struct.Struct("<f")
_OFFSET = re.compile(
    r"(?:(?P<z>[Zz])|(?P<sign>[+-])(?P<hh>\d{2}):(?P<mm>\d{2})(?::(?P<ss>\d{2}))?)(?:\[[^\]]+\])?$"
)


@dataclass(frozen=True)
class Between:
    """A literal strictly between ``below`` and ``above``, adjacent values of the column type.

    ``None`` on a side means the type has no value there: ``Between(INT_MAX, None)`` is
    Java's ``aboveMax``, ``Between(None, INT_MIN)`` its ``belowMin``.
    """

    below: Any
    above: Any


def _mismatch(value: Any, t: IcebergType, why: str = "") -> ValidationError:
    detail = f": {why}" if why else ""
    return ValidationError(f"cannot compare a {t} column with {value!r} ({type(value).__name__}){detail}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _as_decimal(value: Any, t: IcebergType) -> Decimal:
    """An exact Decimal of a numeric literal (floats by their shortest repr, as Java's
    ``BigDecimal.valueOf(double)``); infinities stay infinite."""
    try:
        if isinstance(value, float):
            return Decimal(repr(value))
        return value if isinstance(value, Decimal) else Decimal(value)
    except (InvalidOperation, ValueError) as e:
        raise _mismatch(value, t) from e


def _floor_div_exact(value: Decimal, scale: int) -> tuple[int, bool]:
    """(floor(value * 10**scale), whether that was exact), with integer arithmetic only
    (Decimal arithmetic would round to the context's 28 digits)."""
    sign, digits, exponent = value.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    shift = int(exponent) + scale
    if shift >= 0:
        q, exact = n * 10**shift, True
    else:
        q, r = divmod(n, 10**-shift)
        exact = r == 0
        if sign and not exact:
            q += 1  # floor of a negative value rounds away from zero
    return (-q if sign else q), exact


def _integral(value: Any, t: IcebergType, low: int, high: int) -> Any:
    """An int in [low, high], or the :class:`Between` a non-integral/out-of-range value falls in."""
    if isinstance(value, int):
        exact, floor = True, value
    else:
        # a float's exact binary value: 2**63 - 1 as a double is 2**63, above the long range
        number = Decimal(value) if isinstance(value, float) else _as_decimal(value, t)
        if number.is_nan():
            raise _mismatch(value, t)
        if number.is_infinite():
            return Between(high, None) if number > 0 else Between(None, low)
        floor, exact = _floor_div_exact(number, 0)
    return _clamped(floor, exact, low, high)


def _clamped(ticks: int, exact: bool, low: int, high: int) -> Any:
    """``ticks`` (the floor of the literal, exact or not) within [low, high], or its Between."""
    if ticks > high or (ticks == high and not exact):
        return Between(high, None)
    if ticks < low:
        return Between(None, low)
    return ticks if exact else Between(ticks, ticks + 1)


def _finite_float(value: Any) -> float | None:
    """``float(value)``, or None when a finite ``value`` is beyond double's range."""
    try:
        number = float(value)
    except OverflowError:  # an int too large for a double
        return None
    infinite = value.is_infinite() if isinstance(value, Decimal) else math.isinf(number)
    if math.isinf(number) and not infinite:  # a huge finite Decimal
        return None
    return number


def _to_float32(value: Any) -> Any:
    number = _finite_float(value)
    try:
        if number is not None:
            return _F32.unpack(_F32.pack(number))[0]
    except OverflowError:  # finite but beyond float32
        pass
    return Between(FLOAT32_MAX, math.inf) if value > 0 else Between(-math.inf, -FLOAT32_MAX)


def _to_double(value: Any) -> Any:
    number = _finite_float(value)
    if number is not None:
        return number
    return Between(DOUBLE_MAX, math.inf) if value > 0 else Between(-math.inf, -DOUBLE_MAX)


def _to_decimal(value: Any, t: DecimalType) -> Any:
    if isinstance(value, str):
        value = value.strip()
    elif not _is_number(value):
        raise _mismatch(value, t)
    number = _as_decimal(value, t)
    if number.is_nan():
        raise _mismatch(value, t)
    limit = 10**t.precision - 1
    if number.is_infinite():
        return (
            Between(decimal_of(limit, t.scale), None)
            if number > 0
            else Between(None, decimal_of(-limit, t.scale))
        )
    unscaled, exact = _floor_div_exact(number, t.scale)
    result = _clamped(unscaled, exact, -limit, limit)
    if isinstance(result, Between):
        return Between(
            None if result.below is None else decimal_of(result.below, t.scale),
            None if result.above is None else decimal_of(result.above, t.scale),
        )
    return decimal_of(result, t.scale)


def decimal_of(unscaled: int, scale: int) -> Decimal:
    """The Decimal ``unscaled * 10**-scale`` with exponent ``-scale`` (a decimal(P, S) value)."""
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


def _timestamp_text_to_nanos(text: str, tz: bool, t: IcebergType) -> int:
    """Nanos from epoch of an ISO timestamp; an offset converts to UTC (``timestamptz`` only)."""
    m = _OFFSET.search(text)
    offset_seconds = 0
    local = text
    if m is not None and "T" in text.upper()[: m.start()]:
        local = text[: m.start()]
        if not tz:
            raise _mismatch(text, t, "a timestamp without time zone cannot carry an offset")
        if m["sign"]:
            offset_seconds = int(m["hh"]) * 3600 + int(m["mm"]) * 60 + int(m["ss"] or 0)
            offset_seconds *= -1 if m["sign"] == "-" else 1
    try:
        return iso_timestamp_to_nanos(local, False) - offset_seconds * 1_000_000_000
    except ValidationError as e:
        raise _mismatch(text, t, str(e)) from e


def _datetime_to_nanos(value: dt.datetime, tz: bool, t: IcebergType) -> int:
    if value.tzinfo is not None and not tz:
        raise _mismatch(value, t, "a timestamp without time zone cannot take an aware datetime")
    return timestamp_to_micros(value) * 1000


def _to_timestamp(value: Any, t: IcebergType) -> Any:
    nanos_type = isinstance(t, TimestampNanoType | TimestamptzNanoType)
    tz = isinstance(t, TimestamptzType | TimestamptzNanoType)
    if isinstance(value, int) and not isinstance(value, bool):
        return _clamped(value, True, LONG_MIN, LONG_MAX)
    if isinstance(value, str):
        nanos = (
            _timestamp_text_to_nanos(value, tz, t)
            if "T" in value.upper()
            else _date_text_days(value, t) * NANOS_PER_DAY
        )
    elif isinstance(value, dt.datetime):
        nanos = _datetime_to_nanos(value, tz, t)
    elif isinstance(value, dt.date):
        nanos = date_to_days(value) * NANOS_PER_DAY
    else:
        raise _mismatch(value, t)
    if nanos_type:
        return _clamped(nanos, True, LONG_MIN, LONG_MAX)
    micros, rest = divmod(nanos, 1000)
    return _clamped(micros, rest == 0, LONG_MIN, LONG_MAX)


def _date_text_days(text: str, t: IcebergType) -> int:
    try:
        return iso_to_days(text)
    except ValidationError as e:
        raise _mismatch(text, t, str(e)) from e


def _to_date(value: Any, t: IcebergType) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return _clamped(value, True, INT_MIN, INT_MAX)
    if isinstance(value, str):
        if "T" not in value.upper():
            return _clamped(_date_text_days(value, t), True, INT_MIN, INT_MAX)
        nanos = _timestamp_text_to_nanos(value, True, t)
    elif isinstance(value, dt.datetime):
        nanos = _datetime_to_nanos(value, True, t)
    elif isinstance(value, dt.date):
        return date_to_days(value)
    else:
        raise _mismatch(value, t)
    days, rest = divmod(nanos, NANOS_PER_DAY)
    return _clamped(days, rest == 0, INT_MIN, INT_MAX)


def _to_time(value: Any, t: IcebergType) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return _clamped(value, True, LONG_MIN, LONG_MAX)
    if isinstance(value, dt.time):
        return time_to_micros(value)
    if isinstance(value, str):
        try:
            return iso_time_to_micros(value)
        except ValidationError as e:
            raise _mismatch(value, t, str(e)) from e
    raise _mismatch(value, t)


def _to_uuid(value: Any, t: IcebergType) -> Any:
    if isinstance(value, uuid.UUID):
        return value
    if isinstance(value, str):
        try:
            return uuid.UUID(value)
        except ValueError as e:
            raise _mismatch(value, t) from e
    raise _mismatch(value, t)


def convert_literal(value: Any, t: IcebergType) -> Any:
    """``value`` in the Python representation of ``t``, or the :class:`Between` it falls in.

    Raises :class:`ValidationError` when a ``t`` column cannot be compared with ``value``.
    """
    if isinstance(t, BooleanType):
        if isinstance(value, bool):
            return value
        raise _mismatch(value, t)
    if isinstance(t, StringType):
        if isinstance(value, str):
            return value
        raise _mismatch(value, t)
    if isinstance(t, IntegerType | LongType):
        if not _is_number(value):
            raise _mismatch(value, t)
        return _integral(
            value, t, *((INT_MIN, INT_MAX) if isinstance(t, IntegerType) else (LONG_MIN, LONG_MAX))
        )
    if isinstance(t, FloatType | DoubleType):
        if not _is_number(value):
            raise _mismatch(value, t)
        return _to_float32(value) if isinstance(t, FloatType) else _to_double(value)
    if isinstance(t, DecimalType):
        return _to_decimal(value, t)
    if isinstance(t, DateType):
        return _to_date(value, t)
    if isinstance(t, TimeType):
        return _to_time(value, t)
    if isinstance(t, TimestampType | TimestamptzType | TimestampNanoType | TimestamptzNanoType):
        return _to_timestamp(value, t)
    if isinstance(t, UUIDType):
        return _to_uuid(value, t)
    if isinstance(t, FixedType):
        if isinstance(value, bytes) and len(value) == t.length:
            return value
        raise _mismatch(value, t, f"expected {t.length} bytes")
    if isinstance(t, BinaryType):
        if isinstance(value, bytes):
            return value
        raise _mismatch(value, t)
    raise ValidationError(f"{t} columns cannot be compared with literals")
