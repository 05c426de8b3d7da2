"""Fresh field ids for a new or replaced table schema (Java's ``TypeUtil.assignFreshIds``).

Id order matters: Spark, PyIceberg and iceduck must give the same ids to the same
``CREATE TABLE``, and Java's ``AssignFreshIds`` visitor numbers a struct's own fields
first, then descends into each field's type in order; a list numbers its element, a map
its key then its value, before descending. So ``a int, s struct<x, y struct<z>>,
l array<struct<p>>, m map<string, struct<q>>`` gets a=1 s=2 l=3 m=4, x=5 y=6, z=7,
element=8 p=9, key=10 value=11 q=12 (checked against a table Spark 3.5 / Iceberg 1.10
created: tests/interop/test_txn_builder_spark.py).

With a ``base`` schema (``CREATE OR REPLACE``, Java's ``buildReplacement``), a field whose
full dotted name exists in the base keeps the base's id; only new names get fresh ids.

Partition specs and sort orders given against the input schema's ids are rebound to the
fresh ids by column name (Java's ``freshSpec``/``freshSortOrder``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

from iceduck.errors import ValidationError
from iceduck.spec import properties as props
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED, SortField, SortOrder
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import IcebergType, ListType, MapType, NestedField, StructType

NextId = Callable[[], int]


def assign_fresh_ids(
    schema: Schema, next_id: NextId, *, schema_id: int = 0, base: Schema | None = None
) -> Schema:
    """``schema`` with every field id replaced (see module docstring); identifier fields are
    mapped by name, as Java's ``refreshIdentifierFields`` does."""

    def id_for(old_id: int) -> int:
        if base is not None:
            name = schema.column_name(old_id)
            found = base.find_field_or_none(name) if name is not None else None
            if found is not None:
                return found.field_id
        return next_id()

    def fresh_type(t: IcebergType) -> IcebergType:
        if isinstance(t, StructType):
            return StructType(fresh_fields(t.fields))
        if isinstance(t, ListType):
            element_id = id_for(t.element_id)
            return dataclasses.replace(t, element_id=element_id, element_type=fresh_type(t.element_type))
        if isinstance(t, MapType):
            key_id, value_id = id_for(t.key_id), id_for(t.value_id)
            return dataclasses.replace(
                t,
                key_id=key_id,
                value_id=value_id,
                key_type=fresh_type(t.key_type),
                value_type=fresh_type(t.value_type),
            )
        return t

    def fresh_fields(fields: tuple[NestedField, ...]) -> tuple[NestedField, ...]:
        ids = [id_for(f.field_id) for f in fields]  # this struct's fields first
        return tuple(
            dataclasses.replace(f, field_id=new_id, field_type=fresh_type(f.field_type))
            for f, new_id in zip(fields, ids, strict=True)
        )

    fields = fresh_fields(schema.fields)
    fresh = Schema(fields, schema_id)
    identifier_ids = []
    for old_id in schema.identifier_field_ids:
        name = schema.column_name(old_id)
        found = fresh.find_field_or_none(name) if name is not None else None
        if found is None:
            raise ValidationError(f"identifier field id {old_id} is not a field of the schema")
        identifier_ids.append(found.field_id)
    return Schema(fields, schema_id, tuple(identifier_ids))


def counter(start: int) -> NextId:
    """Ids ``start + 1``, ``start + 2``, ... (Java's ``AtomicInteger::incrementAndGet``)."""
    state = [start]

    def next_id() -> int:
        state[0] += 1
        return state[0]

    return next_id


def rebind_source_id(old_schema: Schema, new_schema: Schema, source_id: int, what: str) -> int:
    """The id in ``new_schema`` of the column ``source_id`` names in ``old_schema`` (Java's
    ``findColumnName`` + ``findField`` used to rebuild specs and sort orders)."""
    name = old_schema.column_name(source_id)
    found = new_schema.find_field_or_none(name) if name is not None else None
    if found is None:
        raise ValidationError(f"{what} refers to field id {source_id}, which is not a column of the schema")
    return found.field_id


def persisted_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """Java's ``TableMetadata.persistedProperties``: new tables store
    ``write.parquet.compression-codec`` = ``zstd`` unless given, and never the reserved
    properties (``format-version`` is consumed, the others are derived)."""
    out = {props.PARQUET_COMPRESSION: props.PARQUET_COMPRESSION_DEFAULT}
    out.update({k: str(v) for k, v in properties.items() if k not in props.RESERVED_PROPERTIES})
    return out


def rebind_spec(old: Schema, new: Schema, spec: PartitionSpec, field_ids: Iterable[int]) -> PartitionSpec:
    fields = []
    for f, field_id in zip(spec.fields, field_ids, strict=False):
        what = f"partition field {f.name!r}"
        sources = tuple(rebind_source_id(old, new, i, what) for i in f.all_source_ids)
        fields.append(
            PartitionField(sources[0], field_id, f.name, f.transform, sources if f.source_ids else None)
        )
    return PartitionSpec(0, tuple(fields))


def rebind_order(old: Schema, new: Schema, order: SortOrder, order_id: int) -> SortOrder:
    if order.is_unsorted:
        return UNSORTED
    fields = []
    for f in order.fields:
        ids = f.source_ids if f.source_ids is not None else (f.source_id,)
        sources = tuple(rebind_source_id(old, new, i, "sort field") for i in ids)
        fields.append(
            SortField(sources[0], f.transform, f.direction, f.null_order, sources if f.source_ids else None)
        )
    return SortOrder(order_id, tuple(fields))


def v1_replacement_fields(
    current: PartitionSpec, new: PartitionSpec, next_id: Callable[[], int]
) -> tuple[PartitionField, ...]:
    """Java's v1 ``reassignPartitionIds``: current fields carried forward (the new field
    with the old id, or ``void`` when dropped), then the remaining new fields."""
    pending = {(f.all_source_ids, str(f.transform)): f for f in new.fields}
    new_names = {f.name for f in new.fields}
    out: list[PartitionField] = []
    for f in current.fields:
        match = pending.pop((f.all_source_ids, str(f.transform)), None)
        if match is not None:
            out.append(dataclasses.replace(match, field_id=f.field_id))
        else:
            name = f"{f.name}_{f.field_id}" if f.name in new_names else f.name
            out.append(dataclasses.replace(f, name=name, transform=parse_transform("void")))
    out.extend(dataclasses.replace(f, field_id=next_id()) for f in pending.values())
    return tuple(out)
