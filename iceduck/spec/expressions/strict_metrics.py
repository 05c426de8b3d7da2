"""Prove from its metrics that *every* row of a data file matches a filter.

The strict counterpart of :mod:`.metrics_evaluator`: ``must_match`` returning ``True`` is a
proof, ``False`` means "maybe not". A DELETE whose condition every row of a file meets
removes the file without reading it: a DELETE whose predicate covers whole files (by
partition or metrics) drops them without reading data. Decisions follow
Iceberg Java's ``StrictMetricsEvaluator``, made stricter where SQL and Iceberg disagree:

* a file with ``record_count`` 0 matches (no row fails); a negative count proves nothing;
* every comparison (``<``, ``=``, ``IN``, ``!=``, ``NOT IN``) needs known counts showing
  no null (and for floats no NaN) in the column: Iceberg's ``!=`` is true for a null,
  SQL's is not, so a file holding a null is never proven to match a comparison;
* bounds decide the rest: ``c < k`` holds for all rows when the upper bound is below
  ``k``; ``c = k`` when both bounds equal ``k``; ``c != k`` when ``k`` lies outside the
  bounds. Bounds "must be less than or equal to all non-null, non-NaN values" and
  greater-or-equal for upper bounds, so truncated bounds stay sound for ranges; an
  equality needs lower == upper, which a truncated string bound never produces falsely
  (truncation increments the upper bound's last byte);
* ``IS NULL`` needs every value null, ``NOT NULL`` no null, ``IS NAN``/``NOT NAN``
  likewise with NaN counts; prefix predicates are never proven (a truncated upper bound
  may start with a prefix no value has);
* a column inside a list or map has counts over elements, not rows: never proven.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iceduck.errors import ValidationError
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.bounds import Domain, across_domains, is_nan
from iceduck.spec.expressions.compile import compile_expression
from iceduck.spec.expressions.predicates import (
    BooleanExpression,
    Op,
    rewrite_not,
)
from iceduck.spec.manifest import DataFile
from iceduck.spec.schema import Schema

FileTest = Callable[[DataFile], bool]


def _count(counts: dict[int, int] | None, fid: int) -> int | None:
    return None if counts is None else counts.get(fid)


def _no_nulls(f: DataFile, fid: int) -> bool:
    return _count(f.null_value_counts, fid) == 0


def _no_nans(f: DataFile, fid: int, floating: bool) -> bool:
    return not floating or _count(f.nan_value_counts, fid) == 0


def _bounds(f: DataFile, fid: int, dom: Domain) -> tuple[Any, Any] | None:
    """Decoded (lower, upper) when the column is free of nulls and NaNs and both bounds exist."""
    if not _no_nulls(f, fid) or not _no_nans(f, fid, dom.floating):
        return None
    lower = None if f.lower_bounds is None else f.lower_bounds.get(fid)
    upper = None if f.upper_bounds is None else f.upper_bounds.get(fid)
    if lower is None or upper is None:
        return None
    low, high = dom.decode(lower), dom.decode(upper)
    if dom.floating and (is_nan(low) or is_nan(high)):
        return None
    return low, high


def _leaf(pred: BoundPredicate, dom: Domain) -> FileTest:
    fid, op = pred.ref.field_id, pred.op
    if op in (Op.STARTS_WITH, Op.NOT_STARTS_WITH):
        return lambda f: False
    if op.is_set:
        keys = sorted(dom.key(v) for v in pred.literals or ())
        if not keys:
            return lambda f: op is Op.NOT_IN and _no_nulls(f, fid)
        if op is Op.IN:

            def within(f: DataFile) -> bool:
                b = _bounds(f, fid, dom)
                return b is not None and b[0] == b[1] and b[0] in keys

            return within

        def outside(f: DataFile) -> bool:
            b = _bounds(f, fid, dom)
            if b is None:
                return False
            low, high = b
            return high < keys[0] or low > keys[-1] or (low == high and low not in keys)

        return outside
    k = dom.key(pred.literal)
    tests: dict[Op, Callable[[Any, Any], bool]] = {
        Op.LT: lambda low, high: high < k,
        Op.LT_EQ: lambda low, high: high <= k,
        Op.GT: lambda low, high: low > k,
        Op.GT_EQ: lambda low, high: low >= k,
        Op.EQ: lambda low, high: low == k and high == k,
        Op.NOT_EQ: lambda low, high: high < k or low > k,
    }
    test = tests.get(op)
    if test is None:
        raise ValidationError(f"unsupported operation {op}")

    def compare(f: DataFile) -> bool:
        b = _bounds(f, fid, dom)
        return b is not None and test(*b)

    return compare


def _unary(pred: BoundPredicate) -> FileTest:
    fid, op = pred.ref.field_id, pred.op
    if op is Op.IS_NULL:
        return lambda f: (
            (n := _count(f.null_value_counts, fid)) is not None and n == _count(f.value_counts, fid)
        )
    if op is Op.NOT_NULL:
        return lambda f: _no_nulls(f, fid)
    if op is Op.IS_NAN:
        return lambda f: (
            (n := _count(f.nan_value_counts, fid)) is not None and n == _count(f.value_counts, fid)
        )
    return lambda f: _count(f.nan_value_counts, fid) == 0 and _no_nulls(f, fid)


def _predicate(pred: BoundPredicate, schema: Schema) -> FileTest:
    if schema.is_in_list_or_map(pred.ref.field_id):
        return lambda f: False
    if pred.op.is_unary:
        return _unary(pred)
    return across_domains(pred, _leaf, all)


def _refusal(expr: BooleanExpression) -> str:
    return f"cannot evaluate {expr!r} on file metrics: bind it first"


class StrictMetricsEvaluator:
    """Decides from its metrics whether every row of a file matches a *bound* filter."""

    def __init__(self, schema: Schema, bound_filter: BooleanExpression) -> None:
        self.schema = schema
        self._test = compile_expression(
            rewrite_not(bound_filter), lambda pred: _predicate(pred, schema), _refusal
        )

    def must_match(self, data_file: DataFile) -> bool:
        """True only if every row of ``data_file`` matches the filter."""
        if data_file.record_count == 0:
            return True
        if data_file.record_count < 0:
            return False
        return self._test(data_file)

    __call__ = must_match
