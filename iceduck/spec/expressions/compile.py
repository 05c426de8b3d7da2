"""Compile a bound, NOT-free boolean expression into nested closures, once.

Every evaluator of a filter -- on rows (:mod:`.row_evaluator`), partition summaries
(:mod:`.manifest_evaluator`), file metrics (:mod:`.metrics_evaluator`,
:mod:`.strict_metrics`) and partition tuples for residuals (:mod:`.residuals`) -- runs one
filter over thousands of inputs during planning, so each turns the tree into closures first
instead of walking it per input. They differ only in how a predicate is tested (the *leaf*)
and in what ``true``, ``false``, ``AND`` and ``OR`` produce (the :class:`Logic`): booleans,
short-circuited, for the four tests; simplified expressions for residuals. This module is
the walk they share.

``NOT`` is not compiled: each caller first rewrites it away with
:func:`~iceduck.spec.expressions.predicates.rewrite_not` (negating predicates), because
an inclusive or strict evaluator cannot negate its own answer ("may match" negated is not
"may not match"). A ``NOT``, like an unbound predicate, is refused with the caller's message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from iceduck.errors import ValidationError
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.predicates import AlwaysFalse, AlwaysTrue, And, BooleanExpression, Or

R = TypeVar("R")
#: a compiled expression: applied to one input (row, file, summaries, partition tuple)
Compiled = Callable[[Any], R]


@dataclass(frozen=True)
class Logic(Generic[R]):
    """What the constants and connectives of an expression compile to."""

    #: ``AlwaysTrue()`` or ``AlwaysFalse()`` -> the closure returning its value
    constant: Callable[[AlwaysTrue | AlwaysFalse], Compiled[R]]
    #: compiled left and right -> compiled ``left AND right``
    both: Callable[[Compiled[R], Compiled[R]], Compiled[R]]
    #: compiled left and right -> compiled ``left OR right``
    either: Callable[[Compiled[R], Compiled[R]], Compiled[R]]


def _always_true(_input: Any) -> bool:
    return True


def _always_false(_input: Any) -> bool:
    return False


def _boolean_constant(expr: AlwaysTrue | AlwaysFalse) -> Compiled[bool]:
    return _always_true if isinstance(expr, AlwaysTrue) else _always_false


def _boolean_and(left: Compiled[bool], right: Compiled[bool]) -> Compiled[bool]:
    return lambda x: left(x) and right(x)


def _boolean_or(left: Compiled[bool], right: Compiled[bool]) -> Compiled[bool]:
    return lambda x: left(x) or right(x)


#: tests: ``true``/``false``, and ``AND``/``OR`` short-circuited (the right side is not
#: evaluated when the left decides, as in the closures each evaluator used to build)
BOOLEAN: Logic[bool] = Logic(_boolean_constant, _boolean_and, _boolean_or)


def compile_expression(
    expr: BooleanExpression,
    leaf: Callable[[BoundPredicate], Compiled[R]],
    refuse: Callable[[BooleanExpression], str],
    logic: Logic[R] = BOOLEAN,  # type: ignore[assignment]  # R is bool for the default
) -> Compiled[R]:
    """``expr`` as one closure: predicates through ``leaf``, the rest through ``logic``.

    Anything else (``NOT``, unbound predicates) raises :class:`ValidationError` with the
    message ``refuse(node)`` (each evaluator names what it evaluates on)."""

    def walk(node: BooleanExpression) -> Compiled[R]:
        if isinstance(node, BoundPredicate):
            return leaf(node)
        if isinstance(node, And):
            return logic.both(walk(node.left), walk(node.right))
        if isinstance(node, Or):
            return logic.either(walk(node.left), walk(node.right))
        if isinstance(node, AlwaysTrue | AlwaysFalse):
            return logic.constant(node)
        raise ValidationError(refuse(node))

    return walk(expr)
