"""How Paimon names a partition's folder from its values (Java ``InternalRowPartitionComputer``
and ``PartitionPathUtils.generatePartitionPath``).

Paimon stores no paths in its manifests: a data file's folder is derived from the
partition values, ``<key>=<value>/`` per partition key, then ``bucket-<n>/``. The value
text depends on option ``partition.legacy-name`` (default true): "Use legacy Java toString
partition names; otherwise use casts to string". With it (the default), the text is the
Java ``toString`` of Paimon's internal value: a DATE is its day number (``dt=19723``), a
TIME its millisecond of the day, a TIMESTAMP ``LocalDateTime.toString`` (``2024-01-01T10:00``),
a DECIMAL ``BigDecimal.toPlainString``, FLOAT/DOUBLE Java's ``Float``/``Double.toString``.
Without it, the cast to string: ``2024-01-01``, ``2024-01-01 10:00:00.123``.

A null, empty or whitespace-only value is named by ``partition.default-name``; keys and
values are escaped as ``PartitionPathUtils.escapePathName`` does (``%`` and two upper-case
hex digits for control characters and ``"#%'*/:=?\\{}[]^``, DEL).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from iceduck.errors import UnsupportedError
from iceduck.spec.datetimes import civil_from_days
from iceduck.spec.paimon.schema import TableSchema
from iceduck.spec.paimon.types import PaimonType

_ESCAPED = frozenset("\"#%'*/:=?\\{}[]^\x7f") | frozenset(chr(c) for c in range(32))


def escape_path_name(text: str) -> str:
    """``PartitionPathUtils.escapePathName``."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def partition_spec(schema: TableSchema, partition: tuple[Any, ...]) -> list[tuple[str, str]]:
    """(key, value text) per partition key, unescaped, the default name for nulls."""
    fields = schema.partition_fields
    if len(partition) != len(fields):
        raise UnsupportedError(f"a partition of {len(partition)} values for {len(fields)} partition keys")
    legacy = schema.partition_legacy_name
    out = []
    for f, value in zip(fields, partition, strict=True):
        text = None if value is None else value_text(value, f.type, legacy)
        if text is None or not text.strip():
            text = schema.partition_default_name
        out.append((f.name, text))
    return out


def partition_folder(schema: TableSchema, partition: tuple[Any, ...]) -> str:
    """``"dt=2024-01-01/hr=3/"``, or ``""`` for an unpartitioned table."""
    return "".join(
        f"{escape_path_name(k)}={escape_path_name(v)}/" for k, v in partition_spec(schema, partition)
    )


def value_text(value: Any, t: PaimonType, legacy: bool) -> str:
    """One partition value (iceduck's representation, as ``decode_row`` returns it) as
    Paimon writes it in a folder name."""
    root = t.root
    if root == "BOOLEAN":
        return "true" if value else "false"
    if root in ("TINYINT", "SMALLINT", "INT", "BIGINT", "CHAR", "VARCHAR"):
        return str(value)
    if root == "DECIMAL":
        return _plain_decimal(value)
    if root == "DATE":
        if legacy:
            return str(value)
        year, month, day = civil_from_days(value)
        return f"{year:04d}-{month:02d}-{day:02d}"
    if root == "TIME":
        millis = value // 1000
        if legacy:
            return str(millis)
        return _time_cast(millis, t.precision or 0)
    if root in ("TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = t.precision if t.precision is not None else 6
        nanos = value if precision > 6 else value * 1000
        if legacy:
            return _local_date_time(nanos)
        if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
            raise UnsupportedError(
                "a TIMESTAMP WITH LOCAL TIME ZONE partition named with 'partition.legacy-name' = 'false' "
                "(its folder depends on the writer's time zone)"
            )
        return _timestamp_cast(nanos, precision)
    if root in ("FLOAT", "DOUBLE"):  # the cast to string is ``String.valueOf`` too
        return java_float_text(value, single=root == "FLOAT")
    raise UnsupportedError(f"Paimon partition folders of {t} values")


def _plain_decimal(value: Decimal) -> str:
    """``BigDecimal.toPlainString``: never an exponent."""
    return f"{value:f}"


def _split_nanos(nanos: int) -> tuple[str, int, int, int, int]:
    days, nanos_of_day = divmod(nanos, 86_400_000_000_000)
    year, month, day = civil_from_days(days)
    seconds, fraction = divmod(nanos_of_day, 1_000_000_000)
    date = f"{year:04d}-{month:02d}-{day:02d}"
    return date, seconds // 3600, seconds // 60 % 60, seconds % 60, fraction


def _local_date_time(nanos: int) -> str:
    """``LocalDateTime.toString``: ``uuuu-MM-dd'T'HH:mm``, then ``:ss`` unless seconds and
    fraction are zero, then the fraction in groups of three digits."""
    date, hour, minute, second, fraction = _split_nanos(nanos)
    text = f"{date}T{hour:02d}:{minute:02d}"
    if second or fraction:
        text += f":{second:02d}"
    if fraction:
        if fraction % 1_000_000 == 0:
            text += f".{fraction // 1_000_000:03d}"
        elif fraction % 1000 == 0:
            text += f".{fraction // 1000:06d}"
        else:
            text += f".{fraction:09d}"
    return text


def _timestamp_cast(nanos: int, precision: int) -> str:
    """``DateTimeUtils.formatTimestamp``: the fraction padded to nine digits, then stripped
    of trailing zeros down to ``precision`` digits."""
    date, hour, minute, second, fraction = _split_nanos(nanos)
    digits = f"{fraction:09d}"
    while len(digits) > precision and digits.endswith("0"):
        digits = digits[:-1]
    text = f"{date} {hour:02d}:{minute:02d}:{second:02d}"
    return f"{text}.{digits}" if digits else text


def _time_cast(millis: int, precision: int) -> str:
    """``DateTimeUtils.formatTimestampMillis`` of a TIME: digits of the millisecond part
    until only zeros are left, at most ``precision``."""
    seconds, millis = divmod(millis, 1000)
    text = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    digits = ""
    while precision > 0:
        digits += str(millis // 100)
        millis = millis % 100 * 10
        if millis == 0:
            break
        precision -= 1
    return f"{text}.{digits}" if digits else text


def java_float_text(value: float, single: bool) -> str:
    """Java's ``Float.toString``/``Double.toString`` (the shortest digits that read back
    to the same value, as JDK 19 and later print them): plain between 10^-3 and 10^7,
    ``d.dddE<n>`` outside, always a digit after the point."""
    import numpy as np

    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    shortest = np.format_float_scientific(np.float32(value) if single else np.float64(value), unique=True)
    sign, digit_tuple, exponent = Decimal(shortest).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digit_tuple) + exponent  # digits before the decimal point
    minus = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{minus}0.{'0' * -point}{digits}"
        whole = digits[:point].ljust(point, "0")
        return f"{minus}{whole}.{digits[point:] or '0'}"
    return f"{minus}{digits[0]}.{digits[1:] or '0'}E{point - 1}"
