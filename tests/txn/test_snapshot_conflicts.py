"""Retry validation: a change built on an older snapshot, applied to a table that moved on."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iceduck.errors import CommitConflictError
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import FileContent
from iceduck.spec.snapshot import Operation
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.snapshot import SnapshotChanges
from tests.txn.snapshot_support import commit, new_table, rows, write_data, write_dvs, write_position_deletes


def _base(tmp_path: Path, format_version: int = 2, partitioned: bool = True):
    cache = ManifestCache()
    md = new_table(tmp_path, format_version=format_version, partitioned=partitioned)
    a, b = write_data(md, [1, 2], "a"), write_data(md, [3, 4], "b")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a, b)), cache)
    assert md.current_snapshot_id is not None
    return md, cache, a, b, md.current_snapshot_id


def _files(md: TableMetadata) -> set[str]:
    return {p.name for p in (Path(md.location) / "metadata").glob("*")}


def test_removing_files_a_concurrent_commit_removed_conflicts(tmp_path: Path) -> None:
    md, cache, a, _b, s0 = _base(tmp_path)
    moved = commit(md, SnapshotChanges(Operation.DELETE, removed_data_files=(a.file_path,)), cache)
    retry = SnapshotChanges(
        Operation.OVERWRITE,
        added_data_files=(write_data(md, [10], "a"),),
        removed_data_files=(a.file_path,),
        validate_from_snapshot_id=s0,
    )
    before = _files(md)
    with pytest.raises(CommitConflictError, match=f"no longer live in branch main .*{a.file_path}"):
        commit(moved, retry, cache)
    assert _files(md) == before  # nothing of the failed attempt is left


def test_a_concurrent_append_does_not_block_a_delete(tmp_path: Path) -> None:
    md, cache, a, _b, s0 = _base(tmp_path)
    moved = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [5], "c"),)), cache)
    retry = SnapshotChanges(
        Operation.DELETE,
        removed_data_files=(a.file_path,),
        validate_from_snapshot_id=s0,
        validate_no_new_deletes_for=(a.file_path,),
    )
    done = commit(moved, retry, cache)
    head = done.current_snapshot()
    assert head is not None and head.parent_snapshot_id == moved.current_snapshot_id
    assert head.sequence_number == 3 and rows(done, cache) == [(3, "b"), (4, "b"), (5, "c")]


def test_deletes_for_a_concurrently_removed_data_file_conflict(tmp_path: Path) -> None:
    md, cache, a, _b, s0 = _base(tmp_path)
    moved = commit(md, SnapshotChanges(Operation.DELETE, removed_data_files=(a.file_path,)), cache)
    retry = SnapshotChanges(
        Operation.DELETE,
        added_delete_files=(write_position_deletes(md, a, [0]),),
        validate_from_snapshot_id=s0,
        validate_data_files_live=(a.file_path,),
    )
    with pytest.raises(CommitConflictError, match="no longer in branch main"):
        commit(moved, retry, cache)


def test_copy_on_write_conflicts_with_new_deletes_for_its_files(tmp_path: Path) -> None:
    md, cache, a, b, s0 = _base(tmp_path)
    deletes = write_position_deletes(md, a, [1])
    moved = commit(md, SnapshotChanges(Operation.DELETE, added_delete_files=(deletes,)), cache)

    def rewrite(target: str) -> SnapshotChanges:
        return SnapshotChanges(
            Operation.OVERWRITE,
            added_data_files=(write_data(md, [9], "a" if target == a.file_path else "b"),),
            removed_data_files=(target,),
            validate_from_snapshot_id=s0,
            validate_no_new_deletes_for=(target,),
        )

    with pytest.raises(CommitConflictError, match=f"new delete file {deletes.file_path} for data file"):
        commit(moved, rewrite(a.file_path), cache)
    done = commit(moved, rewrite(b.file_path), cache)  # the delete file is for a only
    assert rows(done, cache) == [(1, "a"), (9, "b")]

    # an equality delete in b's partition may apply to b: conflict, but not for a file elsewhere
    eq = dataclasses.replace(
        write_position_deletes(md, b, [0]),
        content=FileContent.EQUALITY_DELETES,
        equality_ids=[1],
        referenced_data_file=None,
        lower_bounds=None,
        upper_bounds=None,
    )
    moved_eq = commit(md, SnapshotChanges(Operation.DELETE, added_delete_files=(eq,)), cache)
    with pytest.raises(CommitConflictError):
        commit(moved_eq, rewrite(b.file_path), cache)
    commit(moved_eq, rewrite(a.file_path), cache)


def test_concurrent_deletion_vectors_for_one_file_conflict(tmp_path: Path) -> None:
    md, cache, a, b, s0 = _base(tmp_path, format_version=3)
    (dv1,) = write_dvs(md, {"a": (a, [0])})
    moved = commit(
        md, SnapshotChanges(Operation.DELETE, added_delete_files=(dv1,), validate_from_snapshot_id=s0), cache
    )
    (dv2,) = write_dvs(md, {"a": (a, [1])})
    with pytest.raises(CommitConflictError, match=f"deletion vector for {a.file_path}"):
        commit(
            moved,
            SnapshotChanges(Operation.DELETE, added_delete_files=(dv2,), validate_from_snapshot_id=s0),
            cache,
        )
    (dv_b,) = write_dvs(md, {"b": (b, [1])})
    done = commit(
        moved,
        SnapshotChanges(Operation.DELETE, added_delete_files=(dv_b,), validate_from_snapshot_id=s0),
        cache,
    )
    assert rows(done, cache) == [(2, "a"), (3, "b")]


def test_history_that_no_longer_contains_the_read_snapshot_conflicts(tmp_path: Path) -> None:
    md, cache, a, _b, _s0 = _base(tmp_path)
    changes = SnapshotChanges(
        Operation.DELETE,
        removed_data_files=(a.file_path,),
        validate_from_snapshot_id=123456789,
        validate_no_new_deletes_for=(a.file_path,),
    )
    with pytest.raises(CommitConflictError, match="no longer an ancestor"):
        commit(md, changes, cache)
