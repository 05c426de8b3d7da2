"""Which buckets of a fixed-bucket Paimon table can hold the rows a filter asks for.

A table with ``bucket`` = N > 0 puts a row in bucket ``abs(hash % N)`` (Java's
``Math.abs(int % int)``), where ``hash`` is ``BinaryRow.hashCode()`` of the row's bucket
key: Java ``MurmurHashUtils.hashBytesByWords`` (MurmurHash3 x86 32-bit over the row's
4-byte little-endian words, seed 42) of the key serialised as a ``BinaryRow``. The bucket
key is option ``bucket-key``, else the primary keys without the partition keys
(``TableSchema.bucketKeys``). When the filter pins every bucket-key column to ``=`` or
``IN`` values, only the buckets of those values are read (Paimon's
``BucketSelectConverter``); ``bucket-function.type`` other than ``default`` is not pruned.

The ``BinaryRow`` is laid out as Java's ``BinaryRowWriter`` writes it (the layout
:mod:`iceduck.spec.paimon.binary_row` reads): a header byte (row kind 0) and null bits in
``((arity + 63 + 8) // 64) * 8`` bytes, one 8-byte slot per field, then the variable part;
BOOLEAN/TINYINT/SMALLINT/INT/DATE/BIGINT little-endian in the slot; a string of at most 7
UTF-8 bytes (VARCHAR) in the slot with ``0x80 | length`` in its last byte, a longer one in the
variable part (zero-padded to 8 bytes) with ``offset << 32 | length`` in the slot. Other
key types are not pruned (their encodings are not needed to read correctly).
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Sequence
from typing import Any

from iceduck.scan.paimon.filters import split_conjuncts
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.predicates import BooleanExpression, Op
from iceduck.spec.paimon.schema import DataField, TableSchema

#: at most this many bucket-key value combinations are hashed; more reads every bucket
MAX_COMBINATIONS = 1000
_SEED = 42
_FIXED = {"BOOLEAN": "<?", "TINYINT": "<b", "SMALLINT": "<h", "INT": "<i", "DATE": "<i", "BIGINT": "<q"}
#: CHAR is left out: whether a value is hashed padded depends on the writer
_STRINGS = ("VARCHAR",)


def bucket_key_fields(schema: TableSchema) -> list[DataField]:
    """``bucket-key``, else the trimmed primary keys (Java ``TableSchema.bucketKeys``)."""
    configured = schema.options.get("bucket-key", "").strip()
    if configured:
        by_name = {f.name: f for f in schema.fields}
        names = [k.strip() for k in configured.split(",") if k.strip()]
        if any(n not in by_name for n in names):
            return []  # a misconfigured bucket key prunes nothing
        return [by_name[n] for n in names]
    return list(schema.trimmed_primary_key_fields) if schema.primary_keys else []


def binary_row(values: Sequence[Any], fields: Sequence[DataField]) -> bytes | None:
    """``values`` as a ``BinaryRow``'s bytes (without the serialised arity); None when a
    type is one this module does not lay out."""
    arity = len(values)
    width = ((arity + 63 + 8) // 64) * 8
    fixed = bytearray(width + 8 * arity)
    variable = bytearray()
    for i, (v, f) in enumerate(zip(values, fields, strict=True)):
        slot = width + 8 * i
        root = f.type.root
        if v is None:
            fixed[(i + 8) // 8] |= 1 << ((i + 8) % 8)
        elif root in _FIXED:
            try:
                packed = struct.pack(_FIXED[root], v)
            except struct.error:  # not a value of the column's type
                return None
            fixed[slot : slot + len(packed)] = packed
        elif root in _STRINGS and isinstance(v, str):
            data = v.encode()
            if len(data) <= 7:
                fixed[slot : slot + len(data)] = data
                fixed[slot + 7] = 0x80 | len(data)
            else:
                offset = len(fixed) + len(variable)
                fixed[slot : slot + 8] = struct.pack("<q", (offset << 32) | len(data))
                variable += data + b"\0" * (-len(data) % 8)
        else:
            return None
    return bytes(fixed + variable)


def murmur_words(data: bytes, seed: int = _SEED) -> int:
    """Java ``MurmurHashUtils.hashBytesByWords``: MurmurHash3's body over the 4-byte words
    (a BinaryRow is a whole number of words), then its finalisation; a signed int."""
    h = seed
    for (k,) in struct.iter_unpack("<I", data[: len(data) - len(data) % 4]):
        k = (k * 0xCC9E2D51) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * 0x1B873593) & 0xFFFFFFFF
        h ^= k
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def bucket_of(row: bytes, total_buckets: int) -> int:
    """``Math.abs(hash % numBuckets)`` (Java's ``%`` truncates toward zero)."""
    h = murmur_words(row)
    return abs(h - int(h / total_buckets) * total_buckets)


class BucketSelector:
    """The buckets a filter leaves, per total bucket count (a rescaled table's files
    carry different ``_TOTAL_BUCKETS``)."""

    def __init__(self, rows: list[bytes]) -> None:
        self.rows = rows
        self._by_total: dict[int, frozenset[int]] = {}

    def may_contain(self, bucket: int, total_buckets: int) -> bool:
        if total_buckets <= 0 or bucket < 0:
            return True
        chosen = self._by_total.get(total_buckets)
        if chosen is None:
            chosen = self._by_total[total_buckets] = frozenset(bucket_of(r, total_buckets) for r in self.rows)
        return bucket in chosen


def bucket_selector(schema: TableSchema, bound: BooleanExpression) -> BucketSelector | None:
    """A selector when ``bound`` (a bound filter's conjuncts) pins every bucket-key column
    of a fixed-bucket table to finitely many values; None when every bucket must be read."""
    function = schema.options.get("bucket-function.type", "default").strip().lower()
    if schema.bucket <= 0 or function != "default":
        return None
    fields = bucket_key_fields(schema)
    if not fields:
        return None
    choices: dict[int, set[Any]] = {}
    for c in split_conjuncts(bound):
        if isinstance(c, BoundPredicate) and c.ref.accessor is not None and len(c.ref.accessor) == 1:
            values = _values(c)
            if values is not None:
                prior = choices.get(c.ref.field_id)
                choices[c.ref.field_id] = values if prior is None else prior & values
    if any(f.id not in choices for f in fields):
        return None
    combos = 1
    for f in fields:
        combos *= len(choices[f.id])
    if combos > MAX_COMBINATIONS:
        return None
    rows = []
    for combo in itertools.product(*(sorted(choices[f.id], key=repr) for f in fields)):
        row = binary_row(combo, fields)
        if row is None:
            return None
        rows.append(row)
    return BucketSelector(rows)


def _values(p: BoundPredicate) -> set[Any] | None:
    if p.op is Op.EQ:
        return {p.literal}
    if p.op is Op.IN and p.literals is not None:
        return set(p.literals)
    return None
