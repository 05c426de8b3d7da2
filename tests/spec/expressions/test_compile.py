"""The boolean-expression compiler every evaluator shares."""

from __future__ import annotations

from typing import Any

import pytest

from iceduck.errors import ValidationError
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.compile import Logic, compile_expression
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    Not,
    Or,
)
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField

SCHEMA = Schema((NestedField(1, "a", LongType()), NestedField(2, "b", LongType())))


def bound(expr: BooleanExpression) -> BooleanExpression:
    return bind(SCHEMA, expr, True)


def value_of(pred: BoundPredicate) -> Any:
    """A leaf over dicts {name: value}, recording which predicates ran."""
    name, literal = pred.ref.field.name, pred.literal
    if pred.op.name == "EQ":
        return lambda row: row.setdefault("ran", []).append(name) or row[name] == literal
    return lambda row: row.setdefault("ran", []).append(name) or row[name] > literal


def refuse(expr: BooleanExpression) -> str:
    return f"refused {expr}"


def test_and_or_and_constants_compile_to_short_circuited_tests() -> None:
    expr = bound(Or(And(EqualTo("a", 1), GreaterThan("b", 5)), AlwaysFalse()))
    test = compile_expression(expr, value_of, refuse)
    assert test({"a": 1, "b": 6}) is True
    row: dict[str, Any] = {"a": 2, "b": 6}
    assert test(row) is False and row["ran"] == ["a"]  # AND stopped at its left side
    assert compile_expression(AlwaysTrue(), value_of, refuse)({}) is True
    assert compile_expression(And(AlwaysTrue(), AlwaysFalse()), value_of, refuse)({}) is False


def test_not_and_unbound_predicates_are_refused_with_the_callers_message() -> None:
    with pytest.raises(ValidationError, match=r"refused not\(a == 1\)"):
        compile_expression(Not(bound(EqualTo("a", 1))), value_of, refuse)
    with pytest.raises(ValidationError, match="refused a == 1"):
        compile_expression(EqualTo("a", 1), value_of, refuse)


def test_another_logic_builds_other_values() -> None:
    """Residuals combine expressions instead of booleans: the leaf and the logic decide."""
    text: Logic[str] = Logic(
        lambda e: lambda _x: "T" if isinstance(e, AlwaysTrue) else "F",
        lambda left, right: lambda x: f"({left(x)} & {right(x)})",
        lambda left, right: lambda x: f"({left(x)} | {right(x)})",
    )
    expr = Or(And(bound(EqualTo("a", 1)), AlwaysTrue()), bound(GreaterThan("b", 2)))
    compiled = compile_expression(expr, lambda p: lambda x: f"{p.ref.field.name}@{x}", refuse, text)
    assert compiled(7) == "((a@7 & T) | b@7)"
