"""Evaluating bound expressions on rows (tuples), with SQL's null semantics."""

from __future__ import annotations

import math
from typing import Any

import pytest

from iceduck.errors import ValidationError
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import (
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
    Or,
    StartsWith,
)
from iceduck.spec.expressions.row_evaluator import RowEvaluator
from iceduck.spec.schema import Schema
from iceduck.spec.types import DoubleType, IntegerType, NestedField, StringType, StructType

SCHEMA = Schema(
    (
        NestedField(1, "x", IntegerType()),
        NestedField(2, "s", StringType()),
        NestedField(3, "f", DoubleType()),
        NestedField(4, "st", StructType((NestedField(5, "inner", IntegerType()),))),
    )
)


def ev(expr: Any, row: tuple[Any, ...]) -> bool:
    return RowEvaluator(bind(SCHEMA, expr)).eval(row)


ROW = (7, "iceberg", 1.5, (3,))
NULLS = (None, None, None, None)


@pytest.mark.parametrize(
    "expr, on_row, on_nulls",
    [
        (IsNull("x"), False, True),
        (NotNull("x"), True, False),
        (LessThan("x", 8), True, False),
        (LessThanOrEqual("x", 7), True, False),
        (GreaterThan("x", 7), False, False),
        (GreaterThanOrEqual("x", 7), True, False),
        (EqualTo("x", 7), True, False),
        (NotEqualTo("x", 7), False, False),
        (Not(EqualTo("x", 7)), False, False),  # NOT is pushed down: still not true for null
        (Not(LessThan("x", 1)), True, False),
        (In("x", [1, 7]), True, False),
        (NotIn("x", [1, 2]), True, False),
        (StartsWith("s", "ice"), True, False),
        (NotStartsWith("s", "ice"), False, False),
        (EqualTo("st.inner", 3), True, False),
        (IsNull("st.inner"), False, True),  # a null parent makes the child null
        (IsNaN("f"), False, False),
        (NotNaN("f"), True, True),  # as Java's Evaluator: NOT NAN keeps nulls
        (And(EqualTo("x", 7), StartsWith("s", "i")), True, False),
        (Or(EqualTo("x", 1), IsNull("s")), False, True),
    ],
    ids=str,
)
def test_predicates(expr: Any, on_row: bool, on_nulls: bool) -> None:
    assert ev(expr, ROW) is on_row
    assert ev(expr, NULLS) is on_nulls


def test_nan_values() -> None:
    row = (1, "a", math.nan, None)
    assert ev(IsNaN("f"), row) and not ev(NotNaN("f"), row)
    for expr in (LessThan("f", 1.0), GreaterThan("f", 1.0), EqualTo("f", 1.0)):
        assert ev(expr, row) is False


def test_unbound_expressions_are_refused() -> None:
    with pytest.raises(ValidationError, match="bind"):
        RowEvaluator(EqualTo("x", 1))
