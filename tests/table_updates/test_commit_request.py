"""A REST commit's request: the updates the metadata builder recorded, and the requirements
derived from them, replayed as a REST server replays them.

Real histories: a session builds a table through many kinds of commits on a catalog that
checks every commit it is given -- the request's requirements hold on the base, and its
updates (after a JSON round trip, as a REST server receives them) replayed on the base give
the metadata iceduck built, in everything but what a catalog decides itself
(last-updated-ms, snapshot log times of non-snapshot moves, metadata-log).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest

from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import CommitConflictError
from iceduck.formats.metadata_json import read_table_metadata
from iceduck.session.session import Session
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import IntegerType, NestedField, StringType
from iceduck.table_updates.commit_request import commit_request, updates_since
from iceduck.table_updates.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
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
    SetProperties,
    SetSnapshotRef,
    parse_update,
    update_json,
)
from iceduck.txn.apply_updates import apply_updates
from iceduck.txn.builder import MetadataBuilder, replace_table_metadata


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


def replay(base: TableMetadata | None, new: TableMetadata) -> None:
    """The commit's request, through JSON, checked and replayed on ``base`` gives ``new``."""
    requirements, updates = commit_request(base, new)
    check_requirements(base, requirements)
    wire_reqs = [parse_requirement(requirement_json(r)) for r in requirements]
    wire_updates = [parse_update(update_json(u)) for u in updates]
    assert wire_reqs == requirements
    assert wire_updates == updates
    replayed = apply_updates(base, wire_updates)
    assert comparable(replayed) == comparable(new), updates


class ReplayingCatalog(SqliteCatalog):
    """A real SQLite catalog that first replays the request of every commit it is given."""

    commits = 0

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        replay(None, metadata)
        self.commits += 1
        return super().create_table(identifier, metadata)

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        replay(base.metadata, metadata)
        self.commits += 1
        return super().commit_table(base, metadata)

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        for base, metadata in changes:
            replay(base.metadata, metadata)
        self.commits += len(changes)
        return super().commit_tables(changes)


def run(warehouse: Path, statements: list[str]) -> int:
    """Run ``statements`` on a replaying catalog; the number of commits checked."""
    catalog = ReplayingCatalog(warehouse)
    session = Session(warehouse, catalog_impl=catalog)
    try:
        for sql in statements:
            session.run(sql)
    finally:
        session.close()
    return catalog.commits


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_commit_of_a_table_history_replays(tmp_path: Path, version: int) -> None:
    commits = run(
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
    assert commits == len(history(tmp_path, "db.t")) >= 15


def test_upgrades_and_a_replace_replay(tmp_path: Path) -> None:
    commits = run(
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
    assert commits == len(history(tmp_path, "db.t")) >= 9


def test_commit_requirements_assert_uuid_and_the_moved_ref(tmp_path: Path) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int) USING iceberg",
            "INSERT INTO db.t VALUES (1)",
        ],
    )
    created, first = history(tmp_path, "db.t")
    assert created.changes == () and first.changes == ()  # as read from the files
    builder = MetadataBuilder(first)
    builder.set_properties({"k": "v"})
    reqs, updates = commit_request(first, builder.build())
    assert reqs == [AssertTableUUID(str(first.table_uuid))]
    assert updates == [SetProperties({"k": "v"})]
    # the first INSERT's commit: the snapshot and main, asserting main did not exist
    base = dataclasses.replace(first, snapshots=(), refs={}, current_snapshot_id=None, snapshot_log=())
    builder = MetadataBuilder(base)
    builder.add_snapshot(first.snapshots[0])
    builder.set_ref("main", first.refs["main"])
    reqs, updates = commit_request(base, builder.build())
    assert reqs == [AssertTableUUID(str(first.table_uuid)), AssertRefSnapshotId("main", None)]
    assert [type(u) for u in updates] == [AddSnapshot, SetSnapshotRef]
    # a concurrent commit already created main: the requirement fails
    with pytest.raises(CommitConflictError, match="main was created concurrently"):
        check_requirements(first, reqs)
    with pytest.raises(CommitConflictError, match="table already exists"):
        check_requirements(first, [AssertCreate()])


def test_replace_asserts_the_uuid_and_the_ids_it_builds_on(tmp_path: Path) -> None:
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int) USING iceberg",
            "INSERT INTO db.t VALUES (1)",
        ],
    )
    base = history(tmp_path, "db.t")[-1]
    schema = Schema((NestedField(1, "id", IntegerType()), NestedField(2, "s", StringType())))
    replaced = replace_table_metadata(base, schema, UNPARTITIONED, UNSORTED, {})
    reqs, updates = commit_request(base, replaced)
    assert reqs == [
        AssertTableUUID(str(base.table_uuid)),
        AssertLastAssignedFieldId(base.last_column_id),
        AssertCurrentSchemaId(base.current_schema_id),
    ]
    assert RemoveSnapshotRef("main") in updates
    assert apply_updates(base, updates).current_snapshot_id is None


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
    unused = [s.spec_id for s in md.partition_specs if s.spec_id != md.default_spec_id]
    assert unused
    builder = MetadataBuilder(md)
    builder.remove_partition_specs(unused)
    smaller = builder.build()
    reqs, updates = commit_request(md, smaller)
    assert updates == [RemovePartitionSpecs(tuple(unused))]
    dev = md.refs["dev"].snapshot_id
    assert reqs == [
        AssertTableUUID(str(md.table_uuid)),
        AssertDefaultSpecId(md.default_spec_id),
        AssertRefSnapshotId("dev", dev),
    ]
    assert comparable(apply_updates(md, updates)) == comparable(smaller)


def test_a_v1_table_without_uuid_asserts_none(tmp_path: Path) -> None:
    """A v1 table written before UUIDs existed: nothing to assert; the catalog that writes
    the commit gives it one (Java's commit assigns it)."""
    run(
        tmp_path,
        [
            "CREATE NAMESPACE db",
            "CREATE TABLE db.t (id int) USING iceberg TBLPROPERTIES ('format-version'='1')",
        ],
    )
    (created,) = history(tmp_path, "db.t")
    old = dataclasses.replace(created, table_uuid=None)
    builder = MetadataBuilder(old)
    builder.set_properties({"k": "v"})
    reqs, updates = commit_request(old, builder.build())
    assert reqs == []
    assert [update_json(u) for u in updates] == [{"action": "set-properties", "updates": {"k": "v"}}]


# -- what the builder records ------------------------------------------------------------------


def test_a_chain_of_builders_records_every_change_since_the_file(tmp_path: Path) -> None:
    """A transaction builds each statement on the last one's metadata: the changes add up,
    and the commit sends them all, relative to the metadata as read."""
    run(tmp_path, ["CREATE NAMESPACE db", "CREATE TABLE db.t (id int) USING iceberg"])
    (read,) = history(tmp_path, "db.t")
    first = MetadataBuilder(read)
    first.set_properties({"a": "1"})
    second = MetadataBuilder(first.build())
    second.remove_properties(["a", "missing"])
    second.set_properties({"b": "2"})
    new = second.build()
    assert [update_json(u)["action"] for u in updates_since(read, new)] == [
        "set-properties",
        "remove-properties",
        "set-properties",
    ]
    assert updates_since(first.build(), new) == updates_since(read, new)[1:]
    assert apply_updates(read, updates_since(read, new)).properties == new.properties


def test_a_change_the_builder_did_not_record_is_refused(tmp_path: Path) -> None:
    """Metadata changed behind the builder's back would commit as nothing on a REST server:
    refused before anything is sent, as is metadata built from another base."""
    run(tmp_path, ["CREATE NAMESPACE db", "CREATE TABLE db.t (id int) USING iceberg"])
    (read,) = history(tmp_path, "db.t")
    with pytest.raises(ValueError, match="records no update"):
        commit_request(read, dataclasses.replace(read, location="/elsewhere"))
    other = MetadataBuilder(read)
    other.set_properties({"x": "1"})
    mine = MetadataBuilder(read)
    mine.set_properties({"y": "1"})
    with pytest.raises(ValueError, match="not built from the base"):
        updates_since(other.build(), mine.build())
    assert commit_request(read, read) == ([AssertTableUUID(str(read.table_uuid))], [])


class _Returns(SqliteCatalog):
    """A real SQLite catalog that keeps what its commits return."""

    returned: list[LoadedTable]

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        self.returned.append(super().create_table(identifier, metadata))
        return self.returned[-1]

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        self.returned.append(super().commit_table(base, metadata))
        return self.returned[-1]


def test_a_written_file_is_where_the_next_changes_start(tmp_path: Path) -> None:
    """A catalog that wrote the metadata returns it without recorded changes, so a session's
    next statement does not send (or keep in memory) the changes of earlier commits."""
    catalog = _Returns(tmp_path)
    catalog.returned = []
    session = Session(tmp_path, catalog_impl=catalog)
    try:
        session.run("CREATE NAMESPACE db")
        session.run("CREATE TABLE db.t (id int) USING iceberg")
        session.run("INSERT INTO db.t VALUES (1)")
        session.run("ALTER TABLE db.t SET TBLPROPERTIES ('k' = 'v')")
    finally:
        session.close()
    assert len(catalog.returned) == 3
    assert all(t.metadata.changes == () for t in catalog.returned)
