"""Iceberg data types (spec: "Schemas and Data Types", v1-v3).

Pure values, no I/O. Every type is a frozen dataclass so types compare and hash by
value; the primitive types without parameters are singletons in practice.

Python representation of values, used across iceduck (partition tuples, bounds,
defaults, literals) -- the spec's own physical units, so transforms and comparisons
need no conversion:

=================  ==============================================
type               Python value
=================  ==============================================
boolean            ``bool``
int, long          ``int``
float, double      ``float``
decimal(P, S)      ``decimal.Decimal`` (with exponent ``-S``)
date               ``int`` days from 1970-01-01
time               ``int`` microseconds from midnight
timestamp[tz]      ``int`` microseconds from 1970-01-01T00:00:00[UTC]
timestamp[tz]_ns   ``int`` nanoseconds from 1970-01-01T00:00:00[UTC]
string             ``str``
uuid               ``uuid.UUID``
fixed(L), binary   ``bytes``
geometry/geog.     ``bytes`` (WKB)
variant, unknown   carried through opaquely (``None`` for unknown)
struct             ``tuple`` in field order (``StructLike``), or dict by field id
list               ``list``;  map: ``dict``
=================  ==============================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from iceduck.errors import UserError


class IcebergType:
    """Base of every Iceberg type."""

    is_primitive: ClassVar[bool] = False
    #: first format version in which the type may appear in a table schema
    min_format_version: ClassVar[int] = 1

    @property
    def is_nested(self) -> bool:
        return not self.is_primitive


@dataclass(frozen=True)
class PrimitiveType(IcebergType):
    """A type without children; ``str(t)`` is its spec/JSON name."""

    is_primitive: ClassVar[bool] = True
    type_name: ClassVar[str] = ""

    def __str__(self) -> str:
        return self.type_name


@dataclass(frozen=True)
class UnknownType(PrimitiveType):
    type_name: ClassVar[str] = "unknown"
    min_format_version: ClassVar[int] = 3


@dataclass(frozen=True)
class BooleanType(PrimitiveType):
    type_name: ClassVar[str] = "boolean"


@dataclass(frozen=True)
class IntegerType(PrimitiveType):
    type_name: ClassVar[str] = "int"
    MIN: ClassVar[int] = -(2**31)
    MAX: ClassVar[int] = 2**31 - 1


@dataclass(frozen=True)
class LongType(PrimitiveType):
    type_name: ClassVar[str] = "long"
    MIN: ClassVar[int] = -(2**63)
    MAX: ClassVar[int] = 2**63 - 1


@dataclass(frozen=True)
class FloatType(PrimitiveType):
    type_name: ClassVar[str] = "float"


@dataclass(frozen=True)
class DoubleType(PrimitiveType):
    type_name: ClassVar[str] = "double"


@dataclass(frozen=True)
class DecimalType(PrimitiveType):
    """decimal(P, S): "Scale is fixed, precision must be 38 or less"."""

    precision: int
    scale: int

    def __post_init__(self) -> None:
        if not 0 < self.precision <= 38:
            raise UserError(f"decimal precision must be between 1 and 38, got {self.precision}")

    def __str__(self) -> str:
        return f"decimal({self.precision}, {self.scale})"


@dataclass(frozen=True)
class DateType(PrimitiveType):
    type_name: ClassVar[str] = "date"


@dataclass(frozen=True)
class TimeType(PrimitiveType):
    type_name: ClassVar[str] = "time"


@dataclass(frozen=True)
class TimestampType(PrimitiveType):
    type_name: ClassVar[str] = "timestamp"


@dataclass(frozen=True)
class TimestamptzType(PrimitiveType):
    type_name: ClassVar[str] = "timestamptz"


@dataclass(frozen=True)
class TimestampNanoType(PrimitiveType):
    type_name: ClassVar[str] = "timestamp_ns"
    min_format_version: ClassVar[int] = 3


@dataclass(frozen=True)
class TimestamptzNanoType(PrimitiveType):
    type_name: ClassVar[str] = "timestamptz_ns"
    min_format_version: ClassVar[int] = 3


@dataclass(frozen=True)
class StringType(PrimitiveType):
    type_name: ClassVar[str] = "string"


@dataclass(frozen=True)
class UUIDType(PrimitiveType):
    type_name: ClassVar[str] = "uuid"


@dataclass(frozen=True)
class FixedType(PrimitiveType):
    length: int

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


@dataclass(frozen=True)
class BinaryType(PrimitiveType):
    type_name: ClassVar[str] = "binary"


@dataclass(frozen=True)
class VariantType(PrimitiveType):
    """Semi-structured value (v3). Not nested in Iceberg's sense: it has no field ids."""

    type_name: ClassVar[str] = "variant"
    min_format_version: ClassVar[int] = 3


DEFAULT_CRS = "OGC:CRS84"
DEFAULT_EDGE_ALGORITHM = "spherical"


@dataclass(frozen=True)
class GeometryType(PrimitiveType):
    """geometry(C); "If not specified, C is OGC:CRS84"."""

    crs: str = DEFAULT_CRS
    min_format_version: ClassVar[int] = 3

    def __str__(self) -> str:
        return "geometry" if self.crs == DEFAULT_CRS else f"geometry({self.crs})"


@dataclass(frozen=True)
class GeographyType(PrimitiveType):
    """geography(C, A); defaults OGC:CRS84 and spherical."""

    crs: str = DEFAULT_CRS
    algorithm: str = DEFAULT_EDGE_ALGORITHM
    min_format_version: ClassVar[int] = 3

    def __str__(self) -> str:
        if self.algorithm != DEFAULT_EDGE_ALGORITHM:
            return f"geography({self.crs}, {self.algorithm})"
        return "geography" if self.crs == DEFAULT_CRS else f"geography({self.crs})"


@dataclass(frozen=True)
class NestedField:
    """A struct field, list element or map key/value: an id, a name and a type.

    ``initial_default``/``write_default`` hold Python values in the representation of
    the module docstring ("Default values"); ``None`` means no default (null).
    """

    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: str | None = None
    initial_default: Any = None
    write_default: Any = None

    @property
    def optional(self) -> bool:
        return not self.required

    def __str__(self) -> str:
        req = "required" if self.required else "optional"
        return f"{self.field_id}: {self.name}: {req} {self.field_type}"


@dataclass(frozen=True)
class StructType(IcebergType):
    fields: tuple[NestedField, ...] = ()
    _by_id: dict[int, NestedField] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "_by_id", {f.field_id: f for f in self.fields})

    def field(self, field_id: int) -> NestedField | None:
        return self._by_id.get(field_id)

    def field_by_name(self, name: str) -> NestedField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def __str__(self) -> str:
        return "struct<" + ", ".join(str(f) for f in self.fields) + ">"

    def __hash__(self) -> int:
        return hash(self.fields)


@dataclass(frozen=True)
class ListType(IcebergType):
    element_id: int
    element_type: IcebergType
    element_required: bool = False

    @property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.element_field,)

    def __str__(self) -> str:
        return f"list<{self.element_type}>"


@dataclass(frozen=True)
class MapType(IcebergType):
    key_id: int
    key_type: IcebergType
    value_id: int
    value_type: IcebergType
    value_required: bool = False

    @property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, True)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.key_field, self.value_field)

    def __str__(self) -> str:
        return f"map<{self.key_type}, {self.value_type}>"


_SIMPLE: dict[str, PrimitiveType] = {
    t.type_name: t()
    for t in (
        UnknownType,
        BooleanType,
        IntegerType,
        LongType,
        FloatType,
        DoubleType,
        DateType,
        TimeType,
        TimestampType,
        TimestamptzType,
        TimestampNanoType,
        TimestamptzNanoType,
        StringType,
        UUIDType,
        BinaryType,
        VariantType,
    )
}

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)")
_FIXED = re.compile(r"fixed\[\s*(\d+)\s*\]")
_GEOMETRY = re.compile(r"geometry\s*\(\s*([^,()]+?)\s*\)")
_GEOGRAPHY = re.compile(r"geography\s*\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)")


def primitive_from_string(text: str) -> PrimitiveType:
    """Parse a primitive type name as it appears in schema JSON (Appendix C).

    Raises :class:`UserError` naming the text for anything unknown, so a caller parsing
    a file can re-raise it as corrupt data with the file's path.
    """
    name = text.strip()
    lowered = name.lower()
    if lowered in _SIMPLE:
        return _SIMPLE[lowered]
    if lowered == "geometry":
        return GeometryType()
    if lowered == "geography":
        return GeographyType()
    if m := _DECIMAL.fullmatch(lowered):
        return DecimalType(int(m.group(1)), int(m.group(2)))
    if m := _FIXED.fullmatch(lowered):
        return FixedType(int(m.group(1)))
    if m := _GEOMETRY.fullmatch(name):
        return GeometryType(m.group(1))
    if m := _GEOGRAPHY.fullmatch(name):
        return GeographyType(m.group(1), m.group(2) or DEFAULT_EDGE_ALGORITHM)
    raise UserError(f"unknown Iceberg type {text!r}")


# Type promotion (spec, "Schema Evolution"): v1/v2 and v3+ valid promotions.
def can_promote(source: IcebergType, target: IcebergType, format_version: int) -> bool:
    """Whether ``source`` may be promoted to ``target`` under the spec's table.

    ========  ===============  =============================
    type      v1, v2           v3+
    ========  ===============  =============================
    unknown                    any type
    int       long             long
    date                       timestamp, timestamp_ns
    float     double           double
    decimal   decimal(P', S)   decimal(P', S) if P' > P
    ========  ===============  =============================
    """
    if source == target:
        return True
    if isinstance(source, UnknownType):
        return format_version >= 3
    if isinstance(source, IntegerType):
        return isinstance(target, LongType)
    if isinstance(source, FloatType):
        return isinstance(target, DoubleType)
    if isinstance(source, DecimalType) and isinstance(target, DecimalType):
        return target.scale == source.scale and target.precision > source.precision
    if isinstance(source, DateType) and format_version >= 3:
        return isinstance(target, TimestampType | TimestampNanoType)
    return False


TIMESTAMP_TYPES = (TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)
NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)
