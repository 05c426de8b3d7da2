"""Binding: resolve an expression's column names against a schema and type its literals.

Follows Iceberg Java's ``UnboundPredicate.bind``:

* the name is looked up in the schema (dotted paths into structs; case-insensitively on
  request); an unknown name raises :class:`NotFoundError` naming the column;
* ``IS NULL`` on a field that can never be null (it and all its ancestors are required)
  is ``false``, ``NOT NULL`` is ``true``; on an ``unknown``-typed column (always null)
  it is the other way round;
* ``IS NAN``/``NOT NAN`` need a float or double column, ``STARTS WITH`` a string column
  (otherwise :class:`ValidationError`);
* literals are converted to the field type (:mod:`.literals`); one that falls between
  two values of the type (Java's ``aboveMax``/``belowMin``, or a fraction compared with
  an integer column) becomes the exact equivalent comparison or a constant;
* ``IN`` with a single value becomes ``=`` (``NOT IN``: ``!=``).

Fields inside a list or map cannot be filtered on: a row has no single value for them
(Java binds them without an accessor and then fails at evaluation).
"""

from __future__ import annotations

from typing import Any

from iceduck.errors import NotFoundError, ValidationError
from iceduck.spec.expressions.bound import BoundPredicate, BoundReference, bound_predicate
from iceduck.spec.expressions.literals import Between, convert_literal
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    LiteralPredicate,
    Not,
    Op,
    Or,
    SetPredicate,
    UnboundPredicate,
    and_,
    not_,
    or_,
)
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    DoubleType,
    FloatType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
)


def bind(schema: Schema, expr: BooleanExpression, case_sensitive: bool = True) -> BooleanExpression:
    """``expr`` with every unbound predicate bound to ``schema`` (already bound ones are kept)."""
    if isinstance(expr, UnboundPredicate):
        return bind_predicate(schema, expr, case_sensitive)
    if isinstance(expr, And):
        return and_(bind(schema, expr.left, case_sensitive), bind(schema, expr.right, case_sensitive))
    if isinstance(expr, Or):
        return or_(bind(schema, expr.left, case_sensitive), bind(schema, expr.right, case_sensitive))
    if isinstance(expr, Not):
        return not_(bind(schema, expr.child, case_sensitive))
    if isinstance(expr, AlwaysTrue | AlwaysFalse | BoundPredicate):
        return expr
    raise ValidationError(f"cannot bind {expr!r}: not an expression")


def bind_reference(schema: Schema, name: str, case_sensitive: bool = True) -> tuple[BoundReference, bool]:
    """The reference to column ``name`` and whether it can be null (itself or via a parent)."""
    found = schema.find_field_or_none(name, case_sensitive)
    if found is None:
        raise NotFoundError(f"cannot find column {name!r} in schema {schema.schema_id}")
    located = _locate(schema.fields, found.field_id, ())
    if located is None:
        raise ValidationError(f"cannot filter on {name!r}: it is inside a list or map")
    accessor, nullable = located
    canonical = schema.column_name(found.field_id) or name  # the schema's spelling, whatever the case
    return BoundReference(found, accessor, canonical), nullable


def _locate(
    fields: tuple[NestedField, ...], field_id: int, prefix: tuple[int, ...]
) -> tuple[tuple[int, ...], bool] | None:
    """(positions to the field, whether it or an ancestor is optional); None if not
    reachable through structs only."""
    for pos, f in enumerate(fields):
        if f.field_id == field_id:
            return (*prefix, pos), not f.required
        if isinstance(f.field_type, StructType):
            found = _locate(f.field_type.fields, field_id, (*prefix, pos))
            if found is not None:
                return found[0], found[1] or not f.required
        elif isinstance(f.field_type, ListType | MapType):
            continue
    return None


def bind_predicate(schema: Schema, pred: UnboundPredicate, case_sensitive: bool = True) -> BooleanExpression:
    ref, nullable = bind_reference(schema, pred.term, case_sensitive)
    t = ref.field_type
    op = pred.op
    if op.is_unary:
        return _bind_unary(op, ref, t, nullable)
    if isinstance(t, UnknownType):
        # every value of an unknown column is null: no comparison can be true
        return AlwaysFalse()
    if op in (Op.STARTS_WITH, Op.NOT_STARTS_WITH):
        if not isinstance(t, StringType):
            raise ValidationError(f"{op.value} needs a string column, {pred.term!r} is {t}")
    if isinstance(pred, SetPredicate):
        return _bind_set(op, ref, t, pred.literals, nullable)
    assert isinstance(pred, LiteralPredicate)
    value = convert_literal(pred.literal, t)
    if isinstance(value, Between):
        return _between(op, ref, value, nullable)
    return BoundPredicate(op, ref, value)


def _bind_unary(op: Op, ref: BoundReference, t: IcebergType, nullable: bool) -> BooleanExpression:
    if op in (Op.IS_NAN, Op.NOT_NAN):
        if not isinstance(t, FloatType | DoubleType):
            raise ValidationError(f"{op.value} needs a float or double column, {ref.name!r} is {t}")
        return BoundPredicate(op, ref)
    if isinstance(t, UnknownType):
        return AlwaysTrue() if op is Op.IS_NULL else AlwaysFalse()
    if not nullable:
        return AlwaysFalse() if op is Op.IS_NULL else AlwaysTrue()
    return BoundPredicate(op, ref)


def _between(op: Op, ref: BoundReference, value: Between, nullable: bool) -> BooleanExpression:
    """The exact equivalent of comparing with a literal strictly between two adjacent values.

    ``x < v`` and ``x <= v`` both mean ``x <= below``; ``x > v``/``x >= v`` mean ``x >=
    above``; no value equals ``v``, so ``x = v`` is false and ``x != v`` holds for every
    non-null ``x`` (Java returns ``true``, which also keeps nulls).
    """
    if op in (Op.LT, Op.LT_EQ):
        return AlwaysFalse() if value.below is None else BoundPredicate(Op.LT_EQ, ref, value.below)
    if op in (Op.GT, Op.GT_EQ):
        return AlwaysFalse() if value.above is None else BoundPredicate(Op.GT_EQ, ref, value.above)
    if op is Op.EQ:
        return AlwaysFalse()
    if op is Op.NOT_EQ:
        return BoundPredicate(Op.NOT_NULL, ref) if nullable else AlwaysTrue()
    raise ValidationError(f"{op.value} cannot take {value}")


def _bind_set(
    op: Op, ref: BoundReference, t: IcebergType, literals: frozenset[Any], nullable: bool
) -> BooleanExpression:
    converted = []
    for literal in literals:
        value = convert_literal(literal, t)
        if not isinstance(value, Between):  # no value of the column can equal it: drop it
            converted.append(value)
    if not converted and op is Op.NOT_IN and not nullable:
        return AlwaysTrue()
    return bound_predicate(op, ref, converted)
