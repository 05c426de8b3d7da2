"""SQL literals as DuckDB types them, and their exact Iceberg values for a column type.

A WHERE predicate is pushed into scan planning only when the Iceberg comparison means
exactly what DuckDB will compute. That depends on the literal's *DuckDB* type, not just
its value: ``1.5e3`` is a DOUBLE (an integer column is then compared as a double, with
rounding above 2**53), ``1.5`` a DECIMAL (exact), ``'2024-01-01'`` a string DuckDB casts
to the column's type. :class:`SqlLiteral` records that type; :func:`iceberg_value` gives
the Iceberg value only for the combinations where both engines agree, else ``None``
("do not push"):

===================  =========================================================
column type          literals pushed
===================  =========================================================
boolean              booleans
int, long, decimal   integers and DECIMAL literals (never DOUBLE: DuckDB would
                     compare as floating point)
date                 DATE literals, strings that are plain dates
timestamp[_ns]       DATE, TIMESTAMP[_NS] literals and strings without a zone
                     offset
timestamptz[_ns]     DATE, TIMESTAMP[TZ][_NS] literals and strings; no offset
                     means the session time zone, as DuckDB casts them
                     (a typed literal with digits finer than its type keeps,
                     ``TIMESTAMP '...00.123456789'``, is not pushed: DuckDB
                     drops them, by a rule that depends on the type);
                     timestamptz_ns: DATE and TIMESTAMP literals only in a UTC
                     session (DuckDB 2.0.1 casts DATE, TIMESTAMP[_MS|_S] to
                     TIMESTAMPTZ_NS as UTC wall clocks, not in the session zone
                     as it casts strings, TIMESTAMP_NS, and to TIMESTAMPTZ)
string, uuid         strings
float, double, ...   nothing (NaN ordering differs: DuckDB sorts NaN above
                     +inf, Iceberg metrics treat NaN as never in bounds)
===================  =========================================================
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlglot import exp

from iceduck.spec.datetimes import NANOS_PER_DAY, date_to_days, days_from_civil
from iceduck.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    UUIDType,
)

NANOS_PER_SECOND = 1_000_000_000
#: DuckDB types a numeric literal with a decimal point as DECIMAL up to this many digits
MAX_DECIMAL_DIGITS = 38


class Kind(Enum):
    NULL = "null"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    DECIMAL = "decimal"
    DOUBLE = "double"
    STRING = "string"
    DATE = "date"
    TIMESTAMP = "timestamp"
    TIMESTAMPTZ = "timestamptz"
    OTHER = "other"


@dataclass(frozen=True)
class Moment:
    """A date-time as written: wall-clock nanoseconds from 1970-01-01 and the offset, if any."""

    nanos: int
    offset_seconds: int | None = None


@dataclass(frozen=True)
class SqlLiteral:
    """A constant of a SQL expression with its DuckDB type: ``value`` is a bool, int,
    Decimal, float, str, int days (DATE), :class:`Moment` (TIMESTAMP[TZ]) or None."""

    kind: Kind
    value: Any


# -- from the tree ---------------------------------------------------------------------------

#: DuckDB's timestamp types -> (zoned?, nanoseconds per tick): the precision a value cast to
#: the type keeps (DuckDB truncates or rounds finer digits, depending on the type: a literal
#: with finer digits than its type is not pushed)
_TIMESTAMP_TYPES: dict[exp.DType, tuple[bool, int]] = {
    exp.DataType.Type.TIMESTAMP: (False, 1000),
    exp.DataType.Type.TIMESTAMPNTZ: (False, 1000),
    exp.DataType.Type.DATETIME: (False, 1000),
    exp.DataType.Type.TIMESTAMP_NS: (False, 1),
    exp.DataType.Type.TIMESTAMP_MS: (False, 1_000_000),
    exp.DataType.Type.TIMESTAMP_S: (False, NANOS_PER_SECOND),
    exp.DataType.Type.TIMESTAMPTZ: (True, 1000),
    exp.DataType.Type.TIMESTAMPLTZ: (True, 1000),
}
#: DuckDB types sqlglot does not know (parsed as user-defined types), by name
_USER_DEFINED_TIMESTAMP_TYPES: dict[str, tuple[bool, int]] = {"TIMESTAMPTZ_NS": (True, 1)}
_INTEGER_TYPES = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.INT128,
    exp.DataType.Type.UTINYINT,
    exp.DataType.Type.USMALLINT,
    exp.DataType.Type.UINT,
    exp.DataType.Type.UBIGINT,
}
_STRING_TYPES = {exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT}


def literal_of(node: exp.Expr, params: Any = None) -> SqlLiteral | None:
    """The constant ``node`` stands for, or None when it is not a constant this module reads.

    ``params`` are the statement's parameters (a sequence for ``$1``..., a mapping for
    ``$name``), so ``WHERE id = ?`` can be pushed like ``WHERE id = 5``.
    """
    if isinstance(node, exp.Paren):
        return literal_of(node.this, params)
    if isinstance(node, exp.Null):
        return SqlLiteral(Kind.NULL, None)
    if isinstance(node, exp.Boolean):
        return SqlLiteral(Kind.BOOLEAN, bool(node.this))
    if isinstance(node, exp.Literal):
        return SqlLiteral(Kind.STRING, node.this) if node.is_string else _number(node.this)
    if isinstance(node, exp.Neg):
        inner = literal_of(node.this, params)
        if inner is not None and inner.kind in (Kind.INTEGER, Kind.DECIMAL, Kind.DOUBLE):
            return SqlLiteral(inner.kind, _negate(inner.value))
        return None
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
        return _cast(node, params)
    if isinstance(node, exp.Placeholder):
        return _parameter(node, params)
    return None


def _negate(value: Any) -> Any:
    """``-value``, exactly: ``-Decimal`` rounds to the context's 28 digits, which would turn
    ``-99999999999999999999999999999.5`` into ``-1.000E+29`` (and prune on that)."""
    return value.copy_negate() if isinstance(value, Decimal) else -value


_INTEGER = re.compile(r"\d+")
_DECIMAL = re.compile(r"(\d*)\.(\d*)")


#: longer integer literals are out of the range of every Iceberg type (decimal(38) at most):
#: they are not pushed down (and Python refuses ``int()`` of 4,300 digits and more)
_MAX_INTEGER_DIGITS = 100


def _number(text: str) -> SqlLiteral | None:
    """DuckDB's typing of a numeric literal (see the module docstring)."""
    text = text.replace("_", "")
    if _INTEGER.fullmatch(text):
        return SqlLiteral(Kind.INTEGER, int(text)) if len(text) <= _MAX_INTEGER_DIGITS else None
    m = _DECIMAL.fullmatch(text)
    if m and (m[1] or m[2]):
        digits = len(m[1].lstrip("0") + m[2]) or 1
        if digits <= MAX_DECIMAL_DIGITS:
            return SqlLiteral(Kind.DECIMAL, Decimal(text))
    try:
        return SqlLiteral(Kind.DOUBLE, float(text))
    except ValueError:
        return None


def _cast(node: exp.Cast, params: Any) -> SqlLiteral | None:
    to = node.to.this if isinstance(node.to, exp.DataType) else None
    inner = literal_of(node.this, params)
    if inner is None or to is None:
        return None
    if inner.kind is Kind.NULL:
        return inner
    if to is exp.DataType.Type.DATE:
        if inner.kind is Kind.DATE:
            return inner
        days = parse_date(inner.value) if inner.kind is Kind.STRING else None
        return None if days is None else SqlLiteral(Kind.DATE, days)
    timestamp = _timestamp_type(node.to)
    if timestamp is not None:
        return _timestamp_cast(inner, *timestamp)
    if to in _INTEGER_TYPES:
        return inner if inner.kind is Kind.INTEGER else None
    if to in _STRING_TYPES:
        return inner if inner.kind is Kind.STRING else None
    if to is exp.DataType.Type.BOOLEAN:
        return inner if inner.kind is Kind.BOOLEAN else None
    return None


def _timestamp_type(to: exp.Expr) -> tuple[bool, int] | None:
    """(zoned?, nanoseconds per tick) of a timestamp type, else None."""
    if not isinstance(to, exp.DataType):
        return None
    if to.this is exp.DataType.Type.USERDEFINED:
        return _USER_DEFINED_TIMESTAMP_TYPES.get(str(to.args.get("kind") or "").upper())
    return _TIMESTAMP_TYPES.get(to.this)


def _timestamp_cast(inner: SqlLiteral, zoned: bool, tick: int) -> SqlLiteral | None:
    """``inner`` cast to a timestamp type: a string is read (an offset only for a zoned
    type), a date is its midnight; a value finer than the type's ``tick`` is not read, as
    DuckDB would drop its finer digits (``TIMESTAMP '...00.123456789'`` is ``.123456``)."""
    kind = Kind.TIMESTAMPTZ if zoned else Kind.TIMESTAMP
    if inner.kind is Kind.STRING:
        moment = parse_timestamp(inner.value)
        if moment is None or (not zoned and moment.offset_seconds is not None):
            return None
    elif inner.kind is Kind.DATE:
        moment = Moment(inner.value * NANOS_PER_DAY)
    elif inner.kind is kind:
        moment = inner.value
    else:
        return None
    return SqlLiteral(kind, moment) if moment.nanos % tick == 0 else None


def _parameter(node: exp.Placeholder, params: Any) -> SqlLiteral | None:
    name = node.name
    if params is None or not name:
        return None
    try:
        if name.isdigit():
            if isinstance(params, dict):
                return None
            value = params[int(name) - 1]
        else:
            if not isinstance(params, dict):
                return None
            value = params[name]
    except (IndexError, KeyError, TypeError):
        return None
    return python_literal(value)


def python_literal(value: Any) -> SqlLiteral | None:
    """The literal a Python parameter value binds as in DuckDB."""
    if value is None:
        return SqlLiteral(Kind.NULL, None)
    if isinstance(value, bool):
        return SqlLiteral(Kind.BOOLEAN, value)
    if isinstance(value, int):
        return SqlLiteral(Kind.INTEGER, value)
    if isinstance(value, float):
        return SqlLiteral(Kind.DOUBLE, value)
    if isinstance(value, Decimal):
        return SqlLiteral(Kind.DECIMAL, value) if value.is_finite() else None
    if isinstance(value, str):
        return SqlLiteral(Kind.STRING, value)
    if isinstance(value, uuid.UUID):
        return SqlLiteral(Kind.STRING, str(value))
    if isinstance(value, dt.datetime):
        wall = value.replace(tzinfo=None)
        nanos = (date_to_days(wall.date()) * 86_400 + _seconds_of_day(wall)) * NANOS_PER_SECOND
        nanos += wall.microsecond * 1000
        if value.tzinfo is None:
            return SqlLiteral(Kind.TIMESTAMP, Moment(nanos))
        offset = value.utcoffset()
        seconds = int(offset.total_seconds()) if offset is not None else 0
        return SqlLiteral(Kind.TIMESTAMPTZ, Moment(nanos, seconds))
    if isinstance(value, dt.date):
        return SqlLiteral(Kind.DATE, date_to_days(value))
    return SqlLiteral(Kind.OTHER, value)


def _seconds_of_day(value: dt.datetime) -> int:
    return (value.hour * 60 + value.minute) * 60 + value.second


# -- text formats DuckDB casts ----------------------------------------------------------------

_DATE_TEXT = r"(?P<year>\d{4,})-(?P<month>\d{1,2})-(?P<day>\d{1,2})"
_TIME_TEXT = r"(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{1,9}))?)?"
_OFFSET_TEXT = r"\s*(?:(?P<z>[Zz]|UTC)|(?P<sign>[+-])(?P<oh>\d{2})(?::?(?P<om>\d{2}))?)"
_DATE_RE = re.compile(rf"\s*{_DATE_TEXT}\s*", re.ASCII)
_TIMESTAMP_RE = re.compile(rf"\s*{_DATE_TEXT}(?:[ Tt]{_TIME_TEXT})?(?:{_OFFSET_TEXT})?\s*", re.ASCII)


def _days(m: re.Match[str]) -> int | None:
    try:
        dt.date(int(m["year"]), int(m["month"]), int(m["day"]))  # validates the calendar date
    except ValueError:
        return None
    return days_from_civil(int(m["year"]), int(m["month"]), int(m["day"]))


def parse_date(text: str) -> int | None:
    """Days from epoch of a plain ``YYYY-MM-DD`` string, else None."""
    m = _DATE_RE.fullmatch(text)
    return _days(m) if m else None


def parse_timestamp(text: str) -> Moment | None:
    """A DuckDB timestamp string (``2024-01-01``, ``2024-01-01 10:00[:00[.123]]``, ``T``
    separator, ``Z``/``UTC``/``+02``/``+02:00``/``+0200`` offsets), else None."""
    m = _TIMESTAMP_RE.fullmatch(text)
    if m is None:
        return None
    days = _days(m)
    hour, minute, second = int(m["hour"] or 0), int(m["minute"] or 0), int(m["second"] or 0)
    if days is None or hour > 23 or minute > 59 or second > 59:
        return None
    fraction = int((m["fraction"] or "").ljust(9, "0"))
    nanos = (days * 86_400 + (hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + fraction
    offset: int | None = None
    if m["z"]:
        offset = 0
    elif m["sign"]:
        offset = (int(m["oh"]) * 3600 + int(m["om"] or 0) * 60) * (-1 if m["sign"] == "-" else 1)
    return Moment(nanos, offset)


def is_utc(timezone: str) -> bool:
    """Whether a session time zone is UTC (wall clock = UTC instant, always)."""
    return timezone.upper() in ("UTC", "ETC/UTC", "GMT", "Z")


def utc_nanos(moment: Moment, timezone: str) -> int | None:
    """Nanoseconds from the epoch (UTC) of ``moment``; a moment without an offset is read in
    ``timezone``, as DuckDB casts to TIMESTAMPTZ. None when the zone is unknown here."""
    if moment.offset_seconds is not None:
        return moment.nanos - moment.offset_seconds * NANOS_PER_SECOND
    if is_utc(timezone):
        return moment.nanos
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    seconds = moment.nanos // NANOS_PER_SECOND
    try:
        wall = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds)
    except OverflowError:
        return None
    offset = wall.replace(tzinfo=zone).utcoffset()
    if offset is None:
        return None
    return moment.nanos - int(offset.total_seconds()) * NANOS_PER_SECOND


# -- to a column's Iceberg value ---------------------------------------------------------------


def iceberg_value(literal: SqlLiteral, t: IcebergType, timezone: str = "UTC") -> Any:
    """The value to compare a ``t`` column with, in iceduck's representation, when DuckDB's
    comparison of the column with ``literal`` means the same as Iceberg's; else None."""
    kind, value = literal.kind, literal.value
    if isinstance(t, BooleanType):
        return value if kind is Kind.BOOLEAN else None
    if isinstance(t, IntegerType | LongType | DecimalType):
        return value if kind in (Kind.INTEGER, Kind.DECIMAL) else None
    if isinstance(t, StringType):
        return value if kind is Kind.STRING else None
    if isinstance(t, UUIDType):
        if kind is not Kind.STRING:
            return None
        try:
            return uuid.UUID(value)
        except ValueError:
            return None
    if isinstance(t, DateType):
        if kind is Kind.DATE:
            return value
        return parse_date(value) if kind is Kind.STRING else None
    if isinstance(t, TimestampType | TimestampNanoType | TimestamptzType | TimestamptzNanoType):
        return _timestamp_value(literal, t, timezone)
    return None


def _timestamp_value(literal: SqlLiteral, t: IcebergType, timezone: str) -> int | None:
    kind, value = literal.kind, literal.value
    if kind is Kind.DATE:
        moment: Moment | None = Moment(value * NANOS_PER_DAY)
    elif kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        moment = value
    elif kind is Kind.STRING:
        moment = parse_timestamp(value)
    else:
        return None
    if moment is None:
        return None
    if isinstance(t, TimestamptzNanoType) and kind in (Kind.DATE, Kind.TIMESTAMP) and not is_utc(timezone):
        return None  # DuckDB casts these to TIMESTAMPTZ_NS as UTC, not in the session zone
    with_zone = isinstance(t, TimestamptzType | TimestamptzNanoType)
    if with_zone:
        nanos = utc_nanos(moment, timezone)
    elif moment.offset_seconds is not None or kind is Kind.TIMESTAMPTZ:
        return None  # DuckDB would convert through the session zone: not worth the risk
    else:
        nanos = moment.nanos
    if nanos is None:
        return None
    if isinstance(t, TimestampNanoType | TimestamptzNanoType):
        return nanos
    micros, rest = divmod(nanos, 1000)
    return micros if rest == 0 else None
