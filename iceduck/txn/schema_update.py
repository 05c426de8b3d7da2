"""Schema evolution: column changes applied to a schema (spec: "Schema Evolution").

Pure: a schema and :mod:`iceduck.txn.change_requests` requests in, a schema out. The rules are
Iceberg Java 1.10's ``SchemaUpdate`` as Spark runs it, checked against Spark
(tests/txn/test_schema_update*, tests/interop/test_txn_evolution_spark.py):

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
* changing a column type allows only the spec's promotions (:func:`iceduck.spec.types.can_promote`),
  except v3's ``date`` -> ``timestamp``: Java 1.10 refuses it ("Cannot change column
  type: d: date -> timestamp"), so Spark could not read such a table back.
* making a column required is refused (Java: "Cannot change column nullability: optional
  -> required"; existing rows may hold nulls); making it optional, its doc, moves and
  (v3) defaults apply. A default changes only ``write-default``: "The initial-default ...
  cannot change".
* Identifier fields (spec, "Identifier Field IDs"): "Float, double, and optional fields
  cannot be used as identifier fields and a nested field cannot be used as an identifier
  field if it is nested in an optional struct", nor inside maps or lists.

Changes apply one after the other, each to the result of the previous one
(:class:`SchemaUpdate`); the checks on the whole schema (identifier fields, unique names,
columns the spec and sort order use) run once, on the result. A change to an existing
column (update, default, move) first refuses map keys, which nothing can change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, assert_never

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
from iceduck.txn import schema_tree as tree
from iceduck.txn.change_requests import (
    AddColumn,
    ColumnPath,
    DeleteColumn,
    MoveColumn,
    MoveFirst,
    Placement,
    RemoveIdentifierFields,
    RenameColumn,
    SchemaChange,
    SetColumnDefault,
    SetIdentifierFields,
    UpdateColumn,
)
from iceduck.txn.schema_checks import check_references, check_unique_names, validate_identifier_field

#: types whose defaults must be null ("All columns of unknown, variant, geometry, and
#: geography types must default to null")
_NULL_DEFAULT_ONLY = (UnknownType, VariantType, GeometryType, GeographyType)


@dataclass
class _State:
    """The schema being evolved: fields, identifier field ids and the id counter."""

    schema: Schema
    last_column_id: int
    format_version: int
    identifiers: list[int]

    def next_id(self) -> int:
        self.last_column_id += 1
        return self.last_column_id

    def set_fields(self, fields: tuple[NestedField, ...]) -> None:
        self.schema = Schema(fields, self.schema.schema_id, ())


class SchemaUpdate:
    """A schema being evolved one change at a time (Java's ``SchemaUpdate``, PyIceberg's
    ``UpdateSchema``).

    One object per statement: each :meth:`apply` sees the result of the previous ones, so
    a caller can look a column up (:meth:`column`) between changes -- a default written
    as a literal can only be typed once earlier changes of the same statement have set the
    column's type. ``spec`` and ``sort_order`` are the table's current (default) ones: a
    column they use cannot be dropped.
    """

    def __init__(
        self,
        schema: Schema,
        last_column_id: int,
        format_version: int,
        *,
        spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
    ) -> None:
        self._base = schema
        self._spec = spec
        self._sort_order = sort_order
        self._state = _State(
            schema,
            max(last_column_id, schema.highest_field_id),
            format_version,
            list(schema.identifier_field_ids),
        )

    def column(self, path: ColumnPath) -> tuple[NestedField, str]:
        """The existing column a change to ``path`` changes, and its full name (as the
        schema spells it); NotFoundError when missing, UserError for a map key."""
        return _changed_column(self._state, path)

    def apply(self, change: SchemaChange) -> None:
        """Apply one change; raises UserError/NotFoundError/AlreadyExistsError/
        ValidationError naming the column and the rule."""
        state = self._state
        if isinstance(change, AddColumn):
            _add_column(state, change)
        elif isinstance(change, DeleteColumn):
            _delete_column(state, change)
        elif isinstance(change, RenameColumn):
            _rename_column(state, change)
        elif isinstance(change, UpdateColumn):
            _update_column(state, change)
        elif isinstance(change, SetColumnDefault):
            _set_default(state, change)
        elif isinstance(change, MoveColumn):
            found, full = _changed_column(state, change.path)
            _move(state, found, full, change.placement)
        elif isinstance(change, SetIdentifierFields):
            state.identifiers = _unique([tree.resolve(state.schema, p).field_id for p in change.columns])
        elif isinstance(change, RemoveIdentifierFields):
            _remove_identifier_fields(state, change)
        else:
            assert_never(change)

    def result(self) -> tuple[Schema, int]:
        """The evolved schema and the new ``last-column-id``, after the checks on the
        whole schema. The schema keeps the base's ``schema_id``: the metadata builder
        gives a changed schema its new id."""
        state = self._state
        result = Schema(state.schema.fields, self._base.schema_id, tuple(sorted(state.identifiers)))
        for field_id in result.identifier_field_ids:
            validate_identifier_field(result, field_id)
        check_unique_names(result)
        check_references(self._base, result, self._spec, self._sort_order)
        return result, state.last_column_id


def apply_schema_changes(
    schema: Schema,
    last_column_id: int,
    changes: Sequence[SchemaChange],
    format_version: int,
    *,
    spec: PartitionSpec | None = None,
    sort_order: SortOrder | None = None,
) -> tuple[Schema, int]:
    """The schema after ``changes`` and the new ``last-column-id`` (:class:`SchemaUpdate`
    applying each change in turn)."""
    update = SchemaUpdate(schema, last_column_id, format_version, spec=spec, sort_order=sort_order)
    for change in changes:
        update.apply(change)
    return update.result()


def _unique(ids: list[int]) -> list[int]:
    return list(dict.fromkeys(ids))


# -- ADD COLUMN -----------------------------------------------------------------------------


def _add_column(state: _State, change: AddColumn) -> None:
    name = change.path[-1]
    full = tree.display(change.path)
    owner_id = _struct_owner(state.schema, change.path[:-1])
    siblings = tree.struct_fields(state.schema, owner_id)
    _check_new_name(siblings, name, full, "add")
    for path, f in tree.walk((NestedField(0, name, change.type),)):
        _check_type_version(path, f.field_type, state.format_version)
    default = change.default if change.has_default else None
    if change.has_default:
        _check_default(full, change.type, default, state.format_version)
    if change.required and default is None:
        raise UserError(
            f"cannot add required column {full} without a default: existing rows have no value for it "
            "(add it as nullable, or with a DEFAULT in a format-version 3 table)"
        )
    new_id = state.next_id()
    new = NestedField(
        new_id,
        name,
        tree.assign_fresh_ids(change.type, state.next_id),
        change.required,
        change.doc,
        initial_default=default,
        write_default=default,
    )
    placement = change.placement

    def add(fields: tuple[NestedField, ...]) -> tuple[NestedField, ...]:
        return _place((*fields, new), new_id, placement, full)

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
    fields: tuple[NestedField, ...], field_id: int, placement: Placement | None, full: str
) -> tuple[NestedField, ...]:
    """``fields`` with ``field_id`` moved first or after a sibling (unchanged if None)."""
    if placement is None:
        return fields
    moving = next(f for f in fields if f.field_id == field_id)
    rest = [f for f in fields if f.field_id != field_id]
    if isinstance(placement, MoveFirst):
        return (moving, *rest)
    after = placement.sibling
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


def _delete_column(state: _State, change: DeleteColumn) -> None:
    found = tree.find(state.schema, change.path)
    if found is None:
        if change.if_exists:
            return
        raise NotFoundError(f"cannot drop column {tree.display(change.path)!r}: no such column")
    full = state.schema.column_name(found.field_id) or tree.display(change.path)
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


def _rename_column(state: _State, change: RenameColumn) -> None:
    found = tree.resolve(state.schema, change.path)
    full = state.schema.column_name(found.field_id) or tree.display(change.path)
    if tree.is_collection_child(state.schema, found.field_id):
        raise UserError(f"cannot rename {full}: list elements and map keys/values have fixed names")
    if change.new_name == found.name:
        return
    parent = state.schema.parent_id(found.field_id)
    siblings = [f for f in tree.struct_fields(state.schema, parent) if f.field_id != found.field_id]
    _check_new_name(tuple(siblings), change.new_name, full, "rename")
    state.set_fields(
        tree.update_field(state.schema.fields, found.field_id, lambda f: replace(f, name=change.new_name))
    )


# -- UPDATE COLUMN / SET DEFAULT / MOVE ----------------------------------------------------


def _changed_column(state: _State, path: ColumnPath) -> tuple[NestedField, str]:
    found = tree.resolve(state.schema, path)
    full = state.schema.column_name(found.field_id) or tree.display(path)
    holder = tree.container(state.schema, found.field_id)
    if isinstance(holder, MapType) and holder.key_id == found.field_id:
        raise UserError(f"cannot change {full}: map keys cannot be changed")
    return found, full


def _update_column(state: _State, change: UpdateColumn) -> None:
    found, full = _changed_column(state, change.path)
    updated = found
    if change.type is not None and change.type != found.field_type:
        updated = replace(updated, field_type=_promoted(full, found.field_type, change.type, state))
    if change.required is True and not found.required:
        raise UserError(
            f"cannot change column {full} from nullable to NOT NULL: existing rows may hold nulls "
            "(Iceberg refuses optional -> required)"
        )
    if change.required is False and found.required:
        if found.field_id in state.identifiers:
            raise ValidationError(
                f"cannot make {full} nullable: it is an identifier field "
                f"(DROP IDENTIFIER FIELDS {full} first)"
            )
        updated = replace(updated, required=False)
    if change.doc is not None and not tree.is_collection_child(state.schema, found.field_id):
        # list elements and map values have no doc in Iceberg's model: Java accepts the
        # COMMENT and drops it, so it is a no-op here too
        updated = replace(updated, doc=change.doc)
    if updated != found:
        state.set_fields(tree.update_field(state.schema.fields, found.field_id, lambda _f: updated))


def _set_default(state: _State, change: SetColumnDefault) -> None:
    found, full = _changed_column(state, change.path)
    _check_default(full, found.field_type, change.value, state.format_version)
    updated = replace(found, write_default=change.value)
    if updated != found:
        if tree.is_collection_child(state.schema, found.field_id):
            raise UserError(f"cannot set a default on {full}: only struct fields have defaults")
        state.set_fields(tree.update_field(state.schema.fields, found.field_id, lambda _f: updated))


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


def _move(state: _State, found: NestedField, full: str, placement: Placement) -> None:
    if tree.is_collection_child(state.schema, found.field_id):
        raise UserError(f"cannot move {full}: it is a list element or map key/value")
    parent = state.schema.parent_id(found.field_id)
    state.set_fields(
        tree.update_struct(
            state.schema.fields, parent, lambda fields: _place(fields, found.field_id, placement, full)
        )
    )


# -- identifier fields ----------------------------------------------------------------------


def _remove_identifier_fields(state: _State, change: RemoveIdentifierFields) -> None:
    for path in change.columns:
        found = tree.resolve(state.schema, path)
        if found.field_id not in state.identifiers:
            raise UserError(
                f"cannot drop identifier field {tree.display(path)}: it is not an identifier field"
            )
        state.identifiers.remove(found.field_id)
