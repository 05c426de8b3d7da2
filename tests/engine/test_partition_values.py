"""Partition values Spark writes, iceduck writes too: string and binary values of any length
(DuckDB's temporary folder names stay short; the final folders are named as Java's
``PartitionSpec.partitionToPath`` names them, bounded only where the file system requires)
and decimal(38, S) values of all 38 digits (Python's default context rounds at 28).

Round trips through SQL (INSERT, SELECT, UPDATE, DELETE, copy-on-write and merge-on-read, v2
and v3) check the rows and every data file's folder against an independent rendering of
Java's naming (:func:`java_url_encode`).
"""

from __future__ import annotations

import base64
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.engine.connection import open_database
from iceduck.engine.partition_sql import (
    MAX_INLINE_BYTES,
    MAX_KEY_CHARS,
    is_digest_key,
    parse_partition_key,
    partition_key_sql,
    partition_value_sql,
    register_hash_functions,
    transform_sql,
)
from iceduck.engine.types import sql_literal
from iceduck.engine.write import MAX_NAME_BYTES, bounded_folder_name
from iceduck.errors import ValidationError
from iceduck.spec.hashing import unscaled_at_scale
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import BinaryType, DecimalType, FixedType, IcebergType, StringType

#: the identity-partition strings Spark wrote that iceduck could not write (121 bytes and up
#: failed with "File name too long"), and values whose escaped form needs the most room
LONG_STRINGS = [
    "",
    "a",
    "a" * 120,
    "a" * 121,
    "b" * 150,
    "c" * 200,
    "d" * 250,
    "e" * 253,  # "k=" + 253 bytes: the longest name that fits
    "f" * 254,
    "g" * 1000,
    "é" * 300,  # 600 UTF-8 bytes, 1,800 escaped
    "😀" * 100,
    "a/b=c%d e+f?&#~\\" * 20,
    "..",
    ".",
    "x" * 64 + "/",
    "null",
]
NINES = "9" * 38
#: decimal(38, 0) values: 28 digits passed, 29 and more failed (decimal.InvalidOperation)
BIG_DECIMALS = [
    "0",
    "1",
    "-1",
    "9" * 28,
    "9" * 29,
    "9" * 30,
    "9" * 31,
    "1" + "0" * 37,
    NINES,
    "-" + NINES,
    "12345678901234567890123456789012345678",
]


def java_url_encode(text: str) -> str:
    """``java.net.URLEncoder.encode(text, "UTF-8")``, written out byte by byte (its Javadoc:
    "a-z", "A-Z", "0-9", ".", "-", "*" and "_" remain the same, space becomes "+", every other
    byte of the UTF-8 encoding becomes "%xy" in upper-case hex)."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char.isascii() and (char.isalnum() or char in ".-*_"):
            out.append(char)
        elif char == " ":
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def assert_java_folder(folder: str, name: str, human: str) -> None:
    """``folder`` is Java's ``name=escape(human)``, or, when that exceeds the file system's
    255 bytes, a 255-byte name starting with as much of it as fits."""
    java = f"{java_url_encode(name)}={java_url_encode(human)}"
    if len(java) <= MAX_NAME_BYTES:
        assert folder == java
    else:
        assert MAX_NAME_BYTES - 2 <= len(folder.encode()) <= MAX_NAME_BYTES
        head, _, digest = folder.rpartition("~")
        assert len(digest) == 32 and all(c in "0123456789abcdef" for c in digest)
        assert java.startswith(head) and len(head) >= MAX_NAME_BYTES - 40


def folder_of(path: str) -> str:
    """The partition folders of a data file, relative to its table's ``data/`` folder."""
    return path.split("/data/", 1)[1].rsplit("/", 1)[0]


def assert_java_folders(con: iceduck.Connection, table: str, field: str) -> None:
    """Every live data file of a table partitioned by ``field`` alone sits in Java's folder of
    its value (the partition struct holds it; NULL is ``null``), each value in its own."""
    rows = con.cursor().execute(f"SELECT partition.{field}, file_path FROM {table}.data_files").fetchall()
    humans = set()
    for value, path in rows:
        human = "null" if value is None else str(value)  # Java's too: NULL and 'null' share
        assert_java_folder(folder_of(path), field, human)
        assert os.path.isfile(path)
        humans.add(human)
    assert len({folder_of(path) for _, path in rows}) == len(humans)


@pytest.fixture(scope="module")
def duck() -> Any:
    database = open_database()
    register_hash_functions(database)
    return database


def _duckdb_values(con: Any, t: IcebergType, values: list[Any], expr_of: Any) -> list[Any]:
    rows = " UNION ALL ".join(
        f"SELECT {i} AS i, {sql_literal(t, v)} AS c" for i, v in enumerate([*values, None])
    )
    return [r[0] for r in con.execute(f"SELECT {expr_of('c')} FROM ({rows}) ORDER BY i").fetchall()]


# -- keys: short whatever the value ---------------------------------------------------------


STRINGS = ["", "a", "é" * 32, "é" * 33, *LONG_STRINGS, "z" * 5000]
BINARIES = [b"", b"\x00" * 64, b"\xff" * 65, bytes(range(256)) * 8]


@pytest.mark.parametrize(
    ("t", "values", "transform_text"),
    [
        (StringType(), STRINGS, "identity"),
        (StringType(), STRINGS, "truncate[1000]"),
        (BinaryType(), BINARIES, "identity"),
        (BinaryType(), BINARIES, "truncate[1000]"),
        (FixedType(300), [bytes(300), b"\x01" * 300], "identity"),
    ],
    ids=["string", "string-truncate", "binary", "binary-truncate", "fixed"],
)
def test_partition_keys_are_bounded_and_values_read_back(
    duck: Any, t: IcebergType, values: list[Any], transform_text: str
):
    transform = parse_transform(transform_text)
    result_type = transform.result_type(t)
    expected = [transform.apply(t)(v) for v in [*values, None]]
    keys = _duckdb_values(duck, t, values, lambda c: partition_key_sql(transform, t, c))
    texts = _duckdb_values(duck, t, values, lambda c: partition_value_sql(transform, t, c))
    for value, key, text in zip(expected, keys, texts, strict=True):
        if value is None:
            assert key is None and text is None
            continue
        size = len(value.encode() if isinstance(value, str) else value)
        assert len(key) <= MAX_KEY_CHARS
        assert is_digest_key(key) == (size > MAX_INLINE_BYTES)
        if not is_digest_key(key):
            assert parse_partition_key(result_type, key) == value
        assert parse_partition_key(result_type, text) == value
    assert len(set(keys)) == len(set(expected))  # distinct values, distinct keys


def test_folder_names_are_java_names_or_bounded():
    assert bounded_folder_name("k=abc") == "k=abc"
    assert bounded_folder_name("k=" + "a" * 253) == "k=" + "a" * 253
    for value in ["a" * 254, "é" * 100, "😀" * 100, "a%" * 200, "ab/" * 90, "z" * 10_000]:
        java = f"k={java_url_encode(value)}"
        name = bounded_folder_name(java)
        assert len(java) > MAX_NAME_BYTES
        assert_java_folder(name, "k", value)
        head = name.rpartition("~")[0]
        assert "%" not in head[-2:]  # no escape cut in two
    # different values keep different folders, however long their common prefix
    assert bounded_folder_name("k=" + "a" * 300 + "1") != bounded_folder_name("k=" + "a" * 300 + "2")


# -- decimals: all 38 digits ---------------------------------------------------------------


@pytest.mark.parametrize("scale", [0, 2, 10, 37, 38])
def test_decimal38_keys_parse_exactly(duck: Any, scale: int):
    t = DecimalType(38, scale)
    unscaled = [0, 1, -1, 10**28 - 1, 10**29 + 7, 10**37, 10**38 - 1, -(10**38 - 1), 12345678901234567890123]
    values = [Decimal((1 if u < 0 else 0, tuple(int(d) for d in str(abs(u))), -scale)) for u in unscaled]
    transform = parse_transform("identity")
    keys = _duckdb_values(duck, t, values, lambda c: partition_key_sql(transform, t, c))
    parsed = [parse_partition_key(t, k) for k in keys]
    assert parsed == [*values, None]
    assert all(p is None or p.as_tuple().exponent == -scale for p in parsed)


def _fits_38_digits(value: Decimal, scale: int) -> bool:
    return abs(unscaled_at_scale(value, scale)) < 10**38


@pytest.mark.parametrize("scale", [0, 5, 38])
@pytest.mark.parametrize(
    "transform_text", ["truncate[10]", "truncate[3]", "truncate[2147483647]", "bucket[16]"]
)
def test_decimal38_truncate_and_bucket_at_the_extremes(duck: Any, scale: int, transform_text: str):
    """DuckDB's transform equals the spec's (Python integers) for the largest and smallest
    decimal(38, S) values and for negative ones, except where truncating the smallest needs a
    39th digit: then the write fails naming the value, as Java refuses to write it."""
    t = DecimalType(38, scale)
    transform = parse_transform(transform_text)
    top = 10**38 - 1
    unscaled = [top, top - 5, -top + 9, -5, -1, 1, 0, 10**37, -(10**37), 99, -99, -(2**100)]
    unscaled.append(-top)
    values = [Decimal((1 if u < 0 else 0, tuple(int(d) for d in str(abs(u))), -scale)) for u in unscaled]
    fits = [
        v for v in values if transform_text == "bucket[16]" or _fits_38_digits(transform.apply(t)(v), scale)
    ]
    expected = [transform.apply(t)(v) for v in [*fits, None]]
    got = _duckdb_values(duck, t, fits, lambda c: transform_sql(transform, t, c))
    assert got == expected
    keys = _duckdb_values(duck, t, fits, lambda c: partition_key_sql(transform, t, c))
    assert [parse_partition_key(transform.result_type(t), k) for k in keys] == expected
    overflowing = [v for v in values if v not in fits]
    assert bool(overflowing) == (transform_text in ("truncate[10]", "truncate[2147483647]"))
    for value in overflowing:  # DuckDB prints decimal(38, 38) as -.99...
        digits = re.escape(format(value.copy_abs(), "f").removeprefix("0"))
        with pytest.raises(Exception, match=f"value -0?{digits} needs more digits than decimal"):
            _duckdb_values(duck, t, [value], lambda c: transform_sql(transform, t, c))


# -- round trips through SQL ---------------------------------------------------------------


def _connect(tmp_path: Path) -> iceduck.Connection:
    con = iceduck.connect(tmp_path)
    con.cursor().execute("CREATE NAMESPACE ns")
    return con


def _properties(version: int, mode: str) -> str:
    return (
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='{mode}', "
        f"'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
    )


def _rows(con: iceduck.Connection, sql: str) -> list[tuple]:
    return sorted(con.cursor().execute(sql).fetchall(), key=repr)


@pytest.mark.parametrize(
    ("version", "mode"),
    [(2, "copy-on-write"), (2, "merge-on-read"), (3, "copy-on-write"), (3, "merge-on-read")],
)
def test_long_string_identity_partitions_round_trip(tmp_path: Path, version: int, mode: str):
    con = _connect(tmp_path)
    cur = con.cursor()
    cur.execute(
        "CREATE TABLE ns.t (id bigint, k string, v int) USING iceberg PARTITIONED BY (k) "
        + _properties(version, mode)
    )
    rows = [(i, k, i) for i, k in enumerate(LONG_STRINGS)] + [(100, None, 100)]
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?)", rows)
    assert _rows(con, "SELECT id, k, v FROM ns.t") == sorted(rows, key=repr)

    assert_java_folders(con, "ns.t", "k")

    # the values Spark wrote can be written again, filtered on, updated and deleted
    cur.execute("INSERT INTO ns.t SELECT id + 1000, k, v FROM ns.t")
    long_value = "😀" * 100
    assert sorted(_rows(con, f"SELECT id FROM ns.t WHERE k = '{long_value}'")) == [(11,), (1011,)]
    cur.execute("UPDATE ns.t SET v = -v WHERE id % 2 = 0")
    cur.execute("DELETE FROM ns.t WHERE id % 3 = 0")
    cur.execute(f"UPDATE ns.t SET k = k || 'x' WHERE k = '{'g' * 1000}'")
    expected = [
        (i, k + "x" if k == "g" * 1000 else k, -v if i % 2 == 0 else v)
        for i, k, v in [*rows, *((i + 1000, k, v) for i, k, v in rows)]
        if i % 3 != 0
    ]
    assert _rows(con, "SELECT id, k, v FROM ns.t") == sorted(expected, key=repr)
    assert_java_folders(con, "ns.t", "k")
    assert not [p for p in os.listdir(tmp_path / "ns" / "t" / "data") if p.startswith(".")]


def test_long_values_of_truncate_and_binary_partitions(tmp_path: Path):
    con = _connect(tmp_path)
    cur = con.cursor()
    cur.execute(
        "CREATE TABLE ns.b (id int, s string, b binary) USING iceberg "
        "PARTITIONED BY (truncate(500, s), b, bucket(4, s))"
    )
    rows = [(i, ("é/" * 400)[: 50 * i], bytes([i]) * (40 * i)) for i in range(12)]
    cur.executemany("INSERT INTO ns.b VALUES (?, ?, ?)", rows)
    assert _rows(con, "SELECT id, s, b FROM ns.b") == sorted(rows, key=repr)
    parts = _rows(con, "SELECT partition.s_trunc, partition.b, file_path FROM ns.b.data_files")
    assert len(parts) == 12
    for s_trunc, b, path in parts:
        i = b[0] if b else 0
        assert s_trunc == rows[i][1][:500] and b == rows[i][2]
        trunc_folder, b_folder, _ = folder_of(path).split("/", 2)
        assert_java_folder(trunc_folder, "s_trunc", s_trunc)
        assert_java_folder(b_folder, "b", base64.b64encode(b).decode())
    cur.execute("UPDATE ns.b SET id = id + 100")
    assert _rows(con, "SELECT id - 100, s, b FROM ns.b") == sorted(rows, key=repr)


@pytest.mark.parametrize(("version", "mode"), [(2, "copy-on-write"), (3, "merge-on-read")])
def test_decimal38_identity_partitions_round_trip(tmp_path: Path, version: int, mode: str):
    con = _connect(tmp_path)
    cur = con.cursor()
    cur.execute(
        f"CREATE TABLE ns.d (id int, k decimal(38,0), v int) USING iceberg PARTITIONED BY (k) "
        f"{_properties(version, mode)}"
    )
    rows = [(i, Decimal(k), i) for i, k in enumerate(BIG_DECIMALS)]
    cur.executemany("INSERT INTO ns.d VALUES (?, ?, ?)", rows)
    assert _rows(con, "SELECT id, k, v FROM ns.d") == sorted(rows, key=repr)
    assert_java_folders(con, "ns.d", "k")
    cur.execute(f"UPDATE ns.d SET v = v + 1 WHERE k = {NINES} OR k = -{NINES}")
    cur.execute(f"DELETE FROM ns.d WHERE k = {'9' * 31}")
    cur.execute("INSERT INTO ns.d SELECT id + 100, k, v FROM ns.d WHERE k > 0")
    updated = {Decimal(NINES), Decimal("-" + NINES)}  # abs() and unary minus would round at 28 digits
    expected = [(i, k, v + 1 if k in updated else v) for i, k, v in rows if k != Decimal("9" * 31)]
    expected += [(i + 100, k, v) for i, k, v in expected if k > 0]
    assert _rows(con, "SELECT id, k, v FROM ns.d") == sorted(expected, key=repr)


def test_decimal38_truncate_and_bucket_partitions(tmp_path: Path):
    con = _connect(tmp_path)
    cur = con.cursor()
    cur.execute(
        "CREATE TABLE ns.e (id int, d decimal(38,0), f decimal(38,10)) USING iceberg "
        "PARTITIONED BY (truncate(10, d), bucket(16, d), truncate(3, f), f)"
    )
    top = "9" * 28 + "." + "9" * 10
    rows = [
        (0, Decimal(NINES), Decimal(top)),
        (1, Decimal("-" + "9" * 37), Decimal("-" + top)),
        (2, Decimal(-1), Decimal("-0.0000000001")),
        (3, Decimal("-" + "1" * 38), Decimal("0E-10")),
    ]
    cur.executemany("INSERT INTO ns.e VALUES (?, ?, ?)", rows)
    assert _rows(con, "SELECT id, d, f FROM ns.e") == sorted(rows, key=repr)
    spec = [parse_transform(t) for t in ("truncate[10]", "bucket[16]", "truncate[3]", "identity")]
    types = [DecimalType(38, 0), DecimalType(38, 0), DecimalType(38, 10), DecimalType(38, 10)]
    got = _rows(
        con, "SELECT partition.d_trunc, partition.d_bucket, partition.f_trunc, partition.f FROM ns.e.files"
    )
    expected = [
        tuple(tr.apply(t)(v) for tr, t, v in zip(spec, types, (d, d, f, f), strict=True)) for _, d, f in rows
    ]
    assert got == sorted(expected, key=repr)
    cur.execute("UPDATE ns.e SET id = id + 10 WHERE d < 0")
    assert _rows(con, "SELECT id FROM ns.e") == [(0,), (11,), (12,), (13,)]
    # -99...9 (38 digits) truncates to -10^38, which has 39: Java refuses to write it too
    with pytest.raises(ValidationError, match=f"-{NINES} needs more digits than decimal"):
        cur.execute(f"INSERT INTO ns.e VALUES (9, -{NINES}, 0)")
    assert _rows(con, "SELECT count(*) FROM ns.e") == [(4,)]


def test_long_values_in_rolled_files_and_beside_columns_named_like_duckdb_virtual_ones(tmp_path: Path):
    """Files rolled within one partition share its digest key; a table with columns named
    ``file_row_number`` and ``file_index`` (DuckDB's virtual columns, which they hide) still
    has its long values read back."""
    con = _connect(tmp_path)
    cur = con.cursor()
    cur.execute(
        "CREATE TABLE ns.r (file_row_number bigint, file_index string, k string) USING iceberg "
        "PARTITIONED BY (k) TBLPROPERTIES ('write.target-file-size-bytes'='20000', "
        "'write.parquet.row-group-size-bytes'='8000')"
    )
    cur.execute(
        "INSERT INTO ns.r SELECT i, md5(i::VARCHAR) || md5((i * 7)::VARCHAR), repeat('v', 300) || (i % 3) "
        "FROM range(30000) t(i)"
    )
    assert _rows(con, "SELECT k, count(*), sum(file_row_number) FROM ns.r GROUP BY k") == [
        ("v" * 300 + str(m), 10000, sum(range(m, 30000, 3))) for m in range(3)
    ]
    files = _rows(con, "SELECT partition.k, file_path FROM ns.r.data_files")
    assert len(files) > 3  # rolled
    assert_java_folders(con, "ns.r", "k")
