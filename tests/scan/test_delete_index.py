"""Delete scope rules (spec, "Scan Planning") on the delete index, case by case."""

from __future__ import annotations

import math
from typing import Any

import pytest

from iceduck.errors import CorruptDataError
from iceduck.scan.delete_index import DeleteIndex
from iceduck.scan.manifest_cache import referenced_data_file
from iceduck.scan.tasks import DeleteFile
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import DoubleType, LongType, NestedField, StringType
from tests.scan.builder import data_file, deletion_vector, equality_deletes, long_bound, position_deletes

SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType()),
        NestedField(3, "x", DoubleType()),
    )
)
UNPARTITIONED = PartitionSpec(0, ())
BY_CAT = PartitionSpec(1, (PartitionField(2, 1000, "cat", parse_transform("identity")),))
BY_X = PartitionSpec(2, (PartitionField(3, 1001, "x", parse_transform("identity")),))
SPECS = {s.spec_id: s for s in (UNPARTITIONED, BY_CAT, BY_X)}


def as_delete(f: DataFile, seq: int, spec_id: int) -> tuple[DeleteFile, DataFile]:
    return (
        DeleteFile(
            path=f.file_path,
            content=f.content,
            file_format=f.file_format,
            sequence_number=seq,
            record_count=f.record_count,
            file_size_in_bytes=f.file_size_in_bytes,
            equality_ids=tuple(f.equality_ids or ()),
            referenced_data_file=referenced_data_file(f),
            content_offset=f.content_offset,
            content_size_in_bytes=f.content_size_in_bytes,
            spec_id=spec_id,
            partition=f.partition,
        ),
        f,
    )


def index(*deletes: tuple[DeleteFile, DataFile], schemas: tuple[Schema, ...] = (SCHEMA,)) -> DeleteIndex:
    return DeleteIndex.build(deletes, SPECS, schemas)


def names(found: Any) -> list[str]:
    dv, positions, equalities = found
    return ([dv.path] if dv else []) + [d.path for d in positions] + [d.path for d in equalities]


# -- sequence numbers --------------------------------------------------------------------------


def test_position_deletes_apply_to_older_and_same_commit_data_only() -> None:
    idx = index(as_delete(position_deletes("pos-5", ("a",)), 5, 1))
    assert names(idx.for_data_file("d", 4, 1, ("a",))) == ["pos-5"]
    # "Position deletes [...] must be applied to data files from the same commit"
    assert names(idx.for_data_file("d", 5, 1, ("a",))) == ["pos-5"]
    assert names(idx.for_data_file("d", 6, 1, ("a",))) == []


def test_equality_deletes_apply_to_strictly_older_data_only() -> None:
    idx = index(as_delete(equality_deletes("eq-5", ("a",)), 5, 1))
    assert names(idx.for_data_file("d", 4, 1, ("a",))) == ["eq-5"]
    assert names(idx.for_data_file("d", 5, 1, ("a",))) == []  # same commit: not applied
    assert names(idx.for_data_file("d", 6, 1, ("a",))) == []


def test_many_deletes_are_selected_by_sequence_number() -> None:
    idx = index(*(as_delete(position_deletes(f"pos-{s}", ("a",)), s, 1) for s in (9, 3, 7, 5, 5)))
    assert sorted(names(idx.for_data_file("d", 5, 1, ("a",)))) == ["pos-5", "pos-5", "pos-7", "pos-9"]
    assert names(idx.for_data_file("d", 10, 1, ("a",))) == []


# -- partitions --------------------------------------------------------------------------------


def test_partition_scoped_deletes_need_the_same_spec_and_values() -> None:
    idx = index(
        as_delete(position_deletes("pos", ("a",)), 5, 1),
        as_delete(equality_deletes("eq", ("a",), ids=(1,)), 5, 1),
    )
    assert names(idx.for_data_file("d", 1, 1, ("a",))) == ["pos", "eq"]
    assert names(idx.for_data_file("d", 1, 1, ("b",))) == []
    assert names(idx.for_data_file("d", 1, 1, (None,))) == []
    # same partition values under another spec: not the same partition
    assert names(idx.for_data_file("d", 1, 2, ("a",))) == []
    assert names(idx.for_data_file("d", 1, 0, ())) == []


def test_equality_deletes_of_an_unpartitioned_spec_are_global() -> None:
    idx = index(as_delete(equality_deletes("global", (), ids=(1,)), 5, 0))
    for spec_id, partition in ((0, ()), (1, ("a",)), (1, (None,)), (2, (1.5,))):
        assert names(idx.for_data_file("d", 4, spec_id, partition)) == ["global"]
        assert names(idx.for_data_file("d", 5, spec_id, partition)) == []


def test_position_deletes_of_an_unpartitioned_spec_are_not_global() -> None:
    idx = index(as_delete(position_deletes("pos", ()), 5, 0))
    assert names(idx.for_data_file("d", 4, 0, ())) == ["pos"]
    assert names(idx.for_data_file("d", 4, 1, ("a",))) == []


def test_float_partitions_compare_by_bits() -> None:
    """Note 3: -0.0 and 0.0 differ, NaN equals NaN (normalized)."""
    idx = index(
        as_delete(position_deletes("zero", (0.0,)), 5, 2),
        as_delete(position_deletes("nan", (math.nan,)), 5, 2),
    )
    assert names(idx.for_data_file("d", 1, 2, (0.0,))) == ["zero"]
    assert names(idx.for_data_file("d", 1, 2, (-0.0,))) == []
    assert names(idx.for_data_file("d", 1, 2, (float("nan"),))) == ["nan"]


# -- referenced files, file_path bounds, deletion vectors -------------------------------------------


def test_position_deletes_with_a_referenced_file_apply_to_that_file_only() -> None:
    with_ref = data_file(
        "pos-ref", ("a",), 1, content=FileContent.POSITION_DELETES, referenced_data_file="d1"
    )
    same_bounds = position_deletes("pos-bounds", ("a",), targets=["d2"])
    idx = index(as_delete(with_ref, 5, 1), as_delete(same_bounds, 5, 1))
    assert names(idx.for_data_file("d1", 1, 1, ("a",))) == ["pos-ref"]
    assert names(idx.for_data_file("d2", 1, 1, ("a",))) == ["pos-bounds"]
    assert names(idx.for_data_file("d3", 1, 1, ("a",))) == []
    assert names(idx.for_data_file("d1", 6, 1, ("a",))) == []  # still sequence-scoped


def test_file_path_bounds_skip_position_delete_files_that_cannot_reference_the_file() -> None:
    spans = position_deletes("pos-bc", ("a",), targets=["/t/data/b.parquet", "/t/data/c.parquet"])
    idx = index(as_delete(spans, 5, 1))
    assert names(idx.for_data_file("/t/data/b.parquet", 1, 1, ("a",))) == ["pos-bc"]
    assert names(idx.for_data_file("/t/data/bb.parquet", 1, 1, ("a",))) == ["pos-bc"]
    assert names(idx.for_data_file("/t/data/a.parquet", 1, 1, ("a",))) == []
    assert names(idx.for_data_file("/t/data/d.parquet", 1, 1, ("a",))) == []


def test_a_deletion_vector_replaces_position_delete_files() -> None:
    idx = index(
        as_delete(position_deletes("pos", ("a",), targets=["d1", "d2"]), 3, 1),
        as_delete(deletion_vector("dv.puffin", "d1", ("a",)), 4, 1),
        as_delete(equality_deletes("eq", ("a",)), 4, 1),
    )
    dv, positions, equalities = idx.for_data_file("d1", 2, 1, ("a",))
    assert dv is not None and dv.path == "dv.puffin" and dv.content_offset == 4
    assert positions == ()
    assert [d.path for d in equalities] == ["eq"]
    assert names(idx.for_data_file("d2", 2, 1, ("a",))) == ["pos", "eq"]
    # a DV of the same commit applies (sequence numbers equal)
    assert names(idx.for_data_file("d1", 4, 1, ("a",))) == ["dv.puffin"]


def test_a_deletion_vector_older_than_its_data_file_is_corrupt() -> None:
    idx = index(as_delete(deletion_vector("dv.puffin", "d1", ("a",)), 4, 1))
    with pytest.raises(CorruptDataError, match=r"dv\.puffin.*older than the data file"):
        idx.for_data_file("d1", 5, 1, ("a",))


def test_two_deletion_vectors_for_one_file_are_corrupt() -> None:
    with pytest.raises(CorruptDataError, match="two deletion vectors for data file d1"):
        index(
            as_delete(deletion_vector("a.puffin", "d1"), 4, 0),
            as_delete(deletion_vector("b.puffin", "d1"), 5, 0),
        )


# -- equality delete metrics ---------------------------------------------------------------------


def _ids(path: str, lo: int, hi: int, nulls: int = 0, count: int = 10) -> DataFile:
    return data_file(
        path,
        (),
        count,
        lower={1: long_bound(lo), 2: b"a"},
        upper={1: long_bound(hi), 2: b"z"},
        value_counts={1: count, 2: count},
        null_counts={1: 0, 2: nulls},
    )


def test_equality_deletes_whose_key_ranges_miss_the_data_file_are_skipped() -> None:
    eq = equality_deletes(
        "eq-ids-100-200", ids=(1,), lower={1: long_bound(100)}, upper={1: long_bound(200)},
        value_counts={1: 2}, null_counts={1: 0},
    )  # fmt: skip
    idx = index(as_delete(eq, 5, 0))
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 0, 99))) == []
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 150, 300))) == ["eq-ids-100-200"]
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 201, 300))) == []
    assert names(idx.for_data_file("d", 1, 0, ())) == ["eq-ids-100-200"]  # no metrics: kept


def test_equality_deletes_of_nulls_match_only_files_with_nulls() -> None:
    only_null = equality_deletes("eq-null-cat", ids=(2,), value_counts={2: 1}, null_counts={2: 1})
    idx = index(as_delete(only_null, 5, 0))
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 0, 9, nulls=0))) == []
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 0, 9, nulls=3))) == ["eq-null-cat"]


def test_equality_deletes_of_values_skip_files_of_only_nulls() -> None:
    values = equality_deletes(
        "eq-cat", ids=(2,), lower={2: b"m"}, upper={2: b"m"}, value_counts={2: 1}, null_counts={2: 0}
    )
    idx = index(as_delete(values, 5, 0))
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 0, 9, nulls=10))) == []
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 0, 9, nulls=2))) == ["eq-cat"]


def test_equality_deletes_on_a_column_no_schema_has_always_apply() -> None:
    """Spec: "If a delete column in an equality delete file is later dropped from the
    table, it must still be used"; without its type, metrics cannot rule it out."""
    gone = equality_deletes("eq-gone", ids=(99,), lower={99: b"\x00"}, upper={99: b"\x00"})
    idx = index(as_delete(gone, 5, 0))
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 0, 9))) == ["eq-gone"]


def test_dropped_equality_columns_are_found_in_older_schemas() -> None:
    current = Schema((NestedField(1, "id", LongType(), required=True),), schema_id=2)
    eq = equality_deletes(
        "eq-cat", ids=(2,), lower={2: b"m"}, upper={2: b"m"}, value_counts={2: 1}, null_counts={2: 0}
    )
    idx = index(as_delete(eq, 5, 0), schemas=(current, SCHEMA))
    assert names(idx.for_data_file("d", 1, 0, (), _ids("d", 0, 9, nulls=10))) == []


def test_delete_files_of_a_foreign_content_are_refused() -> None:
    plain = data_file("not-a-delete", ())
    with pytest.raises(CorruptDataError, match="not a delete file"):
        index(as_delete(plain, 1, 0))
    assert FileFormat.PUFFIN.value == "puffin"
