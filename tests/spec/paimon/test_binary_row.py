"""BinaryRow decoding: bytes from pypaimon 2.1.0's manifests, and vectors built by the
layout rules quoted in :mod:`iceduck.spec.paimon.binary_row`."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from iceduck.errors import CorruptDataError
from iceduck.spec.paimon.binary_row import bit_set_width, decode_row
from iceduck.spec.paimon.types import PaimonType, parse_type

# ``_PARTITION`` of the two files of a pypaimon table partitioned by
# (p_int INT, p_date DATE, p_bool BOOLEAN, p_dec DECIMAL(10, 2), p_str STRING);
# the folders pypaimon wrote were p_int=7/p_date=19723/p_bool=true/p_dec=12.34/p_str=short
# and p_int=-3/p_date=-1/p_bool=false/p_dec=-0.05/p_str=a longer string
PARTITION_TYPES = [parse_type(t) for t in ("INT", "DATE", "BOOLEAN", "DECIMAL(10, 2)", "STRING")]
PARTITION_1 = bytes.fromhex(
    "00000005000000000000000007000000000000000b4d0000000000000100000000000000d20400000000000073686f7274000085"
)
PARTITION_2 = bytes.fromhex(
    "000000050000000000000000fdffffff00000000ffffffff000000000000000000000000"
    "fbffffffffffffff0f0000003000000061206c6f6e67657220737472696e6700"
)
# ``_PARTITION`` of an unpartitioned table (arity 0: just the header word)
EMPTY = bytes.fromhex("000000000000000000000000")
# ``_VALUE_STATS._MIN_VALUES`` of a file of a table written with 'metadata.stats-mode' =
# 'full' (every column has one null)
STATS_TYPES = [
    parse_type(t)
    for t in (
        "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN", "STRING", "BYTES", "DATE",
        "DECIMAL(10, 2)", "DECIMAL(30, 5)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)",
        "TIMESTAMP_LTZ(6)", "TIME(0)",
    )
]  # fmt: skip
STATS_MIN = bytes.fromhex(
    "000000110000000000000000fb00000000000000d4fe00000000000090eefeff00000000"
    "0000000000ffffff0000c0bf00000000000000205fa002c2000000000000000014000000"
    "900000000001000000000082ffffffff000000002efbffffffffffff0a000000a8000000"
    "ffffffffffffffffe8030000b8000000583e0f00c000000000000000c800000000000000"
    "0000000061206d756368206c6f6e67657220737472696e6700000000e5db64e0ef5f9369"
    "24a700000000000000accf6adc000000ffffffffffffffff0000000000000000"
)


def test_pypaimon_partitions() -> None:
    assert decode_row(PARTITION_1, PARTITION_TYPES, "m") == (7, 19723, True, Decimal("12.34"), "short")
    assert decode_row(PARTITION_2, PARTITION_TYPES, "m") == (
        -3,
        -1,
        False,
        Decimal("-0.05"),
        "a longer string",
    )
    assert decode_row(EMPTY, [], "m") == ()


def test_pypaimon_stats_of_every_atomic_type() -> None:
    assert decode_row(STATS_MIN, STATS_TYPES, "m") == (
        -5,
        -300,
        -70000,
        -(2**40),
        -1.5,
        -1e10,
        False,
        "a much longer string",
        b"\x00\x01",
        -1,  # 1969-12-31
        Decimal("-12.34"),
        Decimal("-1234567890123456789.12345"),  # not compact: 30 digits
        -1000,  # 1969-12-31 23:59:59.999, micros
        946684800000001,  # 2000-01-01 00:00:00.000001, micros: not compact
        -1000,  # nanos: millis -1 and 999000 nanos of the millisecond
        0,
        0,
    )


def _row(arity: int, slots: list[bytes], nulls: tuple[int, ...] = (), variable: bytes = b"") -> bytes:
    """A serialized row by the rules: 4-byte big-endian arity, header byte and null bits
    (bit 8 + i) padded to ``((arity + 63 + 8) / 64) * 8`` bytes, 8-byte slots, then the
    variable part."""
    bits = bytearray(bit_set_width(arity))
    for i in nulls:
        bits[(i + 8) // 8] |= 1 << ((i + 8) % 8)
    return struct.pack(">i", arity) + bytes(bits) + b"".join(s.ljust(8, b"\0") for s in slots) + variable


def test_bit_set_width() -> None:
    assert [bit_set_width(n) for n in (0, 1, 56, 57, 120, 121)] == [8, 8, 8, 16, 16, 24]


def test_nulls_and_fixed_slots() -> None:
    types = [parse_type(t) for t in ("INT", "BIGINT NOT NULL", "DOUBLE", "SMALLINT")]
    data = _row(4, [b"", struct.pack("<q", 2**62), struct.pack("<d", 0.5), struct.pack("<h", -2)], nulls=(0,))
    assert decode_row(data, types, "m") == (None, 2**62, 0.5, -2)


def test_compact_and_variable_strings() -> None:
    types = [parse_type("STRING"), parse_type("STRING"), parse_type("BYTES")]
    width = bit_set_width(3)
    seven = b"1234567" + bytes([0x80 | 7])  # compact: bytes at the slot, length in the last byte
    eight_offset = width + 3 * 8  # the variable part starts after the fixed part
    eight = struct.pack("<q", (eight_offset << 32) | 8)
    empty = bytes(7) + bytes([0x80])
    data = _row(3, [seven, eight, empty], variable=b"abcdefgh")
    assert decode_row(data, types, "m") == ("1234567", "abcdefgh", b"")


def test_decimal_and_timestamp_not_compact() -> None:
    types = [parse_type("DECIMAL(38, 2)"), parse_type("TIMESTAMP(9)"), parse_type("TIMESTAMP(6)")]
    fixed = bit_set_width(3) + 3 * 8
    unscaled = (-(10**37) - 5).to_bytes(16, "big", signed=True)
    millis = struct.pack("<q", 1_700_000_000_123)
    slots = [
        struct.pack("<q", (fixed << 32) | 16),
        struct.pack("<q", ((fixed + 16) << 32) | 456_789),
        struct.pack("<q", ((fixed + 16) << 32) | 456_789),
    ]
    data = _row(3, slots, variable=unscaled + millis)
    assert decode_row(data, types, "m") == (
        Decimal("-100000000000000000000000000000000000.05"),
        1_700_000_000_123_456_789,
        1_700_000_000_123_456,
    )


def test_nested_values_are_none() -> None:
    assert decode_row(_row(1, [struct.pack("<q", 0)]), [parse_type("ARRAY<INT>")], "m") == (None,)


STRING = [parse_type("STRING")]


@pytest.mark.parametrize(
    ("data", "types", "problem"),
    [
        (b"\x00\x00", PARTITION_TYPES, "4-byte arity"),
        (PARTITION_1[:-12], PARTITION_TYPES, "5 fields needs 48 bytes, it has 36"),
        (EMPTY, PARTITION_TYPES, "0 fields where 5"),
        (_row(1, [struct.pack("<q", (100 << 32) | 8)]), STRING, "beyond"),
        (_row(1, [b"\xff\xfe" + bytes(5) + b"\x82"]), STRING, "UTF-8"),
        (_row(1, [bytes(7) + b"\x8a"]), STRING, "at most 7"),
    ],
)
def test_corrupt_rows_name_the_file(data: bytes, types: list[PaimonType], problem: str) -> None:
    with pytest.raises(CorruptDataError, match=problem) as info:
        decode_row(data, types, "t/manifest/manifest-x-0")
    assert "t/manifest/manifest-x-0" in str(info.value)


def test_decimal_overflow_is_corrupt() -> None:
    data = _row(1, [struct.pack("<q", 123456)])
    with pytest.raises(CorruptDataError, match="does not fit"):
        decode_row(data, [parse_type("DECIMAL(3, 1)")], "m")
