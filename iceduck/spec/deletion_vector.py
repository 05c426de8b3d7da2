"""Deletion vectors: the set of deleted row positions of ONE data file (Iceberg v3).

Table spec, "Deletion Vectors":

    Deletion vectors identify deleted rows of a file by encoding deleted positions in a
    bitmap. A set bit at position P indicates that the row at position P is deleted.

    Deletion vectors support positive 64-bit positions, but are optimized for cases where
    most positions fit in 32 bits by using a collection of 32-bit Roaring bitmaps. 64-bit
    positions are divided into a 32-bit "key" using the most significant 4 bytes and a
    32-bit sub-position using the least significant 4 bytes. For each key in the set of
    positions, a 32-bit Roaring bitmap is maintained to store a set of 32-bit
    sub-positions for that key.

:class:`DeletionVector` keeps exactly that structure -- a dict of pyroaring 32-bit
``BitMap`` keyed by the high 32 bits -- because it maps one to one onto the portable
64-bit serialization of the ``deletion-vector-v1`` Puffin blob (see
:mod:`iceduck.formats.deletion_vector`), and because pyroaring's ``BitMap64`` is an
order of magnitude slower to build and serialize for scattered positions.

The model is only the set of positions; which data file it belongs to is recorded
next to it (the Puffin blob's ``referenced-data-file`` property, the manifest entry's
``referenced_data_file``). Pure model: no I/O.

Bulk operations (construction from arrays, :meth:`DeletionVector.to_numpy`,
:meth:`DeletionVector.range_arrays`) are vectorized with numpy so that readers can hand
millions of positions to DuckDB without per-row Python loops.
"""

from __future__ import annotations

import array
import itertools
import operator
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from pyroaring import BitMap

from iceduck.errors import ValidationError

if TYPE_CHECKING:
    import pyarrow as pa

#: Largest row position: "the most significant bit must be 0" (Puffin spec,
#: ``deletion-vector-v1``), i.e. positions are non-negative signed 64-bit longs.
MAX_POSITION = (1 << 63) - 1
#: Keys (high 32 bits of a position) are therefore below 2**31.
MAX_KEY = (1 << 31) - 1

_LOW_BITS = 0xFFFFFFFF
_KEY_SPAN = 1 << 32
# ranges() scans a 32-bit bitmap in windows of this many positions (16 roaring
# containers): a full window is one range without materializing it, and a partial one
# is decoded into at most 4 MiB of uint32.
_RANGE_WINDOW = 1 << 20

PositionsLike = Any  # Iterable[int] | numpy array | pyarrow (Chunked)Array of integers


class DeletionVector:
    """The deleted row positions (0-based, 64-bit) of one data file.

    Mutable like a set: :meth:`add`, :meth:`add_range` and :meth:`update` only ever add
    positions (writers "must merge new deletes with existing vectors or position delete
    files", table spec "Delete Formats"). Equality compares the positions.
    """

    __slots__ = ("_bitmaps",)
    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(self, positions: PositionsLike | None = None) -> None:
        # invariant: keys in [0, MAX_KEY], every stored bitmap is non-empty
        self._bitmaps: dict[int, BitMap] = {}
        if positions is not None:
            self.update(positions)

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_range(cls, start: int, end: int) -> DeletionVector:
        """A vector deleting every position in ``[start, end)``."""
        dv = cls()
        dv.add_range(start, end)
        return dv

    @classmethod
    def from_bitmaps(cls, bitmaps: Iterable[tuple[int, BitMap]]) -> DeletionVector:
        """Build from ``(key, 32-bit bitmap)`` pairs, taking ownership of the bitmaps.

        This is the structure the spec describes (and the serialized layout): ``key`` is
        the high 32 bits of the positions, the bitmap holds their low 32 bits. Empty
        bitmaps are dropped; repeated keys are unioned.
        """
        dv = cls()
        for key, bitmap in bitmaps:
            _check_key(key)
            if not isinstance(bitmap, BitMap):
                raise ValidationError(f"deletion vector bitmap for key {key} must be a pyroaring BitMap")
            if not bitmap:
                continue
            existing = dv._bitmaps.get(key)
            if existing is None:
                dv._bitmaps[key] = bitmap
            else:
                existing |= bitmap
        return dv

    def copy(self) -> DeletionVector:
        return DeletionVector.from_bitmaps((key, BitMap(bm)) for key, bm in self._bitmaps.items())

    # -- mutation ----------------------------------------------------------------------

    def add(self, position: int) -> None:
        """Mark one row position deleted."""
        position = _check_position(position)
        key = position >> 32
        bitmap = self._bitmaps.get(key)
        if bitmap is None:
            bitmap = self._bitmaps[key] = BitMap()
        bitmap.add(position & _LOW_BITS)

    def add_range(self, start: int, end: int) -> None:
        """Mark every position in ``[start, end)`` deleted (no-op when empty)."""
        start = _check_position(start)
        end = operator.index(end)
        if end > MAX_POSITION + 1:
            raise ValidationError(f"deletion vector range end {end} exceeds {MAX_POSITION + 1}")
        if end <= start:
            return
        for key in range(start >> 32, ((end - 1) >> 32) + 1):
            base = key << 32
            low = max(start, base) - base
            high = min(end, base + _KEY_SPAN) - base
            bitmap = self._bitmaps.get(key)
            if bitmap is None:
                bitmap = self._bitmaps[key] = BitMap()
            bitmap.add_range(low, high)

    def update(self, other: DeletionVector | PositionsLike) -> None:
        """Union ``other`` (a vector, or integer positions) into this vector in place."""
        if isinstance(other, DeletionVector):
            for key, bitmap in other._bitmaps.items():
                mine = self._bitmaps.get(key)
                if mine is None:
                    self._bitmaps[key] = BitMap(bitmap)
                else:
                    mine |= bitmap
            return
        if isinstance(other, range) and other.step == 1:
            if len(other):
                self.add_range(other.start, other.stop)
            return
        for key, low in _split_positions(_as_position_array(other)):
            bitmap = BitMap(array.array("I", low.tobytes()))
            mine = self._bitmaps.get(key)
            if mine is None:
                self._bitmaps[key] = bitmap
            else:
                mine |= bitmap

    merge = update

    def union(self, other: DeletionVector | PositionsLike) -> DeletionVector:
        """A new vector with the positions of both."""
        result = self.copy()
        result.update(other)
        return result

    def __or__(self, other: DeletionVector) -> DeletionVector:
        if not isinstance(other, DeletionVector):
            return NotImplemented
        return self.union(other)

    def __ior__(self, other: DeletionVector) -> DeletionVector:
        if not isinstance(other, DeletionVector):
            return NotImplemented
        self.update(other)
        return self

    def run_optimize(self) -> None:
        """Use run containers wherever they are smaller (Iceberg Java's ``runLengthEncode``
        before serializing). Changes the representation only, never the positions."""
        for bitmap in self._bitmaps.values():
            bitmap.run_optimize()

    # -- queries -----------------------------------------------------------------------

    def __contains__(self, position: object) -> bool:
        try:
            position = operator.index(position)  # type: ignore[arg-type]
        except TypeError:
            return False
        if position < 0 or position > MAX_POSITION:
            return False
        bitmap = self._bitmaps.get(position >> 32)
        return bitmap is not None and (position & _LOW_BITS) in bitmap

    def __len__(self) -> int:
        """The cardinality: the number of deleted positions."""
        return sum(len(bitmap) for bitmap in self._bitmaps.values())

    @property
    def cardinality(self) -> int:
        return len(self)

    def __bool__(self) -> bool:
        return bool(self._bitmaps)

    def __iter__(self) -> Iterator[int]:
        """Positions in ascending order (one Python int each: prefer :meth:`to_numpy`)."""
        for key, bitmap in self.bitmaps():
            base = key << 32
            for low in bitmap:
                yield base | low

    def min(self) -> int:
        if not self._bitmaps:
            raise ValidationError("an empty deletion vector has no minimum position")
        key = min(self._bitmaps)
        return (key << 32) | self._bitmaps[key].min()

    def max(self) -> int:
        if not self._bitmaps:
            raise ValidationError("an empty deletion vector has no maximum position")
        key = max(self._bitmaps)
        return (key << 32) | self._bitmaps[key].max()

    def bitmaps(self) -> list[tuple[int, BitMap]]:
        """The non-empty ``(key, 32-bit bitmap)`` pairs in ascending key order.

        The bitmaps are the vector's own (no copy, for the serializer): do not mutate them.
        """
        return sorted(self._bitmaps.items())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeletionVector):
            return NotImplemented
        return self._bitmaps == other._bitmaps

    def __repr__(self) -> str:
        if not self._bitmaps:
            return "DeletionVector([])"
        return f"DeletionVector(cardinality={len(self)}, min={self.min()}, max={self.max()})"

    # -- bulk export -------------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """All positions, ascending, as a numpy ``int64`` array (Iceberg ``long``)."""
        parts = []
        for key, bitmap in self.bitmaps():
            positions = np.frombuffer(bitmap.to_array(), dtype=np.uint32).astype(np.int64)
            if key:
                positions |= np.int64(key << 32)
            parts.append(positions)
        if not parts:
            return np.empty(0, dtype=np.int64)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def to_array(self) -> pa.Array:
        """All positions, ascending, as a pyarrow ``int64`` array."""
        import pyarrow as pa

        return pa.array(self.to_numpy(), type=pa.int64())

    def range_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Maximal runs of deleted positions as ``(starts, ends)`` int64 arrays, ``[start, end)``.

        Clustered deletes (``DELETE ... WHERE`` on a sorted column) become a handful of
        ranges: full 2**20-position windows are recognized without decoding them, so a
        range of a billion rows costs a thousand bitmap operations, not a billion.
        """
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        for key, bitmap in self.bitmaps():
            base = np.int64(key << 32)
            for run_starts, run_ends in _bitmap_runs(bitmap):
                starts.append(run_starts + base)
                ends.append(run_ends + base)
        if not starts:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty.copy()
        return _coalesce(np.concatenate(starts), np.concatenate(ends))

    def ranges(self) -> Iterator[tuple[int, int]]:
        """Maximal runs of deleted positions, ascending, as ``(start, end)`` half-open pairs."""
        starts, ends = self.range_arrays()
        return zip(starts.tolist(), ends.tolist(), strict=True)


# -- helpers -----------------------------------------------------------------------------


def _check_position(position: int) -> int:
    try:
        position = operator.index(position)
    except TypeError:
        raise ValidationError(f"a row position must be an integer, not {type(position).__name__}") from None
    if position < 0 or position > MAX_POSITION:
        raise ValidationError(f"row position {position} is outside [0, {MAX_POSITION}]")
    return position


def _check_key(key: int) -> None:
    if not isinstance(key, int) or key < 0 or key > MAX_KEY:
        raise ValidationError(f"deletion vector key {key!r} is outside [0, {MAX_KEY}]")


def _as_position_array(values: PositionsLike) -> np.ndarray:
    """Validate integer positions and return them as a uint64 numpy array."""
    if isinstance(values, np.ndarray) or hasattr(values, "__array__"):
        arr = np.asarray(values)
        if arr.size == 0:
            return np.empty(0, dtype=np.uint64)
        if arr.dtype.kind not in "iu":
            raise ValidationError(f"row positions must be integers without nulls, not {arr.dtype}")
        arr = arr.ravel()
    else:
        try:
            items = [_check_position(v) for v in values]
        except TypeError:
            raise ValidationError(f"row positions must be an iterable of integers, not {values!r}") from None
        arr = np.array(items, dtype=np.uint64)
    if arr.size == 0:
        return np.empty(0, dtype=np.uint64)
    if arr.dtype.kind == "i":
        smallest = int(arr.min())
        if smallest < 0:
            raise ValidationError(f"row position {smallest} is negative")
    elif int(arr.max()) > MAX_POSITION:
        raise ValidationError(f"row position {int(arr.max())} exceeds {MAX_POSITION}")
    return arr.astype(np.uint64, copy=False)


def _split_positions(positions: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """Sort uint64 positions and split them into (key, sorted uint32 low bits) groups."""
    if positions.size == 0:
        return
    if int(positions.max()) <= _LOW_BITS:  # the common case: all positions below 2**32
        yield 0, np.sort(positions.astype(np.uint32))
        return
    ordered = np.sort(positions)
    keys = ordered >> np.uint64(32)
    low = (ordered & np.uint64(_LOW_BITS)).astype(np.uint32)
    if keys[-1] == keys[0]:
        yield int(keys[0]), low
        return
    bounds = [0, *(np.flatnonzero(np.diff(keys)) + 1).tolist(), len(ordered)]
    for begin, end in itertools.pairwise(bounds):
        yield int(keys[begin]), low[begin:end]


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximal runs of consecutive values in a sorted, duplicate-free int64 array."""
    breaks = np.flatnonzero(np.diff(values) != 1)
    starts = values[np.concatenate(([0], breaks + 1))]
    ends = values[np.concatenate((breaks, [len(values) - 1]))] + 1
    return starts, ends


def _bitmap_runs(bitmap: BitMap) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Runs of one 32-bit bitmap, window by window (runs may touch across windows)."""
    first, last = bitmap.min(), bitmap.max()
    if last - first + 1 == len(bitmap):
        yield np.array([first], dtype=np.int64), np.array([last + 1], dtype=np.int64)
        return
    for window_start in range(first - first % _RANGE_WINDOW, last + 1, _RANGE_WINDOW):
        window_end = min(window_start + _RANGE_WINDOW, _KEY_SPAN)
        part = bitmap & BitMap(range(window_start, window_end))
        count = len(part)
        if count == 0:
            continue
        low, high = part.min(), part.max()
        if high - low + 1 == count:
            yield np.array([low], dtype=np.int64), np.array([high + 1], dtype=np.int64)
        else:
            yield _runs(np.frombuffer(part.to_array(), dtype=np.uint32).astype(np.int64))


def _coalesce(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge ascending half-open runs where one ends exactly where the next starts."""
    if len(starts) <= 1:
        return starts, ends
    new_run = np.concatenate(([True], starts[1:] != ends[:-1]))
    last_of_run = np.concatenate((new_run[1:], [True]))
    return starts[new_run], ends[last_of_run]
