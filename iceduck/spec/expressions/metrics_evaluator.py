"""Skip data and delete files using their column metrics (inclusive metrics evaluation).

Spec, "Scan Planning": "Scan predicates are also used to filter data and delete files
using column bounds and counts that are stored by field id in manifests. The same
filter logic can be used for both data and delete files." A file is skipped only when
its metrics prove that no row can match: ``may_match`` returning ``False`` is a proof,
``True`` means "read it".

Decisions follow Iceberg Java's ``InclusiveMetricsEvaluator``:

* a file with ``record_count`` 0 has no matching row; a negative count (imported Avro
  files) says nothing;
* value, null and NaN counts: a column with only nulls (or only NaNs) matches no
  comparison; ``IS NULL`` needs a null, ``IS NAN`` a NaN;
* bounds "must be less than or equal to all non-null, non-NaN values in the column for
  the file"; they are decoded by length after type promotion (spec, "Schema
  Evolution") and string bounds are compared as UTF-8 bytes, so truncated bounds
  (``truncate(16)`` metrics: a prefix as lower bound, an incremented prefix as upper
  bound) still bound the values (:mod:`.bounds`); a NaN bound (ORC) is ignored;
* ``!=``/``NOT IN`` prune only a file whose column holds a single value (no nulls, no
  NaNs, lower bound equal to upper bound) that the predicate excludes;
* ``IN`` with more than 200 values is not compared with bounds.

A missing metric never prunes, so columns added after a file was written are safe.
The filter is bound and compiled once into closures; ``may_match`` runs them per file.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.spec.expressions.binding import bind
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

#: Java's ``IN_PREDICATE_LIMIT``: larger sets are not compared with bounds.
IN_PREDICATE_LIMIT = 200

FileTest = Callable[[DataFile], bool]


def _nulls_only(f: DataFile, fid: int) -> bool:
    """Known counts say every value of the column is null."""
    values, nulls = f.value_counts, f.null_value_counts
    if values is None or nulls is None:
        return False
    count, null_count = values.get(fid), nulls.get(fid)
    return count is not None and null_count is not None and count - null_count == 0


def _nans_only(f: DataFile, fid: int) -> bool:
    values, nans = f.value_counts, f.nan_value_counts
    if values is None or nans is None:
        return False
    nan_count = nans.get(fid)
    return nan_count is not None and nan_count == values.get(fid)


def _may_have_null(f: DataFile, fid: int) -> bool:
    nulls = f.null_value_counts
    return nulls is None or nulls.get(fid) != 0


def _may_have_nan(f: DataFile, fid: int) -> bool:
    nans = f.nan_value_counts
    return nans is None or nans.get(fid) != 0


def _lower(f: DataFile, fid: int) -> bytes | None:
    bounds = f.lower_bounds
    return None if bounds is None else bounds.get(fid)


def _upper(f: DataFile, fid: int) -> bytes | None:
    bounds = f.upper_bounds
    return None if bounds is None else bounds.get(fid)


def _unique(f: DataFile, fid: int, dom: Domain) -> Any:
    """The column's single value in the file (no nulls, no NaNs, lower == upper), or None."""
    if _may_have_null(f, fid):
        return None
    raw_lower, raw_upper = _lower(f, fid), _upper(f, fid)
    if raw_lower is None or raw_upper is None:
        return None
    if dom.floating and _may_have_nan(f, fid):
        return None
    lower, upper = dom.decode(raw_lower), dom.decode(raw_upper)
    if lower != upper or (dom.floating and is_nan(lower)):
        return None
    return lower


def _comparison(op: Op, fid: int, dom: Domain, k: Any) -> FileTest:
    decode, floating = dom.decode, dom.floating

    def unusable(f: DataFile) -> bool:
        return _nulls_only(f, fid) or _nans_only(f, fid)

    if op in (Op.LT, Op.LT_EQ):
        strict = op is Op.LT

        def below(f: DataFile) -> bool:
            if unusable(f):
                return False
            raw = _lower(f, fid)
            if raw is None:
                return True
            lower = decode(raw)
            if floating and is_nan(lower):
                return True
            return lower < k if strict else lower <= k

        return below
    if op in (Op.GT, Op.GT_EQ):
        strict = op is Op.GT

        def above(f: DataFile) -> bool:
            if unusable(f):
                return False
            raw = _upper(f, fid)
            if raw is None:
                return True
            upper = decode(raw)
            if floating and is_nan(upper):
                return True
            return upper > k if strict else upper >= k

        return above

    def equal(f: DataFile) -> bool:
        if unusable(f):
            return False
        raw = _lower(f, fid)
        if raw is not None and decode(raw) > k:  # a NaN bound compares False: no pruning
            return False
        raw = _upper(f, fid)
        return raw is None or not decode(raw) < k

    return equal


def _in(fid: int, dom: Domain, values: frozenset[Any]) -> FileTest:
    keys = sorted(dom.key(v) for v in values)
    too_many = len(keys) > IN_PREDICATE_LIMIT
    decode, floating = dom.decode, dom.floating

    def within(f: DataFile) -> bool:
        if _nulls_only(f, fid) or _nans_only(f, fid):
            return False
        raw = _lower(f, fid)
        if too_many or raw is None:
            return True
        lower = decode(raw)
        raw = _upper(f, fid)
        upper = None if raw is None else decode(raw)
        if floating and (is_nan(lower) or (upper is not None and is_nan(upper))):
            return True
        i = bisect_left(keys, lower)
        return i < len(keys) and (upper is None or keys[i] <= upper)

    return within


def _prefix(op: Op, fid: int, prefix: bytes) -> FileTest:
    n = len(prefix)
    if op is Op.STARTS_WITH:

        def starts(f: DataFile) -> bool:
            if _nulls_only(f, fid):
                return False
            lower = _lower(f, fid)
            if lower is not None and lower[:n] > prefix:
                return False
            upper = _upper(f, fid)
            return upper is None or not upper[:n] < prefix

        return starts

    def not_starts(f: DataFile) -> bool:
        if _may_have_null(f, fid):
            return True
        lower, upper = _lower(f, fid), _upper(f, fid)
        if lower is None or upper is None:
            return True
        # all values start with the prefix when both bounds do
        return not (len(lower) >= n and lower[:n] == prefix and len(upper) >= n and upper[:n] == prefix)

    return not_starts


def _unary(pred: BoundPredicate) -> FileTest:
    """Null and NaN tests: counts only, no bounds (so any column type, structs included)."""
    fid, op = pred.ref.field_id, pred.op
    if op is Op.IS_NULL:
        return lambda f: _may_have_null(f, fid)
    if op is Op.NOT_NULL:
        return lambda f: not _nulls_only(f, fid)
    if op is Op.IS_NAN:
        return lambda f: not _nulls_only(f, fid) and _may_have_nan(f, fid)
    return lambda f: not _nans_only(f, fid)


def _leaf(pred: BoundPredicate, dom: Domain) -> FileTest:
    fid, op = pred.ref.field_id, pred.op
    if op in (Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ, Op.EQ):
        return _comparison(op, fid, dom, dom.key(pred.literal))
    if op is Op.NOT_EQ:
        k = dom.key(pred.literal)
        return lambda f: (u := _unique(f, fid, dom)) is None or u != k
    if op is Op.IN:
        return _in(fid, dom, pred.literals or frozenset())
    if op is Op.NOT_IN:
        keys = frozenset(dom.key(v) for v in pred.literals or ())
        return lambda f: (u := _unique(f, fid, dom)) is None or u not in keys
    if op in (Op.STARTS_WITH, Op.NOT_STARTS_WITH):
        return _prefix(op, fid, dom.key(pred.literal))
    raise ValidationError(f"unsupported operation {op}")


def _predicate(pred: BoundPredicate) -> FileTest:
    if pred.op.is_unary:
        return _unary(pred)
    return across_domains(pred, _leaf, any)


def _refusal(expr: BooleanExpression) -> str:
    return f"cannot evaluate {expr!r} on file metrics: bind it first"


class InclusiveMetricsEvaluator:
    """Decides from its metrics whether a data or delete file may contain matching rows.

    Build one per (schema, filter); ``may_match`` is then cheap per file.
    """

    def __init__(self, schema: Schema, row_filter: BooleanExpression, case_sensitive: bool = True) -> None:
        self.schema = schema
        self.expr = rewrite_not(bind(schema, row_filter, case_sensitive))
        self._test = compile_expression(self.expr, _predicate, _refusal)

    def may_match(self, data_file: DataFile) -> bool:
        """False only if no row of ``data_file`` can match the filter."""
        if data_file.record_count == 0:
            return False
        if data_file.record_count < 0:
            return True  # unknown count (files imported without one)
        try:
            return self._test(data_file)
        except CorruptDataError as e:
            if e.path is not None:
                raise
            raise CorruptDataError(e.problem, data_file.file_path) from e

    __call__ = may_match
