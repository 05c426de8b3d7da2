"""Snapshots produced by iceduck.txn.snapshot, read back with the planner and manifest readers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iceduck.errors import ValidationError
from iceduck.formats.manifest_list import open_manifest_list
from iceduck.formats.manifests import read_manifest
from iceduck.io.fileio import read_bytes
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import EntryStatus, ManifestContent, ManifestEntry
from iceduck.spec.snapshot import Operation, RefType, Snapshot, SnapshotRef
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.snapshot import SnapshotChanges, build_snapshot, new_snapshot_id, produce
from tests.txn.snapshot_support import commit, new_table, rows, write_data, write_position_deletes


def _list(s: Snapshot):
    assert s.manifest_list is not None
    return open_manifest_list(read_bytes(s.manifest_list), s.manifest_list)


def _stored_entries(path: str) -> list[ManifestEntry]:
    return read_manifest(read_bytes(path), path, inherit=False).entries


def _metadata_files(md: TableMetadata) -> set[str]:
    return {p.name for p in (Path(md.location) / "metadata").glob("*")}


def test_appends_assign_sequence_numbers_and_totals(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path)
    a = write_data(md, [1, 2, 3], "x")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a,)), cache, now_ms=1_700_000_001_000)
    first = md.current_snapshot()
    assert first is not None and first.parent_snapshot_id is None
    assert (first.sequence_number, md.last_sequence_number) == (1, 1)
    assert first.timestamp_ms == 1_700_000_001_000 and first.schema_id == 0
    b, c = write_data(md, [4], "y"), write_data(md, [5, 6], "y")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(b, c)), cache)
    second = md.current_snapshot()
    assert second is not None and second.parent_snapshot_id == first.snapshot_id
    assert second.sequence_number == 2 and md.refs["main"] == SnapshotRef(second.snapshot_id, RefType.BRANCH)
    assert rows(md, cache) == [(i, "x" if i <= 3 else "y") for i in range(1, 7)]
    assert rows(md, cache, first) == [(1, "x"), (2, "x"), (3, "x")]

    s = second.summary
    assert next(iter(s)) == "operation" and s["operation"] == "append"
    assert s["added-data-files"] == "2" and s["added-records"] == "3"
    assert s["added-files-size"] == str(b.file_size_in_bytes + c.file_size_in_bytes)
    assert s["changed-partition-count"] == "1"  # unpartitioned: the root partition
    assert s["total-records"] == "6" and s["total-data-files"] == "3" and s["total-delete-files"] == "0"
    assert s["total-files-size"] == str(sum(f.file_size_in_bytes for f in (a, b, c)))

    listing = _list(second)
    assert (listing.snapshot_id, listing.parent_snapshot_id, listing.sequence_number) == (
        second.snapshot_id,
        first.snapshot_id,
        2,
    )
    new, old = listing.manifests  # newest first, as Java lists them
    assert (new.sequence_number, new.min_sequence_number, new.added_snapshot_id) == (2, 2, second.snapshot_id)
    assert (old.sequence_number, old.added_snapshot_id) == (1, first.snapshot_id)
    # Java's names: <commit uuid>-m<N>.avro and snap-<id>-1-<commit uuid>.avro, same uuid
    commit_uuid = Path(new.manifest_path).name.removesuffix("-m0.avro")
    assert Path(second.manifest_list).name == f"snap-{second.snapshot_id}-1-{commit_uuid}.avro"
    # ADDED entries carry the snapshot id but inherit their sequence numbers
    assert [
        (e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number)
        for e in _stored_entries(new.manifest_path)
    ] == [(EntryStatus.ADDED, second.snapshot_id, None, None)] * 2


def test_overwrite_rewrites_the_manifest_of_removed_files(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path, partitioned=True)
    a, b, c = write_data(md, [1, 2], "a"), write_data(md, [3], "b"), write_data(md, [4, 5], "c")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a, b, c)), cache)
    first = md.current_snapshot()
    assert first is not None
    b2 = write_data(md, [30, 31], "b")
    changes = SnapshotChanges(
        Operation.OVERWRITE,
        added_data_files=(b2,),
        removed_data_files=(b.file_path, c.file_path),
        validate_from_snapshot_id=first.snapshot_id,
    )
    md = commit(md, changes, cache)
    second = md.current_snapshot()
    assert second is not None
    assert rows(md, cache) == [(1, "a"), (2, "a"), (30, "b"), (31, "b")]
    s = second.summary
    assert (s["added-data-files"], s["deleted-data-files"], s["deleted-records"]) == ("1", "2", "3")
    assert s["removed-files-size"] == str(b.file_size_in_bytes + c.file_size_in_bytes)
    assert s["changed-partition-count"] == "2" and s["total-records"] == "4" and s["total-data-files"] == "2"

    new, rewritten = _list(second).manifests
    assert new.added_files_count == 1
    assert (rewritten.added_snapshot_id, rewritten.sequence_number, rewritten.min_sequence_number) == (
        second.snapshot_id,
        2,
        1,
    )
    assert (rewritten.existing_files_count, rewritten.deleted_files_count) == (1, 2)
    assert (rewritten.existing_rows_count, rewritten.deleted_rows_count) == (2, 3)
    by_path = {e.data_file.file_path: e for e in _stored_entries(rewritten.manifest_path)}
    kept, gone = by_path[a.file_path], by_path[b.file_path]
    # EXISTING keeps its snapshot and sequence numbers; DELETED names the deleting snapshot
    assert (kept.status, kept.snapshot_id, kept.sequence_number, kept.file_sequence_number) == (
        EntryStatus.EXISTING,
        first.snapshot_id,
        1,
        1,
    )
    assert (gone.status, gone.snapshot_id, gone.sequence_number, gone.file_sequence_number) == (
        EntryStatus.DELETED,
        second.snapshot_id,
        1,
        1,
    )

    # removing the last live file of the rewritten manifest keeps it for one snapshot (its
    # DELETED entries), and the next commit drops it
    md = commit(md, SnapshotChanges(Operation.DELETE, removed_data_files=(a.file_path,)), cache)
    third = md.current_snapshot()
    assert third is not None and rows(md, cache) == [(30, "b"), (31, "b")]
    manifests = _list(third).manifests
    assert [(m.added_files_count, m.existing_files_count, m.deleted_files_count) for m in manifests] == [
        (1, 0, 0),
        (0, 0, 1),
    ]
    assert [e.status for e in _stored_entries(manifests[1].manifest_path)] == [EntryStatus.DELETED]
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [9], "a"),)), cache)
    fourth = md.current_snapshot()
    assert fourth is not None and len(_list(fourth).manifests) == 2  # new + b2's manifest
    assert fourth.summary["total-records"] == "3" and fourth.summary["total-data-files"] == "2"


def test_row_delta_with_position_deletes(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path)
    a, b = write_data(md, [1, 2, 3, 4], "x"), write_data(md, [5, 6], "x")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a, b)), cache)
    head = md.current_snapshot()
    assert head is not None
    deletes = write_position_deletes(md, a, [0, 2])
    changes = SnapshotChanges(
        Operation.DELETE,
        added_delete_files=(deletes,),
        validate_from_snapshot_id=head.snapshot_id,
        validate_data_files_live=(a.file_path,),
    )
    md = commit(md, changes, cache)
    second = md.current_snapshot()
    assert second is not None
    assert rows(md, cache) == [(2, "x"), (4, "x"), (5, "x"), (6, "x")]
    s = second.summary
    assert (s["added-position-delete-files"], s["added-delete-files"], s["added-position-deletes"]) == (
        "1",
        "1",
        "2",
    )
    assert "added-dvs" not in s and "added-data-files" not in s
    assert (s["total-delete-files"], s["total-position-deletes"], s["total-records"]) == ("1", "2", "6")
    data_manifest, delete_manifest = _list(second).manifests  # data manifests come first
    assert (
        data_manifest.content is ManifestContent.DATA and delete_manifest.content is ManifestContent.DELETES
    )
    assert delete_manifest.sequence_number == 2

    # the delete file can be removed again (compaction-like), by path
    md = commit(md, SnapshotChanges(Operation.DELETE, removed_delete_files=(deletes.file_path,)), cache)
    third = md.current_snapshot()
    assert third is not None and len(rows(md, cache)) == 6
    assert third.summary["removed-position-delete-files"] == "1"
    assert third.summary["total-delete-files"] == "0" and third.summary["total-position-deletes"] == "0"


def test_v1_table_has_no_sequence_numbers_and_refuses_deletes(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path, format_version=1)
    a = write_data(md, [1, 2], "x")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a,)), cache)
    b = write_data(md, [3], "x")
    md = commit(
        md,
        SnapshotChanges(Operation.OVERWRITE, added_data_files=(b,), removed_data_files=(a.file_path,)),
        cache,
    )
    head = md.current_snapshot()
    assert head is not None and head.sequence_number == 0 and md.last_sequence_number == 0
    assert rows(md, cache) == [(3, "x")]
    listing = _list(head)
    assert listing.format_version == 1 and listing.sequence_number is None
    assert "sequence-number" not in listing.properties
    rewritten = listing.manifests[1]
    assert [e.status for e in _stored_entries(rewritten.manifest_path)] == [EntryStatus.DELETED]
    with pytest.raises(ValidationError, match="format-version 2"):
        commit(
            md,
            SnapshotChanges(Operation.DELETE, added_delete_files=(write_position_deletes(md, b, [0]),)),
            cache,
        )


def test_removing_a_file_that_is_not_live_fails_and_cleans_up(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path, partitioned=True)
    a, b = write_data(md, [1], "a"), write_data(md, [2], "b")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a, b)), cache)
    head = md.current_snapshot()
    assert head is not None
    before = _metadata_files(md)
    changes = SnapshotChanges(
        Operation.OVERWRITE,
        added_data_files=(write_data(md, [3], "a"),),
        removed_data_files=(a.file_path, "/nowhere/x.parquet"),
        validate_from_snapshot_id=head.snapshot_id,
    )
    with pytest.raises(ValidationError, match=r"not live in branch main: /nowhere/x\.parquet"):
        commit(md, changes, cache)
    assert _metadata_files(md) == before  # the rewritten manifest was deleted again


def test_branch_commits_leave_main_alone_and_tags_are_refused(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path)
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [1], "x"),)), cache)
    main = md.current_snapshot()
    assert main is not None
    md = commit(
        md,
        SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [2], "x"),)),
        cache,
        branch="audit",
    )
    audit = md.refs["audit"]
    assert md.current_snapshot_id == main.snapshot_id and audit.type is RefType.BRANCH
    branch_head = md.snapshot_by_id(audit.snapshot_id)
    assert branch_head.parent_snapshot_id == main.snapshot_id  # a new branch forks from main
    assert rows(md, cache, branch_head) == [(1, "x"), (2, "x")] and rows(md, cache) == [(1, "x")]
    tagged = dataclasses.replace(md, refs={**md.refs, "t": SnapshotRef(main.snapshot_id, RefType.TAG)})
    with pytest.raises(ValidationError, match="tag"):
        build_snapshot(tagged, SnapshotChanges(Operation.APPEND), branch="t", cache=cache)


def test_new_snapshot_id_is_positive_and_unused(tmp_path: Path) -> None:
    md = new_table(tmp_path)
    ids = {new_snapshot_id(md) for _ in range(200)}
    assert len(ids) == 200 and all(0 < i < 2**63 for i in ids)


def test_produce_lists_written_files(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path)
    pending = produce(
        md,
        SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [1], "x"),)),
        table_location=md.location,
        cache=cache,
        snapshot_id=42,
    )
    head = pending.metadata.current_snapshot()
    assert head is not None and head.snapshot_id == 42
    assert pending.written[-1] == head.manifest_list and len(pending.written) == 2
    assert all(Path(p).is_file() for p in pending.written)
