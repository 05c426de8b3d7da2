"""REST table requirements: JSON in the spec's shape both ways, and their checks."""

from __future__ import annotations

from typing import Any

import pytest

from iceduck.errors import CommitConflictError, NotFoundError, ValidationError
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import RefType, Snapshot, SnapshotRef
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import LongType, NestedField
from iceduck.table_updates.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    Requirement,
    check_requirements,
    parse_requirement,
    parse_requirements,
    requirement_json,
)

UUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"

#: hand-written in the shape of rest-catalog-open-api.yaml's TableRequirement schemas
SPEC_EXAMPLES: list[tuple[dict[str, Any], Requirement]] = [
    ({"type": "assert-create"}, AssertCreate()),
    ({"type": "assert-table-uuid", "uuid": UUID}, AssertTableUUID(UUID)),
    (
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 3051729675574597004},
        AssertRefSnapshotId("main", 3051729675574597004),
    ),
    ({"type": "assert-ref-snapshot-id", "ref": "dev", "snapshot-id": None}, AssertRefSnapshotId("dev", None)),
    ({"type": "assert-last-assigned-field-id", "last-assigned-field-id": 3}, AssertLastAssignedFieldId(3)),
    ({"type": "assert-current-schema-id", "current-schema-id": 1}, AssertCurrentSchemaId(1)),
    (
        {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 1000},
        AssertLastAssignedPartitionId(1000),
    ),
    ({"type": "assert-default-spec-id", "default-spec-id": 0}, AssertDefaultSpecId(0)),
    ({"type": "assert-default-sort-order-id", "default-sort-order-id": 1}, AssertDefaultSortOrderId(1)),
]


@pytest.mark.parametrize(("obj", "expected"), SPEC_EXAMPLES)
def test_json_both_ways(obj: dict[str, Any], expected: Requirement) -> None:
    assert parse_requirement(obj) == expected
    assert requirement_json(expected) == obj


def test_missing_snapshot_id_means_the_ref_must_not_exist() -> None:
    assert parse_requirement({"type": "assert-ref-snapshot-id", "ref": "b"}) == AssertRefSnapshotId("b", None)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"type": "assert-nothing"}, "unknown requirement type 'assert-nothing'"),
        ({"uuid": UUID}, "missing required field 'type'"),
        ("assert-create", "requirement must be a JSON object"),
        ({"type": "assert-table-uuid"}, "missing required field 'uuid'"),
        (
            {"type": "assert-current-schema-id", "current-schema-id": "1"},
            "'current-schema-id'.*must be an int",
        ),
        ({"type": "assert-ref-snapshot-id", "snapshot-id": 1}, "missing required field 'ref'"),
        ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1.5}, "must be a long"),
    ],
)
def test_bad_requirements_are_validation_errors(obj: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_requirement(obj)


def table() -> TableMetadata:
    snapshot = Snapshot(snapshot_id=10, timestamp_ms=1, sequence_number=1, manifest_list="m.avro")
    return TableMetadata(
        format_version=2,
        table_uuid=UUID,
        location="file:///w/db/t",
        last_updated_ms=1,
        last_column_id=1,
        schemas=(Schema((NestedField(1, "id", LongType()),), 0),),
        current_schema_id=0,
        partition_specs=(PartitionSpec(0, ()),),
        default_spec_id=0,
        last_partition_id=999,
        sort_orders=(UNSORTED,),
        default_sort_order_id=0,
        last_sequence_number=1,
        current_snapshot_id=10,
        snapshots=(snapshot,),
        refs={"main": SnapshotRef(10, RefType.BRANCH), "t1": SnapshotRef(10, RefType.TAG)},
    )


def test_requirements_that_hold() -> None:
    check_requirements(None, [AssertCreate()])
    check_requirements(
        table(),
        [
            AssertTableUUID(UUID),
            AssertRefSnapshotId("main", 10),
            AssertRefSnapshotId("t1", 10),
            AssertRefSnapshotId("new-branch", None),
            AssertLastAssignedFieldId(1),
            AssertCurrentSchemaId(0),
            AssertLastAssignedPartitionId(999),
            AssertDefaultSpecId(0),
            AssertDefaultSortOrderId(0),
        ],
    )


@pytest.mark.parametrize(
    ("req", "message"),
    [
        (AssertCreate(), "Requirement failed: table already exists"),
        (AssertTableUUID("other"), f"UUID does not match: expected {UUID} != other"),
        (AssertRefSnapshotId("main", 9), "branch main has changed: expected id 9 != 10"),
        (AssertRefSnapshotId("t1", None), "tag t1 was created concurrently"),
        (AssertRefSnapshotId("gone", 10), "branch or tag gone is missing, expected 10"),
        (AssertLastAssignedFieldId(2), "last assigned field id changed: expected id 2 != 1"),
        (AssertCurrentSchemaId(1), "current schema changed: expected id 1 != 0"),
        (AssertLastAssignedPartitionId(1000), "last assigned partition id changed: expected id 1000 != 999"),
        (AssertDefaultSpecId(1), "default partition spec changed: expected id 1 != 0"),
        (AssertDefaultSortOrderId(1), "default sort order changed: expected id 1 != 0"),
    ],
)
def test_failed_requirements_are_commit_conflicts(req: Requirement, message: str) -> None:
    with pytest.raises(CommitConflictError, match=message):
        check_requirements(table(), [AssertTableUUID(UUID), req])


def test_requirements_on_a_missing_table() -> None:
    with pytest.raises(NotFoundError, match="table does not exist"):
        check_requirements(None, [AssertTableUUID(UUID)])


def test_requirement_arrays_name_the_bad_element() -> None:
    assert parse_requirements([{"type": "assert-create"}]) == [AssertCreate()]
    with pytest.raises(ValidationError, match=r"requirements\[1\]: unknown requirement type 'x'"):
        parse_requirements([{"type": "assert-create"}, {"type": "x"}])
    with pytest.raises(ValidationError, match="requirements must be a JSON array, got dict"):
        parse_requirements({"type": "assert-create"})
