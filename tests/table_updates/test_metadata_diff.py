"""diff: the REST requirements and updates of a commit, replayed with apply_updates.

Real histories: iceduck.connect builds a table through many kinds of commits; every
consecutive pair of metadata files is diffed, the updates are replayed on the older one
(also after a JSON round trip, as a REST server receives them) and the result must equal
the newer one in everything but what a catalog decides itself (last-updated-ms, snapshot
log times of non-snapshot moves, metadata-log).
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

import iceduck
from iceduck.errors import CommitConflictError
from iceduck.formats.metadata_json import read_table_metadata
from iceduck.spec.table_metadata import TableMetadata
from iceduck.table_updates.metadata_diff import diff
from iceduck.table_updates.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    check_requirements,
    parse_requirement,
    requirement_json,
)
from iceduck.table_updates.updates import (
    AddSnapshot,
    RemovePartitionSpecs,
    RemoveSnapshotRef,
    SetSnapshotRef,
    parse_update,
    update_json,
)
from iceduck.txn.apply_updates import apply_updates


def comparable(md: TableMetadata) -> dict[str, object]:
    """Everything a replay must reproduce exactly; the snapshot log by snapshot ids only."""
    return {
        "format_version": md.format_version,
        "table_uuid": md.table_uuid,
        "location": md.location,
        "last_column_id": md.last_column_id,
        "schemas": md.schemas,
        "current_schema_id": md.current_schema_id,
        "partition_specs": md.partition_specs,
        "default_spec_id": md.default_spec_id,
        "last_partition_id": md.last_partition_id,
        "sort_orders": md.sort_orders,
        "default_sort_order_id": md.default_sort_order_id,
        "last_sequence_number": md.last_sequence_number,
        "properties": md.properties,
        "current_snapshot_id": md.current_snapshot_id,
        "snapshots": md.snapshots,
        "refs": md.refs,
        "statistics": md.statistics,
        "partition_statistics": md.partition_statistics,
        "next_row_id": md.next_row_id,
        "encryption_keys": md.encryption_keys,
        "snapshot_log_ids": [e.snapshot_id for e in md.snapshot_log],
    }


def history(warehouse: Path, table: str) -> list[TableMetadata]:
    ns, name = table.split(".")
    files = sorted((warehouse / ns / name / "metadata").glob("*.metadata.json"))
    return [read_table_metadata(p.read_bytes(), str(p)) for p in files]


def replay_all(versions: list[TableMetadata]) -> int:
    """Diff and replay each consecutive pair (and the create from nothing); the number of
    commits checked."""
    pairs: list[tuple[TableMetadata | None, TableMetadata]] = [(None, versions[0])]
    pairs += list(itertools.pairwise(versions))
    for base, new in pairs:
        requirements, updates = diff(base, new)
        check_requirements(base, requirements)
        wire_reqs = [parse_requirement(requirement_json(r)) for r in requirements]
        wire_updates = [parse_update(update_json(u)) for u in updates]
        assert wire_reqs == requirements
        assert wire_updates == updates
        replayed = apply_updates(base, wire_updates)
        assert comparable(replayed) == comparable(new), (base and base.last_updated_ms, updates)
    return len(pairs)


def run(warehouse: Path, statements: list[str]) -> None:
    with iceduck.connect(str(warehouse)) as con:
        for sql in statements:
            con.execute(sql)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_diff_replays_a_table_history(tmp_path: Path, version: int) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id bigint NOT NULL, s string, ts timestamp) USING iceberg "
            f"PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('format-version' = '{version}'"
            + (", 'write.delete.mode' = 'merge-on-read')" if version > 1 else ")"),
            "INSERT INTO db.t VALUES (1, 'a', TIMESTAMP '2024-01-01'), (2, 'b', TIMESTAMP '2024-01-02')",
            "ALTER TABLE db.t CREATE TAG first",
            "INSERT INTO db.t VALUES (3, 'c', TIMESTAMP '2024-01-03')",
            "DELETE FROM db.t WHERE id = 2",
            "ALTER TABLE db.t ADD COLUMN extra int",
            "ALTER TABLE db.t RENAME COLUMN s TO label",
            "ALTER TABLE db.t ADD PARTITION FIELD days(ts)",
            "ALTER TABLE db.t WRITE ORDERED BY id DESC",
            "ALTER TABLE db.t SET TBLPROPERTIES ('owner' = 'me', 'commit.retry.num-retries' = '5')",
            "ALTER TABLE db.t UNSET TBLPROPERTIES ('owner')",
            "ALTER TABLE db.t CREATE BRANCH dev RETAIN 7 DAYS",
            "INSERT INTO db.t VALUES (4, 'd', TIMESTAMP '2024-01-04', 7)",
            "UPDATE db.t SET extra = 1 WHERE id = 1",
            "ALTER TABLE db.t DROP TAG first",
            "CALL system.compute_table_stats('db.t')",
            "CALL system.compute_partition_stats('db.t')",
            "CALL system.expire_snapshots('db.t', TIMESTAMP '2999-01-01', 1)",
        ],
    )
    versions = history(tmp_path, "db.t")
    assert replay_all(versions) == len(versions) >= 15


def test_diff_replays_upgrade_rollback_and_replace(tmp_path: Path) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int) USING iceberg TBLPROPERTIES ('format-version' = '1')",
            "INSERT INTO db.t VALUES (1)",
            "INSERT INTO db.t VALUES (2)",
            "ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '2')",
            "INSERT INTO db.t VALUES (3)",
            "ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')",
            "INSERT INTO db.t VALUES (4)",
            "CREATE OR REPLACE TABLE db.t (id bigint, name string) USING iceberg PARTITIONED BY (name)",
            "INSERT INTO db.t VALUES (5, 'x')",
        ],
    )
    versions = history(tmp_path, "db.t")
    assert replay_all(versions) == len(versions) >= 9


def test_commit_requirements_assert_uuid_and_the_moved_ref(tmp_path: Path) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int) USING iceberg",
            "INSERT INTO db.t VALUES (1)",
            "INSERT INTO db.t VALUES (2)",
        ],
    )
    created, first, second = history(tmp_path, "db.t")
    reqs, updates = diff(None, created)
    assert reqs == [AssertCreate()]
    reqs, updates = diff(created, first)
    assert reqs == [AssertTableUUID(str(created.table_uuid)), AssertRefSnapshotId("main", None)]
    assert [type(u) for u in updates] == [AddSnapshot, SetSnapshotRef]
    reqs, _ = diff(first, second)
    assert reqs == [
        AssertTableUUID(str(first.table_uuid)),
        AssertRefSnapshotId("main", first.current_snapshot_id),
    ]
    # a concurrent commit already moved main: the second commit's requirements fail
    with pytest.raises(CommitConflictError, match="main has changed"):
        check_requirements(second, reqs)
    with pytest.raises(CommitConflictError, match="table already exists"):
        check_requirements(second, [AssertCreate()])


def test_replace_asserts_only_the_uuid_and_the_last_ids(tmp_path: Path) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int) USING iceberg",
            "INSERT INTO db.t VALUES (1)",
            "CREATE OR REPLACE TABLE db.t (id int, s string) USING iceberg PARTITIONED BY (s)",
        ],
    )
    _, base, replaced = history(tmp_path, "db.t")
    reqs, updates = diff(base, replaced, replace=True)
    assert reqs == [
        AssertTableUUID(str(base.table_uuid)),
        AssertLastAssignedFieldId(base.last_column_id),
        AssertLastAssignedPartitionId(base.last_partition_id),
    ]
    assert RemoveSnapshotRef("main") in updates
    assert apply_updates(base, updates).current_snapshot_id is None
    # as a plain update the same change asserts the current ids too
    plain, _ = diff(base, replaced)
    assert AssertCurrentSchemaId(base.current_schema_id) in plain
    assert AssertDefaultSpecId(base.default_spec_id) in plain


def test_removing_specs_asserts_every_other_branch(tmp_path: Path) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int, s string) USING iceberg PARTITIONED BY (s)",
            "INSERT INTO db.t VALUES (1, 'a')",
            "ALTER TABLE db.t CREATE BRANCH dev",
            "ALTER TABLE db.t CREATE TAG v1",
            "ALTER TABLE db.t DROP PARTITION FIELD s",
        ],
    )
    md = history(tmp_path, "db.t")[-1]
    unused = [s for s in md.partition_specs if s.spec_id != md.default_spec_id]
    assert unused
    smaller = dataclasses.replace(md, partition_specs=tuple(s for s in md.partition_specs if s not in unused))
    reqs, updates = diff(md, smaller)
    assert updates == [RemovePartitionSpecs(tuple(s.spec_id for s in unused))]
    dev = md.refs["dev"].snapshot_id
    assert reqs == [
        AssertTableUUID(str(md.table_uuid)),
        AssertDefaultSpecId(md.default_spec_id),
        AssertRefSnapshotId("dev", dev),
    ]
    assert comparable(apply_updates(md, updates)) == comparable(smaller)


def test_a_v1_table_without_uuid_gets_one_and_asserts_none(tmp_path: Path) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int) USING iceberg TBLPROPERTIES ('format-version'='1')",
        ],
    )
    (created,) = history(tmp_path, "db.t")
    old = dataclasses.replace(created, table_uuid=None)
    reqs, updates = diff(old, created)
    assert reqs == []
    assert [update_json(u) for u in updates] == [{"action": "assign-uuid", "uuid": created.table_uuid}]
    check_requirements(old, reqs)
    assert apply_updates(old, updates).table_uuid == created.table_uuid
