"""Inclusive and strict projection of a row filter onto a partition spec.

Spec, "Scan Planning": "For each manifest, scan predicates, which filter data rows, are
converted to partition predicates, which filter partition tuples ... Conversion uses the
partition spec that was used to write the manifest file regardless of the current
partition spec."

The result is a *bound* expression over the spec's partition struct
(``PartitionSpec.partition_type(schema)``): every reference is a partition field, with
its id, name, result type and its position in the partition tuple. The evaluators use
it directly: :class:`~.row_evaluator.RowEvaluator` on a data file's ``partition``
tuple, :class:`~.manifest_evaluator.ManifestEvaluator` on a manifest's field summaries.

As in Java's ``Projections``: ``NOT`` is pushed down first; a predicate on a column that
several partition fields derive from projects through each, combined with ``AND``
inclusively ("the more restrictive projection should be used", e.g. ``day(ts)`` and
``hour(ts)``) and with ``OR`` strictly; a predicate no field can project becomes ``true``
(inclusive) or ``false`` (strict).
"""

from __future__ import annotations

from iceduck.errors import ValidationError
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.bound import BoundPredicate, BoundReference
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    Or,
    and_,
    or_,
    rewrite_not,
)
from iceduck.spec.expressions.transform_projection import project_predicate
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.types import StructType


class Projection:
    """Projects row filters onto one partition spec; build once per spec and schema."""

    def __init__(
        self, spec: PartitionSpec, schema: Schema, case_sensitive: bool = True, strict: bool = False
    ):
        self.spec = spec
        self.schema = schema
        self.case_sensitive = case_sensitive
        self.strict = strict
        self.partition_type: StructType = spec.partition_type(schema)
        by_source: dict[int, list[tuple[PartitionField, BoundReference]]] = {}
        for pos, (pf, field) in enumerate(zip(spec.fields, self.partition_type.fields, strict=True)):
            if pf.source_ids is not None and len(pf.source_ids) > 1:
                continue  # multi-argument transforms (v3) have no projection rules yet
            ref = BoundReference(field, (pos,), pf.name)
            by_source.setdefault(pf.source_id, []).append((pf, ref))
        self._by_source = by_source

    def project(self, expr: BooleanExpression) -> BooleanExpression:
        """The partition predicate for row filter ``expr`` (bound or unbound against the schema)."""
        bound = bind(self.schema, expr, self.case_sensitive)
        return self._visit(rewrite_not(bound))

    __call__ = project

    def _visit(self, expr: BooleanExpression) -> BooleanExpression:
        if isinstance(expr, AlwaysTrue | AlwaysFalse):
            return expr
        if isinstance(expr, And):
            return and_(self._visit(expr.left), self._visit(expr.right))
        if isinstance(expr, Or):
            return or_(self._visit(expr.left), self._visit(expr.right))
        if isinstance(expr, BoundPredicate):
            return self._predicate(expr)
        raise ValidationError(f"cannot project {expr!r}")

    def _predicate(self, pred: BoundPredicate) -> BooleanExpression:
        parts = self._by_source.get(pred.ref.field_id, ())
        projected = [
            p
            for pf, ref in parts
            if (p := project_predicate(pf.transform, pred, ref, self.strict)) is not None
        ]
        return or_(*projected) if self.strict else and_(*projected)


def inclusive_projection(spec: PartitionSpec, schema: Schema, case_sensitive: bool = True) -> Projection:
    """A projection whose result matches every partition that may hold a matching row."""
    return Projection(spec, schema, case_sensitive, strict=False)


def strict_projection(spec: PartitionSpec, schema: Schema, case_sensitive: bool = True) -> Projection:
    """A projection whose result matches only partitions in which every row matches."""
    return Projection(spec, schema, case_sensitive, strict=True)


def project(
    expr: BooleanExpression, spec: PartitionSpec, schema: Schema, case_sensitive: bool = True
) -> BooleanExpression:
    """The inclusive projection of ``expr`` onto ``spec`` (see :class:`Projection`)."""
    return inclusive_projection(spec, schema, case_sensitive).project(expr)


def project_strict(
    expr: BooleanExpression, spec: PartitionSpec, schema: Schema, case_sensitive: bool = True
) -> BooleanExpression:
    """The strict projection of ``expr`` onto ``spec``."""
    return strict_projection(spec, schema, case_sensitive).project(expr)
