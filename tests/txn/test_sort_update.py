"""Sort orders from WRITE ORDERED BY terms (iceduck.txn.sort_update), translated as the
ALTER TABLE operation does (iceduck.ops.alter_requests); Spark's results for the same statements
are in tests/interop/test_txn_evolution_spark.py."""

from __future__ import annotations

import pytest

from iceduck.errors import NotFoundError, ValidationError
from iceduck.ops.alter_requests import sort_terms
from iceduck.spec.sort import UNSORTED, NullOrder, SortDirection, SortField
from iceduck.spec.transforms import BucketTransform, HourTransform, IdentityTransform, TruncateTransform
from iceduck.sql.statements import WriteOrder
from iceduck.txn.change_requests import SortTerm
from iceduck.txn.sort_update import sort_order_from_terms
from tests.txn.evolution_helpers import alter, nested_schema


def terms(sql: str) -> tuple[SortTerm, ...]:
    """The sort terms of ``ALTER TABLE db.t <sql>`` (a WRITE clause)."""
    (action,) = alter(sql)
    assert isinstance(action, WriteOrder)
    return sort_terms(action.terms)


def test_terms_become_sort_fields() -> None:
    written = terms("WRITE ORDERED BY bucket(4, s) DESC NULLS FIRST, truncate(2, s), hours(ts), st.a DESC")
    order = sort_order_from_terms(nested_schema(), written, 4)
    assert order.order_id == 4
    assert order.fields == (
        SortField(2, BucketTransform(4), SortDirection.DESC, NullOrder.NULLS_FIRST),
        SortField(2, TruncateTransform(2), SortDirection.ASC, NullOrder.NULLS_FIRST),
        SortField(3, HourTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
        SortField(14, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST),
    )


def test_columns_resolve_case_insensitively() -> None:
    order = sort_order_from_terms(nested_schema(), terms("WRITE ORDERED BY S"), 1)
    assert order.fields[0].source_id == 2


def test_no_terms_is_the_unsorted_order() -> None:
    assert sort_order_from_terms(nested_schema(), (), 3) is UNSORTED


@pytest.mark.parametrize(
    ("clause", "error", "message"),
    [
        ("days(s)", ValidationError, "day does not apply to string"),
        ("st", ValidationError, "not a primitive"),
        ("nope", NotFoundError, "nope"),
        ("s, s", ValidationError, "twice"),
    ],
)
def test_bad_terms_are_refused(clause: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        sort_order_from_terms(nested_schema(), terms(f"WRITE ORDERED BY {clause}"), 1)


def test_order_id_zero_is_reserved() -> None:
    with pytest.raises(ValidationError, match="reserved"):
        sort_order_from_terms(nested_schema(), terms("WRITE ORDERED BY s"), 0)
