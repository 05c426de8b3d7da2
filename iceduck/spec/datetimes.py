"""Dates, times and timestamps as Iceberg stores them: ints from the Unix epoch / midnight.

Iceberg uses the proleptic Gregorian calendar over the whole int32 (days) / int64 (micros,
nanos) range, far beyond Python's ``datetime`` (years 1-9999), so the ISO-8601 text forms of
the JSON single-value serialization (spec, Appendix D) are computed with integer arithmetic
(H. Hinnant's days-from-civil algorithms). Parsing accepts what Iceberg Java's
``DateTimeUtil`` (``java.time`` ISO formatters) accepts. Bad input raises
:class:`ValidationError`.
"""

from __future__ import annotations

import datetime as dt
import re

from iceduck.errors import ValidationError

MICROS_PER_SECOND = 1_000_000
NANOS_PER_SECOND = 1_000_000_000
SECONDS_PER_DAY = 86_400
MICROS_PER_DAY = SECONDS_PER_DAY * MICROS_PER_SECOND
NANOS_PER_DAY = SECONDS_PER_DAY * NANOS_PER_SECOND
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_EPOCH = dt.datetime(1970, 1, 1)


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 of a proleptic Gregorian (year, month, day); any int year."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of the proleptic Gregorian date ``days`` after 1970-01-01 (year 0 = 1 BC)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, doy - (153 * mp + 2) // 5 + 1


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def date_to_days(value: dt.date) -> int:
    """Days from 1970-01-01 of a calendar date (negative before the epoch)."""
    return value.toordinal() - _EPOCH_ORDINAL


def days_to_date(days: int) -> dt.date:
    """The calendar date ``days`` after 1970-01-01; Python dates stop at years 1 and 9999."""
    try:
        return dt.date.fromordinal(days + _EPOCH_ORDINAL)
    except (ValueError, OverflowError) as e:
        raise ValidationError(f"date {days} days from epoch is outside Python's years 1-9999") from e


def timestamp_to_micros(value: dt.datetime) -> int:
    """Micros from the epoch: a naive datetime is a wall-clock time (``timestamp``), an aware one
    an instant converted to UTC (``timestamptz``)."""
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return (value - _EPOCH) // dt.timedelta(microseconds=1)


def micros_to_timestamp(micros: int, tz: bool) -> dt.datetime:
    """A naive datetime (``timestamp``) or an aware UTC datetime (``timestamptz``)."""
    try:
        value = _EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError as e:
        raise ValidationError(f"timestamp {micros} micros is outside Python's years 1-9999") from e
    return value.replace(tzinfo=dt.UTC) if tz else value


def time_to_micros(value: dt.time) -> int:
    """Micros from midnight; a zone on ``value`` is ignored (Iceberg ``time`` has no zone)."""
    return ((value.hour * 60 + value.minute) * 60 + value.second) * MICROS_PER_SECOND + value.microsecond


def micros_to_time(micros: int) -> dt.time:
    """The time of day ``micros`` after midnight."""
    if not 0 <= micros < MICROS_PER_DAY:
        raise ValidationError(f"time {micros} micros is outside 00:00:00-23:59:59.999999")
    seconds, micro = divmod(micros, MICROS_PER_SECOND)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micro)


def days_to_iso(days: int) -> str:
    """ISO-8601 date as Java's ``ISO_LOCAL_DATE`` prints it: ``+10000-01-01``, ``-0001-12-31``."""
    year, month, day = civil_from_days(days)
    sign = "+" if year > 9999 else "-" if year < 0 else ""
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"


def _fraction_to_iso(seconds_of_day: int, fraction: int, digits: int) -> str:
    hms = f"{seconds_of_day // 3600:02d}:{seconds_of_day // 60 % 60:02d}:{seconds_of_day % 60:02d}"
    return f"{hms}.{fraction:0{digits}d}"


def micros_to_iso_time(micros: int) -> str:
    """``22:31:08.123456``: the spec's "ISO-8601 standard time with microsecond precision".

    Java prints trailing zeros stripped (``22:31:08.12``); both forms parse everywhere.
    """
    if not 0 <= micros < MICROS_PER_DAY:
        raise ValidationError(f"time {micros} micros is outside 00:00:00-23:59:59.999999")
    return _fraction_to_iso(micros // MICROS_PER_SECOND, micros % MICROS_PER_SECOND, 6)


def _ticks_to_iso(value: int, per_second: int, digits: int, tz: bool) -> str:
    days, ticks = divmod(value, SECONDS_PER_DAY * per_second)
    time = _fraction_to_iso(ticks // per_second, ticks % per_second, digits)
    return f"{days_to_iso(days)}T{time}{'+00:00' if tz else ''}"


def micros_to_iso_timestamp(micros: int, tz: bool = False) -> str:
    """``2017-11-16T22:31:08.123456``, with ``+00:00`` for ``timestamptz`` (spec, Appendix D)."""
    return _ticks_to_iso(micros, MICROS_PER_SECOND, 6, tz)


def nanos_to_iso_timestamp(nanos: int, tz: bool = False) -> str:
    """``2017-11-16T22:31:08.123456789``, with ``+00:00`` for ``timestamptz_ns``."""
    return _ticks_to_iso(nanos, NANOS_PER_SECOND, 9, tz)


# Java parses with ISO_LOCAL_DATE / ISO_LOCAL_TIME / ISO_DATE_TIME: years with more than four
# digits need a sign, seconds and fraction (0-9 digits) are optional, 'T'/'Z' are case-insensitive,
# the offset is Z or +HH:MM[:SS], optionally followed by a [region].
_DATE = r"(?P<year>[+-]\d{5,}|-\d{4}|\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
_TIME = r"(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{0,9}))?)?"
_OFFSET = r"(?P<offset>[Zz]|[+-]\d{2}:\d{2}(?::\d{2})?)(?:\[[^\]]+\])?"
_DATE_RE = re.compile(_DATE, re.ASCII)
_TIME_RE = re.compile(_TIME, re.ASCII)
_TIMESTAMP_RE = re.compile(f"{_DATE}[Tt]{_TIME}(?:{_OFFSET})?", re.ASCII)


def _parse(pattern: re.Pattern[str], text: str, what: str) -> re.Match[str]:
    m = pattern.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise ValidationError(f"cannot parse {text!r} as an ISO-8601 {what}")
    return m


def _match_days(m: re.Match[str], text: str) -> int:
    year, month, day = int(m["year"]), int(m["month"]), int(m["day"])
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
        raise ValidationError(f"invalid date in {text!r}")
    return days_from_civil(year, month, day)


def _match_nanos_of_day(m: re.Match[str], text: str) -> int:
    hour, minute, second = int(m["hour"]), int(m["minute"]), int(m["second"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValidationError(f"invalid time of day in {text!r}")
    fraction = int((m["fraction"] or "").ljust(9, "0"))
    return ((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + fraction


def iso_to_days(text: str) -> int:
    """Days from epoch of ``2017-11-16`` (also ``+10000-01-01``, ``-0001-01-01``)."""
    return _match_days(_parse(_DATE_RE, text, "date"), text)


def iso_time_to_micros(text: str) -> int:
    """Micros from midnight of ``22:31[:08[.fraction]]``; digits past micros are dropped as in Java."""
    return _match_nanos_of_day(_parse(_TIME_RE, text, "time"), text) // 1000


def iso_timestamp_to_nanos(text: str, tz: bool = False) -> int:
    """Nanos from epoch of an ISO timestamp; ``tz`` requires a zero offset, else none is allowed."""
    m = _parse(_TIMESTAMP_RE, text, "timestamp with zone" if tz else "timestamp")
    offset = m["offset"]
    if tz and offset is None:
        raise ValidationError(f"timestamptz {text!r} must include the zone offset +00:00")
    if not tz and offset is not None:
        raise ValidationError(f"timestamp {text!r} must not include a zone offset")
    if offset is not None and offset not in "Zz" and any(c not in "+-:0" for c in offset):
        raise ValidationError(f"timestamptz {text!r}: offset must be +00:00")
    return _match_days(m, text) * NANOS_PER_DAY + _match_nanos_of_day(m, text)


def iso_timestamp_to_micros(text: str, tz: bool = False) -> int:
    """Micros from epoch; extra digits are truncated toward zero like Java's ``MICROS.between``."""
    nanos = iso_timestamp_to_nanos(text, tz)
    return nanos // 1000 if nanos >= 0 else -(-nanos // 1000)
