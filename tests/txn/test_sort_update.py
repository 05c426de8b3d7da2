"""Sort orders from WRITE ORDERED BY terms and the distribution mode Spark stores
(iceduck.txn.sort_update); Spark's results for the same statements are in
test_evolution_spark.py."""

from __future__ import annotations

import pytest

from iceduck.errors import NotFoundError, ValidationError
from iceduck.spec.sort import UNSORTED, NullOrder, SortDirection, SortField
from iceduck.spec.transforms import BucketTransform, HourTransform, IdentityTransform, TruncateTransform
from iceduck.sql.statements import WriteOrder
from iceduck.txn.sort_update import distribution_mode, sort_order_from_terms
from tests.txn.evolution_helpers import alter, nested_schema


def write_order(sql: str) -> WriteOrder:
    (action,) = alter(sql)
    assert isinstance(action, WriteOrder)
    return action


def test_terms_become_sort_fields() -> None:
    action = write_order(
        "WRITE ORDERED BY bucket(4, s) DESC NULLS FIRST, truncate(2, s), hours(ts), st.a DESC"
    )
    order = sort_order_from_terms(nested_schema(), action.terms, 4)
    assert order.order_id == 4
    assert order.fields == (
        SortField(2, BucketTransform(4), SortDirection.DESC, NullOrder.NULLS_FIRST),
        SortField(2, TruncateTransform(2), SortDirection.ASC, NullOrder.NULLS_FIRST),
        SortField(3, HourTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
        SortField(14, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST),
    )


def test_columns_resolve_case_insensitively() -> None:
    order = sort_order_from_terms(nested_schema(), write_order("WRITE ORDERED BY S").terms, 1)
    assert order.fields[0].source_id == 2


def test_no_terms_is_the_unsorted_order() -> None:
    assert sort_order_from_terms(nested_schema(), (), 3) is UNSORTED


@pytest.mark.parametrize(
    ("terms", "error", "message"),
    [
        ("days(s)", ValidationError, "day does not apply to string"),
        ("st", ValidationError, "not a primitive"),
        ("nope", NotFoundError, "nope"),
        ("s, s", ValidationError, "twice"),
    ],
)
def test_bad_terms_are_refused(terms: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        sort_order_from_terms(nested_schema(), write_order(f"WRITE ORDERED BY {terms}").terms, 1)


def test_order_id_zero_is_reserved() -> None:
    with pytest.raises(ValidationError, match="reserved"):
        sort_order_from_terms(nested_schema(), write_order("WRITE ORDERED BY s").terms, 0)


@pytest.mark.parametrize(
    ("clause", "mode"),
    [
        ("WRITE ORDERED BY s", "range"),
        ("WRITE LOCALLY ORDERED BY id DESC", None),
        ("WRITE UNORDERED", "none"),
        ("WRITE DISTRIBUTED BY PARTITION", "hash"),
        ("WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY st.a", "hash"),
    ],
)
def test_distribution_mode_as_spark_sets_it(clause: str, mode: str | None) -> None:
    assert distribution_mode(write_order(clause)) == mode
