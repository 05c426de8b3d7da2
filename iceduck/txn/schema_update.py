"""Schema evolution: ALTER TABLE column actions applied to a schema (spec: "Schema Evolution").

Pure: a schema and actions in, a schema out. The rules are Iceberg Java 1.10's
``SchemaUpdate`` as Spark runs it, checked against Spark (tests/txn/test_schema_update*):

* ADD COLUMN assigns the next id after ``last-column-id`` to the column, then ids to its
  nested fields ("Adding a new field assigns a new ID for that field and for any nested
  fields"); a nested column is added through its parent path (``st.x``, ``l.element.x``,
  ``m.value.x``). A required column needs a default ("When a required field is added,
  both defaults must be set to a non-null value"), and defaults need format-version 3.
* DROP COLUMN refuses identifier fields (and structs holding one), and columns the
  current partition spec or sort order uses (Java: "Cannot find source column for
  partition field"); void partition fields do not hold a column, as in Java.
* RENAME keeps the id; names must stay unique among siblings, compared
  case-insensitively as Spark does.
* ALTER COLUMN TYPE allows only the spec's promotions (:func:`iceduck.spec.types.can_promote`),
  except v3's ``date`` -> ``timestamp``: Java 1.10 refuses it ("Cannot change column
  type: d: date -> timestamp"), so Spark could not read such a table back.
* SET NOT NULL is refused (Java: "Cannot change column nullability: optional -> required";
  existing rows may hold nulls); DROP NOT NULL, COMMENT, FIRST/AFTER and (v3) SET DEFAULT
  apply. SET DEFAULT changes only ``write-default``: "The initial-default ... cannot change".
* Identifier fields (spec, "Identifier Field IDs"): "Float, double, and optional fields
  cannot be used as identifier fields and a nested field cannot be used as an identifier
  field if it is nested in an optional struct", nor inside maps or lists.

Actions apply one after the other, each to the result of the previous one (Spark sends one
action per statement except ``ADD COLUMNS (a, b)``, for which this is the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from iceduck.errors import AlreadyExistsError, NotFoundError, UserError, ValidationError
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortOrder
from iceduck.spec.types import (
    DateType,
    GeographyType,
    GeometryType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    TimestampNanoType,
    TimestampType,
    UnknownType,
    VariantType,
    can_promote,
)
from iceduck.sql.ddl_terms import typed_default
from iceduck.sql.literals import SqlLiteral
from iceduck.sql.statements import (
    AddColumn,
    AlterAction,
    AlterColumn,
    ColumnPosition,
    DropColumn,
    DropIdentifierFields,
    Position,
    RenameColumn,
    SetIdentifierFields,
)
from iceduck.txn import schema_tree as tree
from iceduck.txn.schema_checks import check_references, check_unique_names, validate_identifier_field

#: the ALTER TABLE actions :func:`apply_schema_changes` handles (it skips the others)
SCHEMA_ACTIONS = (AddColumn, DropColumn, RenameColumn, AlterColumn, SetIdentifierFields, DropIdentifierFields)

#: types whose defaults must be null ("All columns of unknown, variant, geometry, and
#: geography types must default to null")
_NULL_DEFAULT_ONLY = (UnknownType, VariantType, GeometryType, GeographyType)


@dataclass
class _State:
    """The schema being evolved: fields, identifier field ids and the id counter."""

    schema: Schema
    last_column_id: int
    format_version: int
    identifiers: list[int] = field(default_factory=list)

    def next_id(self) -> int:
        self.last_column_id += 1
        return self.last_column_id

    def set_fields(self, fields: tuple[NestedField, ...]) -> None:
        self.schema = Schema(fields, self.schema.schema_id, ())


def apply_schema_changes(
    schema: Schema,
    last_column_id: int,
    actions: Sequence[AlterAction],
    format_version: int,
    *,
    spec: PartitionSpec | None = None,
    sort_order: SortOrder | None = None,
) -> tuple[Schema, int]:
    """The schema after ``actions`` and the new ``last-column-id``.

    ``spec`` and ``sort_order`` are the table's current (default) ones: a column they use
    cannot be dropped. The result keeps ``schema.schema_id``; the metadata builder gives
    a changed schema its new id. Non-schema actions (partition, order, properties) are
    skipped. Raises UserError/NotFoundError/AlreadyExistsError/ValidationError naming the
    column and the rule.
    """
    state = _State(schema, max(last_column_id, schema.highest_field_id), format_version)
    state.identifiers = list(schema.identifier_field_ids)
    for action in actions:
        if isinstance(action, AddColumn):
            _add_column(state, action)
        elif isinstance(action, DropColumn):
            _drop_column(state, action)
        elif isinstance(action, RenameColumn):
            _rename_column(state, action)
        elif isinstance(action, AlterColumn):
            _alter_column(state, action)
        elif isinstance(action, SetIdentifierFields):
            state.identifiers = _unique([tree.resolve(state.schema, p).field_id for p in action.columns])
        elif isinstance(action, DropIdentifierFields):
            _drop_identifier_fields(state, action)
    result = Schema(state.schema.fields, schema.schema_id, tuple(sorted(state.identifiers)))
    for field_id in result.identifier_field_ids:
        validate_identifier_field(result, field_id)
    check_unique_names(result)
    check_references(schema, result, spec, sort_order)
    return result, state.last_column_id


def _unique(ids: list[int]) -> list[int]:
    return list(dict.fromkeys(ids))


# -- ADD COLUMN -----------------------------------------------------------------------------


def _add_column(state: _State, action: AddColumn) -> None:
    column = action.column
    name = action.path[-1] if action.path else column.name
    full = tree.display((*action.path[:-1], name))
    owner_id = _struct_owner(state.schema, action.path[:-1])
    siblings = tree.struct_fields(state.schema, owner_id)
    _check_new_name(siblings, name, full, "add")
    for path, f in tree.walk((NestedField(0, name, column.type),)):
        _check_type_version(path, f.field_type, state.format_version)
    default = column.default if column.has_default else None
    if column.has_default:
        _check_default(full, column.type, default, state.format_version)
    if column.required and default is None:
        raise UserError(
            f"cannot add required column {full} without a default: existing rows have no value for it "
            "(add it as nullable, or with a DEFAULT in a format-version 3 table)"
        )
    new_id = state.next_id()
    new = NestedField(
        new_id,
        name,
        tree.assign_fresh_ids(column.type, state.next_id),
        column.required,
        column.comment,
        initial_default=default,
        write_default=default,
    )
    position = action.position

    def add(fields: tuple[NestedField, ...]) -> tuple[NestedField, ...]:
        return _place((*fields, new), new_id, position, full)

    state.set_fields(tree.update_struct(state.schema.fields, owner_id, add))


def _struct_owner(schema: Schema, parent_path: tuple[str, ...]) -> int | None:
    """The id of the field whose struct receives a new column: a struct column, a list
    element or map value struct (``l`` alone means ``l.element``, as in Java)."""
    if not parent_path:
        return None
    parent = tree.resolve(schema, parent_path, "parent column")
    t = parent.field_type
    if isinstance(t, ListType):
        parent, t = t.element_field, t.element_type
    elif isinstance(t, MapType):
        parent, t = t.value_field, t.value_type
    if not isinstance(t, StructType):
        raise UserError(f"cannot add a field to {tree.display(parent_path)}: it is {t}, not a struct")
    return parent.field_id


def _check_new_name(siblings: tuple[NestedField, ...], name: str, full: str, verb: str) -> None:
    if not name:
        raise UserError("column names cannot be empty")
    for f in siblings:
        if f.name.lower() == name.lower():
            raise AlreadyExistsError(
                f"cannot {verb} column {full}: a column named {f.name!r} already exists there"
            )


def _check_type_version(path: str, t: IcebergType, format_version: int) -> None:
    if t.min_format_version > format_version:
        raise ValidationError(
            f"column {path} has type {t}, which needs format-version {t.min_format_version} "
            f"(the table is v{format_version})"
        )


def _check_default(full: str, t: IcebergType, default: Any, format_version: int) -> None:
    """Spec, "Default values": v3 only; null for unknown/variant/geo types; a struct's
    default may only be null or empty (iceduck accepts primitive defaults only)."""
    if format_version < 3:
        raise ValidationError(f"column {full} has a DEFAULT: default values need format-version 3")
    if default is None:
        return
    if isinstance(t, _NULL_DEFAULT_ONLY):
        raise ValidationError(f"column {full} of type {t} can only default to null")
    if not isinstance(t, PrimitiveType):
        raise ValidationError(f"column {full} is {t}: only primitive columns can have a non-null DEFAULT")


def _place(
    fields: tuple[NestedField, ...], field_id: int, position: ColumnPosition | None, full: str
) -> tuple[NestedField, ...]:
    """``fields`` with ``field_id`` moved FIRST or AFTER a sibling (unchanged if None)."""
    if position is None:
        return fields
    moving = next(f for f in fields if f.field_id == field_id)
    rest = [f for f in fields if f.field_id != field_id]
    if position.kind is Position.FIRST:
        return (moving, *rest)
    after = position.after or ""
    matches = [i for i, f in enumerate(rest) if f.name == after] or [
        i for i, f in enumerate(rest) if f.name.lower() == after.lower()
    ]
    if not matches:
        if after.lower() == moving.name.lower():
            raise UserError(f"cannot move column {full} after itself")
        raise NotFoundError(f"cannot move column {full} after {after!r}: no such column next to it")
    index = matches[0] + 1
    return (*rest[:index], moving, *rest[index:])


# -- DROP / RENAME --------------------------------------------------------------------------


def _drop_column(state: _State, action: DropColumn) -> None:
    found = tree.find(state.schema, action.path)
    if found is None:
        if action.if_exists:
            return
        raise NotFoundError(f"cannot drop column {tree.display(action.path)!r}: no such column")
    full = state.schema.column_name(found.field_id) or tree.display(action.path)
    if tree.is_collection_child(state.schema, found.field_id):
        raise UserError(f"cannot drop {full}: a list element or map key/value cannot be dropped")
    dropped = {found.field_id, *(f.field_id for _, f in tree.walk((found,)))}
    for field_id in state.identifiers:
        if field_id in dropped:
            name = state.schema.column_name(field_id)
            raise ValidationError(
                f"cannot drop column {full}: {'it is' if field_id == found.field_id else 'it holds'} "
                f"identifier field {name}; drop it from the identifier fields first "
                f"(ALTER TABLE ... DROP IDENTIFIER FIELDS {name})"
            )
    if len(state.schema.fields) == 1 and state.schema.fields[0].field_id == found.field_id:
        raise UserError(f"cannot drop column {full}: it is the table's only column")
    state.set_fields(tree.update_field(state.schema.fields, found.field_id, lambda _f: None))


def _rename_column(state: _State, action: RenameColumn) -> None:
    found = tree.resolve(state.schema, action.path)
    full = state.schema.column_name(found.field_id) or tree.display(action.path)
    if tree.is_collection_child(state.schema, found.field_id):
        raise UserError(f"cannot rename {full}: list elements and map keys/values have fixed names")
    if action.new_name == found.name:
        return
    parent = state.schema.parent_id(found.field_id)
    siblings = [f for f in tree.struct_fields(state.schema, parent) if f.field_id != found.field_id]
    _check_new_name(tuple(siblings), action.new_name, full, "rename")
    state.set_fields(
        tree.update_field(state.schema.fields, found.field_id, lambda f: replace(f, name=action.new_name))
    )


# -- ALTER COLUMN ---------------------------------------------------------------------------


def _alter_column(state: _State, action: AlterColumn) -> None:
    found = tree.resolve(state.schema, action.path)
    full = state.schema.column_name(found.field_id) or tree.display(action.path)
    holder = tree.container(state.schema, found.field_id)
    if isinstance(holder, MapType) and holder.key_id == found.field_id:
        raise UserError(f"cannot change {full}: map keys cannot be changed")
    updated = found
    if action.type is not None and action.type != found.field_type:
        updated = replace(updated, field_type=_promoted(full, found.field_type, action.type, state))
    if action.required is True and not found.required:
        raise UserError(
            f"cannot change column {full} from nullable to NOT NULL: existing rows may hold nulls "
            "(Iceberg refuses optional -> required)"
        )
    if action.required is False and found.required:
        if found.field_id in state.identifiers:
            raise ValidationError(
                f"cannot make {full} nullable: it is an identifier field "
                f"(DROP IDENTIFIER FIELDS {full} first)"
            )
        updated = replace(updated, required=False)
    if action.comment is not None and not tree.is_collection_child(state.schema, found.field_id):
        # list elements and map values have no doc in Iceberg's model: Java accepts the
        # COMMENT and drops it, so it is a no-op here too
        updated = replace(updated, doc=action.comment)
    if action.has_default:
        default = _typed(action.default, full, updated.field_type)
        _check_default(full, updated.field_type, default, state.format_version)
        updated = replace(updated, write_default=default)
    if updated != found:
        if (
            tree.is_collection_child(state.schema, found.field_id)
            and updated.write_default != found.write_default
        ):
            raise UserError(f"cannot set a default on {full}: only struct fields have defaults")
        state.set_fields(tree.update_field(state.schema.fields, found.field_id, lambda _f: updated))
    if action.position is not None:
        _move(state, found, full, action.position)


def _typed(value: Any, full: str, t: IcebergType) -> Any:
    """SET DEFAULT's value as a value of the column's type: the parser cannot type it (it
    does not know the column), so it hands over the literal as written."""
    if isinstance(value, SqlLiteral):
        return typed_default(value, full, t)
    return value


def _promoted(full: str, old: IcebergType, new: IcebergType, state: _State) -> IcebergType:
    if not isinstance(old, PrimitiveType) or not isinstance(new, PrimitiveType):
        raise UserError(
            f"cannot change column type of {full} from {old} to {new}: only primitive types can change"
        )
    _check_type_version(full, new, state.format_version)
    if isinstance(old, DateType) and isinstance(new, TimestampType | TimestampNanoType):
        raise UnsupportedDatePromotion(full, old, new)
    if not can_promote(old, new, state.format_version):
        raise ValidationError(
            f"cannot change column type of {full} from {old} to {new}: not an allowed promotion"
        )
    return new


class UnsupportedDatePromotion(ValidationError):
    """date -> timestamp: allowed by the v3 spec, refused by Iceberg Java 1.10 (Spark)."""

    def __init__(self, full: str, old: IcebergType, new: IcebergType) -> None:
        super().__init__(
            f"cannot change column type of {full} from {old} to {new}: Iceberg Java 1.10 (Spark) "
            "does not support this v3 promotion, so Spark could not read the table"
        )


def _move(state: _State, found: NestedField, full: str, position: ColumnPosition) -> None:
    if tree.is_collection_child(state.schema, found.field_id):
        raise UserError(f"cannot move {full}: it is a list element or map key/value")
    parent = state.schema.parent_id(found.field_id)
    state.set_fields(
        tree.update_struct(
            state.schema.fields, parent, lambda fields: _place(fields, found.field_id, position, full)
        )
    )


# -- identifier fields ----------------------------------------------------------------------


def _drop_identifier_fields(state: _State, action: DropIdentifierFields) -> None:
    for path in action.columns:
        found = tree.resolve(state.schema, path)
        if found.field_id not in state.identifiers:
            raise UserError(
                f"cannot drop identifier field {tree.display(path)}: it is not an identifier field"
            )
        state.identifiers.remove(found.field_id)
