"""Row filters before binding: boolean expressions over column names and Python literals.

The model follows Iceberg's expression API (Java ``Expressions``, pyiceberg
``pyiceberg.expressions``): ``AlwaysTrue``/``AlwaysFalse``, ``And``/``Or``/``Not`` and
predicates over one column reference (a dotted name such as ``"location.lat"``).
Literals are plain Python values in the representation of :mod:`iceduck.spec.types`
(ints for dates and timestamps, ``Decimal``, ``bytes``, ``uuid.UUID``, ...) or, for
convenience, ISO strings and ``datetime`` objects; they are converted to the column's
type when the expression is bound to a schema (:mod:`.binding`).

Expressions are frozen dataclasses, equal and hashable by value. The classes construct
exactly what they are given; the functions :func:`and_`, :func:`or_` and :func:`not_`
simplify on the way (``and_(a, AlwaysTrue()) -> a``), as Java's ``Expressions`` does.
:func:`rewrite_not` pushes every ``Not`` down to the predicates, which projections and
evaluators require: "projections assume that there are no NOT nodes in the expression
tree" (Java ``Projections``).
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any, ClassVar

from iceduck.errors import ValidationError


class Op(Enum):
    """The operation of a predicate, with its negation (``NOT (a < 1)`` is ``a >= 1``)."""

    IS_NULL = "is_null"
    NOT_NULL = "not_null"
    IS_NAN = "is_nan"
    NOT_NAN = "not_nan"
    LT = "<"
    LT_EQ = "<="
    GT = ">"
    GT_EQ = ">="
    EQ = "=="
    NOT_EQ = "!="
    IN = "in"
    NOT_IN = "not in"
    STARTS_WITH = "startsWith"
    NOT_STARTS_WITH = "notStartsWith"

    @property
    def negated(self) -> Op:
        return _NEGATIONS[self]

    @property
    def is_unary(self) -> bool:
        return self in _UNARY

    @property
    def is_set(self) -> bool:
        return self is Op.IN or self is Op.NOT_IN


_UNARY = frozenset({Op.IS_NULL, Op.NOT_NULL, Op.IS_NAN, Op.NOT_NAN})
_PAIRS = [
    (Op.IS_NULL, Op.NOT_NULL),
    (Op.IS_NAN, Op.NOT_NAN),
    (Op.LT, Op.GT_EQ),
    (Op.LT_EQ, Op.GT),
    (Op.EQ, Op.NOT_EQ),
    (Op.IN, Op.NOT_IN),
    (Op.STARTS_WITH, Op.NOT_STARTS_WITH),
]
_NEGATIONS = {a: b for a, b in _PAIRS} | {b: a for a, b in _PAIRS}

#: Python types accepted as literals (checked once, at construction).
_LITERAL_TYPES = (bool, int, float, Decimal, str, bytes, uuid.UUID, dt.date, dt.time)


class BooleanExpression:
    """Base of every expression, bound or unbound."""

    def negate(self) -> BooleanExpression:
        """The expression that is true exactly when this one is false (for non-null input)."""
        raise NotImplementedError

    def __and__(self, other: BooleanExpression) -> BooleanExpression:
        return and_(self, other)

    def __or__(self, other: BooleanExpression) -> BooleanExpression:
        return or_(self, other)

    def __invert__(self) -> BooleanExpression:
        return not_(self)


@dataclass(frozen=True)
class AlwaysTrue(BooleanExpression):
    def negate(self) -> BooleanExpression:
        return AlwaysFalse()

    def __str__(self) -> str:
        return "true"


@dataclass(frozen=True)
class AlwaysFalse(BooleanExpression):
    def negate(self) -> BooleanExpression:
        return AlwaysTrue()

    def __str__(self) -> str:
        return "false"


@dataclass(frozen=True)
class And(BooleanExpression):
    left: BooleanExpression
    right: BooleanExpression

    def negate(self) -> BooleanExpression:
        return Or(self.left.negate(), self.right.negate())

    def __str__(self) -> str:
        return f"({self.left} and {self.right})"


@dataclass(frozen=True)
class Or(BooleanExpression):
    left: BooleanExpression
    right: BooleanExpression

    def negate(self) -> BooleanExpression:
        return And(self.left.negate(), self.right.negate())

    def __str__(self) -> str:
        return f"({self.left} or {self.right})"


@dataclass(frozen=True)
class Not(BooleanExpression):
    child: BooleanExpression

    def negate(self) -> BooleanExpression:
        return self.child

    def __str__(self) -> str:
        return f"not({self.child})"


def and_(*exprs: BooleanExpression) -> BooleanExpression:
    """Conjunction, simplified: any ``AlwaysFalse`` wins, ``AlwaysTrue`` operands drop out."""
    result: BooleanExpression = AlwaysTrue()
    for expr in exprs:
        if isinstance(expr, AlwaysFalse):
            return expr
        if isinstance(expr, AlwaysTrue):
            continue
        result = expr if isinstance(result, AlwaysTrue) else And(result, expr)
    return result


def or_(*exprs: BooleanExpression) -> BooleanExpression:
    """Disjunction, simplified: any ``AlwaysTrue`` wins, ``AlwaysFalse`` operands drop out."""
    result: BooleanExpression = AlwaysFalse()
    for expr in exprs:
        if isinstance(expr, AlwaysTrue):
            return expr
        if isinstance(expr, AlwaysFalse):
            continue
        result = expr if isinstance(result, AlwaysFalse) else Or(result, expr)
    return result


def not_(expr: BooleanExpression) -> BooleanExpression:
    """Negation, simplified: constants flip and a double ``Not`` cancels."""
    if isinstance(expr, AlwaysTrue | AlwaysFalse | Not):
        return expr.negate()
    return Not(expr)


def rewrite_not(expr: BooleanExpression) -> BooleanExpression:
    """Push every ``Not`` down to the predicates (De Morgan), negating their operations.

    Needed before projection and evaluation: a projection that cannot translate a
    predicate replaces it by ``AlwaysTrue``, which is only safe when no ``Not`` above it
    would turn that into ``AlwaysFalse``.
    """
    if isinstance(expr, Not):
        return rewrite_not(expr.child.negate())
    if isinstance(expr, And):
        return and_(rewrite_not(expr.left), rewrite_not(expr.right))
    if isinstance(expr, Or):
        return or_(rewrite_not(expr.left), rewrite_not(expr.right))
    return expr


def _check_literal(value: Any) -> Any:
    """Reject what no column type can compare with: null, NaN, and unknown Python types.

    Java: "Cannot create expression literal from NaN" -- comparisons with NaN are never
    true; ``IsNaN``/``NotNaN`` express the test instead.
    """
    if value is None:
        raise ValidationError("a predicate literal cannot be null; use IsNull/NotNull")
    if isinstance(value, bytearray | memoryview):
        value = bytes(value)
    if not isinstance(value, _LITERAL_TYPES):
        raise ValidationError(f"unsupported literal {value!r} of type {type(value).__name__}")
    if isinstance(value, float) and math.isnan(value):
        raise ValidationError("a predicate literal cannot be NaN; use IsNaN/NotNaN")
    return value


def format_literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex().upper()}'"
    return str(value)


def sorted_for_display(values: Iterable[Any]) -> list[Any]:
    items = list(values)
    try:
        return sorted(items)
    except TypeError:  # mixed Python types: keep a stable, readable order
        return sorted(items, key=repr)


class UnboundPredicate(BooleanExpression):
    """A predicate over a column named by its dotted path, not yet resolved to a field id."""

    op: ClassVar[Op]
    term: str


@dataclass(frozen=True)
class UnaryPredicate(UnboundPredicate):
    term: str

    def negate(self) -> BooleanExpression:
        return _CLASSES[self.op.negated](self.term)  # type: ignore[call-arg]

    def __str__(self) -> str:
        return f"{self.op.value}({self.term})"


@dataclass(frozen=True)
class LiteralPredicate(UnboundPredicate):
    term: str
    literal: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "literal", _check_literal(self.literal))

    def negate(self) -> BooleanExpression:
        return _CLASSES[self.op.negated](self.term, self.literal)  # type: ignore[call-arg]

    def __str__(self) -> str:
        return f"{self.term} {self.op.value} {format_literal(self.literal)}"


@dataclass(frozen=True)
class SetPredicate(UnboundPredicate):
    """``In``/``NotIn``; the literals may be given as any iterable and are kept as a frozenset."""

    term: str
    literals: frozenset[Any]

    def __post_init__(self) -> None:
        values = self.literals
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise ValidationError(f"{type(self).__name__} needs a collection of literals, got {values!r}")
        object.__setattr__(self, "literals", frozenset(_check_literal(v) for v in values))

    def negate(self) -> BooleanExpression:
        return _CLASSES[self.op.negated](self.term, self.literals)  # type: ignore[call-arg]

    def __str__(self) -> str:
        shown = ", ".join(format_literal(v) for v in sorted_for_display(self.literals))
        return f"{self.term} {self.op.value} ({shown})"


class IsNull(UnaryPredicate):
    op = Op.IS_NULL


class NotNull(UnaryPredicate):
    op = Op.NOT_NULL


class IsNaN(UnaryPredicate):
    op = Op.IS_NAN


class NotNaN(UnaryPredicate):
    op = Op.NOT_NAN


class LessThan(LiteralPredicate):
    op = Op.LT


class LessThanOrEqual(LiteralPredicate):
    op = Op.LT_EQ


class GreaterThan(LiteralPredicate):
    op = Op.GT


class GreaterThanOrEqual(LiteralPredicate):
    op = Op.GT_EQ


class EqualTo(LiteralPredicate):
    op = Op.EQ


class NotEqualTo(LiteralPredicate):
    op = Op.NOT_EQ


class StartsWith(LiteralPredicate):
    op = Op.STARTS_WITH


class NotStartsWith(LiteralPredicate):
    op = Op.NOT_STARTS_WITH


class In(SetPredicate):
    op = Op.IN


class NotIn(SetPredicate):
    op = Op.NOT_IN


_CLASSES: dict[Op, type[UnboundPredicate]] = {
    cls.op: cls
    for cls in (
        IsNull,
        NotNull,
        IsNaN,
        NotNaN,
        LessThan,
        LessThanOrEqual,
        GreaterThan,
        GreaterThanOrEqual,
        EqualTo,
        NotEqualTo,
        StartsWith,
        NotStartsWith,
        In,
        NotIn,
    )
}


def predicate(op: Op, term: str, value: Any = None) -> UnboundPredicate:
    """The unbound predicate of ``op`` on ``term``: ``value`` is the literal, or the
    collection of literals for ``IN``/``NOT IN``, and is ignored for unary operations."""
    cls = _CLASSES[op]
    if op.is_unary:
        return cls(term)  # type: ignore[call-arg]
    return cls(term, value)  # type: ignore[call-arg]
