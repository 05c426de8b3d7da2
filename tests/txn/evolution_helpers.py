"""Shared pieces of the schema/spec/sort evolution tests: a nested test schema and
ALTER statements parsed by iceduck's own parser (the component that feeds evolution)."""

from __future__ import annotations

from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import BucketTransform, DayTransform, IdentityTransform
from iceduck.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)
from iceduck.sql.ddl import parse_write
from iceduck.sql.statements import AlterAction, AlterTable


def alter(sql: str) -> tuple[AlterAction, ...]:
    """The actions of ``ALTER TABLE db.t <sql>``."""
    stmt = parse_write(f"ALTER TABLE db.t {sql}")
    assert isinstance(stmt, AlterTable)
    return stmt.actions


def nested_schema() -> Schema:
    """``id long NOT NULL, s string, ts timestamptz, n int, f float, dc decimal(9,2), d date,
    st struct<a int, b struct<c int>>, l list<struct<x int>>, m map<string, struct<v int>>,
    li list<int>, k int NOT NULL, dbl double NOT NULL`` with Spark's ids (last id 20)."""
    fields = (
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "s", StringType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "n", IntegerType()),
        NestedField(5, "f", FloatType()),
        NestedField(6, "dc", DecimalType(9, 2)),
        NestedField(7, "d", DateType()),
        NestedField(
            8,
            "st",
            StructType(
                (
                    NestedField(14, "a", IntegerType()),
                    NestedField(15, "b", StructType((NestedField(16, "c", IntegerType()),))),
                )
            ),
        ),
        NestedField(9, "l", ListType(17, StructType((NestedField(18, "x", IntegerType()),)))),
        NestedField(
            10, "m", MapType(19, StringType(), 20, StructType((NestedField(21, "v", IntegerType()),)))
        ),
        NestedField(11, "li", ListType(22, IntegerType())),
        NestedField(12, "k", IntegerType(), required=True),
        NestedField(13, "dbl", DoubleType(), required=True),
    )
    return Schema(fields, 0, ())


def table(
    schema: Schema,
    specs: tuple[PartitionSpec, ...] = (PartitionSpec(0, ()),),
    format_version: int = 2,
    default_spec_id: int | None = None,
) -> TableMetadata:
    """Table metadata around ``schema`` and ``specs`` (the last one is the default)."""
    last = max([999, *(f.field_id for s in specs for f in s.fields)])
    return TableMetadata(
        format_version=format_version,
        table_uuid="00000000-0000-0000-0000-000000000000",
        location="file:///tmp/t",
        last_updated_ms=0,
        last_column_id=schema.highest_field_id,
        schemas=(schema,),
        current_schema_id=schema.schema_id,
        partition_specs=specs,
        default_spec_id=specs[-1].spec_id if default_spec_id is None else default_spec_id,
        last_partition_id=last,
        sort_orders=(UNSORTED,),
        default_sort_order_id=0,
    )


def spec_of(*fields: tuple[int, int, str, object], spec_id: int = 0) -> PartitionSpec:
    return PartitionSpec(spec_id, tuple(PartitionField(s, i, n, t) for s, i, n, t in fields))  # type: ignore[arg-type]


BUCKET16 = BucketTransform(16)
IDENTITY = IdentityTransform()
DAY = DayTransform()
