"""Whole-schema rules checked after evolution: identifier fields, unambiguous names, and
that the current partition spec and sort order still find their source columns.

Spec, "Identifier Field IDs": "Identifier fields may be nested in structs but cannot be
nested within maps or lists. Float, double, and optional fields cannot be used as
identifier fields and a nested field cannot be used as an identifier field if it is
nested in an optional struct, to avoid null values in identifiers."
"""

from __future__ import annotations

from iceduck.errors import ValidationError
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortOrder
from iceduck.spec.types import DoubleType, FloatType, ListType, MapType, PrimitiveType
from iceduck.txn import schema_tree as tree


def validate_identifier_field(schema: Schema, field_id: int) -> None:
    """Spec, "Identifier Field IDs" (Java ``Schema.validateIdentifierField`` order)."""
    f = schema.find_field(field_id)
    name = schema.column_name(field_id)

    def refuse(reason: str) -> ValidationError:
        return ValidationError(f"cannot use {name} as an identifier field: {reason}")

    if not isinstance(f.field_type, PrimitiveType):
        raise refuse("not a primitive type")
    if not f.required:
        raise refuse("not a required (NOT NULL) column")
    if isinstance(f.field_type, FloatType | DoubleType):
        raise refuse("float and double columns cannot identify rows")
    parent = schema.parent_id(field_id)
    while parent is not None:
        owner = schema.find_field(parent)
        if isinstance(owner.field_type, ListType | MapType):
            raise refuse(f"it is nested in {schema.column_name(parent)}, a {owner.field_type}")
        if not owner.required:
            raise refuse(f"it is nested in the optional struct {schema.column_name(parent)}")
        parent = schema.parent_id(parent)


def check_unique_names(schema: Schema) -> None:
    """Dotted names must identify one field each (a column renamed to ``a.b`` next to a
    struct ``a`` holding ``b`` would make ``a.b`` ambiguous)."""
    seen: set[str] = set()
    for name, _f in tree.walk(schema.fields):
        if name in seen:
            raise ValidationError(f"column name {name!r} would be ambiguous in the new schema")
        seen.add(name)


def check_references(
    old: Schema, new: Schema, spec: PartitionSpec | None, sort_order: SortOrder | None
) -> None:
    """Refuse a schema that lost a column the current spec or sort order uses (Java:
    "Cannot find source column for partition field" / "... for sort field"). Void
    partition fields are exempt: they only keep a v1 field id reserved."""
    missing_msg = "cannot drop column {name}: the current {what} uses it ({detail}); change the {what} first"
    if spec is not None:
        for pf in spec.fields:
            if pf.transform.is_void:
                continue
            for source_id in pf.all_source_ids:
                if new.find_field_or_none(source_id) is None:
                    name = old.column_name(source_id) or str(source_id)
                    detail = f"partition field {pf.name}: {pf.transform}({name})"
                    raise ValidationError(missing_msg.format(name=name, what="partition spec", detail=detail))
    if sort_order is not None:
        for sf in sort_order.fields:
            for source_id in sf.source_ids or (sf.source_id,):
                if new.find_field_or_none(source_id) is None:
                    name = old.column_name(source_id) or str(source_id)
                    detail = f"sort field {sf.transform}({name})"
                    raise ValidationError(missing_msg.format(name=name, what="sort order", detail=detail))
