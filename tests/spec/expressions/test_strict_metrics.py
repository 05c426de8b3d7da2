"""StrictMetricsEvaluator: proving from metrics that every row of a file matches.

Cases follow Iceberg Java's ``TestStrictMetricsEvaluator`` where SQL and Iceberg agree; a
null in the column never lets a comparison be proven (SQL's ``x <> 1`` is not true for a
null ``x``, Iceberg's ``notEqual`` is).
"""

from __future__ import annotations

import pytest

from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNull,
    Or,
    StartsWith,
)
from iceduck.spec.expressions.strict_metrics import StrictMetricsEvaluator
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.schema import Schema
from iceduck.spec.types import IntegerType, ListType, NestedField, StringType
from iceduck.spec.values import to_bytes

SCHEMA = Schema(
    (
        NestedField(1, "id", IntegerType(), required=True),
        NestedField(2, "s", StringType()),
        NestedField(3, "nulls", IntegerType()),
        NestedField(4, "some_nulls", IntegerType()),
        NestedField(5, "xs", ListType(6, IntegerType())),
    )
)

FILE = DataFile(
    content=FileContent.DATA,
    file_path="f.parquet",
    file_format=FileFormat.PARQUET,
    partition=(),
    record_count=50,
    file_size_in_bytes=10,
    value_counts={1: 50, 2: 50, 3: 50, 4: 50, 6: 100},
    null_value_counts={1: 0, 2: 0, 3: 50, 4: 10, 6: 0},
    lower_bounds={1: to_bytes(IntegerType(), 30), 2: b"abc", 4: to_bytes(IntegerType(), 1), 6: b"\0\0\0\0"},
    upper_bounds={1: to_bytes(IntegerType(), 79), 2: b"abd", 4: to_bytes(IntegerType(), 5), 6: b"\x09\0\0\0"},
)


def must(expr: BooleanExpression, f: DataFile = FILE) -> bool:
    return StrictMetricsEvaluator(SCHEMA, bind(SCHEMA, expr)).must_match(f)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (LessThan("id", 80), True),
        (LessThan("id", 79), False),
        (LessThanOrEqual("id", 79), True),
        (GreaterThan("id", 29), True),
        (GreaterThan("id", 30), False),
        (GreaterThanOrEqual("id", 30), True),
        (EqualTo("id", 30), False),
        (NotEqualTo("id", 80), True),
        (NotEqualTo("id", 29), True),
        (NotEqualTo("id", 30), False),
        (In("id", [1, 2]), False),
        (NotIn("id", [1, 2]), True),
        (NotIn("id", [1, 40]), False),
        (IsNull("nulls"), True),
        (NotNull("id"), True),
        (NotNull("some_nulls"), False),
        (LessThan("some_nulls", 100), False),  # a null row fails the SQL comparison
        (NotEqualTo("some_nulls", 100), False),
        (LessThan("nulls", 100), False),
        (StartsWith("s", "ab"), False),  # prefixes are never proven (truncated bounds)
        (And(LessThan("id", 80), GreaterThan("id", 0)), True),
        (Or(LessThan("id", 0), GreaterThan("id", 0)), True),
        (Not(LessThan("id", 30)), True),
        (Not(LessThan("id", 31)), False),
    ],
)
def test_strict_metrics(expr: BooleanExpression, expected: bool) -> None:
    assert must(expr) is expected


def test_single_value_files() -> None:
    one = DataFile(
        content=FileContent.DATA,
        file_path="g.parquet",
        file_format=FileFormat.PARQUET,
        partition=(),
        record_count=3,
        file_size_in_bytes=1,
        value_counts={1: 3},
        null_value_counts={1: 0},
        lower_bounds={1: to_bytes(IntegerType(), 7)},
        upper_bounds={1: to_bytes(IntegerType(), 7)},
    )
    assert must(EqualTo("id", 7), one)
    assert must(In("id", [7, 8]), one)
    assert not must(EqualTo("id", 8), one)


def test_empty_and_unknown_files() -> None:
    empty = DataFile(
        content=FileContent.DATA,
        file_path="e.parquet",
        file_format=FileFormat.PARQUET,
        partition=(),
        record_count=0,
        file_size_in_bytes=1,
    )
    assert must(AlwaysFalse(), empty)
    no_metrics = DataFile(
        content=FileContent.DATA,
        file_path="n.parquet",
        file_format=FileFormat.PARQUET,
        partition=(),
        record_count=5,
        file_size_in_bytes=1,
    )
    assert not must(LessThan("id", 100), no_metrics)
    assert not must(NotNull("s"), no_metrics)
