"""ALTER/CREATE TABLE statements as change requests (iceduck.ops.alter_requests): what each
statement piece becomes; the evolution rules themselves are tested in tests/txn."""

from __future__ import annotations

import pytest

from iceduck.ops.alter_requests import distribution_mode, partition_terms, sort_terms, spec_changes
from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.transforms import BucketTransform, DayTransform, IdentityTransform
from iceduck.sql.ddl import parse_write
from iceduck.sql.statements import CreateTable, WriteOrder
from iceduck.txn import change_requests as ch
from tests.txn.evolution_helpers import alter


def test_replace_partition_field_is_a_removal_then_an_addition() -> None:
    removal, addition = spec_changes(alter("REPLACE PARTITION FIELD id_bucket WITH bucket(8, id) AS b8"))
    assert removal == ch.RemovePartitionField(name="id_bucket")
    assert addition == ch.AddPartitionField(ch.PartitionTerm(BucketTransform(8), ("id",), "b8"))


def test_spec_changes_keep_order_and_skip_other_actions() -> None:
    assert spec_changes(alter("ADD COLUMN q int")) == ()
    assert spec_changes(alter("DROP PARTITION FIELD days(ts)")) == (
        ch.RemovePartitionField(ch.PartitionTerm(DayTransform(), ("ts",))),
    )


def test_create_table_terms() -> None:
    stmt = parse_write(
        "CREATE TABLE db.t (id bigint, s string) USING iceberg PARTITIONED BY (bucket(4, id) AS b, s) "
        "TBLPROPERTIES ('format-version' = '2')"
    )
    assert isinstance(stmt, CreateTable)
    assert partition_terms(stmt.partition_by) == (
        ch.PartitionTerm(BucketTransform(4), ("id",), "b"),
        ch.PartitionTerm(IdentityTransform(), ("s",)),
    )


def test_sort_terms_keep_direction_and_null_order() -> None:
    (order,) = alter("WRITE ORDERED BY s DESC, id ASC NULLS LAST")
    assert isinstance(order, WriteOrder)
    assert sort_terms(order.terms) == (
        ch.SortTerm(IdentityTransform(), ("s",), SortDirection.DESC, NullOrder.NULLS_LAST),
        ch.SortTerm(IdentityTransform(), ("id",), SortDirection.ASC, NullOrder.NULLS_LAST),
    )


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
    (order,) = alter(clause)
    assert isinstance(order, WriteOrder)
    assert distribution_mode(order) == mode
