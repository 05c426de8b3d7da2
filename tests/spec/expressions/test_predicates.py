"""The unbound expression model: construction, simplification, negation, NOT rewriting."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from iceduck.errors import ValidationError
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Op,
    Or,
    StartsWith,
    and_,
    not_,
    or_,
    predicate,
    rewrite_not,
)

A = LessThan("a", 1)
B = EqualTo("b", "x")


def test_simplifying_constructors() -> None:
    assert and_(A, AlwaysTrue()) == A
    assert and_(AlwaysTrue(), A) == A
    assert and_(A, AlwaysFalse()) == AlwaysFalse()
    assert and_() == AlwaysTrue()
    assert and_(A, B, A) == And(And(A, B), A)
    assert or_(A, AlwaysFalse()) == A
    assert or_(A, AlwaysTrue()) == AlwaysTrue()
    assert or_() == AlwaysFalse()
    assert not_(AlwaysTrue()) == AlwaysFalse()
    assert not_(Not(A)) == A
    assert not_(A) == Not(A)
    assert (A & B) == And(A, B) and (A | B) == Or(A, B) and ~A == Not(A)


@pytest.mark.parametrize(
    "pred, negated",
    [
        (IsNull("a"), NotNull("a")),
        (IsNaN("a"), NotNaN("a")),
        (LessThan("a", 1), GreaterThanOrEqual("a", 1)),
        (LessThanOrEqual("a", 1), GreaterThan("a", 1)),
        (EqualTo("a", 1), NotEqualTo("a", 1)),
        (In("a", [1, 2]), NotIn("a", [1, 2])),
        (StartsWith("a", "x"), NotStartsWith("a", "x")),
    ],
    ids=str,
)
def test_negate_round_trips(pred: object, negated: object) -> None:
    assert pred.negate() == negated  # type: ignore[attr-defined]
    assert negated.negate() == pred  # type: ignore[attr-defined]


def test_rewrite_not_pushes_negation_to_leaves() -> None:
    expr = Not(And(LessThan("a", 1), Or(IsNull("b"), Not(StartsWith("c", "p")))))
    assert rewrite_not(expr) == Or(GreaterThanOrEqual("a", 1), And(NotNull("b"), StartsWith("c", "p")))
    assert rewrite_not(Not(AlwaysTrue())) == AlwaysFalse()
    assert rewrite_not(And(Not(AlwaysFalse()), A)) == A


def test_equality_and_hashing_by_value() -> None:
    assert In("a", [1, 2, 2]) == In("a", (2, 1))
    assert len({EqualTo("a", 1), EqualTo("a", 1), NotEqualTo("a", 1)}) == 2
    assert IsNull("a") != NotNull("a")


def test_readable_str_and_repr() -> None:
    assert (
        str(And(LessThan("ts", 5), Not(StartsWith("s", "it's")))) == "(ts < 5 and not(s startsWith 'it''s'))"
    )
    assert str(In("x", [3, 1, 2])) == "x in (1, 2, 3)"
    assert str(IsNull("x")) == "is_null(x)"
    assert str(EqualTo("b", b"\x01\xff")) == "b == X'01FF'"
    assert repr(EqualTo("a", 1)) == "EqualTo(term='a', literal=1)"
    assert repr(AlwaysTrue()) == "AlwaysTrue()"


@pytest.mark.parametrize("bad", [None, math.nan, object(), [1]])
def test_bad_literals_are_rejected(bad: object) -> None:
    with pytest.raises(ValidationError):
        EqualTo("a", bad)


def test_in_needs_a_collection_without_nan() -> None:
    with pytest.raises(ValidationError):
        In("a", "abc")
    with pytest.raises(ValidationError):
        In("a", [1.0, math.nan])


def test_predicate_factory() -> None:
    assert predicate(Op.LT, "a", 1) == LessThan("a", 1)
    assert predicate(Op.IS_NULL, "a") == IsNull("a")
    assert predicate(Op.NOT_IN, "a", [Decimal("1.5")]) == NotIn("a", [Decimal("1.5")])
    assert bytearray(b"ab") and EqualTo("a", bytearray(b"ab")).literal == b"ab"
