"""ALTER TABLE and CREATE TABLE statements as the change requests of :mod:`iceduck.txn.change_requests`.

The evolution rules in :mod:`iceduck.txn` know nothing of SQL; this module is where a
statement's pieces become their requests:

* ``ALTER COLUMN c TYPE t SET DEFAULT v FIRST`` is three requests -- update the column,
  set its default, move it -- in that order, the order of Java's checks. ``SET DEFAULT``
  arrives as the literal as written (the parser does not know the column), so it is typed
  here against the column as the earlier requests left it
  (:func:`iceduck.sql.ddl_terms.typed_default`); ``ADD COLUMN ... DEFAULT v`` the parser
  has already typed.
* ``REPLACE PARTITION FIELD old WITH new`` is a removal then an addition, which is what
  Java's ``ReplacePartitionField`` does.
* Spark's WRITE clause replaces the sort order and sets ``write.distribution-mode``:
  ``range`` for ORDERED BY, ``hash`` for DISTRIBUTED BY PARTITION, ``none`` for UNORDERED,
  unchanged for LOCALLY ORDERED BY (Iceberg Spark's ``SetWriteDistributionAndOrdering``,
  checked against Spark in tests/interop/test_txn_evolution_spark.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortOrder
from iceduck.spec.types import NestedField
from iceduck.sql import statements as st
from iceduck.sql.ddl_terms import typed_default
from iceduck.sql.literals import SqlLiteral
from iceduck.txn import change_requests as ch
from iceduck.txn.schema_update import SchemaUpdate

#: the ALTER TABLE actions that change the schema
SCHEMA_ACTIONS = (
    st.AddColumn,
    st.DropColumn,
    st.RenameColumn,
    st.AlterColumn,
    st.SetIdentifierFields,
    st.DropIdentifierFields,
)
#: the ALTER TABLE actions that change the partition spec
SPEC_ACTIONS = (st.AddPartitionField, st.DropPartitionField, st.ReplacePartitionField)


def evolve_schema(
    schema: Schema,
    last_column_id: int,
    actions: Sequence[st.AlterAction],
    format_version: int,
    *,
    spec: PartitionSpec | None = None,
    sort_order: SortOrder | None = None,
) -> tuple[Schema, int]:
    """The schema after the schema actions in ``actions`` (others are skipped) and the new
    ``last-column-id``; see :class:`iceduck.txn.schema_update.SchemaUpdate` for the
    arguments and the rules."""
    update = SchemaUpdate(schema, last_column_id, format_version, spec=spec, sort_order=sort_order)
    for action in actions:
        if isinstance(action, st.AlterColumn):
            _alter_column(update, action)
        elif isinstance(action, SCHEMA_ACTIONS):
            update.apply(_schema_change(action))
    return update.result()


def _schema_change(
    action: st.AddColumn | st.DropColumn | st.RenameColumn | st.SetIdentifierFields | st.DropIdentifierFields,
) -> ch.SchemaChange:
    if isinstance(action, st.AddColumn):
        column = action.column
        return ch.AddColumn(
            action.path or (column.name,),
            column.type,
            column.required,
            column.comment,
            column.default,
            column.has_default,
            None if action.position is None else _placement(action.position),
        )
    if isinstance(action, st.DropColumn):
        return ch.DeleteColumn(action.path, action.if_exists)
    if isinstance(action, st.RenameColumn):
        return ch.RenameColumn(action.path, action.new_name)
    if isinstance(action, st.SetIdentifierFields):
        return ch.SetIdentifierFields(action.columns)
    return ch.RemoveIdentifierFields(action.columns)


def _alter_column(update: SchemaUpdate, action: st.AlterColumn) -> None:
    """One ALTER COLUMN clause as up to three requests, applied here rather than returned:
    the default can only be typed once the type change before it has been applied."""
    if action.type is not None or action.required is not None or action.comment is not None:
        update.apply(ch.UpdateColumn(action.path, action.type, action.required, action.comment))
    if action.has_default:
        column, full = update.column(action.path)
        update.apply(ch.SetColumnDefault(action.path, _typed(action.default, full, column)))
    if action.position is not None:
        update.apply(ch.MoveColumn(action.path, _placement(action.position)))


def _typed(value: Any, full: str, column: NestedField) -> Any:
    """SET DEFAULT's literal as a value of the column's type (a value that is not a
    literal is taken as already typed)."""
    if isinstance(value, SqlLiteral):
        return typed_default(value, full, column.field_type)
    return value


def _placement(position: st.ColumnPosition) -> ch.Placement:
    """FIRST / AFTER x as a placement."""
    if position.kind is st.Position.FIRST:
        return ch.MoveFirst()
    return ch.MoveAfter(position.after or "")


# -- partition spec and sort order ----------------------------------------------------------


def partition_terms(terms: Sequence[st.PartitionTerm]) -> tuple[ch.PartitionTerm, ...]:
    """PARTITIONED BY terms (CREATE TABLE) as unbound partition fields."""
    return tuple(_partition_term(t) for t in terms)


def _partition_term(term: st.PartitionTerm) -> ch.PartitionTerm:
    return ch.PartitionTerm(term.transform, term.source, term.name)


def spec_changes(actions: Sequence[st.AlterAction]) -> tuple[ch.SpecChange, ...]:
    """The partition actions of ``actions`` (others are skipped) as spec changes, in order."""
    out: list[ch.SpecChange] = []
    for action in actions:
        if isinstance(action, st.AddPartitionField):
            out.append(ch.AddPartitionField(_partition_term(action.term)))
        elif isinstance(action, st.DropPartitionField):
            out.append(_removal(action))
        elif isinstance(action, st.ReplacePartitionField):
            out.extend((_removal(action.old), ch.AddPartitionField(_partition_term(action.new))))
    return tuple(out)


def _removal(action: st.DropPartitionField) -> ch.RemovePartitionField:
    term = None if action.term is None else _partition_term(action.term)
    return ch.RemovePartitionField(term, action.field_name)


def sort_terms(terms: Sequence[st.SortTerm]) -> tuple[ch.SortTerm, ...]:
    """ORDERED BY terms (CREATE TABLE, WRITE ORDERED BY) as unbound sort fields."""
    return tuple(ch.SortTerm(t.transform, t.source, t.direction, t.null_order) for t in terms)


def distribution_mode(order: st.WriteOrder) -> str | None:
    """The ``write.distribution-mode`` Spark stores for this WRITE clause (None: leave
    the property as it is)."""
    if order.distributed_by_partition:
        return "hash"
    if not order.terms:
        return "none"
    if order.locally:
        return None
    return "range"
