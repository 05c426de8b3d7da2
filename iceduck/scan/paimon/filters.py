"""Conjunct surgery on bound filters: the parts of a scan's filter that may prune."""

from __future__ import annotations

from collections.abc import Iterable

from iceduck.scan.tasks import MATCH_ALL
from iceduck.spec.expressions.bound import referenced_field_ids
from iceduck.spec.expressions.predicates import AlwaysTrue, And, BooleanExpression, and_


def split_conjuncts(expr: BooleanExpression) -> list[BooleanExpression]:
    """The terms of a conjunction (one term when ``expr`` is not an AND)."""
    out: list[BooleanExpression] = []
    pending = [expr]
    while pending:
        e = pending.pop()
        if isinstance(e, And):
            pending += (e.right, e.left)
        elif not isinstance(e, AlwaysTrue):
            out.append(e)
    return out


def restrict_filter(bound: BooleanExpression, field_ids: Iterable[int]) -> BooleanExpression:
    """The conjuncts of a bound filter that name only ``field_ids``: what may prune when
    the other columns must not (dropping a conjunct only widens what is read)."""
    allowed = set(field_ids)
    kept = [c for c in split_conjuncts(bound) if referenced_field_ids(c) <= allowed]
    return and_(*kept) if kept else MATCH_ALL
