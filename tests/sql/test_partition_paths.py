"""SHOW PARTITIONS' Hive-style paths (iceduck.sql.partition_paths): Spark's escaping of
names and values and its string casts of partition values."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from iceduck.sql.partition_paths import (
    DEFAULT_PARTITION_NAME,
    escape_path_name,
    java_double_text,
    partition_paths,
    value_text,
)


def test_escape_path_name_as_hive() -> None:
    assert escape_path_name("a/b=c d%e:f") == "a%2Fb%3Dc d%25e%3Af"
    assert escape_path_name("x\x01\x7f{[]^\"'*?#\\") == "x%01%7F%7B%5B%5D%5E%22%27%2A%3F%23%5C"
    assert escape_path_name("héllo-_.,;") == "héllo-_.,;"


@pytest.mark.parametrize(
    ("t", "value", "text"),
    [
        (BooleanType(), True, "true"),
        (IntegerType(), -3, "-3"),
        (DateType(), 19723, "2024-01-01"),
        (TimestamptzType(), 1704103200_000000, "2024-01-01 10:00:00"),
        (TimestampType(), 1704103200_500000, "2024-01-01 10:00:00.5"),
        (DecimalType(9, 2), Decimal("1.50"), "1.50"),
        (DoubleType(), 0.1, "0.1"),
        (FloatType(), 0.1, "0.1"),
        (BinaryType(), b"ab", "ab"),
        (StringType(), "x", "x"),
    ],
)
def test_value_text_as_spark_casts_to_string(t: IcebergType, value: Any, text: str) -> None:
    assert value_text(t, value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (0.001, "0.001"),
        (1234567.0, "1234567.0"),
        (1e7, "1.0E7"),
        (12345678.0, "1.2345678E7"),
        (1.5e-4, "1.5E-4"),
        (1e-5, "1.0E-5"),
        (-2.5e20, "-2.5E20"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
        (0.0, "0.0"),
    ],
)
def test_java_double_text(value: float, text: str) -> None:
    assert java_double_text(value) == text


def test_partition_paths_sorted_with_nulls_and_empty_strings_as_the_default_partition() -> None:
    t = StructType(
        (NestedField(1000, "cat", StringType(), False), NestedField(1001, "n=1", IntegerType(), False))
    )
    paths = partition_paths(t, [("b", 1), (None, 2), ("", None), ("a/b", 0)])
    assert paths == [
        f"cat={DEFAULT_PARTITION_NAME}/n%3D1=2",
        f"cat={DEFAULT_PARTITION_NAME}/n%3D1={DEFAULT_PARTITION_NAME}",
        "cat=a%2Fb/n%3D1=0",
        "cat=b/n%3D1=1",
    ]
