"""Finding and rebuilding fields inside an immutable schema tree.

Schema evolution (:mod:`iceduck.txn.schema_update`) changes one field or one struct deep
inside nested types; these helpers rebuild only the path down to it, so every untouched
field keeps its identity (and its id: "Renaming an existing field must change the name,
but not the field ID").

Column paths are resolved the way Spark resolves ALTER TABLE column names with
``spark.sql.caseSensitive=false`` (its default): an exact match wins, else a unique
case-insensitive match. List elements and map keys/values are addressed as ``element``,
``key`` and ``value`` (``points.element.x``), as in Iceberg Java's ``Schema.findField``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from iceduck.errors import NotFoundError, UserError
from iceduck.spec.schema import Schema
from iceduck.spec.types import IcebergType, ListType, MapType, NestedField, StructType

FieldUpdate = Callable[[NestedField], NestedField | None]
StructUpdate = Callable[[tuple[NestedField, ...]], tuple[NestedField, ...]]


def display(path: tuple[str, ...] | str) -> str:
    """A column path as users write it (``a.b``)."""
    return path if isinstance(path, str) else ".".join(path)


def find(schema: Schema, path: tuple[str, ...]) -> NestedField | None:
    """The field at ``path``: exact name first, else the one case-insensitive match."""
    name = ".".join(path)
    found = schema.find_field_or_none(name)
    if found is not None:
        return found
    lowered = name.lower()
    matches = [n for n in _dotted_names(schema) if n.lower() == lowered]
    if len(matches) > 1:
        raise UserError(f"column name {name!r} is ambiguous: it matches {', '.join(sorted(matches))}")
    return schema.find_field_or_none(matches[0]) if matches else None


def resolve(schema: Schema, path: tuple[str, ...], what: str = "column") -> NestedField:
    """:func:`find`, raising :class:`NotFoundError` naming the path when it is missing."""
    found = find(schema, path)
    if found is None:
        raise NotFoundError(f"cannot find {what} {display(path)!r} in the table schema")
    return found


def _dotted_names(schema: Schema) -> Iterator[str]:
    for field_id in schema.field_ids():
        name = schema.column_name(field_id)
        if name is not None:
            yield name


def container(schema: Schema, field_id: int) -> IcebergType | None:
    """The type holding ``field_id``: a struct, list or map type; None at top level."""
    parent = schema.parent_id(field_id)
    return None if parent is None else schema.find_field(parent).field_type


def is_collection_child(schema: Schema, field_id: int) -> bool:
    """Whether the field is a list element or a map key/value (not a struct field)."""
    return isinstance(container(schema, field_id), ListType | MapType)


def struct_fields(schema: Schema, owner_id: int | None) -> tuple[NestedField, ...]:
    """The fields of the struct owned by ``owner_id`` (None: the schema's top level)."""
    if owner_id is None:
        return schema.fields
    owned = schema.find_field(owner_id).field_type
    if not isinstance(owned, StructType):
        raise UserError(f"{schema.column_name(owner_id)} is not a struct")
    return owned.fields


def update_field(fields: tuple[NestedField, ...], field_id: int, fn: FieldUpdate) -> tuple[NestedField, ...]:
    """``fields`` with the field ``field_id`` (at any depth) replaced by ``fn(field)``,
    or removed when ``fn`` returns None."""
    out: list[NestedField] = []
    changed = False
    for f in fields:
        if f.field_id == field_id:
            new = fn(f)
            changed = True
            if new is not None:
                out.append(new)
            continue
        t = _update_in_type(f.field_type, field_id, fn)
        if t is not f.field_type:
            changed = True
            f = replace(f, field_type=t)
        out.append(f)
    return tuple(out) if changed else fields


def _update_in_type(t: IcebergType, field_id: int, fn: FieldUpdate) -> IcebergType:
    if isinstance(t, StructType):
        fields = update_field(t.fields, field_id, fn)
        return t if fields is t.fields else StructType(fields)
    if isinstance(t, ListType):
        element = _update_child(t.element_field, field_id, fn, "list element")
        if element is None:
            return t
        return ListType(t.element_id, element.field_type, element.required)
    if isinstance(t, MapType):
        if t.key_id == field_id or _update_child(t.key_field, field_id, fn, "map key") is not None:
            raise UserError("map keys cannot be changed")
        value = _update_child(t.value_field, field_id, fn, "map value")
        if value is None:
            return t
        return MapType(t.key_id, t.key_type, t.value_id, value.field_type, value.required)
    return t


def _update_child(child: NestedField, field_id: int, fn: FieldUpdate, what: str) -> NestedField | None:
    """The updated list element / map value, or None when nothing under it changed."""
    if child.field_id == field_id:
        new = fn(child)
        if new is None:
            raise UserError(f"cannot delete a {what}")
        return new
    t = _update_in_type(child.field_type, field_id, fn)
    return None if t is child.field_type else replace(child, field_type=t)


def update_struct(
    fields: tuple[NestedField, ...], owner_id: int | None, fn: StructUpdate
) -> tuple[NestedField, ...]:
    """``fields`` with the struct owned by ``owner_id`` (None: top level) replaced by
    ``fn(its fields)``."""
    if owner_id is None:
        return fn(fields)

    def rebuild(owner: NestedField) -> NestedField:
        assert isinstance(owner.field_type, StructType)
        return replace(owner, field_type=StructType(fn(owner.field_type.fields)))

    return update_field(fields, owner_id, rebuild)


def assign_fresh_ids(t: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    """``t`` with new ids for every nested field, in Java ``TypeUtil.assignFreshIds``
    order (checked against Spark's ADD COLUMN): a struct's fields are numbered before any
    of their children, then each child depth first; a list numbers its element, a map
    its key then value, before their types."""
    if isinstance(t, StructType):
        ids = [next_id() for _ in t.fields]
        return StructType(
            tuple(
                replace(f, field_id=i, field_type=assign_fresh_ids(f.field_type, next_id))
                for i, f in zip(ids, t.fields, strict=True)
            )
        )
    if isinstance(t, ListType):
        element_id = next_id()
        return ListType(element_id, assign_fresh_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MapType):
        key_id, value_id = next_id(), next_id()
        key = assign_fresh_ids(t.key_type, next_id)
        value = assign_fresh_ids(t.value_type, next_id)
        return MapType(key_id, key, value_id, value, t.value_required)
    return t


def walk(fields: tuple[NestedField, ...], prefix: str = "") -> Iterator[tuple[str, NestedField]]:
    """Every field with its dotted name, parents before children."""
    for f in fields:
        name = prefix + f.name
        yield name, f
        t = f.field_type
        if isinstance(t, StructType | ListType | MapType):
            yield from walk(t.fields, name + ".")
