"""Partition specs from CREATE terms and ALTER partition evolution (iceduck.txn.spec_update),
without Spark; Spark's results for the same statements are in tests/interop/test_txn_evolution_spark.py.
Statements are translated into change requests as the operations do (iceduck.ops.alter_requests)."""

from __future__ import annotations

import pytest

from iceduck.errors import NotFoundError, UnsupportedError, ValidationError
from iceduck.ops.alter_requests import partition_terms, spec_changes
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import (
    BucketTransform,
    HourTransform,
    MonthTransform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
)
from iceduck.sql.ddl import parse_write
from iceduck.sql.statements import CreateTable
from iceduck.txn.change_requests import AddPartitionField, PartitionTerm, RemovePartitionField
from iceduck.txn.spec_update import apply_spec_changes, spec_from_terms
from tests.txn.evolution_helpers import BUCKET16, DAY, IDENTITY, alter, nested_schema, spec_of, table


def created(partitioned_by: str, schema: Schema | None = None) -> PartitionSpec:
    stmt = parse_write(f"CREATE TABLE db.t (x int) USING iceberg PARTITIONED BY ({partitioned_by})")
    assert isinstance(stmt, CreateTable)
    return spec_from_terms(schema or nested_schema(), partition_terms(stmt.partition_by))


def fields(spec: PartitionSpec) -> list[tuple[int, int, str, str]]:
    return [(f.source_id, f.field_id, f.name, str(f.transform)) for f in spec.fields]


def evolve(sql: str, *specs: PartitionSpec, version: int = 2, schema: Schema | None = None) -> PartitionSpec:
    base = specs or (PartitionSpec(0, ()),)
    return apply_spec_changes(
        table(schema or nested_schema(), base, version), schema or nested_schema(), spec_changes(alter(sql))
    )


# -- CREATE ---------------------------------------------------------------------------------


def test_create_names_and_ids_follow_java_builder() -> None:
    spec = created("bucket(16, id), truncate(4, s), days(ts), months(d), n, st.a")
    assert fields(spec) == [
        (1, 1000, "id_bucket", "bucket[16]"),
        (2, 1001, "s_trunc", "truncate[4]"),
        (3, 1002, "ts_day", "day"),
        (7, 1003, "d_month", "month"),
        (4, 1004, "n", "identity"),
        (14, 1005, "st.a", "identity"),
    ]
    assert fields(created("years(d), hours(ts)")) == [
        (7, 1000, "d_year", "year"),
        (3, 1001, "ts_hour", "hour"),
    ]


def test_create_refuses_redundant_and_duplicate_terms() -> None:
    with pytest.raises(ValidationError, match="redundant"):
        created("years(ts), hours(ts)")
    with pytest.raises(ValidationError, match="redundant"):
        created("n, n")
    with pytest.raises(ValidationError, match="'id_bucket' more than once"):
        created("bucket(2, id), bucket(4, id)")
    assert fields(created("bucket(2, id), truncate(4, id), id"))[2] == (1, 1002, "id", "identity")


def test_create_refuses_wrong_types_and_sources() -> None:
    with pytest.raises(ValidationError, match=r"bucket\[4\]\(dbl\): bucket\[4\] does not apply to double"):
        created("bucket(4, dbl)")
    with pytest.raises(ValidationError, match="does not apply to date"):
        created("hours(d)")
    with pytest.raises(ValidationError, match="not a primitive"):
        created("st")
    with pytest.raises(ValidationError, match="inside a list or map"):
        spec_from_terms(nested_schema(), [PartitionTerm(IDENTITY, ("l", "element", "x"))])
    with pytest.raises(NotFoundError, match="nope"):
        created("nope")
    with pytest.raises(UnsupportedError):
        spec_from_terms(nested_schema(), [PartitionTerm(UnknownTransform("zorder"), ("id",))])


def test_create_refuses_names_of_other_columns() -> None:
    with pytest.raises(ValidationError, match="'s': that is the name of a column"):
        spec_from_terms(nested_schema(), [PartitionTerm(BUCKET16, ("id",), "s")])
    ok = spec_from_terms(nested_schema(), [PartitionTerm(IDENTITY, ("n",), "n")])
    assert ok.fields[0].name == "n"


# -- ALTER ----------------------------------------------------------------------------------


def test_add_fields_name_with_parameters_and_take_ids_after_the_last() -> None:
    base = spec_of((3, 1000, "ts_hour", HourTransform()), (1, 1001, "id_bucket", BucketTransform(4)))
    spec = evolve("ADD PARTITION FIELD bucket(8, id)", base)
    assert fields(spec)[-1] == (1, 1002, "id_bucket_8", "bucket[8]") and spec.spec_id == 1
    assert fields(evolve("ADD PARTITION FIELD truncate(4, s)", base))[-1] == (
        2,
        1002,
        "s_trunc_4",
        "truncate[4]",
    )
    assert fields(evolve("ADD PARTITION FIELD days(ts)", base))[-1] == (3, 1002, "ts_day", "day")
    assert fields(evolve("ADD PARTITION FIELD st.b.c", base))[-1] == (16, 1002, "st.b.c", "identity")
    assert fields(evolve("ADD PARTITION FIELD bucket(2, id) AS shard", base))[-1] == (
        1,
        1002,
        "shard",
        "bucket[2]",
    )


def test_add_into_an_unpartitioned_table_starts_at_1000() -> None:
    assert fields(evolve("ADD PARTITION FIELD n")) == [(4, 1000, "n", "identity")]


def test_add_refuses_duplicates_and_clashing_names() -> None:
    base = spec_of((1, 1000, "id_bucket", BUCKET16), (4, 1001, "n", IDENTITY))
    with pytest.raises(ValidationError, match="already has it as 'id_bucket'"):
        evolve("ADD PARTITION FIELD bucket(16, id)", base)
    with pytest.raises(ValidationError, match="already has it as 'n'"):
        evolve("ADD PARTITION FIELD n AS s", base)
    with pytest.raises(ValidationError, match="already has that name"):
        evolve("ADD PARTITION FIELD bucket(16, d) AS id_bucket", base)
    with pytest.raises(ValidationError, match="another column"):
        evolve("ADD PARTITION FIELD bucket(2, id) AS ts", base)
    with pytest.raises(ValidationError, match="does not apply to string"):
        evolve("ADD PARTITION FIELD days(s)", base)


def test_v2_drop_removes_and_readding_recycles_the_old_field() -> None:
    spec0 = spec_of((3, 1000, "ts_hour", HourTransform()), (1, 1001, "id_bucket", BucketTransform(4)))
    spec1 = evolve("DROP PARTITION FIELD bucket(4, id)", spec0)
    assert fields(spec1) == [(3, 1000, "ts_hour", "hour")] and spec1.spec_id == 1
    spec2 = evolve("ADD PARTITION FIELD bucket(4, id)", spec0, spec1)
    assert fields(spec2) == [(3, 1000, "ts_hour", "hour"), (1, 1001, "id_bucket", "bucket[4]")]
    assert spec2.spec_id == 0  # equal to an existing spec: reused
    renamed = evolve("ADD PARTITION FIELD bucket(4, id) AS b4", spec0, spec1)
    assert fields(renamed)[-1] == (1, 1002, "b4", "bucket[4]")


def test_v3_recycles_too() -> None:
    spec0 = spec_of((1, 1000, "id_bucket", BucketTransform(4)))
    spec1 = evolve("DROP PARTITION FIELD bucket(4, id)", spec0, version=3)
    assert spec1.fields == ()
    spec2 = evolve("ADD PARTITION FIELD bucket(4, id)", spec0, PartitionSpec(1, ()), version=3)
    assert spec2 == spec0


def test_v1_drop_leaves_a_void_field_renamed_when_its_name_is_reused() -> None:
    spec0 = spec_of((4, 1000, "n", IDENTITY), (3, 1001, "ts_day", DAY))
    spec1 = evolve("DROP PARTITION FIELD n", spec0, version=1)
    assert fields(spec1) == [(4, 1000, "n", "void"), (3, 1001, "ts_day", "day")]
    spec2 = evolve("ADD PARTITION FIELD n", spec0, spec1, version=1)
    assert fields(spec2) == [
        (4, 1000, "n_1000", "void"),
        (3, 1001, "ts_day", "day"),
        (4, 1002, "n", "identity"),
    ]


def test_v1_readding_gets_a_new_field() -> None:
    spec0 = spec_of((1, 1000, "id_bucket", BucketTransform(4)))
    spec1 = spec_of((1, 1000, "id_bucket", VoidTransform()), spec_id=1)
    spec2 = evolve("ADD PARTITION FIELD bucket(4, id)", spec0, spec1, version=1)
    assert fields(spec2) == [(1, 1000, "id_bucket", "void"), (1, 1001, "id_bucket_4", "bucket[4]")]


def test_replace_renames_or_swaps() -> None:
    base = spec_of((1, 1000, "id_bucket", BUCKET16), (4, 1001, "n", IDENTITY))
    renamed = evolve("REPLACE PARTITION FIELD n WITH n AS nn", base)
    assert fields(renamed) == [(1, 1000, "id_bucket", "bucket[16]"), (4, 1001, "nn", "identity")]
    swapped = evolve("REPLACE PARTITION FIELD id_bucket WITH bucket(8, id)", base)
    assert fields(swapped) == [(4, 1001, "n", "identity"), (1, 1002, "id_bucket_8", "bucket[8]")]
    same_name = evolve("REPLACE PARTITION FIELD n WITH truncate(8, n) AS n", base)
    assert fields(same_name)[-1] == (4, 1002, "n", "truncate[8]")
    v1 = evolve("REPLACE PARTITION FIELD n WITH truncate(2, n)", base, version=1)
    assert fields(v1)[1:] == [(4, 1001, "n", "void"), (4, 1002, "n_trunc_2", "truncate[2]")]


def test_drop_by_name_or_term_and_missing_fields() -> None:
    base = spec_of((1, 1000, "shard", BUCKET16), (4, 1001, "n", IDENTITY), (3, 1002, "ts_day", DAY))
    assert [f.name for f in evolve("DROP PARTITION FIELD shard", base).fields] == ["n", "ts_day"]
    assert [f.name for f in evolve("DROP PARTITION FIELD n", base).fields] == ["shard", "ts_day"]
    assert [f.name for f in evolve("DROP PARTITION FIELD days(ts)", base).fields] == ["shard", "n"]
    with pytest.raises(NotFoundError, match=r"bucket\[3\]\(id\)"):
        evolve("DROP PARTITION FIELD bucket(3, id)", base)
    with pytest.raises(NotFoundError, match="'nope'"):
        evolve("DROP PARTITION FIELD nope", base)


def test_two_time_fields_of_one_column_in_one_change_are_redundant() -> None:
    md = table(nested_schema())
    actions = [
        AddPartitionField(PartitionTerm(YearTransform(), ("ts",))),
        AddPartitionField(PartitionTerm(MonthTransform(), ("ts",))),
    ]
    with pytest.raises(ValidationError, match="redundant"):
        apply_spec_changes(md, nested_schema(), actions)
    # one at a time is fine (Java checks only the fields added together)
    spec = evolve("ADD PARTITION FIELD hours(ts)", spec_of((3, 1000, "ts_day", DAY)))
    assert [f.name for f in spec.fields] == ["ts_day", "ts_hour"]


def test_unknown_transforms_in_the_current_spec_block_changes() -> None:
    base = spec_of((1, 1000, "z", UnknownTransform("zorder")))
    with pytest.raises(UnsupportedError, match="zorder"):
        evolve("ADD PARTITION FIELD n", base)


def test_truncate_names() -> None:
    spec = apply_spec_changes(
        table(nested_schema()), nested_schema(), spec_changes(alter("ADD PARTITION FIELD truncate(10, n)"))
    )
    assert spec.fields[0].name == "n_trunc_10" and spec.fields[0].transform == TruncateTransform(10)


def test_removal_by_name_or_column_is_decided_by_the_spec() -> None:
    base = spec_of((1, 1000, "shard", BUCKET16), (4, 1001, "n", IDENTITY))
    md = table(nested_schema(), (base,))
    by_name = apply_spec_changes(md, nested_schema(), [RemovePartitionField(name="shard")])
    assert [f.name for f in by_name.fields] == ["n"]
    by_column = apply_spec_changes(
        md, nested_schema(), [RemovePartitionField(PartitionTerm(IDENTITY, ("N",)))]
    )
    assert [f.name for f in by_column.fields] == ["shard"]
