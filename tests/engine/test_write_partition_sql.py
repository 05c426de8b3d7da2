"""partition_sql: every transform in DuckDB SQL equals spec/transforms.py value by value."""

from __future__ import annotations

import random
import uuid
from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from iceduck.engine.connection import open_cursor, open_database
from iceduck.engine.partition_sql import (
    HASH_LONG,
    murmur3_long_array,
    parse_partition_key,
    partition_key_sql,
    register_hash_functions,
    transform_sql,
)
from iceduck.engine.types import sql_literal
from iceduck.spec.hashing import hash_long
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import (
    TIMESTAMP_TYPES,
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

rng = random.Random(7)
INTS = [
    0,
    1,
    -1,
    34,
    -34,
    2**31 - 1,
    -(2**31),
    7,
    -7,
    100,
    -101,
    *[rng.randint(-(2**31), 2**31 - 1) for _ in range(40)],
]
LONGS = [*INTS, 2**63 - 1, -(2**63), *[rng.randint(-(2**63), 2**63 - 1) for _ in range(40)]]
DAYS = [0, -1, 1, 17486, -719162, 2932896, 59, 60, -365, *[rng.randint(-700000, 2900000) for _ in range(40)]]
MICROS = [0, -1, 1, 1510871468000001, -86_400_000_001, 3_600_000_000, -3_600_000_000, 253402300799999999]
MICROS += [rng.randint(-62135596800000000, 253402300799999999) for _ in range(40)]
NANOS = [
    0,
    -1,
    1,
    -999,
    -1000,
    -1001,
    1510871468000001001,
    *[rng.randint(-(2**62), 2**62) for _ in range(40)],
]
TIMES = [0, 1, 81068000000, 86_399_999_999, *[rng.randint(0, 86_399_999_999) for _ in range(20)]]
STRINGS = [
    "",
    "a",
    "iceberg",
    "ab\u00e9cd",
    "😀😀x",
    "e\u0301\u0301z",
    "日本語のテキスト",
    "x" * 40,
    "'quote'",
    "a/b=c",
]
BINARIES = [b"", b"\x00", b"\x00\x01\x02\x03", b"\xff" * 20, bytes(range(30))]
DECIMALS = [
    Decimal("14.20"),
    Decimal("-14.20"),
    Decimal("0.00"),
    Decimal("10.65"),
    Decimal("-0.01"),
    Decimal("99.99"),
]
UUIDS = [
    uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    *[uuid.UUID(int=rng.getrandbits(128)) for _ in range(20)],
]

CASES: list[tuple[IcebergType, list[Any], list[str]]] = [
    (
        IntegerType(),
        INTS,
        ["identity", "bucket[16]", "bucket[1000]", "truncate[10]", "truncate[1]", "truncate[3]"],
    ),
    (LongType(), LONGS, ["identity", "bucket[16]", "bucket[7]", "truncate[10]", "truncate[1000000007]"]),
    (DateType(), DAYS, ["identity", "bucket[16]", "year", "month", "day"]),
    (TimeType(), TIMES, ["identity", "bucket[16]"]),
    (TimestampType(), MICROS, ["identity", "bucket[16]", "year", "month", "day", "hour"]),
    (TimestamptzType(), MICROS, ["identity", "bucket[16]", "year", "month", "day", "hour"]),
    (TimestampNanoType(), NANOS, ["identity", "bucket[16]", "year", "month", "day", "hour"]),
    (TimestamptzNanoType(), NANOS, ["bucket[16]", "day", "hour"]),
    (
        StringType(),
        STRINGS,
        ["identity", "bucket[16]", "bucket[3]", "truncate[1]", "truncate[3]", "truncate[100]"],
    ),
    (BinaryType(), BINARIES, ["identity", "bucket[16]", "truncate[2]", "truncate[100]"]),
    (FixedType(4), [b"abcd", b"\x00\x00\x00\x00", b"\xff\xfe\xfd\xfc"], ["identity", "bucket[16]"]),
    (DecimalType(9, 2), DECIMALS, ["identity", "bucket[16]", "truncate[10]", "truncate[50]"]),
    (
        DecimalType(38, 10),
        [Decimal("12345678901234567890.1234567890"), Decimal("-1.0000000000")],
        ["bucket[5]"],
    ),
    (UUIDType(), UUIDS, ["identity", "bucket[16]", "bucket[1]"]),
    (BooleanType(), [True, False], ["identity"]),
    (DoubleType(), [1.5, -2.25, float("inf")], ["identity", "void"]),
]


@pytest.fixture(scope="module")
def con() -> Any:
    database = open_database()
    register_hash_functions(database)
    register_hash_functions(database)  # idempotent
    return database


def _duckdb_values(con: Any, t: IcebergType, values: list[Any], expr_of: Any) -> list[Any]:
    rows = " UNION ALL ".join(
        f"SELECT {i} AS i, {sql_literal(t, v)} AS c" for i, v in enumerate([*values, None])
    )
    return [r[0] for r in con.execute(f"SELECT {expr_of('c')} FROM ({rows}) ORDER BY i").fetchall()]


@pytest.mark.parametrize(("t", "values", "transforms"), CASES, ids=[str(c[0]) for c in CASES])
def test_transform_sql_equals_spec_transforms(
    con: Any, t: IcebergType, values: list[Any], transforms: list[str]
):
    for text in transforms:
        transform = parse_transform(text)
        if text.startswith("truncate") and isinstance(t, IntegerType | LongType):
            # truncating towards the type's minimum leaves its range: not a value to write
            low = -(2**31) if isinstance(t, IntegerType) else -(2**63)
            values = [v for v in values if transform.apply(t)(v) >= low]
        expected = [transform.apply(t)(v) for v in [*values, None]]
        got = _duckdb_values(con, t, values, lambda c, tr=transform: transform_sql(tr, t, c))
        result_type = transform.result_type(t)
        if isinstance(result_type, FixedType | BinaryType):
            got = [None if g is None else bytes(g) for g in got]
        if text == "identity" and isinstance(result_type, (TimeType, DateType, *TIMESTAMP_TYPES)):
            got = None  # DuckDB's Python values differ in representation: compared via keys below
        if got is not None:
            assert got == expected, text
        keys = _duckdb_values(con, t, values, lambda c, tr=transform: partition_key_sql(tr, t, c))
        assert [parse_partition_key(result_type, k) for k in keys] == expected, text
        assert keys[-1] is None


def test_bucket_spec_vectors(con: Any):
    """Appendix B: hash(34) = 2017239379, and the spec's other test values."""
    assert con.execute("SELECT __iceduck_murmur3_long(34::BIGINT)").fetchone()[0] == 2017239379
    assert con.execute("SELECT __iceduck_murmur3_bytes(encode('iceberg'))").fetchone()[0] == 1210000089
    assert (
        con.execute(
            "SELECT __iceduck_murmur3_bytes(unhex(replace('f79c3e09-677c-4bbd-a479-3f349cb785e7', '-', '')))"
        ).fetchone()[0]
        == 1488055340
    )
    assert con.execute("SELECT __iceduck_murmur3_decimal('14.20', 2)").fetchone()[0] == -500754589
    date = transform_sql(parse_transform("bucket[2147483647]"), DateType(), "DATE '2017-11-16'")
    assert con.execute(f"SELECT {date}").fetchone()[0] == (-653330422 & 0x7FFFFFFF) % 2147483647
    ts = transform_sql(
        parse_transform("bucket[2147483647]"), TimestampType(), "TIMESTAMP '2017-11-16 22:31:08'"
    )
    assert con.execute(f"SELECT {ts}").fetchone()[0] == (-2047944441 & 0x7FFFFFFF) % 2147483647


def test_numpy_murmur3_equals_scalar_hash():
    values = np.array(LONGS, dtype=np.int64)
    assert murmur3_long_array(values).tolist() == [hash_long(v) for v in LONGS]


def test_bucket_on_many_rows_is_vectorised(con: Any):
    expr = transform_sql(parse_transform("bucket[16]"), LongType(), "i")
    got = con.execute(f"SELECT i, {expr} FROM range(-50000, 50000) t(i) ORDER BY i").fetchall()
    assert all(b == (hash_long(i) & 0x7FFFFFFF) % 16 for i, b in got)


def test_hash_functions_created_once_per_database():
    """Registering again in a database that has them does not ask DuckDB (creating them, or
    finding they exist, cost each write 0.4-0.7 ms), whichever of its statement cursors
    asks; another database gets its own.
    A function belongs to the database: a cursor opened later calls it."""
    first, second = open_database(), open_database()
    assert register_hash_functions(open_cursor(first)) is True
    again = [register_hash_functions(c) for c in (first, open_cursor(first), open_cursor(first))]
    assert again == [False] * 3
    assert open_cursor(first).execute(f"SELECT {HASH_LONG}(34)").fetchall() == [(2017239379,)]
    assert register_hash_functions(second) is True
