"""The schema, properties and format version of a table being created.

CREATE TABLE's columns arrive with placeholder nested ids (:mod:`iceduck.sql.statements`);
:func:`fresh_schema` numbers every field the way Java's ``TypeUtil.assignFreshIds`` does,
checked against Spark: a struct's fields get ids before any of their children, then each
child is numbered depth first (``a int, s struct<x, y struct<z>>, l array<struct<p>>,
m map<k, v>`` -> a=1 s=2 l=3 m=4 x=5 y=6 z=7 element=8 p=9 key=10 value=11). The same
numbering is what ``new_table_metadata`` assigns, so partition and sort terms resolved
against this schema keep their meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from iceduck.errors import ValidationError
from iceduck.spec import properties as tp
from iceduck.spec.schema import Schema
from iceduck.spec.types import IcebergType, ListType, MapType, NestedField, StructType
from iceduck.sql.statements import ColumnDef
from iceduck.txn.fresh_ids import counter
from iceduck.txn.schema_tree import assign_fresh_ids

#: the table property Spark stores a table's COMMENT in
COMMENT_PROPERTY = "comment"


def column_field(column: ColumnDef, field_id: int) -> NestedField:
    """A ColumnDef of CREATE TABLE as a field; ``DEFAULT`` becomes its ``write-default``.

    Spec, "Default values": "The ``initial-default`` is set only when a field is added to
    an existing schema" -- a new table has no rows written before its columns existed, so
    only writers use the default (ADD COLUMN sets both, in :mod:`iceduck.txn.schema_update`).
    """
    default = column.default if column.has_default else None
    return NestedField(
        field_id, column.name, column.type, column.required, column.comment, write_default=default
    )


def fresh_schema(fields: Sequence[NestedField]) -> Schema:
    """``fields`` renumbered from 1 in Java's ``assignFreshIds`` order (module docstring),
    after checking that no struct repeats a name."""
    _check_names(fields, "table")
    struct = assign_fresh_ids(StructType(tuple(fields)), counter(0))
    assert isinstance(struct, StructType)
    return Schema(struct.fields, 0, ())


def _check_names(fields: Sequence[NestedField], where: str) -> None:
    _check_unique([f.name for f in fields], where)
    for f in fields:
        _check_nested(f.field_type, f.name)


def _check_nested(t: IcebergType, path: str) -> None:
    if isinstance(t, StructType):
        _check_names(t.fields, f"struct {path}")
    elif isinstance(t, ListType):
        _check_nested(t.element_type, path + ".element")
    elif isinstance(t, MapType):
        _check_nested(t.key_type, path + ".key")
        _check_nested(t.value_type, path + ".value")


def _check_unique(names: Sequence[str], where: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValidationError(f"column {name!r} appears twice in the {where}")
        seen.add(name)


def table_properties(properties: Mapping[str, str], comment: str | None) -> dict[str, str]:
    """The properties to store: TBLPROPERTIES without the reserved keys (``format-version``
    is consumed by creation, as in Java), plus ``comment`` as Spark stores COMMENT."""
    reserved = sorted(k for k in properties if k in tp.RESERVED_PROPERTIES and k != tp.FORMAT_VERSION)
    if reserved:
        raise ValidationError(
            f"table properties {', '.join(reserved)} are reserved: Iceberg derives them from the metadata"
        )
    stored = {k: v for k, v in properties.items() if k != tp.FORMAT_VERSION}
    if comment is not None:
        stored[COMMENT_PROPERTY] = comment
    return stored
