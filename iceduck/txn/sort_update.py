"""Sort orders from unbound sort terms (spec: "Sorting"), for CREATE TABLE ... ORDERED BY
and Spark's ALTER TABLE ... WRITE ORDERED BY.

"A sort order is defined by a sort order id and a list of sort fields ... Order id 0 is
reserved for the unsorted order." Sources bind like partition sources (Java
``SortOrder.checkCompatibility``: "Cannot sort by non-primitive source field"; the
transform must accept the type: "Cannot bind: day cannot transform string values").

What Spark's WRITE clause also does to ``write.distribution-mode`` is a property change,
which the ALTER TABLE operation decides (:func:`iceduck.ops.alter_requests.distribution_mode`).
"""

from __future__ import annotations

from collections.abc import Sequence

from iceduck.errors import ValidationError
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED, SortField, SortOrder
from iceduck.txn.change_requests import SortTerm
from iceduck.txn.spec_update import bind_term


def sort_order_from_terms(schema: Schema, terms: Sequence[SortTerm], order_id: int = 1) -> SortOrder:
    """The sort order of ``terms`` with id ``order_id``; no terms is the unsorted order
    (id 0). The same source and transform twice is refused (it cannot order anything
    the first one did not)."""
    if not terms:
        return UNSORTED
    if order_id == UNSORTED.order_id:
        raise ValidationError("sort order id 0 is reserved for the unsorted order")
    fields: list[SortField] = []
    seen: set[tuple[int, str]] = set()
    for term in terms:
        source_id, name = bind_term(schema, term.transform, term.source, "sort")
        key = (source_id, str(term.transform))
        if key in seen:
            raise ValidationError(f"cannot sort by {term.transform}({name}) twice")
        seen.add(key)
        fields.append(SortField(source_id, term.transform, term.direction, term.null_order))
    return SortOrder(order_id, tuple(fields))
