"""Apache DataSketches theta sketches of column values: the ``apache-datasketches-theta-v1``
Puffin blob (Puffin spec):

    A serialized form of a "compact" Theta sketch produced by the Apache DataSketches
    library. The sketch is obtained by constructing Alpha family sketch with default seed,
    and feeding it with individual distinct values converted to bytes using Iceberg's
    single-value serialization.

Java (Iceberg's ``ThetaSketchAgg``) updates the sketch with the value's
``Conversions.toByteBuffer`` bytes; DataSketches hashes those bytes with MurmurHash3 x64-128
and its default seed 9001 and keeps the first 64 bits shifted right by one. The Python
binding of DataSketches only updates with ints, floats and strings (not with arbitrary
bytes), so the hashing is done here (``mmh3``, the same MurmurHash3) and the sketch is built
as the K-minimum-values set Java's sketches hold: every hash while there are at most
``k = 4096`` (Java's default nominal entries), else the ``k`` smallest with theta the next
one. Below ``k`` distinct values the sketch is exact and equal to Java's (same hashes, same
count); above, the estimate is within theta error of Java's (Java's Alpha sketch picks its
own theta) and the two can be unioned. The bytes are the compact serialization (serial
version 3, ordered), laid out as Java writes them (Spark's and iceduck's sketches of the
same values are byte-identical below ``k``) and checked by reading them back with the
``datasketches`` package.
"""

from __future__ import annotations

import heapq
import struct
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import mmh3
import pyarrow as pa

from iceduck.errors import UnsupportedError, ValidationError
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from iceduck.spec.values import to_bytes

#: Puffin blob type of a theta sketch (Puffin spec, "Blob types")
THETA_BLOB_TYPE = "apache-datasketches-theta-v1"
#: the blob property holding the sketch's estimate ("ndv": number of distinct values)
NDV_PROPERTY = "ndv"
#: DataSketches' default update seed
DEFAULT_SEED = 9001
#: Java's ``UpdateSketch.builder()`` default nominal entries (lg k = 12)
NOMINAL_ENTRIES = 4096
#: theta is a fraction of this (Java's ``Long.MAX_VALUE``)
MAX_THETA = (1 << 63) - 1

#: the types whose values can be fed to a sketch (every Iceberg primitive with a binary
#: single-value serialization Spark can read)
SKETCHABLE = (
    BooleanType, IntegerType, LongType, FloatType, DoubleType, DecimalType, DateType, TimeType,
    TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType, StringType, UUIDType,
    FixedType, BinaryType,
)  # fmt: skip

_INT_STORAGE = {
    IntegerType: (pa.int32(), "<i"),
    DateType: (pa.int32(), "<i"),
    LongType: (pa.int64(), "<q"),
    TimeType: (pa.int64(), "<q"),
    TimestampType: (pa.int64(), "<q"),
    TimestamptzType: (pa.int64(), "<q"),
    TimestampNanoType: (pa.int64(), "<q"),
    TimestamptzNanoType: (pa.int64(), "<q"),
}
_SEED_HASH_CACHE: dict[int, int] = {}

# compact serialization (DataSketches theta, serial version 3)
_SERIAL_VERSION = 3
_FAMILY_COMPACT = 3
_FLAG_READ_ONLY, _FLAG_EMPTY, _FLAG_COMPACT, _FLAG_ORDERED, _FLAG_SINGLE_ITEM = 0x02, 0x04, 0x08, 0x10, 0x20


def sketchable(t: PrimitiveType) -> bool:
    return isinstance(t, SKETCHABLE)


def value_bytes(t: PrimitiveType, values: pa.Array | pa.ChunkedArray) -> Iterator[bytes]:
    """Iceberg's single-value serialization (spec, Appendix D) of each non-null value of an
    Arrow column of type ``t``, as Spark's sketch aggregate produces it.

    One Spark rule differs from the table's type: Spark reads a ``uuid`` column as a string,
    so its sketch hashes the UUID's text (lower case, with hyphens), and so does this.
    """
    if not sketchable(t):
        raise UnsupportedError(f"cannot compute a theta sketch of a {t} column")
    column = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    column = column.drop_null()
    storage = _INT_STORAGE.get(type(t))
    if storage is not None:
        arrow_type, fmt = storage
        packer = struct.Struct(fmt)
        for v in column.cast(arrow_type).to_pylist():
            yield packer.pack(v)
        return
    if isinstance(t, UUIDType):
        for u in column.to_pylist():
            text = str(u) if isinstance(u, uuid.UUID) else _uuid_text(u)
            yield text.encode("ascii")
        return
    for v in column.to_pylist():
        yield to_bytes(t, v)


def _uuid_text(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return str(uuid.UUID(bytes=bytes(value)))
    return str(uuid.UUID(str(value)))


def theta_hash(data: bytes, seed: int = DEFAULT_SEED) -> int:
    """The 63-bit hash DataSketches keeps for ``data`` (first half of MurmurHash3 x64-128,
    shifted right by one)."""
    return mmh3.hash64(data, seed, signed=False)[0] >> 1


class ThetaSketch:
    """The K-minimum-values hash set of one column (see the module docstring)."""

    def __init__(self, k: int = NOMINAL_ENTRIES) -> None:
        if k < 16:
            raise ValidationError(f"a theta sketch needs at least 16 nominal entries, not {k}")
        self.k = k
        self._hashes: set[int] = set()
        self._theta = MAX_THETA

    def update_all(self, items: Iterable[bytes]) -> None:
        for data in items:
            h = theta_hash(data)
            if 0 < h < self._theta:
                self._hashes.add(h)
                if len(self._hashes) >= 2 * self.k:
                    self._trim()
        if len(self._hashes) > self.k:
            self._trim()

    def _trim(self) -> None:
        """Keep the ``k`` smallest hashes; theta becomes the next one."""
        smallest = heapq.nsmallest(self.k + 1, self._hashes)
        self._theta = smallest[-1]
        self._hashes = set(smallest[:-1])

    @property
    def theta(self) -> int:
        return self._theta

    def hashes(self) -> list[int]:
        """The retained hashes, ascending."""
        return sorted(self._hashes)

    @property
    def retained(self) -> int:
        return len(self._hashes)

    def estimate(self) -> float:
        """Retained entries over theta (exact below ``k`` distinct values)."""
        if self._theta == MAX_THETA:
            return float(len(self._hashes))
        return len(self._hashes) / (self._theta / MAX_THETA)

    def compact_bytes(self) -> bytes:
        """The ordered compact sketch (serial version 3) byte for byte as Java writes it:
        one preamble long for an empty or single-item sketch (the latter flagged
        ``SINGLEITEM``), else two (count, and the sampling probability p = 1.0 as a float)
        or three when estimating (theta), then the hashes in ascending order."""
        hashes = self.hashes()
        seed_hash = _seed_hash(DEFAULT_SEED)
        flags = _FLAG_READ_ONLY | _FLAG_COMPACT | _FLAG_ORDERED
        estimating = self._theta < MAX_THETA
        if not hashes and not estimating:
            return _preamble(1, flags | _FLAG_EMPTY, seed_hash)
        if len(hashes) == 1 and not estimating:
            return _preamble(1, flags | _FLAG_SINGLE_ITEM, seed_hash) + struct.pack("<q", hashes[0])
        head = _preamble(3 if estimating else 2, flags, seed_hash) + struct.pack("<if", len(hashes), 1.0)
        if estimating:
            head += struct.pack("<q", self._theta)
        return head + struct.pack(f"<{len(hashes)}q", *hashes)


def serialize_checked(sketch: ThetaSketch) -> tuple[bytes, float]:
    """The sketch's bytes, checked by reading them with the ``datasketches`` library
    (Apache DataSketches, the library Iceberg Java uses), and the library's estimate."""
    data = sketch.compact_bytes()
    library = datasketches_module()
    compact = library.compact_theta_sketch.deserialize(data, DEFAULT_SEED)
    if list(compact) != sketch.hashes():
        raise ValidationError("the theta sketch written does not read back as the same sketch")
    return data, float(compact.get_estimate())


def sketch_estimate(data: bytes) -> float:
    """The estimate of a serialized compact theta sketch (e.g. one Spark wrote)."""
    library = datasketches_module()
    return float(library.compact_theta_sketch.deserialize(bytes(data), DEFAULT_SEED).get_estimate())


def datasketches_module() -> Any:
    try:
        import datasketches
    except ImportError as exc:
        raise UnsupportedError(
            "theta sketches need the 'datasketches' package (Apache DataSketches): pip install datasketches"
        ) from exc
    return datasketches


def _preamble(pre_longs: int, flags: int, seed_hash: int) -> bytes:
    """The first preamble long: sizes, serial version, family, flags and seed hash."""
    return struct.pack("<BBBBBBH", pre_longs, _SERIAL_VERSION, _FAMILY_COMPACT, 0, 0, flags, seed_hash)


def _seed_hash(seed: int) -> int:
    """DataSketches' 16-bit seed hash: the low 16 bits of MurmurHash3 x64-128 of the seed
    as one little-endian long, hashed with seed 0."""
    cached = _SEED_HASH_CACHE.get(seed)
    if cached is None:
        cached = mmh3.hash64(struct.pack("<q", seed), 0, signed=False)[0] & 0xFFFF
        _SEED_HASH_CACHE[seed] = cached
    return cached
