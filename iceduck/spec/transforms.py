"""Partition and sort transforms (spec: "Partition Transforms", "Bucket Transform Details",
"Truncate Transform Details", "Partition Evolution", "Sorting").

A transform is a frozen value: ``str(t)`` is its spec/JSON spelling (``bucket[16]``) and
:func:`parse_transform` reads it back. ``t.apply(source_type)`` binds it to a source
type and returns a plain function over the Python values of :mod:`iceduck.spec.types`;
"All transforms must return ``null`` for a ``null`` input value."

Choices that follow Iceberg Java 1.10 (whose manifests Spark writes) where the spec
table is looser:

* ``day`` has result type ``date``, not ``int``: Java's ``Days.getResultType`` returns
  ``DateType``, so Spark's manifests declare a day partition as Avro ``int`` with
  ``logicalType: date``. The value is the same int (days from 1970-01-01) either way.
* ``void`` keeps the source type as its result type (the spec allows "Source type or
  int"), as Java does.
* An unknown transform reports ``string`` as its result type, as Java does ("the
  actual result type is not known"); it can never be applied ("Writers are not
  allowed to commit data using a partition spec that contains a field with an unknown
  transform"), and readers ignore it for filtering. Its text is kept verbatim so the
  metadata round-trips.
* Temporal transforms floor towards negative infinity (Java's ``floorDiv``): the day of
  1969-12-31T23:59:59.999999 is -1, its year is -1 (1969), its month is -1 (1969-12).
"""

from __future__ import annotations

import base64
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from iceduck.errors import UnsupportedError, UserError, ValidationError
from iceduck.spec.datetimes import civil_from_days, days_to_iso
from iceduck.spec.hashing import hasher, unscaled_at_scale
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VariantType,
)

_INT_MAX = 2**31 - 1
MICROS_PER_HOUR = 3_600_000_000
MICROS_PER_DAY = 86_400_000_000
NANOS_PER_HOUR = 3_600_000_000_000
NANOS_PER_DAY = 86_400_000_000_000

_MICRO_TYPES = (TimestampType, TimestamptzType)
_NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)


def _null_safe(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Wrap ``fn`` so that null maps to null, as every transform must."""

    def apply(value: Any) -> Any:
        return None if value is None else fn(value)

    return apply


def human_day(days: int) -> str:
    """``yyyy-MM-dd`` of a day ordinal (Java ``TransformUtil.humanDay``, ``%04d`` year)."""
    year, month, day = civil_from_days(days)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _iso_local_datetime(value: int, units_per_second: int) -> str:
    """``ISO_LOCAL_DATE_TIME``: seconds always, fraction only as long as needed (``.1``)."""
    days, rem = divmod(value, 86_400 * units_per_second)
    seconds, frac = divmod(rem, units_per_second)
    hour, minute, second = seconds // 3600, seconds // 60 % 60, seconds % 60
    text = f"{days_to_iso(days)}T{hour:02d}:{minute:02d}:{second:02d}"
    if frac:
        nanos = frac * (1_000_000_000 // units_per_second)
        text += "." + f"{nanos:09d}".rstrip("0")
    return text


def human_time(micros: int) -> str:
    """Java ``LocalTime.toString``: ``HH:mm``, then ``:ss`` and a 3/6/9-digit fraction if non-zero."""
    seconds, frac = divmod(micros, 1_000_000)
    text = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    if seconds % 60 or frac:
        text += f":{seconds % 60:02d}"
    if frac:
        text += f".{frac // 1000:03d}" if frac % 1000 == 0 else f".{frac:06d}"
    return text


def _shortest_digits(value: float, single: bool) -> str:
    """Shortest decimal that reads back as ``value`` (as a float32 if ``single``), but at
    least two significant digits, the closest such, as Java prints (``1.4E-45``, ``1.0E10``)."""
    text = repr(value)
    for precision in range(1, 10) if single else ():
        text = f"{value:.{precision}g}"
        try:
            if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
                break
        except OverflowError:  # rounded past the largest float32
            continue
    return f"{value:.1e}" if len(Decimal(text).normalize().as_tuple().digits) == 1 else text


def java_float_string(value: float, single: bool = False) -> str:
    """``Double.toString``/``Float.toString``: plain for 1e-3 <= |v| < 1e7, else ``d.dddE±n``.

    Digits are the shortest that round-trip (JDK 19+); older JDKs print extra digits for
    some values >= 1e7. Harmless: a path segment is a label, the partition value itself
    lives in the manifest.
    """
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digit_tuple, exponent = Decimal(_shortest_digits(value, single)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent = int(exponent) + len(digit_tuple) - len(digits)  # an int: NaN and infinities returned above
    k = len(digits) - 1 + exponent  # value = d.ddd * 10**k
    prefix = "-" if sign else ""
    if not -3 <= k < 7:
        return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{k}"
    if k < 0:
        return f"{prefix}0.{'0' * (-k - 1)}{digits}"
    whole = digits[: k + 1].ljust(k + 1, "0")
    return f"{prefix}{whole}.{digits[k + 1 :] or '0'}"


def human_string(t: IcebergType, value: Any) -> str:
    """A value of type ``t`` as a partition path segment (Java ``Transform.toHumanString``).

    Dates ``2017-11-16``, times ``22:31:08``, timestamps ISO local (``+00:00`` appended
    for the tz types), binary and fixed base64, booleans and floats as Java prints them,
    everything else its plain string (decimals as ``BigDecimal.toString``, which uses the
    same scientific-notation rule as :class:`decimal.Decimal`). Null is ``"null"``.
    """
    if value is None:
        return "null"
    if isinstance(t, DateType):
        return human_day(value)
    if isinstance(t, TimeType):
        return human_time(value)
    if isinstance(t, _MICRO_TYPES + _NANO_TYPES):
        text = _iso_local_datetime(value, 1_000_000_000 if isinstance(t, _NANO_TYPES) else 1_000_000)
        return text + "+00:00" if isinstance(t, TimestamptzType | TimestamptzNanoType) else text
    if isinstance(t, FixedType | BinaryType):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if isinstance(t, FloatType | DoubleType):
        return java_float_string(value, single=isinstance(t, FloatType))
    return str(value)


def days_to_years(days: int) -> int:
    """Years from 1970 of the date ``days`` (floor: 1969-12-31 -> -1)."""
    return civil_from_days(days)[0] - 1970


def days_to_months(days: int) -> int:
    """Months from 1970-01 of the date ``days`` (floor: 1969-12-31 -> -1)."""
    year, month, _ = civil_from_days(days)
    return (year - 1970) * 12 + month - 1


class Transform:
    """Base of every transform. Subclasses are frozen dataclasses, equal by value."""

    #: whether ``a <= b`` implies ``t(a) <= t(b)``; inclusive projection of range
    #: predicates relies on it (spec, "Scan Planning").
    preserves_order: ClassVar[bool] = False
    is_identity: ClassVar[bool] = False
    is_void: ClassVar[bool] = False
    is_unknown: ClassVar[bool] = False

    def can_transform(self, source_type: IcebergType) -> bool:
        raise NotImplementedError

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        raise NotImplementedError

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        raise NotImplementedError

    def _check(self, source_type: IcebergType) -> None:
        if not self.can_transform(source_type):
            raise UserError(f"transform {self} cannot be applied to type {source_type}")

    def result_type(self, source_type: IcebergType) -> IcebergType:
        """The type of the partition (or sort) value produced from ``source_type``."""
        self._check(source_type)
        return self._result_type(source_type)

    def apply(self, source_type: IcebergType) -> Callable[[Any], Any]:
        """A function from source values to transformed values (null -> null).

        Raises :class:`UserError` naming the transform and type if the transform does not
        accept ``source_type``.
        """
        self._check(source_type)
        return self._bind(source_type)

    @property
    def dedup_name(self) -> str:
        """Key used to reject two partition fields that do the same thing on one column
        (Java's ``dedupName``: all temporal transforms share ``time``)."""
        return str(self)

    def satisfies_order_of(self, other: Transform, source_type: IcebergType | None = None) -> bool:
        """Whether data ordered by this transform is also ordered by ``other``."""
        return self == other

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        """The transformed value as written in partition paths (Java ``toHumanString``)."""
        return human_string(result_type, value)


@dataclass(frozen=True)
class IdentityTransform(Transform):
    """Source value, unmodified; any primitive "except for geometry, geography, and variant"."""

    preserves_order: ClassVar[bool] = True
    is_identity: ClassVar[bool] = True

    def __str__(self) -> str:
        return "identity"

    def can_transform(self, source_type: IcebergType) -> bool:
        if isinstance(source_type, GeometryType | GeographyType | VariantType):
            return False
        return source_type.is_primitive

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        return lambda value: value

    def satisfies_order_of(self, other: Transform, source_type: IcebergType | None = None) -> bool:
        # Ordering by the value orders by anything that preserves order (Java Identity).
        return other.preserves_order


_BUCKET_SOURCES: tuple[type[PrimitiveType], ...] = (
    IntegerType, LongType, DecimalType, DateType, TimeType, *_MICRO_TYPES, *_NANO_TYPES,
)
_BUCKET_SOURCES += (StringType, UUIDType, FixedType, BinaryType)


@dataclass(frozen=True)
class BucketTransform(Transform):
    """``bucket[N]``: "(murmur3_x86_32_hash(x) & Integer.MAX_VALUE) % N", result ``int``."""

    num_buckets: int

    def __post_init__(self) -> None:
        if not 0 < self.num_buckets <= _INT_MAX:
            raise ValidationError(f"invalid number of buckets: {self.num_buckets} (must be > 0)")

    def __str__(self) -> str:
        return f"bucket[{self.num_buckets}]"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, _BUCKET_SOURCES)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return IntegerType()

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        hash_fn = hasher(source_type)  # type: ignore[arg-type]
        n = self.num_buckets

        def bucket(value: Any) -> int | None:
            if value is None:
                return None
            return (hash_fn(value) & _INT_MAX) % n  # type: ignore[operator]

        return bucket


@dataclass(frozen=True)
class TruncateTransform(Transform):
    """``truncate[W]``: "Value truncated to width W", result type is the source type.

    int/long: ``v - (((v % W) + W) % W)``, i.e. floor to a multiple of W.
    decimal: the same on the unscaled value at the column's scale ("scaled_W =
    decimal(W, scale(v))"). string: the first W code points ("a valid UTF-8 string with
    no more than L code points"). binary: the first W bytes.
    """

    width: int

    preserves_order: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not 0 < self.width <= _INT_MAX:
            raise ValidationError(f"invalid truncate width: {self.width} (must be > 0)")

    def __str__(self) -> str:
        return f"truncate[{self.width}]"

    def can_transform(self, source_type: IcebergType) -> bool:
        return isinstance(source_type, IntegerType | LongType | DecimalType | StringType | BinaryType)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        w = self.width
        if isinstance(source_type, IntegerType | LongType):
            # Python's % already has the divisor's sign, so the remainder is non-negative.
            return _null_safe(lambda v: v - v % w)
        if isinstance(source_type, DecimalType):
            scale = source_type.scale
            return _null_safe(lambda v: truncate_decimal(v, scale, w))
        # str slicing counts code points and bytes slicing counts bytes, as the spec asks.
        return _null_safe(lambda v: v[:w])

    def satisfies_order_of(self, other: Transform, source_type: IcebergType | None = None) -> bool:
        """A longer string/binary prefix orders its shorter prefixes; a number truncated
        to W orders its truncation to any multiple of W (Java answers ``width >= other``
        for every type, wrong for numbers). Without a source type only equal widths."""
        if not isinstance(other, TruncateTransform):
            return False
        if isinstance(source_type, StringType | BinaryType):
            return self.width >= other.width
        if isinstance(source_type, IntegerType | LongType | DecimalType):
            return other.width % self.width == 0
        return self.width == other.width


def truncate_decimal(value: Any, scale: int, width: int) -> Any:
    """Truncate a decimal(P, ``scale``) value to ``width`` units of its last digit.

    Integer arithmetic on the unscaled value (W=50, S=2: 10.65 -> 1065 - 15 -> 10.50),
    and the result carries exponent ``-scale`` like every decimal(P, S) value.
    """
    unscaled = unscaled_at_scale(value, scale)
    truncated = unscaled - unscaled % width
    digits = tuple(int(d) for d in str(abs(truncated)))
    return Decimal((1 if truncated < 0 else 0, digits, -scale))


class TimeTransform(Transform):
    """Base of year/month/day/hour: extract a date or timestamp unit since 1970."""

    preserves_order: ClassVar[bool] = True
    #: length of one unit in hours, to compare granularities (as Java's ChronoUnit).
    unit_hours: ClassVar[int] = 0
    accepts_date: ClassVar[bool] = True

    def can_transform(self, source_type: IcebergType) -> bool:
        if isinstance(source_type, DateType):
            return self.accepts_date
        return isinstance(source_type, _MICRO_TYPES + _NANO_TYPES)

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return IntegerType()

    @property
    def dedup_name(self) -> str:
        return "time"

    def satisfies_order_of(self, other: Transform, source_type: IcebergType | None = None) -> bool:
        # A finer unit orders a coarser one: hour satisfies day, month and year.
        if isinstance(other, TimeTransform):
            return self.unit_hours <= other.unit_hours
        return False

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        from_days = self._from_days
        if isinstance(source_type, DateType):
            return _null_safe(from_days)
        # Floor division to the day first, then the calendar unit of that day.
        per_day = NANOS_PER_DAY if isinstance(source_type, _NANO_TYPES) else MICROS_PER_DAY
        return _null_safe(lambda ts: from_days(ts // per_day))

    def _from_days(self, days: int) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class YearTransform(TimeTransform):
    """``year``: "Extract a date or timestamp year, as years from 1970"."""

    unit_hours: ClassVar[int] = 8765  # Java's ChronoUnit.YEARS (365.2425 days) in whole hours

    def __str__(self) -> str:
        return "year"

    def _from_days(self, days: int) -> int:
        return days_to_years(days)

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null" if value is None else f"{1970 + value:04d}"


@dataclass(frozen=True)
class MonthTransform(TimeTransform):
    """``month``: "Extract a date or timestamp month, as months from 1970-01-01"."""

    unit_hours: ClassVar[int] = 730  # Java's ChronoUnit.MONTHS: a twelfth of a year

    def __str__(self) -> str:
        return "month"

    def _from_days(self, days: int) -> int:
        return days_to_months(days)

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        if value is None:
            return "null"
        return f"{1970 + value // 12:04d}-{value % 12 + 1:02d}"


@dataclass(frozen=True)
class DayTransform(TimeTransform):
    """``day``: "Extract a date or timestamp day, as days from 1970-01-01".

    Result type ``date`` (Java ``Days.getResultType``), see the module docstring.
    """

    unit_hours: ClassVar[int] = 24

    def __str__(self) -> str:
        return "day"

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return DateType()

    def _from_days(self, days: int) -> int:
        return days

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null" if value is None else human_day(value)


@dataclass(frozen=True)
class HourTransform(TimeTransform):
    """``hour``: "Extract a timestamp hour, as hours from 1970-01-01 00:00:00" (no dates)."""

    unit_hours: ClassVar[int] = 1
    accepts_date: ClassVar[bool] = False

    def __str__(self) -> str:
        return "hour"

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        per_hour = NANOS_PER_HOUR if isinstance(source_type, _NANO_TYPES) else MICROS_PER_HOUR
        return _null_safe(lambda ts: ts // per_hour)

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        if value is None:
            return "null"
        days, hour = divmod(value, 24)
        return f"{human_day(days)}-{hour:02d}"


@dataclass(frozen=True)
class VoidTransform(Transform):
    """``void``: "Always produces null", for any source type.

    Used to drop a partition field in v1 tables ("replace the field's transform with
    the void transform"). The result type is the source type, as in Java.
    """

    is_void: ClassVar[bool] = True

    def __str__(self) -> str:
        return "void"

    def can_transform(self, source_type: IcebergType) -> bool:
        return True

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return source_type

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        return lambda _value: None

    def to_human_string(self, result_type: IcebergType, value: Any) -> str:
        return "null"


@dataclass(frozen=True)
class UnknownTransform(Transform):
    """A transform this version does not know, kept verbatim so metadata round-trips.

    "Partition fields that use an unknown transform can be read by ignoring the
    partition field for the purpose of filtering"; its inclusive projection is *true*.
    It accepts any type, reports ``string`` as result type (as Java) and cannot be
    applied: :meth:`apply` raises :class:`UnsupportedError`.
    """

    text: str

    is_unknown: ClassVar[bool] = True

    def __str__(self) -> str:
        return self.text

    def can_transform(self, source_type: IcebergType) -> bool:
        return True

    def _result_type(self, source_type: IcebergType) -> IcebergType:
        return StringType()

    def _bind(self, source_type: IcebergType) -> Callable[[Any], Any]:
        raise UnsupportedError(f"cannot apply unknown transform {self.text!r}")


_WITH_WIDTH = re.compile(r"(\w+)\[(\d+)\]", re.ASCII)
_SIMPLE: dict[str, Transform] = {
    "identity": IdentityTransform(),
    "year": YearTransform(),
    "month": MonthTransform(),
    "day": DayTransform(),
    "hour": HourTransform(),
    "void": VoidTransform(),
}


def parse_transform(text: str) -> Transform:
    """Parse a transform as spelled in partition spec and sort order JSON (Appendix C).

    Names are case-insensitive, as in Java's ``Transforms.fromString``; anything not
    recognised becomes an :class:`UnknownTransform` holding ``text`` unchanged. A
    non-positive bucket count or width raises :class:`ValidationError`.
    """
    if m := _WITH_WIDTH.fullmatch(text):
        name = m.group(1).lower()
        if name in ("bucket", "truncate"):
            param = int(m.group(2))
            if param > _INT_MAX:
                raise ValidationError(f"transform parameter out of range in {text!r}")
            return BucketTransform(param) if name == "bucket" else TruncateTransform(param)
    simple = _SIMPLE.get(text.lower())
    return simple if simple is not None else UnknownTransform(text)
