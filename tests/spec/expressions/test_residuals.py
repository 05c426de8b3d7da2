"""Residual filters per partition (Java ``TestResiduals`` cases)."""

from __future__ import annotations

from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThan,
    In,
    LessThan,
    NotEqualTo,
    Or,
)
from iceduck.spec.expressions.residuals import ResidualEvaluator
from iceduck.spec.partition import UNPARTITIONED, PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import DayTransform, IdentityTransform
from iceduck.spec.types import IntegerType, NestedField, TimestampType

SCHEMA = Schema(
    (
        NestedField(50, "dateint", IntegerType()),
        NestedField(51, "hour", IntegerType()),
        NestedField(52, "ts", TimestampType()),
    )
)
IDENTITY = PartitionSpec(0, (PartitionField(50, 1000, "dateint", IdentityTransform()),))
FILTER = Or(
    Or(
        And(LessThan("dateint", 20170815), GreaterThan("dateint", 20170801)),
        And(EqualTo("dateint", 20170815), LessThan("hour", 12)),
    ),
    And(EqualTo("dateint", 20170801), GreaterThan("hour", 11)),
)


def test_identity_residuals() -> None:
    evaluator = ResidualEvaluator(IDENTITY, SCHEMA, FILTER)
    assert str(evaluator.residual_for((20170815,))) == "hour < 12"
    assert str(evaluator.residual_for((20170801,))) == "hour > 11"
    assert evaluator.residual_for((20170812,)) == AlwaysTrue()
    assert evaluator.residual_for((20170817,)) == AlwaysFalse()
    assert evaluator((20170817,)) is evaluator((20170817,))  # cached per partition


def test_case_insensitive_residuals() -> None:
    expr = And(EqualTo("DateInt", 20170815), LessThan("HOUR", 12))
    evaluator = ResidualEvaluator(IDENTITY, SCHEMA, expr, case_sensitive=False)
    assert str(evaluator.residual_for((20170815,))) == "hour < 12"


def test_unpartitioned_residual_is_the_filter() -> None:
    expr = And(LessThan("hour", 5), EqualTo("dateint", 3))
    residual = ResidualEvaluator(UNPARTITIONED, SCHEMA, expr).residual_for(())
    assert str(residual) == "(hour < 5 and dateint == 3)"


def test_in_and_not_equal_with_nulls() -> None:
    evaluator = ResidualEvaluator(IDENTITY, SCHEMA, In("dateint", [20170815, 20170816, 20170817]))
    assert evaluator.residual_for((20170815,)) == AlwaysTrue()
    assert evaluator.residual_for((20180815,)) == AlwaysFalse()
    assert evaluator.residual_for((None,)) == AlwaysFalse()
    not_eq = ResidualEvaluator(IDENTITY, SCHEMA, NotEqualTo("dateint", 20170815))
    assert not_eq.residual_for((20170816,)) == AlwaysTrue()
    assert not_eq.residual_for((20170815,)) == AlwaysFalse()
    assert not_eq.residual_for((None,)) == AlwaysFalse()  # null != x is not true


def test_time_transform_residuals() -> None:
    spec = PartitionSpec(0, (PartitionField(52, 1000, "ts_day", DayTransform()),))
    evaluator = ResidualEvaluator(spec, SCHEMA, LessThan("ts", "2017-12-01T10:00:00"))
    day = 17501  # 2017-12-01
    assert evaluator.residual_for((day - 1,)) == AlwaysTrue()
    assert str(evaluator.residual_for((day,))) == "ts < 2017-12-01T10:00:00"
    assert evaluator.residual_for((day + 1,)) == AlwaysFalse()
