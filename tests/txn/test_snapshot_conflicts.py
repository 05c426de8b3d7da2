"""Retry validation: a change built on an older snapshot, applied to a table that moved on."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import pytest

from iceduck.errors import CommitConflictError
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import Op, predicate
from iceduck.spec.manifest import DataFile, FileContent
from iceduck.spec.snapshot import Operation
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.snapshot import SnapshotChanges
from iceduck.txn.validation import SERIALIZABLE, SNAPSHOT, ConflictDetection
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


# -- serializable isolation: concurrently added data the operation's condition may match ----


def _delete_of(f: DataFile, s0: int, detection: ConflictDetection | None) -> SnapshotChanges:
    """A copy-on-write DELETE of ``f``'s rows read at ``s0``, checked by ``detection``."""
    return SnapshotChanges(
        Operation.DELETE,
        removed_data_files=(f.file_path,),
        validate_from_snapshot_id=s0,
        validate_no_new_deletes_for=(f.file_path,),
        conflict_detection=detection,
    )


def _append(md: TableMetadata, f: DataFile, cache: ManifestCache) -> TableMetadata:
    return commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(f,)), cache)


def _with_id_bounds(f: DataFile, low: int, high: int) -> DataFile:
    """``f`` with column metrics for ``id`` (field 1): single-value longs, little-endian."""
    return dataclasses.replace(
        f,
        lower_bounds={1: struct.pack("<q", low)},
        upper_bounds={1: struct.pack("<q", high)},
        value_counts={1: f.record_count},
        null_value_counts={1: 0},
    )


S_IS_A = predicate(Op.EQ, "s", "a")


def test_serializable_fails_on_a_concurrent_append_in_the_deleted_partition(tmp_path: Path) -> None:
    md, cache, a, _b, s0 = _base(tmp_path)
    moved = _append(md, write_data(md, [7], "a"), cache)
    added = moved.current_snapshot()
    assert added is not None
    before = _files(md)
    detection = ConflictDetection("DELETE FROM ns.t", SERIALIZABLE, S_IS_A, level_property="write.x")
    with pytest.raises(CommitConflictError) as raised:
        commit(moved, _delete_of(a, s0, detection), cache)
    message = str(raised.value)
    assert message.startswith("DELETE FROM ns.t: found conflicting data file")
    assert f"concurrent snapshot {added.snapshot_id}" in message and "s == 'a'" in message
    assert "set write.x=snapshot" in message
    assert _files(md) == before  # the failed attempt wrote nothing that stays

    # bound to the schema the operation read, the filter means the same
    bound = ConflictDetection("DELETE FROM ns.t", SERIALIZABLE, bind(md.schema(), S_IS_A))
    with pytest.raises(CommitConflictError, match="found conflicting data file"):
        commit(moved, _delete_of(a, s0, bound), cache)


def test_snapshot_isolation_lets_a_concurrent_append_through(tmp_path: Path) -> None:
    md, cache, a, _b, s0 = _base(tmp_path)
    moved = _append(md, write_data(md, [7], "a"), cache)
    detection = ConflictDetection("DELETE FROM ns.t", SNAPSHOT, S_IS_A)
    done = commit(moved, _delete_of(a, s0, detection), cache)
    assert rows(done, cache) == [(3, "b"), (4, "b"), (7, "a")]


def test_an_append_the_condition_cannot_match_never_conflicts(tmp_path: Path) -> None:
    """Another partition (inclusive projection), or metrics proving no row matches."""
    md, cache, a, _b, s0 = _base(tmp_path)
    detection = ConflictDetection("DELETE FROM ns.t", SERIALIZABLE, S_IS_A)
    elsewhere = _append(md, write_data(md, [7], "b"), cache)
    done = commit(elsewhere, _delete_of(a, s0, detection), cache)
    assert rows(done, cache) == [(3, "b"), (4, "b"), (7, "b")]

    md, cache, a, _b, s0 = _base(tmp_path / "flat", partitioned=False)
    small_ids = ConflictDetection("DELETE FROM ns.t", SERIALIZABLE, predicate(Op.LT, "id", 10))
    far = _append(md, _with_id_bounds(write_data(md, [100, 200], "c"), 100, 200), cache)
    commit(far, _delete_of(a, s0, small_ids), cache)
    near = _append(md, _with_id_bounds(write_data(md, [5, 20], "c"), 5, 20), cache)
    with pytest.raises(CommitConflictError, match="id < 10"):
        commit(near, _delete_of(a, s0, small_ids), cache)
    unknown = _append(md, write_data(md, [100], "c"), cache)  # no metrics: it may match
    with pytest.raises(CommitConflictError):
        commit(unknown, _delete_of(a, s0, small_ids), cache)


def test_only_data_added_since_the_read_counts(tmp_path: Path) -> None:
    """Files older than the read, and concurrent commits that add no data (a DELETE),
    do not conflict even with a condition matching everything."""
    md, cache, a, b, s0 = _base(tmp_path)
    everything = ConflictDetection("DELETE FROM ns.t", SERIALIZABLE)
    moved = commit(md, SnapshotChanges(Operation.DELETE, removed_data_files=(b.file_path,)), cache)
    done = commit(moved, _delete_of(a, s0, everything), cache)
    assert rows(done, cache) == []


def test_a_partition_set_limits_the_check_to_the_replaced_partitions(tmp_path: Path) -> None:
    """Dynamic overwrite: Java's ``ReplacePartitions`` checks the partitions it replaces."""
    md, cache, a, _b, s0 = _base(tmp_path)
    replacing_a = ConflictDetection("INSERT OVERWRITE ns.t", SERIALIZABLE, partitions=((0, ("a",)),))
    new_a = write_data(md, [10], "a")

    def overwrite() -> SnapshotChanges:
        return dataclasses.replace(
            _delete_of(a, s0, replacing_a), operation=Operation.OVERWRITE, added_data_files=(new_a,)
        )

    in_b = _append(md, write_data(md, [8], "b"), cache)
    assert rows(commit(in_b, overwrite(), cache), cache) == [(3, "b"), (4, "b"), (8, "b"), (10, "a")]
    in_a = _append(md, write_data(md, [9], "a"), cache)
    with pytest.raises(CommitConflictError, match=r"INSERT OVERWRITE ns\.t: found conflicting data file"):
        commit(in_a, overwrite(), cache)


def test_a_filter_on_a_column_that_is_gone_conflicts_with_any_append(tmp_path: Path) -> None:
    """When the filter cannot be bound any more, nothing can be proven: conservative."""
    md, cache, a, _b, s0 = _base(tmp_path)
    moved = _append(md, write_data(md, [7], "b"), cache)
    detection = ConflictDetection("DELETE FROM ns.t", SERIALIZABLE, predicate(Op.EQ, "dropped", 1))
    with pytest.raises(CommitConflictError, match="found conflicting data file"):
        commit(moved, _delete_of(a, s0, detection), cache)
