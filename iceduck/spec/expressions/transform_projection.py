"""Projecting one bound predicate through one partition transform.

Spec, "Scan Planning": scan predicates are converted to partition predicates "using an
*inclusive projection*: if a scan predicate matches a row, then the partition predicate
must match that row's partition"; a *strict projection* "will match a file if all of the
rows in the file must match the scan predicate". ``None`` means "no projection": the
caller uses ``true`` (inclusive) or ``false`` (strict) instead.

The rules are Iceberg Java's (``ProjectionUtil`` and each transform's ``project`` /
``projectStrict``):

* identity: the same predicate on the partition field.
* bucket: inclusively only ``=`` and ``IN`` (hash the literals); strictly only ``!=``
  and ``NOT IN`` ("comparison predicates can't be projected").
* truncate and the time transforms are monotone, so ranges project: close an open
  bound first (``x < v`` is ``x <= v - 1`` for integers, one unit of the last digit for
  decimals, one micro/nano for timestamps, one day for dates), then transform the
  literal: ``x < 100`` with truncate[10] is ``p <= 90``; ``ts < 2017-12-01T10:12:55`` with
  day is ``day <= 2017-12-01``. Strict: ``x <= v`` is ``p < t(v + 1)``, ``x > v`` is
  ``p > t(v)``; ``=`` has none ("adjacent values transform to the same partition").
* truncate on strings also projects ``startsWith`` (a prefix shorter than the width
  stays a prefix, one as long is ``=``, a longer one is truncated) and
  ``notStartsWith``.
* void and unknown transforms: none ("The inclusive projection for an unknown partition
  transform is *true*").

Time transforms also apply Java's ``fixInclusiveTimeProjection`` /
``fixStrictTimeProjection``: Iceberg 0.10.0 and earlier wrote pre-1970 values of
year/month/day/hour one too large (day(1969-12-31T10:00) as 0, not -1), so a negative
projected bound is widened by one to keep reading those files (Java skips the fix only
for ``day`` of a ``date`` column, which is the identity).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iceduck.spec.expressions.bound import BoundPredicate, BoundReference, bound_predicate
from iceduck.spec.expressions.literals import decimal_of
from iceduck.spec.expressions.predicates import BooleanExpression, Op
from iceduck.spec.hashing import unscaled_at_scale
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    TimeTransform,
    Transform,
    TruncateTransform,
)
from iceduck.spec.types import BinaryType, DateType, DecimalType, IcebergType, StringType

Projected = BooleanExpression | None


def _step(t: IcebergType) -> Callable[[Any, int], Any]:
    """``(v, n) -> v + n units of the last digit``: the neighbour used to close open bounds."""
    if isinstance(t, DecimalType):
        scale = t.scale
        return lambda v, n: decimal_of(unscaled_at_scale(v, scale) + n, scale)
    return lambda v, n: v + n


def _same(pred: BoundPredicate, part: BoundReference) -> BoundPredicate:
    return BoundPredicate(pred.op, part, pred.literal, pred.literals)


def _set(
    op: Op, part: BoundReference, apply: Callable[[Any], Any], literals: frozenset[Any] | None
) -> Projected:
    return bound_predicate(op, part, {apply(v) for v in literals or ()})


def _ordered_inclusive(
    pred: BoundPredicate, part: BoundReference, apply: Callable[[Any], Any], step: Callable
) -> Projected:
    """Java ``truncateInteger``/``truncateLong``/``truncateDecimal``."""
    op, v = pred.op, pred.literal
    if op is Op.LT:
        return BoundPredicate(Op.LT_EQ, part, apply(step(v, -1)))
    if op is Op.LT_EQ:
        return BoundPredicate(Op.LT_EQ, part, apply(v))
    if op is Op.GT:
        return BoundPredicate(Op.GT_EQ, part, apply(step(v, 1)))
    if op is Op.GT_EQ:
        return BoundPredicate(Op.GT_EQ, part, apply(v))
    if op is Op.EQ:
        return BoundPredicate(Op.EQ, part, apply(v))
    if op is Op.IN:
        return _set(Op.IN, part, apply, pred.literals)
    return None


def _ordered_strict(
    pred: BoundPredicate, part: BoundReference, apply: Callable[[Any], Any], step: Callable
) -> Projected:
    """Java ``truncateIntegerStrict``/``truncateLongStrict``/``truncateDecimalStrict``."""
    op, v = pred.op, pred.literal
    if op is Op.LT:
        return BoundPredicate(Op.LT, part, apply(v))
    if op is Op.LT_EQ:
        return BoundPredicate(Op.LT, part, apply(step(v, 1)))
    if op is Op.GT:
        return BoundPredicate(Op.GT, part, apply(v))
    if op is Op.GT_EQ:
        return BoundPredicate(Op.GT, part, apply(step(v, -1)))
    if op is Op.NOT_EQ:
        return BoundPredicate(Op.NOT_EQ, part, apply(v))
    if op is Op.NOT_IN:
        return _set(Op.NOT_IN, part, apply, pred.literals)
    return None


def _array_inclusive(pred: BoundPredicate, part: BoundReference, apply: Callable[[Any], Any]) -> Projected:
    """Java ``truncateArray``: strings and binary (no neighbour to close a bound with)."""
    op, v = pred.op, pred.literal
    if op in (Op.LT, Op.LT_EQ):
        return BoundPredicate(Op.LT_EQ, part, apply(v))
    if op in (Op.GT, Op.GT_EQ):
        return BoundPredicate(Op.GT_EQ, part, apply(v))
    if op is Op.EQ:
        return BoundPredicate(Op.EQ, part, apply(v))
    if op is Op.STARTS_WITH:
        return BoundPredicate(Op.STARTS_WITH, part, apply(v))
    if op is Op.IN:
        return _set(Op.IN, part, apply, pred.literals)
    return None


def _array_strict(pred: BoundPredicate, part: BoundReference, apply: Callable[[Any], Any]) -> Projected:
    """Java ``truncateArrayStrict``."""
    op, v = pred.op, pred.literal
    if op in (Op.LT, Op.LT_EQ):
        return BoundPredicate(Op.LT, part, apply(v))
    if op in (Op.GT, Op.GT_EQ):
        return BoundPredicate(Op.GT, part, apply(v))
    if op is Op.NOT_EQ:
        return BoundPredicate(Op.NOT_EQ, part, apply(v))
    if op is Op.NOT_IN:
        return _set(Op.NOT_IN, part, apply, pred.literals)
    return None


def _string_prefix(pred: BoundPredicate, part: BoundReference, width: int, strict: bool) -> Projected | bool:
    """``startsWith``/``notStartsWith`` through truncate[W] on strings (Java ``TruncateString``).

    Returns ``False`` when the operation is not a prefix test (the caller goes on).
    Lengths count code points, like the truncation itself.
    """
    op, prefix = pred.op, pred.literal
    if op is Op.STARTS_WITH:
        if len(prefix) < width:
            return BoundPredicate(Op.STARTS_WITH, part, prefix)
        if len(prefix) == width:
            return BoundPredicate(Op.EQ, part, prefix)
        return None if strict else BoundPredicate(Op.STARTS_WITH, part, prefix[:width])
    if op is Op.NOT_STARTS_WITH:
        if len(prefix) < width:
            return BoundPredicate(Op.NOT_STARTS_WITH, part, prefix)
        if len(prefix) == width:
            return BoundPredicate(Op.NOT_EQ, part, prefix)
        return BoundPredicate(Op.NOT_STARTS_WITH, part, prefix[:width]) if strict else None
    return False


def _fix_inclusive_time(projected: Projected) -> Projected:
    """Java ``fixInclusiveTimeProjection``: also match the off-by-one pre-1970 values."""
    if not isinstance(projected, BoundPredicate):
        return projected
    op, v, part = projected.op, projected.literal, projected.ref
    if op in (Op.LT, Op.LT_EQ) and v < 0:
        return BoundPredicate(op, part, v + 1)
    if op is Op.EQ and v < 0:
        return bound_predicate(Op.IN, part, {v, v + 1})
    if op is Op.IN:
        values = projected.literals or frozenset()
        return bound_predicate(Op.IN, part, values | {x + 1 for x in values if x < 0})
    if op in (Op.NOT_EQ, Op.NOT_IN):
        return None  # "there is no inclusive projection for NOT_EQ and NOT_IN"
    return projected


def _fix_strict_time(projected: Projected) -> Projected:
    """Java ``fixStrictTimeProjection``: exclude partitions an off-by-one value could be in."""
    if not isinstance(projected, BoundPredicate):
        return projected
    op, v, part = projected.op, projected.literal, projected.ref
    if op in (Op.GT, Op.GT_EQ) and v <= 0:
        return BoundPredicate(op, part, v + 1)
    if op in (Op.EQ, Op.IN):
        return None  # "there is no strict projection for EQ and IN"
    if op is Op.NOT_EQ and v < 0:
        return bound_predicate(Op.NOT_IN, part, {v, v + 1})
    if op is Op.NOT_IN:
        values = projected.literals or frozenset()
        return bound_predicate(Op.NOT_IN, part, values | {x + 1 for x in values if x < 0})
    return projected


def project_predicate(
    transform: Transform, pred: BoundPredicate, part: BoundReference, strict: bool
) -> Projected:
    """The projection of ``pred`` (on the source column) onto partition field ``part``.

    ``None`` when there is none; see the module docstring for the rules.
    """
    if transform.is_void or transform.is_unknown:
        return None
    if transform.is_identity:
        return _same(pred, part)
    source_type = pred.ref.field_type
    if not transform.can_transform(source_type):
        return None  # a source type the transform no longer accepts: ignore the field
    if pred.op.is_unary:
        # transforms map null to null and non-null to non-null ("All transforms must
        # return null for a null input value"); NaN cannot reach a non-identity transform
        return BoundPredicate(pred.op, part) if pred.op in (Op.IS_NULL, Op.NOT_NULL) else None
    apply = transform.apply(source_type)
    if isinstance(transform, BucketTransform):
        return _bucket(pred, part, apply, strict)
    if isinstance(transform, TruncateTransform):
        return _truncate(pred, part, apply, transform.width, source_type, strict)
    if isinstance(transform, TimeTransform):
        project = _ordered_strict if strict else _ordered_inclusive
        projected = project(pred, part, apply, _step(source_type))
        if isinstance(transform, DayTransform) and isinstance(source_type, DateType):
            return projected
        return _fix_strict_time(projected) if strict else _fix_inclusive_time(projected)
    return None


def _bucket(
    pred: BoundPredicate, part: BoundReference, apply: Callable[[Any], Any], strict: bool
) -> Projected:
    if not strict and pred.op is Op.EQ:
        return BoundPredicate(Op.EQ, part, apply(pred.literal))
    if strict and pred.op is Op.NOT_EQ:
        return BoundPredicate(Op.NOT_EQ, part, apply(pred.literal))
    if pred.op is (Op.NOT_IN if strict else Op.IN):
        return _set(pred.op, part, apply, pred.literals)
    return None


def _truncate(
    pred: BoundPredicate,
    part: BoundReference,
    apply: Callable[[Any], Any],
    width: int,
    source_type: IcebergType,
    strict: bool,
) -> Projected:
    if isinstance(source_type, StringType):
        prefix = _string_prefix(pred, part, width, strict)
        if prefix is not False:
            return prefix  # type: ignore[return-value]
        return _array_strict(pred, part, apply) if strict else _array_inclusive(pred, part, apply)
    if isinstance(source_type, BinaryType):
        return _array_strict(pred, part, apply) if strict else _array_inclusive(pred, part, apply)
    if pred.op in (Op.STARTS_WITH, Op.NOT_STARTS_WITH):
        return None
    project = _ordered_strict if strict else _ordered_inclusive
    return project(pred, part, apply, _step(source_type))
