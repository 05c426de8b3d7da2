"""Residual filters: what is left of a row filter once a file's partition is known.

Spec, "Scan Planning", note 1: strict projections "are used to calculate the residual
predicates for each file in a scan". As in Iceberg Java's ``ResidualEvaluator``, for
each predicate of the (NOT-free) filter and each partition field derived from its
column:

* if the *strict* projection matches the partition, every row of the partition
  matches: the predicate becomes ``true``;
* if the *inclusive* projection does not match it, no row can: ``false``;
* otherwise the predicate stays, for the engine to apply to the rows.

Data files of one partition share their residual, so results are cached per partition
tuple. The residual is bound to the table schema, like the filter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.bound import BoundPredicate, BoundReference
from iceduck.spec.expressions.compile import Logic, compile_expression
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    BooleanExpression,
    and_,
    or_,
    rewrite_not,
)
from iceduck.spec.expressions.row_evaluator import compile_row_filter
from iceduck.spec.expressions.transform_projection import project_predicate
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema

Residual = Callable[[Any], BooleanExpression]
_CACHE_LIMIT = 65_536


def _constant(expr: AlwaysTrue | AlwaysFalse) -> Residual:
    return lambda _p: expr


def _and(left: Residual, right: Residual) -> Residual:
    return lambda p: and_(left(p), right(p))


def _or(left: Residual, right: Residual) -> Residual:
    return lambda p: or_(left(p), right(p))


#: residuals are expressions, simplified as they are combined (``true AND x`` is ``x``)
_SIMPLIFIED: Logic[BooleanExpression] = Logic(_constant, _and, _or)


def _refusal(expr: BooleanExpression) -> str:
    return f"cannot compute residuals of {expr!r}"


class ResidualEvaluator:
    """Computes the residual of one row filter for the partitions of one spec."""

    def __init__(
        self, spec: PartitionSpec, schema: Schema, row_filter: BooleanExpression, case_sensitive: bool = True
    ) -> None:
        self.spec = spec
        self.expr = rewrite_not(bind(schema, row_filter, case_sensitive))
        partition_type = spec.partition_type(schema)
        self._parts: dict[int, list[tuple[Any, BoundReference]]] = {}
        for pos, (pf, field) in enumerate(zip(spec.fields, partition_type.fields, strict=True)):
            if pf.source_ids is None or len(pf.source_ids) == 1:
                self._parts.setdefault(pf.source_id, []).append(
                    (pf.transform, BoundReference(field, (pos,), pf.name))
                )
        self._residual = compile_expression(self.expr, self._predicate, _refusal, _SIMPLIFIED)
        self._cache: dict[tuple[Any, ...], BooleanExpression] = {}

    def residual_for(self, partition: tuple[Any, ...]) -> BooleanExpression:
        """The filter rows of a file with this partition tuple must still pass."""
        try:
            cached = self._cache.get(partition)
        except TypeError:  # an unhashable value: compute without caching
            return self._residual(partition)
        if cached is None:
            cached = self._residual(partition)
            if len(self._cache) < _CACHE_LIMIT:
                self._cache[partition] = cached
        return cached

    __call__ = residual_for

    def _predicate(self, pred: BoundPredicate) -> Residual:
        tests: list[tuple[Callable[[Any], bool] | None, Callable[[Any], bool] | None]] = []
        for transform, ref in self._parts.get(pred.ref.field_id, ()):
            strict = project_predicate(transform, pred, ref, strict=True)
            inclusive = project_predicate(transform, pred, ref, strict=False)
            tests.append(
                (
                    None if strict is None else compile_row_filter(strict),
                    None if inclusive is None else compile_row_filter(inclusive),
                )
            )
        if not tests:
            return lambda _p: pred

        def residual(partition: Any) -> BooleanExpression:
            for all_match, may_match in tests:
                if all_match is not None and all_match(partition):
                    return AlwaysTrue()
                if may_match is not None and not may_match(partition):
                    return AlwaysFalse()
            return pred

        return residual
