"""``SHOW PARTITIONS t``'s rows: a table's partitions as Hive-style paths,
``cat=a/id_bucket=0/ts_day=2024-01-01``.

Spark 3.5 refuses ``SHOW PARTITIONS`` on an Iceberg table (its ``SparkTable`` does not
implement ``SupportsPartitionManagement``: "does not support partition management"). The
rows here are what Spark's ``ShowPartitionsExec`` prints for a table that does, over the
partitions of the ``partitions`` metadata table (``SELECT partition FROM t.partitions``:
the live files' tuples in the table's partition type, every spec's fields, null where a
file's spec lacks one):

* per field ``escapePathName(name) = value``, joined by ``/``; the value is Spark's cast of
  the partition value to a string in UTC (iceduck's session time zone): a date
  ``2024-01-01``, a timestamp ``2024-01-01 10:00:00`` (fraction without trailing zeros),
  numbers and booleans as Spark prints them, a binary as UTF-8 text;
* a null (or empty) value is ``__HIVE_DEFAULT_PARTITION__``;
* names and values escape Hive's special characters (``/``, ``=``, ``%``, ``:``, control
  characters...) as ``%XX`` (``ExternalCatalogUtils.escapePathName``);
* rows sorted as strings, as Spark sorts them.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from iceduck.spec.datetimes import (
    days_to_iso,
    micros_to_iso_time,
    micros_to_iso_timestamp,
    nanos_to_iso_timestamp,
)
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
)

#: Hive's name of a null partition value (``ExternalCatalogUtils.DEFAULT_PARTITION_NAME``)
DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

#: the characters ``ExternalCatalogUtils.escapePathName`` writes as ``%XX``
_ESCAPED = frozenset([chr(c) for c in range(0x01, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))


def escape_path_name(text: str) -> str:
    """Spark's ``escapePathName``: Hive's special characters as ``%XX`` (upper-case hex)."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def partition_paths(partition_type: StructType, tuples: Iterable[Sequence[Any]]) -> list[str]:
    """The sorted ``name=value/...`` paths of partition ``tuples`` (values in
    :mod:`iceduck.spec.types`' representation) of ``partition_type``."""
    fields = partition_type.fields
    names = [escape_path_name(f.name) for f in fields]
    paths = []
    for values in tuples:
        parts = []
        for name, field, value in zip(names, fields, values, strict=True):
            text = None if value is None else value_text(field.field_type, value)
            parts.append(f"{name}={escape_path_name(text) if text else DEFAULT_PARTITION_NAME}")
        paths.append("/".join(parts))
    return sorted(paths)


def value_text(t: IcebergType, value: Any) -> str:
    """A partition value as Spark's ``CAST(v AS STRING)`` writes it (time zone UTC)."""
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if isinstance(t, DateType):
        return days_to_iso(value)
    if isinstance(t, TimestampType | TimestamptzType):
        return _trimmed(micros_to_iso_timestamp(value))
    if isinstance(t, TimestampNanoType | TimestamptzNanoType):
        return _trimmed(nanos_to_iso_timestamp(value))
    if isinstance(t, TimeType):
        return _trimmed(micros_to_iso_time(value))
    if isinstance(t, FloatType):
        return java_double_text(_float32_shortest(value))
    if isinstance(t, DoubleType):
        return java_double_text(value)
    if isinstance(t, BinaryType | FixedType):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def _trimmed(iso: str) -> str:
    """``2024-01-01T10:00:00.500000`` -> ``2024-01-01 10:00:00.5`` (Spark drops a zero fraction)."""
    text = iso.replace("T", " ")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def java_double_text(value: float) -> str:
    """Java's ``Double.toString``: ``1.0``, ``0.001``, ``1.0E7``, ``1.5E-4``, ``NaN``, ``Infinity``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(float(value))
        return text if "e" not in text else format(Decimal(text), "f")
    mantissa, exponent = f"{value!r}".lower().split("e") if "e" in repr(value) else _scientific(value)
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exponent)}"


def _scientific(value: float) -> tuple[str, str]:
    """``repr`` writes 12345678.0 plainly: its digits as a mantissa and a power of ten."""
    digits = Decimal(repr(value)).normalize()
    sign, numerals, exponent = digits.as_tuple()
    text = "".join(map(str, numerals))
    mantissa = ("-" if sign else "") + text[0] + ("." + text[1:] if len(text) > 1 else "")
    return mantissa, str(len(text) - 1 + int(exponent))


def _float32_shortest(value: float) -> float:
    """The shortest decimal that reads back as the same float32 (Java's ``Float.toString``)."""
    single: float = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(1, 10):
        shortest = float(f"{single:.{digits}g}")
        if struct.unpack("<f", struct.pack("<f", shortest))[0] == single:
            return shortest
    return single
