"""Second opinion: our projections against pyiceberg's for a sample of predicates.

pyiceberg does not apply Java's pre-1970 fix for time transforms, so the sample stays
after the epoch (the Java vectors in ``test_transform_projection`` cover the rest).
Both results are compared in a canonical form: flattened ``and``/``or`` sets of
``(operation, partition field, values)``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from iceduck.spec.expressions import predicates as ours
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.projection import project, project_strict
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from iceduck.spec.types import (
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

pyi_expr = pytest.importorskip("pyiceberg.expressions")
pyi_vis = pytest.importorskip("pyiceberg.expressions.visitors")
pyi_part = pytest.importorskip("pyiceberg.partitioning")
pyi_schema = pytest.importorskip("pyiceberg.schema")
pyi_tr = pytest.importorskip("pyiceberg.transforms")
pyi_types = pytest.importorskip("pyiceberg.types")

COLUMNS = [
    (1, "ts", TimestampType(), pyi_types.TimestampType()),
    (2, "id", LongType(), pyi_types.LongType()),
    (3, "n", IntegerType(), pyi_types.IntegerType()),
    (4, "s", StringType(), pyi_types.StringType()),
    (5, "d", DateType(), pyi_types.DateType()),
    (6, "amount", DecimalType(9, 2), pyi_types.DecimalType(9, 2)),
    (7, "cat", StringType(), pyi_types.StringType()),
]
FIELDS = [  # source id, field id, name, ours, pyiceberg's
    (1, 1000, "ts_day", DayTransform(), pyi_tr.DayTransform()),
    (1, 1001, "ts_hour", HourTransform(), pyi_tr.HourTransform()),
    (5, 1002, "d_month", MonthTransform(), pyi_tr.MonthTransform()),
    (5, 1003, "d_year", YearTransform(), pyi_tr.YearTransform()),
    (2, 1004, "id_bucket", BucketTransform(16), pyi_tr.BucketTransform(16)),
    (3, 1005, "n_trunc", TruncateTransform(10), pyi_tr.TruncateTransform(10)),
    (4, 1006, "s_trunc", TruncateTransform(3), pyi_tr.TruncateTransform(3)),
    (6, 1007, "amount_trunc", TruncateTransform(50), pyi_tr.TruncateTransform(50)),
    (7, 1008, "cat", IdentityTransform(), pyi_tr.IdentityTransform()),
]

SCHEMA = Schema(tuple(NestedField(fid, name, t) for fid, name, t, _ in COLUMNS))
SPEC = PartitionSpec(1, tuple(PartitionField(src, fid, name, t) for src, fid, name, t, _ in FIELDS))
PYI_SCHEMA = pyi_schema.Schema(
    *(pyi_types.NestedField(fid, name, t, required=False) for fid, name, _, t in COLUMNS)
)
PYI_SPEC = pyi_part.PartitionSpec(
    *(pyi_part.PartitionField(src, fid, t, name) for src, fid, name, _, t in FIELDS)
)

SAMPLES = [
    ("LessThan", "ts", "2017-12-01T10:12:55.038194"),
    ("GreaterThan", "ts", "2021-10-01T10:00:00"),
    ("GreaterThanOrEqual", "ts", "2021-10-01T00:00:00"),
    ("LessThanOrEqual", "ts", "2021-10-04T20:00:00"),
    ("EqualTo", "ts", "2019-01-01T01:00:00"),
    ("NotEqualTo", "ts", "2019-01-01T01:00:00"),
    ("LessThan", "d", "2017-12-01"),
    ("GreaterThan", "d", "2017-12-31"),
    ("EqualTo", "d", "2020-02-29"),
    ("NotEqualTo", "d", "2020-02-29"),
    ("EqualTo", "id", 74),
    ("NotEqualTo", "id", 74),
    ("LessThan", "id", 74),
    ("LessThan", "n", 100),
    ("LessThanOrEqual", "n", 99),
    ("GreaterThan", "n", 99),
    ("GreaterThanOrEqual", "n", 101),
    ("NotEqualTo", "n", 100),
    ("EqualTo", "s", "iceberg"),
    ("LessThan", "s", "iceberg"),
    ("GreaterThanOrEqual", "s", "ic"),
    ("NotEqualTo", "s", "ice"),
    ("StartsWith", "s", "ic"),
    ("StartsWith", "s", "ice"),
    ("StartsWith", "s", "iceberg"),
    ("NotStartsWith", "s", "ic"),
    ("NotStartsWith", "s", "ice"),
    ("NotStartsWith", "s", "iceberg"),
    ("LessThan", "amount", Decimal("10.65")),
    ("GreaterThan", "amount", Decimal("10.49")),
    ("EqualTo", "amount", Decimal("10.65")),
    ("NotEqualTo", "amount", Decimal("10.65")),
    ("EqualTo", "cat", "a"),
    ("NotEqualTo", "cat", "a"),
    ("StartsWith", "cat", "ab"),
    ("In", "id", [1, 2, 3]),
    ("NotIn", "id", [1, 2, 3]),
    ("In", "n", [5, 15, 17]),
    ("NotIn", "n", [5, 15, 17]),
    ("In", "s", ["iceberg", "icicle", "duck"]),
    ("In", "d", ["2020-01-01", "2020-03-15"]),
    ("IsNull", "ts", None),
    ("NotNull", "id", None),
]


def _canonical_ours(expr: Any) -> Any:
    if isinstance(expr, ours.AlwaysTrue | ours.AlwaysFalse):
        return str(expr)
    if isinstance(expr, ours.And | ours.Or):
        return (type(expr).__name__.lower(), frozenset(_flatten(expr, type(expr), _canonical_ours)))
    assert isinstance(expr, BoundPredicate)
    values = (
        expr.literals if expr.literals is not None else ({expr.literal} if not expr.op.is_unary else set())
    )
    return expr.op.value, expr.ref.name, frozenset(values)


_PYI_OPS = {
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "EqualTo": "==",
    "NotEqualTo": "!=",
    "In": "in",
    "NotIn": "not in",
    "StartsWith": "startsWith",
    "NotStartsWith": "notStartsWith",
    "IsNull": "is_null",
    "NotNull": "not_null",
}


def _canonical_pyi(expr: Any) -> Any:
    if isinstance(expr, pyi_expr.AlwaysTrue):
        return "true"
    if isinstance(expr, pyi_expr.AlwaysFalse):
        return "false"
    if isinstance(expr, pyi_expr.And | pyi_expr.Or):
        return (type(expr).__name__.lower(), frozenset(_flatten(expr, type(expr), _canonical_pyi)))
    op = _PYI_OPS[type(expr).__name__]
    if hasattr(expr, "literals"):
        values = frozenset(lit.value for lit in expr.literals)
    elif hasattr(expr, "literal"):
        values = frozenset({expr.literal.value})
    else:
        values = frozenset()
    return op, expr.term.name, values


def _flatten(expr: Any, cls: type, canon: Any) -> list[Any]:
    out = []
    for child in (expr.left, expr.right):
        if isinstance(child, cls):
            out.extend(_flatten(child, cls, canon))
        else:
            out.append(canon(child))
    return out


def _build(cls_name: str, column: str, value: Any, module: Any) -> Any:
    cls = getattr(module, cls_name)
    return cls(column) if value is None else cls(column, value)


#: Where pyiceberg differs from Java, Java wins: a prefix exactly as long as the truncate
#: width is the whole partition value, so Java projects it to ``=`` (same partitions match).
JAVA_OVERRIDES = {("StartsWith", "s", "'ice'"): ("==", "s_trunc", frozenset({"ice"}))}


@pytest.mark.parametrize("cls_name, column, value", SAMPLES, ids=lambda x: str(x))
def test_inclusive_projection_matches_pyiceberg(cls_name: str, column: str, value: Any) -> None:
    mine = project(_build(cls_name, column, value, ours), SPEC, SCHEMA)
    theirs = pyi_vis.inclusive_projection(PYI_SCHEMA, PYI_SPEC)(_build(cls_name, column, value, pyi_expr))
    key = (cls_name, column, repr(value))
    expected = JAVA_OVERRIDES[key] if key in JAVA_OVERRIDES else _canonical_pyi(theirs)
    assert _canonical_ours(mine) == expected


@pytest.mark.parametrize("cls_name, column, value", SAMPLES, ids=lambda x: str(x))
def test_strict_projection_matches_pyiceberg(cls_name: str, column: str, value: Any) -> None:
    mine = project_strict(_build(cls_name, column, value, ours), SPEC, SCHEMA)
    theirs = pyi_vis.StrictProjection(PYI_SCHEMA, PYI_SPEC, True).project(
        _build(cls_name, column, value, pyi_expr)
    )
    assert _canonical_ours(mine) == _canonical_pyi(theirs)
