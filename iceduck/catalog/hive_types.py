"""Hive's type names for Iceberg types: what a metastore table's columns (Hive Metastore) and a
Glue table's columns show, so Hive, Athena and Glue's console read the schema.

One mapping for both, as Java's ``HiveSchemaUtil.convert`` and ``IcebergToGlueConverter``
agree on it: Hive has no time or UUID type, and one timestamp type (Hive 2's names).
"""

from __future__ import annotations

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
    ListType,
    LongType,
    MapType,
    StructType,
)


def hive_type(t: IcebergType) -> str:
    """Java's ``HiveSchemaUtil.convert``: the Hive type name of an Iceberg type (time, UUID
    and the timestamp kinds as Hive 2 names them, since Hive has no time or UUID type)."""
    if isinstance(t, BooleanType):
        return "boolean"
    if isinstance(t, IntegerType):
        return "int"
    if isinstance(t, LongType):
        return "bigint"
    if isinstance(t, FloatType):
        return "float"
    if isinstance(t, DoubleType):
        return "double"
    if isinstance(t, DateType):
        return "date"
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, FixedType | BinaryType):
        return "binary"
    if isinstance(t, StructType):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.field_type)}" for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"array<{hive_type(t.element_type)}>"
    if isinstance(t, MapType):
        return f"map<{hive_type(t.key_type)},{hive_type(t.value_type)}>"
    name = str(t)
    if name.startswith("timestamp"):
        return "timestamp"
    return "string"  # string, uuid, time, variant...: Hive reads them as strings
