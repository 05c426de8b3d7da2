"""Evaluate a bound expression on one row: a tuple of values in struct field order.

Used on partition tuples (after projecting a row filter onto the partition struct, see
:mod:`.projection`) and on any struct whose values follow :mod:`iceduck.spec.types`.
The expression is compiled once into nested closures, so evaluating it on thousands of
tuples does not re-walk the tree.

Semantics are SQL's, as the engine that executes the query applies them: a comparison
with a null value is not true (``NOT`` is pushed down first with :func:`rewrite_not`,
so ``NOT (x < 1)`` becomes ``x >= 1`` and is not true for null either). Floats compare
as IEEE 754 numbers (``-0.0 = 0.0``; NaN is neither below, equal to nor above
anything). The one exception is ``NOT NAN``, true for null as in Java's ``Evaluator``,
which only keeps more rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iceduck.errors import ValidationError
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.compile import compile_expression
from iceduck.spec.expressions.predicates import (
    BooleanExpression,
    Op,
    UnboundPredicate,
    rewrite_not,
)

RowPredicate = Callable[[Any], bool]


def compile_row_filter(expr: BooleanExpression) -> RowPredicate:
    """A function ``row -> bool`` deciding whether ``row`` matches the bound ``expr``."""
    return compile_expression(rewrite_not(expr), _leaf, _refusal)


def _refusal(expr: BooleanExpression) -> str:
    if isinstance(expr, UnboundPredicate):
        return f"cannot evaluate unbound predicate {expr}: bind it first"
    return f"cannot evaluate {expr!r}"


def _leaf(pred: BoundPredicate) -> RowPredicate:
    get = pred.ref.getter()
    op, lit = pred.op, pred.literal
    if op is Op.IS_NULL:
        return lambda row: get(row) is None
    if op is Op.NOT_NULL:
        return lambda row: get(row) is not None
    if op is Op.IS_NAN:
        return lambda row: (v := get(row)) is not None and v != v
    if op is Op.NOT_NAN:
        return lambda row: (v := get(row)) is None or v == v
    if op is Op.LT:
        return lambda row: (v := get(row)) is not None and v < lit
    if op is Op.LT_EQ:
        return lambda row: (v := get(row)) is not None and v <= lit
    if op is Op.GT:
        return lambda row: (v := get(row)) is not None and v > lit
    if op is Op.GT_EQ:
        return lambda row: (v := get(row)) is not None and v >= lit
    if op is Op.EQ:
        return lambda row: (v := get(row)) is not None and v == lit
    if op is Op.NOT_EQ:
        return lambda row: (v := get(row)) is not None and v != lit
    if op is Op.STARTS_WITH:
        return lambda row: (v := get(row)) is not None and v.startswith(lit)
    if op is Op.NOT_STARTS_WITH:
        return lambda row: (v := get(row)) is not None and not v.startswith(lit)
    values = pred.literals or frozenset()
    if op is Op.IN:
        return lambda row: get(row) in values
    if op is Op.NOT_IN:
        return lambda row: (v := get(row)) is not None and v not in values
    raise ValidationError(f"unsupported operation {op}")


class RowEvaluator:
    """Evaluates one bound expression on many rows (``evaluator(row)`` or ``.eval(row)``)."""

    def __init__(self, expr: BooleanExpression) -> None:
        self.expr = expr
        self._fn = compile_row_filter(expr)

    def eval(self, row: Any) -> bool:
        return self._fn(row)

    __call__ = eval
