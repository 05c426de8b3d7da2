"""Single values of Iceberg types: binary and JSON serialization, ordering, bound truncation.

Spec, "Appendix D: Single-value serialization": the binary form stores partition-free
single values such as the ``lower_bounds``/``upper_bounds`` of manifests; the JSON form
stores ``initial-default``/``write-default`` (Appendix C: "default values are serialized
using the JSON single-value serialization"). Values use the Python representation of
:mod:`iceduck.spec.types` (dates = int days, timestamps = int micros or nanos, ...); the
date/time text forms live in :mod:`iceduck.spec.datetimes`.

Errors: bad bytes or bad JSON read from a file raise :class:`CorruptDataError` naming the
type and the problem (without a path: callers re-raise with the file's path); a bad value
handed in by a caller raises :class:`ValidationError`.
"""

from __future__ import annotations

import math
import re
import struct
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, cast

from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.spec.datetimes import (
    MICROS_PER_DAY,
    NANOS_PER_DAY,
    days_to_iso,
    iso_time_to_micros,
    iso_timestamp_to_micros,
    iso_timestamp_to_nanos,
    iso_to_days,
    micros_to_iso_time,
    micros_to_iso_timestamp,
    nanos_to_iso_timestamp,
)
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
    ListType,
    LongType,
    MapType,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)
#: Iceberg's default metrics mode is ``truncate(16)`` (table property ``write.metadata.metrics.default``).
DEFAULT_TRUNCATE_LENGTH = 16

# --------------------------------------------------------------------------------------
# Binary single-value serialization (Appendix D)
# --------------------------------------------------------------------------------------

_STRUCTS: dict[type, struct.Struct] = {
    IntegerType: struct.Struct("<i"),
    DateType: struct.Struct("<i"),
    LongType: struct.Struct("<q"),
    TimeType: struct.Struct("<q"),
    TimestampType: struct.Struct("<q"),
    TimestamptzType: struct.Struct("<q"),
    TimestampNanoType: struct.Struct("<q"),
    TimestamptzNanoType: struct.Struct("<q"),
    FloatType: struct.Struct("<f"),
    DoubleType: struct.Struct("<d"),
}
_FLOATS = (FloatType, DoubleType)
_OPAQUE = (BinaryType, GeometryType, GeographyType, VariantType)
_POINT = struct.Struct("<d")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, float) or _is_int(value)


def _invalid(t: IcebergType, value: Any, why: str = "") -> ValidationError:
    return ValidationError(f"invalid {t} value {value!r}{': ' + why if why else ''}")


def _check_length(t: IcebergType, data: bytes, expected: int) -> None:
    if len(data) != expected:
        raise CorruptDataError(f"{t} value must be {expected} bytes, got {len(data)}")


def _unscaled(t: DecimalType, value: Any) -> int:
    """The unscaled integer of ``value`` at the type's scale, refusing to round or overflow."""
    if not isinstance(value, Decimal) or not value.is_finite():
        raise _invalid(t, value, "expected a finite Decimal")
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits))) * (-1 if sign else 1)
    shift = int(exponent) + t.scale
    if shift >= 0:
        unscaled *= 10**shift
    elif unscaled % 10**-shift:
        raise _invalid(t, value, f"scale is larger than {t.scale}")
    else:
        unscaled //= 10**-shift
    if len(str(abs(unscaled))) > t.precision:
        raise _invalid(t, value, f"more than {t.precision} digits")
    return unscaled


def _decimal(unscaled: int, scale: int) -> Decimal:
    """Exact Decimal with exponent ``-scale`` (``scaleb`` would round to the context's 28 digits)."""
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


def decimal_to_min_bytes(unscaled: int) -> bytes:
    """Two's-complement big-endian bytes, "using the minimum number of bytes for the value"."""
    bits = (unscaled if unscaled >= 0 else ~unscaled).bit_length() + 1  # + sign bit
    return unscaled.to_bytes((bits + 7) // 8, "big", signed=True)


def to_bytes(t: PrimitiveType, value: Any) -> bytes:
    """Binary single-value serialization of ``value`` (spec, Appendix D).

    Geometry, geography and variant values are bytes already (WKB, or an encoded bound) and
    are returned unchanged. ``unknown`` and nested types have no binary form.
    """
    if value is None:
        raise _invalid(t, value, "null has no binary form")
    if packer := _STRUCTS.get(type(t)):
        if not (_is_number(value) if isinstance(t, _FLOATS) else _is_int(value)):
            raise _invalid(t, value)
        try:
            return packer.pack(value)
        except (struct.error, OverflowError) as e:
            raise _invalid(t, value, "out of range") from e
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise _invalid(t, value)
        return b"\x01" if value else b"\x00"
    if isinstance(t, StringType):
        if not isinstance(value, str):
            raise _invalid(t, value)
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise _invalid(t, value, "not valid Unicode") from e
    if isinstance(t, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise _invalid(t, value)
        return value.bytes  # "16-byte big-endian value"
    if isinstance(t, DecimalType):
        return decimal_to_min_bytes(_unscaled(t, value))
    if isinstance(t, FixedType) or isinstance(t, _OPAQUE):
        if not isinstance(value, bytes | bytearray | memoryview):
            raise _invalid(t, value)
        if isinstance(t, FixedType) and len(value) != t.length:
            raise _invalid(t, value, f"length {len(value)} is not {t.length}")
        return bytes(value)
    raise UnsupportedError(f"{t} values have no binary single-value serialization")


def from_bytes(t: PrimitiveType, data: bytes) -> Any:
    """Decode a binary single value written with exactly type ``t`` (see :func:`bound_from_bytes`)."""
    data = bytes(data)
    if packer := _STRUCTS.get(type(t)):
        _check_length(t, data, packer.size)
        return packer.unpack(data)[0]
    if isinstance(t, BooleanType):
        _check_length(t, data, 1)
        return data != b"\x00"  # "0x00 for false, non-zero byte for true"
    if isinstance(t, StringType):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptDataError(f"string value is not valid UTF-8: {e}") from e
    if isinstance(t, UUIDType):
        _check_length(t, data, 16)
        return uuid.UUID(bytes=data)
    if isinstance(t, DecimalType):
        if not data:
            raise CorruptDataError(f"{t} value must be at least 1 byte, got 0")
        return _decimal(int.from_bytes(data, "big", signed=True), t.scale)
    if isinstance(t, FixedType):
        _check_length(t, data, t.length)
        return data
    if isinstance(t, _OPAQUE):
        return data
    raise UnsupportedError(f"{t} values have no binary single-value serialization")


def bound_from_bytes(current: PrimitiveType, data: bytes) -> Any:
    """Decode a lower/upper bound that may predate a type promotion, in ``current``'s representation.

    Spec, "Schema Evolution": "Iceberg's Avro manifest format does not store the type of lower
    and upper bounds, and type promotion does not rewrite existing bounds", so the write-time
    type is inferred from the length: long <- 4 bytes int, double <- 4 bytes float,
    timestamp/timestamp_ns <- 4 bytes date, decimal(P, S) <- any length (decimal(P', S)).
    A promoted date outside the timestamp's range "must result in a runtime failure".
    """
    data = bytes(data)
    if len(data) == 4:
        if isinstance(current, LongType):
            return from_bytes(IntegerType(), data)
        if isinstance(current, DoubleType):
            return from_bytes(FloatType(), data)
        if isinstance(current, TimestampType | TimestampNanoType):
            days = from_bytes(DateType(), data)
            value = days * (NANOS_PER_DAY if isinstance(current, TimestampNanoType) else MICROS_PER_DAY)
            if not LONG_RANGE[0] <= value <= LONG_RANGE[1]:
                raise ValidationError(f"date bound {days_to_iso(days)} is outside the range of {current}")
            return value
    return from_bytes(current, data)


def encode_point_bound(x: float, y: float, z: float | None = None, m: float | None = None) -> bytes:
    """Geometry/geography bound (spec, "Bound serialization"): x:y, x:y:z, or x:y:NaN:m."""
    coords = [x, y]
    if m is not None:
        coords += [math.nan if z is None else z, m]
    elif z is not None:
        coords.append(z)
    return b"".join(_POINT.pack(c) for c in coords)


def decode_point_bound(data: bytes) -> tuple[float, ...]:
    """The coordinates of a geometry/geography bound: (x, y), (x, y, z) or (x, y, z, m).

    A NaN ``z`` in a 4-coordinate bound means "z unset".
    """
    if len(data) not in (16, 24, 32):
        raise CorruptDataError(f"geospatial bound must be 16, 24 or 32 bytes, got {len(data)}")
    return struct.unpack(f"<{len(data) // 8}d", data)


# --------------------------------------------------------------------------------------
# JSON single-value serialization (Appendix D). Values are Python JSON values (what
# json.loads returns / json.dumps takes); nested values follow the same table.
# --------------------------------------------------------------------------------------

_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)  # Java's BigDecimal(String)
_NULL_ONLY = (UnknownType, VariantType, GeometryType, GeographyType)


def _to_float32(value: float) -> float:
    """The float32 nearest ``value``, as the shortest decimal that rounds back to it (0.1, not
    0.10000000149011612), the text Java's ``Float.toString`` would write."""
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(1, 10):
        shortest = float(f"{single:.{digits}g}")
        if struct.unpack("<f", struct.pack("<f", shortest))[0] == single:
            return shortest
    return single


def decimal_to_json(t: DecimalType, value: Decimal) -> str:
    """ "14.20" for positive scales; for negative scales "the scientific notation is used and the
    exponent must equal the negated scale" ("2E+20"; Java writes 12E+3 as "1.2E+4")."""
    unscaled = _unscaled(t, value)
    if t.scale < 0:
        return f"{unscaled}E+{-t.scale}"
    text = str(abs(unscaled)).rjust(t.scale + 1, "0")
    sign = "-" if unscaled < 0 else ""
    return f"{sign}{text[: len(text) - t.scale]}.{text[len(text) - t.scale :]}" if t.scale else sign + text


def to_json(t: IcebergType, value: Any) -> Any:
    """JSON single value for ``value`` of type ``t``.

    Fixed/binary hex is lowercase like the spec's example (Java writes uppercase; both parse).
    Non-finite floats are refused: Java writes them as strings it cannot read back.
    Structs may be tuples in field order or dicts by field id; null fields are omitted as Java does.
    "All columns of unknown, variant, geometry, and geography types must default to null."
    """
    if value is None:
        return None
    if isinstance(t, StructType):
        if isinstance(value, Mapping):
            items = [(f, value.get(f.field_id)) for f in t.fields]
        elif isinstance(value, tuple | list) and len(value) == len(t.fields):
            items = list(zip(t.fields, value, strict=True))
        else:
            raise _invalid(t, value, "expected a tuple in field order or a dict by field id")
        return {str(f.field_id): to_json(f.field_type, v) for f, v in items if v is not None}
    if isinstance(t, ListType):
        if not isinstance(value, list | tuple):
            raise _invalid(t, value)
        return [to_json(t.element_type, v) for v in value]
    if isinstance(t, MapType):
        if not isinstance(value, Mapping):
            raise _invalid(t, value)
        return {
            "keys": [to_json(t.key_type, k) for k in value],
            "values": [to_json(t.value_type, v) for v in value.values()],
        }
    if isinstance(t, _NULL_ONLY):
        raise _invalid(t, value, "only null is allowed")
    if isinstance(t, BooleanType | IntegerType | LongType | StringType | UUIDType):
        to_bytes(t, value)  # validates type and range
        return str(value) if isinstance(t, UUIDType) else value
    if isinstance(t, _FLOATS):
        if not _is_number(value) or not math.isfinite(value):
            raise _invalid(t, value, "expected a finite number")
        to_bytes(t, value)
        return _to_float32(value) if isinstance(t, FloatType) else float(value)
    if isinstance(t, DecimalType):
        return decimal_to_json(t, value)
    if isinstance(t, FixedType | BinaryType):
        return to_bytes(t, value).hex()
    to_bytes(cast(PrimitiveType, t), value)  # date/time/timestamps: validates int and its width
    if isinstance(t, DateType):
        return days_to_iso(value)
    if isinstance(t, TimeType):
        return micros_to_iso_time(value)
    tz = isinstance(t, TimestamptzType | TimestamptzNanoType)
    if isinstance(t, TimestampType | TimestamptzType):
        return micros_to_iso_timestamp(value, tz)
    return nanos_to_iso_timestamp(value, tz)


def _bad_json(t: IcebergType, value: Any, why: str = "") -> CorruptDataError:
    return CorruptDataError(f"cannot parse {value!r} as a {t} value{': ' + why if why else ''}")


def from_json(t: IcebergType, value: Any) -> Any:
    """Parse a JSON single value as Java's ``SingleValueParser`` does.

    Structs become dicts by field id holding the fields present (unknown ids are ignored);
    maps become dicts. Ints must be integral (``1.0`` is refused, as in Java); floats also
    accept integral JSON numbers. Decimals must carry exactly the type's scale.
    """
    if value is None:
        return None
    if isinstance(t, StructType):
        if not isinstance(value, dict):
            raise _bad_json(t, value, "expected an object by field id")
        return {
            f.field_id: from_json(f.field_type, value[str(f.field_id)])
            for f in t.fields
            if str(f.field_id) in value
        }
    if isinstance(t, ListType):
        if not isinstance(value, list):
            raise _bad_json(t, value, "expected an array")
        return [from_json(t.element_type, v) for v in value]
    if isinstance(t, MapType):
        keys, values = (value.get("keys"), value.get("values")) if isinstance(value, dict) else (None, None)
        if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
            raise _bad_json(t, value, 'expected {"keys": [...], "values": [...]} of equal lengths')
        try:
            return {
                from_json(t.key_type, k): from_json(t.value_type, v)
                for k, v in zip(keys, values, strict=True)
            }
        except TypeError as e:
            raise UnsupportedError(f"{t} values with {t.key_type} keys are not supported") from e
    if isinstance(t, _NULL_ONLY):
        raise _bad_json(t, value, "only null is allowed")
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise _bad_json(t, value)
        return value
    if isinstance(t, IntegerType | LongType):
        low, high = INT_RANGE if isinstance(t, IntegerType) else LONG_RANGE
        if not _is_int(value) or not low <= value <= high:
            raise _bad_json(t, value, "expected an integral number in range")
        return value
    if isinstance(t, _FLOATS):
        if not _is_number(value):
            raise _bad_json(t, value, "expected a number")
        try:
            return (
                struct.unpack("<f", struct.pack("<f", value))[0] if isinstance(t, FloatType) else float(value)
            )
        except OverflowError as e:
            raise _bad_json(t, value, "out of range") from e
    if not isinstance(value, str):
        raise _bad_json(t, value, "expected a string")
    if isinstance(t, StringType):
        return value
    if isinstance(t, UUIDType):
        if not _UUID.fullmatch(value):
            raise _bad_json(t, value)
        return uuid.UUID(value)
    if isinstance(t, FixedType | BinaryType):
        if not _HEX.fullmatch(value):
            raise _bad_json(t, value, "expected a hexadecimal string")
        if isinstance(t, FixedType) and len(value) != 2 * t.length:
            raise _bad_json(t, value, f"expected {t.length} bytes")
        return bytes.fromhex(value)
    if isinstance(t, DecimalType):
        if not _DECIMAL.fullmatch(value):
            raise _bad_json(t, value)
        parsed = Decimal(value)
        if parsed.as_tuple().exponent != -t.scale:
            raise _bad_json(t, value, f"the scale is not {t.scale}")
        return _decimal(_unscaled(t, parsed), t.scale) if parsed.is_zero() else parsed
    try:
        if isinstance(t, DateType):
            result = iso_to_days(value)
        elif isinstance(t, TimeType):
            result = iso_time_to_micros(value)
        elif isinstance(t, TimestampType | TimestamptzType):
            result = iso_timestamp_to_micros(value, isinstance(t, TimestamptzType))
        elif isinstance(t, TimestampNanoType | TimestamptzNanoType):
            result = iso_timestamp_to_nanos(value, isinstance(t, TimestamptzNanoType))
        else:
            raise UnsupportedError(f"{t} values have no JSON single-value serialization")
        to_bytes(t, result)  # range of the physical int
    except ValidationError as e:
        raise _bad_json(t, value, str(e)) from e
    return result


# --------------------------------------------------------------------------------------
# Ordering and bound truncation (used by metrics evaluators and writers)
# --------------------------------------------------------------------------------------


def sort_key(t: IcebergType, value: Any) -> Any:
    """A key ordering non-null values of ``t`` as Iceberg's ``Comparators.forType`` does.

    * float/double: Java's ``Float.compare``: -0.0 < 0.0, every NaN equal and above +Inf
      (the spec: "-0.0 must precede +0.0"; NaN is never a bound).
    * string: code point order. Java compares UTF-16 units but ranks high surrogates above
      every other unit, which for valid strings is code point order, i.e. UTF-8 byte order.
    * binary/fixed: unsigned lexicographic, shorter prefix first (Python ``bytes`` order).
    * uuid: unsigned big-endian bytes, the RFC 4122/9562 order and Parquet's statistics order.
      Iceberg Java <= 1.10 compares ``java.util.UUID`` by signed 64-bit halves
      (:func:`uuid_signed_sort_key`); an evaluator must keep a file if either order keeps it.
    * struct/list/map: Java's nested comparators, nulls first.
    """
    if value is None:
        raise ValidationError(f"null {t} values have no sort key; evaluators handle nulls separately")
    if isinstance(t, _FLOATS):
        return (1, 0.0, 0.0) if math.isnan(value) else (0, value, math.copysign(1.0, value))
    if isinstance(t, UUIDType):
        return value.bytes
    if isinstance(t, StructType):
        values = [value.get(f.field_id) for f in t.fields] if isinstance(value, Mapping) else value
        return tuple(_nullable_key(f.field_type, v) for f, v in zip(t.fields, values, strict=True))
    if isinstance(t, ListType):
        return tuple(_nullable_key(t.element_type, v) for v in value)
    if isinstance(t, MapType):
        keys = sorted(value, key=lambda k: sort_key(t.key_type, k))
        return (
            tuple(sort_key(t.key_type, k) for k in keys),
            tuple(_nullable_key(t.value_type, value[k]) for k in keys),
        )
    if isinstance(t, _NULL_ONLY):
        raise UnsupportedError(f"{t} values are not ordered")
    return bytes(value) if isinstance(value, bytearray | memoryview) else value


def _nullable_key(t: IcebergType, value: Any) -> tuple[Any, ...]:
    return (0,) if value is None else (1, sort_key(t, value))


def uuid_signed_sort_key(value: uuid.UUID) -> tuple[int, int]:
    """The legacy order of Iceberg Java <= 1.10 (``java.util.UUID.compareTo``: signed halves)."""
    return (
        int.from_bytes(value.bytes[:8], "big", signed=True),
        int.from_bytes(value.bytes[8:], "big", signed=True),
    )


def compare(t: IcebergType, left: Any, right: Any) -> int:
    """-1, 0 or 1 comparing two non-null values of ``t`` in Iceberg's order (:func:`sort_key`)."""
    a, b = sort_key(t, left), sort_key(t, right)
    return (a > b) - (a < b)


def truncate_lower_string(value: str, length: int = DEFAULT_TRUNCATE_LENGTH) -> str:
    """The first ``length`` code points: a valid lower bound (``UnicodeUtil.truncateStringMin``)."""
    if length <= 0:
        raise ValidationError("truncate length must be positive")
    return value[:length]


def truncate_upper_string(value: str, length: int = DEFAULT_TRUNCATE_LENGTH) -> str | None:
    """An upper bound of at most ``length`` code points, or None when none exists.

    As ``UnicodeUtil.truncateStringMax``: keep the first ``length`` code points and increment
    the last one that can be incremented (skipping the surrogate range U+D800-U+DFFF, which is
    not valid in UTF-8), dropping those after it; None if all are U+10FFFF.
    """
    if length <= 0:
        raise ValidationError("truncate length must be positive")
    if len(value) <= length:
        return value
    for i in range(length - 1, -1, -1):
        code = ord(value[i])
        if 0xD800 <= code <= 0xDFFF:
            raise ValidationError(f"invalid code point U+{code:04X} in a string bound")
        if code != 0x10FFFF:
            return value[:i] + chr(0xE000 if code == 0xD7FF else code + 1)
    return None


def truncate_lower_binary(value: bytes, length: int = DEFAULT_TRUNCATE_LENGTH) -> bytes:
    """The first ``length`` bytes (``BinaryUtil.truncateBinaryMin``)."""
    if length < 0:
        raise ValidationError("truncate length must be non-negative")
    return bytes(value[:length])


def truncate_upper_binary(value: bytes, length: int = DEFAULT_TRUNCATE_LENGTH) -> bytes | None:
    """``BinaryUtil.truncateBinaryMax``: the first ``length`` bytes with the last byte below 0xFF
    incremented (bytes after it dropped), or None when all are 0xFF."""
    if length < 0:
        raise ValidationError("truncate length must be non-negative")
    if len(value) <= length:
        return bytes(value)
    for i in range(length - 1, -1, -1):
        if value[i] != 0xFF:
            return bytes(value[:i]) + bytes([value[i] + 1])
    return None


def truncate_lower_bound(t: PrimitiveType, value: Any, length: int = DEFAULT_TRUNCATE_LENGTH) -> Any:
    """Truncate a lower bound as Iceberg's metrics do: only string and binary columns shrink."""
    if isinstance(t, StringType):
        return truncate_lower_string(value, length)
    if isinstance(t, BinaryType):
        return truncate_lower_binary(value, length)
    return value


def truncate_upper_bound(t: PrimitiveType, value: Any, length: int = DEFAULT_TRUNCATE_LENGTH) -> Any:
    """Truncate an upper bound (None: no upper bound can be written for this value)."""
    if isinstance(t, StringType):
        return truncate_upper_string(value, length)
    if isinstance(t, BinaryType):
        return truncate_upper_binary(value, length)
    return value
