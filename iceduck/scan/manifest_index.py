"""An index over one manifest list: find the manifests a filter may match without testing all.

The spec allows skipping by summaries ("Manifests that contain no matching files,
determined using either file counts or partition summaries, may be skipped"), and the
metadata-indexing post describes how: "Iceberg will compare a query's partition
predicates with the range of values for each partition field and skip any manifest that
doesn't overlap". Testing every row of the list makes a point query's planning grow with
the table's history: a streaming table appending a manifest a day has thousands of rows,
of which a query on one day can match a handful.

Manifest lists are immutable, so this index is built once per list (it lives in the
:class:`~iceduck.scan.manifest_cache.ManifestCache` next to the rows) and answers, per
partition field, which rows could pass the
:class:`~iceduck.spec.expressions.manifest_evaluator.ManifestEvaluator`. It narrows,
never decides: the planner still runs the evaluator on every candidate, so a plan is the
same with or without the index (tests check it).

What is indexed: for each partition spec and each partition field whose summary bounds
decode to integers (``day``/``month``/``year``/``hour``/``bucket`` transforms, identity
on int, long, date, time and timestamp columns), the rows' ``[lower_bound, upper_bound]``.
A range filter on that field is the conjunction of leaves the evaluator tests as
``lower_bound <= hi`` (``<``, ``<=``, ``=``, ``IN``) and ``upper_bound >= lo`` (``>``,
``>=``, ``=``, ``IN``). The rows are kept in classes of interval width (0, 1, 2-3, 4-7,
...), each sorted by lower bound: a row of width ``w <= W`` can have ``upper >= lo``
only if ``lower >= lo - W``, so each class answers with one bisection window. Daily
manifests all have width 0; late-arriving data widens a few; one compacted manifest
spanning years sits alone in a wide class and costs nothing for the others.

Rows the index cannot place (no summaries, a missing bound, a bound that does not decode
to an integer) are always candidates, and so are rows of a spec the filter does not
constrain through an indexed field.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.bounds import Domain, domains
from iceduck.spec.expressions.manifest_evaluator import IN_PREDICATE_LIMIT
from iceduck.spec.expressions.predicates import And, BooleanExpression, Op
from iceduck.spec.manifest import ManifestContent, ManifestFile
from iceduck.spec.types import (
    DateType,
    IcebergType,
    IntegerType,
    LongType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
)


@dataclass(frozen=True)
class FieldKey:
    """One partition field of a spec, as the index reads its summaries."""

    #: position in the partition tuple (and in the manifest list's ``partitions``)
    position: int
    field_id: int
    field_type: IcebergType
    #: how many fields the spec has: a row with another number of summaries is corrupt,
    #: and left to the evaluator to report
    spec_fields: int


@dataclass(frozen=True)
class Bounds:
    """What a filter requires of one partition field's summary: ``upper_bound >= lo`` and
    ``lower_bound <= hi`` (None: no requirement on that side)."""

    lo: int | None = None
    hi: int | None = None

    def tighten(self, lo: int | None, hi: int | None) -> Bounds:
        return Bounds(
            lo if self.lo is None else self.lo if lo is None else max(self.lo, lo),
            hi if self.hi is None else self.hi if hi is None else min(self.hi, hi),
        )


def required_bounds(partition_filter: BooleanExpression, spec_fields: int) -> dict[FieldKey, Bounds]:
    """The bounds each partition field's summary must meet for the filter to pass.

    Only the top-level conjuncts count (an ``OR`` below them requires nothing on its own),
    and only leaves the evaluator decides by comparing integers with the bounds, so every
    requirement returned is one the :class:`ManifestEvaluator` enforces: a row failing it
    fails the evaluator. ``partition_filter`` is bound to the partition struct, with NOTs
    rewritten (``ManifestEvaluator.partition_filter``); the spec has ``spec_fields`` fields.
    """
    found: dict[FieldKey, Bounds] = {}
    for leaf in _conjuncts(partition_filter):
        if not isinstance(leaf, BoundPredicate):
            continue
        accessor = leaf.ref.accessor
        if accessor is None or len(accessor) != 1:
            continue
        key = FieldKey(accessor[0], leaf.ref.field_id, leaf.ref.field_type, spec_fields)
        if integer_domain(leaf.ref.field_type, leaf.ref.field_id) is None:
            continue
        lo_hi = _leaf_bounds(leaf)
        if lo_hi is not None:
            found[key] = found.get(key, Bounds()).tighten(*lo_hi)
    return found


def _conjuncts(expr: BooleanExpression) -> Iterable[BooleanExpression]:
    pending = [expr]
    while pending:
        e = pending.pop()
        if isinstance(e, And):
            pending += (e.right, e.left)
        else:
            yield e


def _leaf_bounds(leaf: BoundPredicate) -> tuple[int | None, int | None] | None:
    """(lo, hi) one comparison leaf requires, as the evaluator tests it; None if none."""
    op = leaf.op
    if op in (Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ, Op.EQ):
        k = leaf.literal
        if type(k) is not int:
            return None
        if op is Op.LT:
            return None, k - 1  # lower < k
        if op is Op.LT_EQ:
            return None, k
        if op is Op.GT:
            return k + 1, None  # upper > k
        if op is Op.GT_EQ:
            return k, None
        return k, k
    if op is Op.IN:
        keys = leaf.literals or frozenset()
        # beyond the limit the evaluator only asks for a bound: no range requirement
        if not keys or len(keys) > IN_PREDICATE_LIMIT or any(type(k) is not int for k in keys):
            return None
        return min(keys), max(keys)  # some key in [lower, upper]
    return None


#: types whose values (and decoded bounds) are Python ints in iceduck's representation
INTEGER_TYPES = (
    IntegerType,
    LongType,
    DateType,
    TimeType,
    TimestampType,
    TimestamptzType,
    TimestampNanoType,
    TimestamptzNanoType,
)


def integer_domain(field_type: IcebergType, field_id: int) -> Domain | None:
    """The domain of a field whose bounds compare as integers, else None (strings, floats,
    decimals, UUIDs and booleans are left to the evaluator)."""
    if not isinstance(field_type, INTEGER_TYPES):
        return None
    (domain,) = domains(field_type, field_id)
    return domain


class IntervalIndex:
    """Row positions by the ``[lower, upper]`` integer summary of one partition field."""

    def __init__(self, intervals: Sequence[tuple[int, int, int]], unplaced: Sequence[int]) -> None:
        """``intervals`` are ``(lower, upper, position)``; ``unplaced`` rows are always candidates."""
        classes: dict[int, list[tuple[int, int, int]]] = {}
        for lower, upper, pos in intervals:
            classes.setdefault((upper - lower).bit_length(), []).append((lower, upper, pos))
        #: per width class: its widest width, lowers (sorted), then uppers and positions
        self._classes: list[tuple[int, list[int], list[int], list[int]]] = []
        for rows in classes.values():
            rows.sort()
            widest = max(u - lo for lo, u, _ in rows)
            self._classes.append((widest, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]))
        self.unplaced = tuple(unplaced)

    def windows(self, bounds: Bounds) -> list[tuple[int, int, int]]:
        """``(class, start, stop)``: the slices of each width class holding every row with
        ``upper >= lo`` and ``lower <= hi`` (and maybe some with ``upper < lo``)."""
        lo, hi = bounds.lo, bounds.hi
        out = []
        for n, (widest, lowers, _, _) in enumerate(self._classes):
            start = 0 if lo is None else bisect_left(lowers, lo - widest)
            stop = len(lowers) if hi is None else bisect_right(lowers, hi)
            if start < stop:
                out.append((n, start, stop))
        return out

    def candidates(self, bounds: Bounds, windows: list[tuple[int, int, int]] | None = None) -> list[int]:
        """Positions of the rows with ``upper >= lo`` and ``lower <= hi`` (unsorted), plus
        the unplaced ones; ``windows`` when already computed for these bounds."""
        lo = bounds.lo
        out = list(self.unplaced)
        for n, start, stop in self.windows(bounds) if windows is None else windows:
            _, _, uppers, positions = self._classes[n]
            if lo is None:
                out += positions[start:stop]
            else:
                out += [positions[i] for i in range(start, stop) if uppers[i] >= lo]
        return out


def window_size(windows: list[tuple[int, int, int]]) -> int:
    return sum(stop - start for _, start, stop in windows)


class ManifestListIndex:
    """The rows of one manifest list, with what planning asks of them precomputed.

    Immutable once built, except for the interval indexes, which are built on first use
    (under a lock: a session may plan from several threads).
    """

    def __init__(self, rows: Sequence[ManifestFile]) -> None:
        self.rows = tuple(rows)
        #: positions of the data manifests, in list order
        self.data = tuple(i for i, m in enumerate(self.rows) if m.content is ManifestContent.DATA)
        self.deletes = tuple(m for m in self.rows if m.content is not ManifestContent.DATA)
        #: live data files by the list's counts (unknown counts count as 0)
        self.listed_data_files = sum(listed_files(self.rows[i]) for i in self.data)
        by_spec: dict[int, list[int]] = {}
        for i in self.data:
            by_spec.setdefault(self.rows[i].partition_spec_id, []).append(i)
        #: positions of the data manifests of each partition spec id
        self.by_spec = {k: tuple(v) for k, v in by_spec.items()}
        self._fields: dict[tuple[int, FieldKey], IntervalIndex] = {}
        self._lock = threading.Lock()

    def data_candidates(self, bounds_of_spec: dict[int, dict[FieldKey, Bounds]]) -> list[ManifestFile]:
        """The data manifests that may pass the evaluators, in list order.

        ``bounds_of_spec`` maps a spec id to what its filter requires
        (:func:`required_bounds`); a spec missing from it constrains nothing. Of several
        constrained fields the one with the narrowest bisection windows is used, so a
        field that rules nothing out (every daily manifest holds all the buckets) costs
        a few bisections, not a pass over the rows.
        """
        chosen: list[int] = []
        for spec_id, positions in self.by_spec.items():
            required = bounds_of_spec.get(spec_id)
            best: tuple[int, IntervalIndex, Bounds, list[tuple[int, int, int]]] | None = None
            for key, bounds in (required or {}).items():
                index = self.field_index(spec_id, key)
                windows = index.windows(bounds)
                size = len(index.unplaced) + window_size(windows)
                if best is None or size < best[0]:
                    best = (size, index, bounds, windows)
            chosen += positions if best is None else best[1].candidates(best[2], best[3])
        if len(self.by_spec) > 1 or len(chosen) < len(self.data):
            chosen.sort()
        return [self.rows[i] for i in chosen]

    def field_index(self, spec_id: int, key: FieldKey) -> IntervalIndex:
        """The interval index of one field of the data manifests of one spec."""
        found = self._fields.get((spec_id, key))
        if found is not None:
            return found
        built = _build(self.rows, self.by_spec.get(spec_id, ()), key)
        with self._lock:
            return self._fields.setdefault((spec_id, key), built)


def _build(rows: Sequence[ManifestFile], positions: Iterable[int], key: FieldKey) -> IntervalIndex:
    pos = key.position
    domain = integer_domain(key.field_type, key.field_id)
    assert domain is not None
    decode = domain.decode
    intervals: list[tuple[int, int, int]] = []
    unplaced: list[int] = []
    for i in positions:
        summaries = rows[i].partitions
        lower = upper = None
        if summaries is not None and len(summaries) == key.spec_fields:
            s = summaries[pos]
            lower, upper = _decoded(decode, s.lower_bound), _decoded(decode, s.upper_bound)
        if lower is None or upper is None:
            unplaced.append(i)  # the evaluator decides (and names a corrupt bound)
        else:
            intervals.append((lower, upper, i))
    return IntervalIndex(intervals, unplaced)


def _decoded(decode: Any, raw: bytes | None) -> int | None:
    if raw is None:
        return None
    try:
        value = decode(raw)
    except CorruptDataError:
        return None
    return value if type(value) is int else None


def listed_files(m: ManifestFile) -> int:
    """Live files of a manifest by its list counts (unknown counts count as 0)."""
    return (m.added_files_count or 0) + (m.existing_files_count or 0)
