"""Binding expressions to a schema (Java ``UnboundPredicate.bind`` / ``TestExpressionBinding``)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from iceduck.errors import NotFoundError, ValidationError
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.bound import BoundPredicate, referenced_field_ids
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
    Op,
    Or,
    StartsWith,
)
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
)

SCHEMA = Schema(
    (
        NestedField(1, "x", IntegerType(), required=True),
        NestedField(2, "y", LongType()),
        NestedField(3, "s", StringType()),
        NestedField(4, "d", DoubleType()),
        NestedField(5, "amount", DecimalType(9, 2)),
        NestedField(
            6, "loc", StructType((NestedField(7, "lat", DoubleType(), required=True),)), required=True
        ),
        NestedField(8, "opt", StructType((NestedField(9, "req", IntegerType(), required=True),))),
        NestedField(10, "tags", ListType(11, StringType())),
        NestedField(12, "u", UnknownType()),
    )
)


def _bound(expr: object) -> BoundPredicate:
    result = bind(SCHEMA, expr)  # type: ignore[arg-type]
    assert isinstance(result, BoundPredicate), result
    return result


def test_resolves_names_to_ids_and_positions() -> None:
    pred = _bound(LessThan("loc.lat", 1))
    assert pred.ref.field_id == 7 and pred.ref.accessor == (5, 0) and pred.literal == 1.0
    assert isinstance(pred.literal, float)
    assert _bound(EqualTo("y", 3)).ref.accessor == (1,)


def test_case_insensitive_lookup() -> None:
    assert bind(SCHEMA, EqualTo("LOC.LAT", 1.0), case_sensitive=False) == bind(
        SCHEMA, EqualTo("loc.lat", 1.0)
    )
    with pytest.raises(NotFoundError, match=r"LOC\.LAT"):
        bind(SCHEMA, EqualTo("LOC.LAT", 1.0))


def test_unknown_column_names_it() -> None:
    with pytest.raises(NotFoundError, match="'missing'"):
        bind(SCHEMA, And(EqualTo("x", 1), LessThan("missing", 5)))


def test_fields_in_lists_cannot_be_filtered() -> None:
    with pytest.raises(ValidationError, match="list or map"):
        bind(SCHEMA, EqualTo("tags.element", "a"))


def test_null_checks_on_required_fields_fold() -> None:
    assert bind(SCHEMA, IsNull("x")) == AlwaysFalse()
    assert bind(SCHEMA, NotNull("x")) == AlwaysTrue()
    assert bind(SCHEMA, IsNull("loc.lat")) == AlwaysFalse()  # required all the way up
    assert _bound(IsNull("opt.req")).op is Op.IS_NULL  # required in an optional struct
    assert _bound(NotNull("y")).op is Op.NOT_NULL


def test_unknown_type_columns_are_always_null() -> None:
    assert bind(SCHEMA, IsNull("u")) == AlwaysTrue()
    assert bind(SCHEMA, NotNull("u")) == AlwaysFalse()
    assert bind(SCHEMA, EqualTo("u", 1)) == AlwaysFalse()


def test_nan_and_prefix_need_matching_types() -> None:
    assert _bound(IsNaN("d")).op is Op.IS_NAN and _bound(NotNaN("d")).op is Op.NOT_NAN
    with pytest.raises(ValidationError, match="float or double"):
        bind(SCHEMA, IsNaN("x"))
    with pytest.raises(ValidationError, match="string"):
        bind(SCHEMA, StartsWith("x", "1"))


def test_type_mismatch_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="int"):
        bind(SCHEMA, EqualTo("x", "abc"))


@pytest.mark.parametrize(
    "expr, expected",
    [
        # above the int range (Java aboveMax)
        (LessThan("x", 2**40), "x <= 2147483647"),
        (GreaterThan("x", 2**40), "false"),
        (EqualTo("x", 2**40), "false"),
        (NotEqualTo("x", 2**40), "true"),  # x is required
        (NotEqualTo("y", 2**70), "not_null(y)"),
        # below the int range (Java belowMin)
        (GreaterThanOrEqual("x", -(2**40)), "x >= -2147483648"),
        (LessThanOrEqual("x", -(2**40)), "false"),
        # fractions against integers and extra decimal digits
        (LessThan("y", 2.5), "y <= 2"),
        (GreaterThan("y", 2.5), "y >= 3"),
        (EqualTo("y", 2.5), "false"),
        (LessThan("amount", Decimal("1.234")), "amount <= 1.23"),
        (GreaterThanOrEqual("amount", 1.234), "amount >= 1.24"),
        (LessThan("amount", 1.23), "amount < 1.23"),
        # sets drop what no value can equal; one value left is = / !=
        (In("x", [1, 2**40]), "x == 1"),
        (In("x", [2**40, 2**41]), "false"),
        (NotIn("y", [2.5, 3]), "y != 3"),
        (NotIn("y", [2.5]), "not_null(y)"),
        (In("y", [1, 2, 3]), "y in (1, 2, 3)"),
        (Not(EqualTo("y", 1)), "not(y == 1)"),
        (Or(EqualTo("x", 2**40), EqualTo("y", 1)), "y == 1"),
    ],
    ids=str,
)
def test_literal_folding(expr: object, expected: str) -> None:
    assert str(bind(SCHEMA, expr)) == expected  # type: ignore[arg-type]


def test_binding_is_idempotent() -> None:
    bound = bind(SCHEMA, And(EqualTo("y", 1), StartsWith("s", "ab")))
    assert bind(SCHEMA, bound) == bound
    assert referenced_field_ids(bound) == {2, 3}
