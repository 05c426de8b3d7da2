"""Snapshot and schema resolution for plain reads, refs and time travel (Spark semantics)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iceduck.errors import NotFoundError, UserError
from iceduck.scan.snapshots import resolve, resolve_snapshot, snapshot_id_as_of
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import RefType, SnapshotLogEntry
from iceduck.spec.types import LongType, NestedField, StringType
from tests.scan.builder import T0_MS, TableBuilder, data_file

V0 = Schema((NestedField(1, "id", LongType()),), schema_id=0)
V1 = Schema((NestedField(1, "id", LongType()), NestedField(2, "name", StringType())), schema_id=1)
JAN_2020_MS = 1_577_836_800_000  # 2020-01-01 00:00:00 UTC


@pytest.fixture
def table(tmp_path: Path) -> TableBuilder:
    """s1, s2 written with schema 0 (tag t_old -> s1, branch b_old -> s1); then schema 1,
    s3 on main and s4 on branch b_new; snapshots one second apart from T0_MS."""
    t = TableBuilder(tmp_path, V0)
    s1 = t.commit([data_file("f1")])
    t.commit([data_file("f2")])
    t.tag("t_old", s1.snapshot_id)
    t.refs["b_old"] = dataclasses.replace(t.refs["main"], snapshot_id=s1.snapshot_id)
    t.set_schema(V1)
    t.commit([data_file("f3")])
    t.commit([data_file("f4")], branch="b_new")
    return t


def test_plain_reads_use_main_and_the_current_schema(table: TableBuilder) -> None:
    md = table.metadata
    target = resolve(md)
    assert target.snapshot == md.current_snapshot()
    assert target.schema == V1 and target.branch == "main"
    assert resolve(md, ref="main") == target
    assert resolve_snapshot(md) == md.current_snapshot()


def test_an_empty_table_has_no_snapshot(tmp_path: Path) -> None:
    md = TableBuilder(tmp_path, V0).metadata
    target = resolve(md)
    assert target.snapshot is None and target.schema == V0
    assert resolve(md, version="main").snapshot is None
    with pytest.raises(NotFoundError, match="no branch or tag named 'dev'"):
        resolve(md, ref="dev")


def test_a_snapshot_id_reads_with_the_schema_it_was_written_with(table: TableBuilder) -> None:
    md = table.metadata
    first = md.snapshots[0]
    target = resolve(md, snapshot_id=first.snapshot_id)
    assert target.snapshot == first and target.schema == V0 and target.branch is None


def test_a_tag_reads_with_its_snapshots_schema_a_branch_with_the_current_one(table: TableBuilder) -> None:
    """Java ``SnapshotUtil.schemaFor(table, ref)``: tag -> snapshot schema, branch -> table schema."""
    md = table.metadata
    first = md.snapshots[0]
    tag = resolve(md, ref="t_old")
    assert tag.snapshot == first and tag.schema == V0 and tag.branch is None
    branch = resolve(md, ref="b_old")
    assert branch.snapshot == first and branch.schema == V1 and branch.branch == "b_old"
    assert resolve(md, ref="b_new").snapshot == md.snapshots[3]


def test_snapshots_without_a_schema_id_read_with_the_current_schema(table: TableBuilder) -> None:
    md = table.metadata
    old = dataclasses.replace(md.snapshots[0], schema_id=None)
    md = dataclasses.replace(md, snapshots=(old, *md.snapshots[1:]))
    assert resolve(md, snapshot_id=old.snapshot_id).schema == V1


def test_version_as_of_parses_numbers_first_then_refs(table: TableBuilder) -> None:
    """Spark ``SparkCatalog.loadTable(ident, version)``: ``Long.parseLong`` first."""
    md = table.metadata
    first = md.snapshots[0]
    assert resolve(md, version=first.snapshot_id).snapshot == first
    assert resolve(md, version=str(first.snapshot_id)).snapshot == first
    assert resolve(md, version="t_old").schema == V0
    assert resolve(md, version="b_old").schema == V1
    with pytest.raises(NotFoundError, match=r"no snapshot id or branch or tag matching version 'nope'"):
        resolve(md, version="nope", table="db.t")
    # a ref named like a number is shadowed by the snapshot id reading, as in Spark
    md2 = dataclasses.replace(md, refs={**md.refs, "12345": md.refs["t_old"]})
    with pytest.raises(NotFoundError, match="no snapshot with id 12345"):
        resolve(md2, version="12345")


def test_unknown_snapshots_and_refs_are_named(table: TableBuilder) -> None:
    md = table.metadata
    with pytest.raises(NotFoundError, match=r"table db\.t has no snapshot with id 42"):
        resolve(md, snapshot_id=42, table="db.t")
    with pytest.raises(NotFoundError, match="has no branch or tag named 'missing'"):
        resolve(md, ref="missing")
    with pytest.raises(NotFoundError, match="'t_old' of the table is a tag, not a branch"):
        resolve(md, ref="t_old", expect=RefType.BRANCH)
    with pytest.raises(NotFoundError, match="'b_old' of the table is a branch, not a tag"):
        resolve(md, ref="b_old", expect=RefType.TAG)
    with pytest.raises(UserError, match="cannot time-travel by both snapshot id and ref"):
        resolve(md, snapshot_id=md.snapshots[0].snapshot_id, ref="main")


def test_timestamp_as_of_takes_the_last_log_entry_at_or_before_the_time(table: TableBuilder) -> None:
    md = table.metadata
    s1, s2, s3 = (s.snapshot_id for s in md.snapshots[:3])  # s4 is on a branch: not in the log
    assert [e.snapshot_id for e in md.snapshot_log] == [s1, s2, s3]
    assert resolve(md, timestamp_ms=T0_MS).snapshot.snapshot_id == s1  # type: ignore[union-attr]
    assert resolve(md, timestamp_ms=T0_MS + 999).snapshot.snapshot_id == s1  # type: ignore[union-attr]
    target = resolve(md, timestamp_ms=T0_MS + 1000)
    assert target.snapshot.snapshot_id == s2 and target.schema == V0  # type: ignore[union-attr]
    assert resolve(md, timestamp_ms=T0_MS + 10**9).snapshot.snapshot_id == s3  # type: ignore[union-attr]


def test_timestamp_as_of_follows_the_log_not_the_ancestry(table: TableBuilder) -> None:
    """Appendix F: the snapshot log, which a rollback makes differ from the lineage."""
    md = table.metadata
    s1, s2, s3 = (s.snapshot_id for s in md.snapshots[:3])
    log = (
        SnapshotLogEntry(T0_MS, s1),
        SnapshotLogEntry(T0_MS + 1000, s2),
        SnapshotLogEntry(T0_MS + 5000, s1),  # rolled back to s1
        SnapshotLogEntry(T0_MS + 9000, s3),
    )
    md = dataclasses.replace(md, snapshot_log=log)
    assert snapshot_id_as_of(md, T0_MS + 6000) == s1
    assert snapshot_id_as_of(md, T0_MS + 4999) == s2


def test_no_snapshot_old_enough_is_a_clear_error(table: TableBuilder) -> None:
    md = table.metadata
    with pytest.raises(NotFoundError) as e:
        resolve(md, timestamp_ms=JAN_2020_MS, table="db.events")
    assert "no snapshot of table db.events at or before 2020-01-01 00:00:00 UTC" in str(e.value)
    assert "oldest snapshot is from 2023-11-14 22:13:20 UTC" in str(e.value)
    with pytest.raises(NotFoundError, match=r"at or before 2020-01-01 00:00:00\.250 UTC: .* no snapshot log"):
        resolve(dataclasses.replace(md, snapshot_log=()), timestamp_ms=JAN_2020_MS + 250)
