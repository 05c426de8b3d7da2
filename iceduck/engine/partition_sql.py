"""Iceberg partition transforms as DuckDB SQL (spec: "Partition Transforms", "Bucket
Transform Details", "Truncate Transform Details", Appendix B).

:func:`transform_sql` turns ``transform(column)`` into a DuckDB expression whose values are
exactly those of :mod:`iceduck.spec.transforms` (tested value by value against it), so a
writer can split, sort and label rows inside one DuckDB query:

* temporal transforms work on integers (``epoch_us``/``epoch_ns``, days since 1970) with
  floor division, as Java's ``floorDiv`` ("1969-12-31T23:59:59.999999" is day -1), and
  never on a session time zone (``year(timestamptz)`` would depend on it);
* ``bucket[N]`` is "(murmur3_x86_32_hash(x) & Integer.MAX_VALUE) % N" with the hash computed
  by vectorised Arrow UDFs registered in the database (:func:`register_hash_functions`):
  a numpy murmur3 of the 8 little-endian bytes for int, long, date, time and timestamps
  ("Integer and long hash results must be identical"), and ``mmh3`` over the bytes of
  strings (UTF-8), binary, uuid (16 bytes big-endian) and decimals (minimum big-endian
  two's-complement bytes of the unscaled value);
* ``truncate[W]`` floors numbers to a multiple of W (decimals on the unscaled value, which
  DuckDB's exact decimal ``%`` gives), and keeps the first W code points / bytes.

:func:`partition_key_sql` renders a partition value as the short text DuckDB's
``PARTITION_BY`` splits on and names its temporary folders after (``<column>=<key>``); it
hands the keys back as text. Keys are bounded whatever the value (at most
:data:`MAX_KEY_CHARS` characters): a string, binary or fixed value of more than
:data:`MAX_INLINE_BYTES` bytes is keyed by its SHA-256 instead of its hex, so no value can
make a folder name too long for the file system. Such a *digest key* is mapped back to the
value by reading one row of a file written under it (:func:`partition_value_sql`, the
lossless text of any value), which :func:`parse_partition_key` parses.

Decimal partition values are handled as exact integers of their unscaled value: Python's
default ``decimal`` context rounds at 28 digits, and decimal(38, S) holds 38.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import mmh3
import numpy as np
import pyarrow as pa

from iceduck.engine.connection import database_of
from iceduck.engine.types import duckdb_type, quote_string
from iceduck.engine.write_columns import CHECK
from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.spec.expressions.literals import decimal_of
from iceduck.spec.hashing import min_big_endian, unscaled_at_scale
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
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

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: the names of the murmur3 UDFs start with it
_HASH_PREFIX = "__iceduck_murmur3_"
HASH_LONG = "__iceduck_murmur3_long"
HASH_BYTES = "__iceduck_murmur3_bytes"
HASH_DECIMAL = "__iceduck_murmur3_decimal"

_MICROS = (TimestampType, TimestamptzType)
_NANOS = (TimestampNanoType, TimestamptzNanoType)
_INTEGRAL = (IntegerType, LongType, DateType, TimeType, *_MICROS, *_NANOS)
_MICROS_PER_DAY = 86_400_000_000
_MICROS_PER_HOUR = 3_600_000_000
_NANOS_PER_DAY = 86_400_000_000_000
_NANOS_PER_HOUR = 3_600_000_000_000

# -- murmur3 ------------------------------------------------------------------------------

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_block(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    k = _rotl(k * _C1, 15) * _C2
    h = _rotl(h ^ k, 13)
    return h * np.uint32(5) + np.uint32(0xE6546B64)


def murmur3_long_array(values: np.ndarray) -> np.ndarray:
    """Murmur3 x86 32-bit (seed 0) of each int64's 8 little-endian bytes, as signed int32.

    The same value as :func:`iceduck.spec.hashing.hash_long`, for a whole column at once:
    two 4-byte blocks (low word first), then the finaliser with length 8.
    """
    v = np.ascontiguousarray(values, dtype="<i8").view("<u4").reshape(-1, 2)
    with np.errstate(over="ignore"):
        h = np.zeros(len(v), dtype=np.uint32)
        h = _mix_block(h, v[:, 0].copy())
        h = _mix_block(h, v[:, 1].copy())
        h ^= np.uint32(8)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h.view(np.int32)


def _hash_long_udf(values: pa.Array) -> pa.Array:
    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    hashes = murmur3_long_array(array.fill_null(0).to_numpy(zero_copy_only=False))
    return pa.array(hashes, type=pa.int32(), mask=array.is_null().to_numpy(zero_copy_only=False))


def _hash_bytes_udf(values: pa.Array) -> pa.Array:
    return pa.array(
        [None if b is None else mmh3.hash(b, 0, signed=True) for b in values.to_pylist()], type=pa.int32()
    )


def _hash_decimal_udf(values: pa.Array, scales: pa.Array) -> pa.Array:
    """Decimals arrive as text (exact) with the column's scale: the unscaled value at that
    scale is hashed as "minBigEndian(unscaled(v))"."""
    out: list[int | None] = []
    for text, scale in zip(values.to_pylist(), scales.to_pylist(), strict=True):
        if text is None:
            out.append(None)
        else:
            unscaled = unscaled_at_scale(Decimal(text), scale)
            out.append(mmh3.hash(min_big_endian(unscaled), 0, signed=True))
    return pa.array(out, type=pa.int32())


#: the databases the murmur3 UDFs were created in: creating them again costs about 0.7 ms a
#: write (0.4 ms to find they exist), measured over one-row INSERTs; a DuckDB function
#: belongs to the database, seen by all its cursors (tested), for the database's life; weak,
#: so a closed database is forgotten with it
_REGISTERED: weakref.WeakSet[Any] = weakref.WeakSet()


def uses_hash_functions(sql: str) -> bool:
    """Whether ``sql`` calls one of the murmur3 UDFs (only ``bucket[N]`` does, through
    :func:`hash_input_sql`), so a writer creates them only for a statement that needs them."""
    return _HASH_PREFIX in sql


def register_hash_functions(con: Duck) -> bool:
    """Register the murmur3 UDFs in the database of ``con`` (a DuckDB database, or a cursor
    of :func:`~iceduck.engine.connection.open_cursor`) unless they were registered in it
    already; whether DuckDB was asked (False: remembered for this database). Idempotent.
    """
    database = database_of(con)
    if database in _REGISTERED:
        return False
    from duckdb import CatalogException, NotImplementedException
    from duckdb.sqltypes import BIGINT, BLOB, INTEGER, VARCHAR

    specs: tuple[tuple[str, Callable[..., Any], list[Any]], ...] = (
        (HASH_LONG, _hash_long_udf, [BIGINT]),
        (HASH_BYTES, _hash_bytes_udf, [BLOB]),
        (HASH_DECIMAL, _hash_decimal_udf, [VARCHAR, INTEGER]),
    )
    # typed loosely: DuckDB's stubs ask for its enums, which moved between releases; the
    # strings mean the same from DuckDB 1.1 on
    create: Any = con.create_function
    for name, fn, params in specs:
        try:
            create(name, fn, params, INTEGER, type="arrow", null_handling="special")
        except (CatalogException, NotImplementedException) as e:
            if "already" not in str(e).lower():
                raise
    _REGISTERED.add(database)
    return True


def _floor_div(x: str, d: int) -> str:
    """Exact floor division of an integer expression (DuckDB's ``//`` truncates)."""
    return f"(({x}) - ((({x}) % {d}) + {d}) % {d}) // {d}"


def _days(t: IcebergType, column: str) -> str:
    """Days from 1970-01-01 of a date or timestamp, floored (BIGINT)."""
    if isinstance(t, DateType):
        return f"(CAST({column} AS DATE) - DATE '1970-01-01')"
    if isinstance(t, _MICROS):
        return _floor_div(f"epoch_us({column})", _MICROS_PER_DAY)
    return _floor_div(f"epoch_ns({column})", _NANOS_PER_DAY)


def _as_date(days: str) -> str:
    return f"(DATE '1970-01-01' + CAST({days} AS INTEGER))"


def hash_input_sql(t: IcebergType, column: str) -> str:
    """The 32-bit hash (Appendix B) of a column as a DuckDB INTEGER expression."""
    if isinstance(t, IntegerType | LongType):
        return f"{HASH_LONG}(CAST({column} AS BIGINT))"
    if isinstance(t, DateType | TimeType | TimestampType | TimestamptzType):
        micros = f"epoch_us({column})" if isinstance(t, TimeType | TimestampType | TimestamptzType) else None
        return f"{HASH_LONG}({micros or _days(t, column)})"
    if isinstance(t, _NANOS):  # "converted to microsecond precision before hashing", floored
        return f"{HASH_LONG}({_floor_div(f'epoch_ns({column})', 1000)})"
    if isinstance(t, StringType):
        return f"{HASH_BYTES}(encode({column}))"
    if isinstance(t, UUIDType):
        return f"{HASH_BYTES}(unhex(replace(CAST({column} AS VARCHAR), '-', '')))"
    if isinstance(t, BinaryType | FixedType):
        return f"{HASH_BYTES}(CAST({column} AS BLOB))"
    if isinstance(t, DecimalType):
        return f"{HASH_DECIMAL}(CAST({column} AS VARCHAR), {t.scale})"
    raise UnsupportedError(f"bucket of {t} is not supported")


def transform_sql(transform: Transform, source_type: IcebergType, column: str) -> str:
    """``transform(column)`` as DuckDB SQL, of the DuckDB type of the transform's result
    (day/year/month/hour/bucket as INTEGER ordinals; identity/truncate keep the type).

    Raises :class:`~iceduck.errors.UserError` (from ``result_type``) for a transform the type
    does not accept, and :class:`UnsupportedError` for unknown transforms.
    """
    transform.result_type(source_type)  # validates the pair
    if isinstance(transform, IdentityTransform):
        return column
    if isinstance(transform, VoidTransform):
        return f"CAST(NULL AS {duckdb_type(source_type)})"
    if isinstance(transform, BucketTransform):
        hashed = hash_input_sql(source_type, column)
        return f"CAST(({hashed} & 2147483647) % {transform.num_buckets} AS INTEGER)"
    if isinstance(transform, TruncateTransform):
        return _truncate_sql(transform.width, source_type, column)
    if isinstance(transform, DayTransform):
        return f"CAST({_days(source_type, column)} AS INTEGER)"
    if isinstance(transform, YearTransform | MonthTransform):
        date = column if isinstance(source_type, DateType) else _as_date(_days(source_type, column))
        years = f"(year({date}) - 1970)"
        if isinstance(transform, YearTransform):
            return f"CAST({years} AS INTEGER)"
        return f"CAST({years} * 12 + month({date}) - 1 AS INTEGER)"
    if isinstance(transform, HourTransform):
        if isinstance(source_type, _MICROS):
            return f"CAST({_floor_div(f'epoch_us({column})', _MICROS_PER_HOUR)} AS INTEGER)"
        return f"CAST({_floor_div(f'epoch_ns({column})', _NANOS_PER_HOUR)} AS INTEGER)"
    raise UnsupportedError(f"cannot write data with partition transform {transform}")


def _truncate_sql(width: int, t: IcebergType, column: str) -> str:
    if isinstance(t, IntegerType | LongType):
        wide = f"CAST({column} AS HUGEINT)"
        return f"CAST({wide} - ((({wide} % {width}) + {width}) % {width}) AS {duckdb_type(t)})"
    if isinstance(t, DecimalType):
        return _truncate_decimal_sql(width, t, column)
    if isinstance(t, StringType):
        return f"left({column}, {width})"  # code points, "no more than L code points"
    if isinstance(t, BinaryType):
        return f"unhex(left(hex({column}), {2 * width}))"
    raise UnsupportedError(f"truncate of {t} is not supported")


def _decimal_literal(unscaled: int, scale: int) -> str:
    """``unscaled * 10**-scale`` as an exact DuckDB DECIMAL(38, scale), written out in
    plain digits (DuckDB does not read ``5.0E-37``, which is how ``str`` prints it)."""
    return f"CAST('{format(decimal_of(unscaled, scale), 'f')}' AS DECIMAL(38, {scale}))"


def _truncate_decimal_sql(width: int, t: DecimalType, column: str) -> str:
    """``v - (((v % W) + W) % W)`` with ``W`` in units of the last digit ("scaled_W =
    decimal(W, scale(v))": truncate[50] of decimal(9, 2) steps by 0.50), in DuckDB's exact
    decimals.

    Flooring a negative value can need one digit more than the type holds (truncate[10] of
    decimal(38, 0)'s -99999999999999999999999999999999999999 is -10^38). Java computes that
    value and then refuses to write it ("Cannot write value as decimal(38,0), too large");
    here the statement fails with a :class:`ValidationError` naming the value, before
    DuckDB's own overflow error (which would name neither the column nor the transform).
    """
    step = _decimal_literal(width, t.scale)
    rest = f"((({column} % {step}) + {step}) % {step})"
    lowest = _decimal_literal(-(10**t.precision - 1), t.scale)
    message = quote_string(f"{CHECK}truncate[{width}] of {column} value ")
    suffix = quote_string(f" needs more digits than {t} holds")
    overflow = f"error({message} || CAST({column} AS VARCHAR) || {suffix})"
    return (
        f"CASE WHEN {column} < {lowest} + {rest} THEN {overflow} "
        f"ELSE CAST({column} - {rest} AS {duckdb_type(t)}) END"
    )


# -- partition keys: text that DuckDB's PARTITION_BY returns and Python parses back ---------

#: string, binary and fixed values up to this many bytes are keyed by their hex (``x...``);
#: longer ones by SHA-256, which costs time (DuckDB's ``sha256`` of 2M 100-byte values: 0.55 s
#: more than ``hex`` on 2 cores, measured) and one row group read per partition: 64 keeps every
#: folder name DuckDB makes under 143 bytes (Java's own names for such values are about as long)
MAX_INLINE_BYTES = 64
#: the longest key: ``x`` + 128 hex digits (a digest key is ``h`` + 64 hex digits)
MAX_KEY_CHARS = 1 + 2 * MAX_INLINE_BYTES
#: first character of a digest key: hex keys start with ``x``, and no other key starts with
#: ``h`` (digits, signs, decimal points, uuids' hex digits, ``inf``, ``nan``, ``NULL``)
DIGEST_PREFIX = "h"
HEX_PREFIX = "x"


def _bytes_sql(t: IcebergType, value: str) -> str | None:
    """The bytes of a string (UTF-8), binary or fixed value as a BLOB; None for other types."""
    if isinstance(t, StringType):
        return f"encode({value})"
    if isinstance(t, BinaryType | FixedType):
        return f"CAST({value} AS BLOB)"
    return None


def _scalar_text_sql(transform: Transform, t: IcebergType, value: str) -> str:
    """Lossless, bounded text of a value of a type that is not a byte sequence."""
    if isinstance(transform, DayTransform) or isinstance(t, IntegerType | LongType):
        return f"CAST({value} AS VARCHAR)"
    if isinstance(t, BooleanType):
        return f"CAST(CAST({value} AS INTEGER) AS VARCHAR)"
    if isinstance(t, DateType):
        return f"CAST(CAST({value} AS DATE) - DATE '1970-01-01' AS VARCHAR)"
    if isinstance(t, TimeType | TimestampType | TimestamptzType):
        return f"CAST(epoch_us({value}) AS VARCHAR)"
    if isinstance(t, _NANOS):
        return f"CAST(epoch_ns({value}) AS VARCHAR)"
    if isinstance(t, DecimalType | UUIDType | FloatType | DoubleType):
        return f"CAST({value} AS VARCHAR)"
    raise UnsupportedError(f"cannot partition by a value of type {t}")


def partition_key_sql(transform: Transform, source_type: IcebergType, column: str) -> str:
    """Bounded text of ``transform(column)`` that DuckDB's ``PARTITION_BY`` splits rows on and
    names a temporary folder after (NULL stays NULL); never longer than
    :data:`MAX_KEY_CHARS`, whatever the value, so no value makes that folder name too long.

    Integers, dates and times as digits, decimals, uuids and floats as DuckDB prints them
    (exact, bounded by the type; -0.0 prints as 0.0), strings (UTF-8) and bytes up to
    :data:`MAX_INLINE_BYTES` as ``x`` + hex (safe in a folder name on any file system, also
    case-insensitive ones, and never empty), longer ones as ``h`` + their SHA-256 in hex: a
    digest key, which :func:`partition_value_sql` maps back to the value. SHA-256 rather than
    a shorter hash: two values sharing a key would share a data file, so the key must not
    collide even for values chosen to collide.
    """
    value = transform_sql(transform, source_type, column)
    t = transform.result_type(source_type)
    data = _bytes_sql(t, value)
    if data is None:
        return _scalar_text_sql(transform, t, value)
    return (
        f"CASE WHEN octet_length({data}) <= {MAX_INLINE_BYTES} THEN '{HEX_PREFIX}' || hex({data}) "
        f"ELSE '{DIGEST_PREFIX}' || sha256({data}) END"
    )


def partition_value_sql(transform: Transform, source_type: IcebergType, column: str) -> str:
    """Lossless text of ``transform(column)`` whatever its length, which
    :func:`parse_partition_key` reads: the key itself, except that strings and bytes are
    always ``x`` + hex. Used to map a digest key back to its value from a written row."""
    value = transform_sql(transform, source_type, column)
    t = transform.result_type(source_type)
    data = _bytes_sql(t, value)
    return _scalar_text_sql(transform, t, value) if data is None else f"('{HEX_PREFIX}' || hex({data}))"


def may_have_digest_keys(result_type: IcebergType) -> bool:
    """Whether partition values of ``result_type`` can get a digest key (strings and bytes)."""
    return isinstance(result_type, StringType | BinaryType | FixedType)


def is_digest_key(text: str | None) -> bool:
    """Whether a key from :func:`partition_key_sql` stands for a value it does not spell out."""
    return text is not None and text.startswith(DIGEST_PREFIX)


def parse_partition_key(result_type: IcebergType, text: str | None) -> Any:
    """The Python partition value (:mod:`iceduck.spec.types` representation) of a key or of
    a value text from :func:`partition_value_sql` (not of a digest key).

    Decimals are built from their unscaled integer (``Decimal.quantize`` would round to the
    context's 28 digits, and fail on 29 or more: decimal(38, S) holds 38).
    """
    if text is None or text == "NULL":
        return None
    t = result_type
    if isinstance(t, BooleanType):
        return text == "1"
    if isinstance(t, _INTEGRAL):
        return int(text)
    if may_have_digest_keys(t):
        if not text.startswith(HEX_PREFIX):  # a digest key must be mapped back first
            raise CorruptDataError(f"partition key {text[:80]!r} does not spell out its value")
        data = bytes.fromhex(text[1:])
        return data.decode("utf-8") if isinstance(t, StringType) else data
    if isinstance(t, DecimalType):
        return decimal_of(unscaled_at_scale(Decimal(text), t.scale), t.scale)
    if isinstance(t, UUIDType):
        return uuid.UUID(text)
    if isinstance(t, FloatType | DoubleType):
        return float(text)
    raise UnsupportedError(f"cannot partition by a value of type {t}")
