"""v3 snapshots: row lineage (first-row-id, added-rows, next-row-id, manifest first_row_id) and DVs."""

from __future__ import annotations

from pathlib import Path

from iceduck.formats.manifest_list import open_manifest_list
from iceduck.formats.manifests import read_manifest
from iceduck.io.fileio import read_bytes
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import EntryStatus, ManifestContent
from iceduck.spec.snapshot import Operation, Snapshot
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.snapshot import SnapshotChanges
from tests.txn.snapshot_support import commit, new_table, rows, write_data, write_dvs

ROW_ID = 2147483540
LAST_UPDATED = 2147483539


def _manifests(s: Snapshot):
    assert s.manifest_list is not None
    return open_manifest_list(read_bytes(s.manifest_list), s.manifest_list).manifests


def test_row_lineage_of_appends_and_rewrites(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path, format_version=3)
    a, b = write_data(md, [1, 2, 3], "x"), write_data(md, [4, 5], "x")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a, b)), cache)
    first = md.current_snapshot()
    assert first is not None
    assert (first.first_row_id, first.added_rows, md.next_row_id) == (0, 5, 5)
    c = write_data(md, [6], "y")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(c,)), cache)
    second = md.current_snapshot()
    assert second is not None and (second.first_row_id, second.added_rows, md.next_row_id) == (5, 1, 6)
    assert [m.first_row_id for m in _manifests(second)] == [5, 0]  # the old manifest keeps its id
    # row ids: the file's first_row_id plus the position; sequence numbers inherited
    assert rows(md, cache, extra_ids=(ROW_ID, LAST_UPDATED)) == [
        (1, "x", 0, 1),
        (2, "x", 1, 1),
        (3, "x", 2, 1),
        (4, "x", 3, 1),
        (5, "x", 4, 1),
        (6, "y", 5, 2),
    ]

    # a copy-on-write rewrite of b: the rewritten manifest writes a's first_row_id explicitly,
    # so a's rows keep their ids; the new manifest and the rewritten one consume new ids
    b2 = write_data(md, [40, 50], "x")
    md = commit(
        md,
        SnapshotChanges(
            Operation.OVERWRITE,
            added_data_files=(b2,),
            removed_data_files=(b.file_path,),
            validate_from_snapshot_id=second.snapshot_id,
        ),
        cache,
    )
    third = md.current_snapshot()
    assert third is not None
    new, old, rewritten = _manifests(third)  # the rewritten manifest keeps its place in the list
    assert (new.first_row_id, old.first_row_id, rewritten.first_row_id) == (6, 5, 8)
    assert (third.first_row_id, third.added_rows, md.next_row_id) == (6, 5, 11)  # 2 added + 3 existing
    stored = read_manifest(read_bytes(rewritten.manifest_path), rewritten.manifest_path, inherit=False)
    assert [(e.status, e.data_file.first_row_id) for e in stored.entries] == [
        (EntryStatus.EXISTING, 0),
        (EntryStatus.DELETED, 3),
    ]
    assert rows(md, cache, extra_ids=(ROW_ID, LAST_UPDATED)) == [
        (1, "x", 0, 1),
        (2, "x", 1, 1),
        (3, "x", 2, 1),
        (6, "y", 5, 2),
        (40, "x", 6, 3),
        (50, "x", 7, 3),
    ]


def test_deletion_vectors_added_replaced_and_dropped_with_their_file(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path, format_version=3, partitioned=True)
    a, b = write_data(md, [1, 2, 3, 4], "a"), write_data(md, [5, 6, 7], "b")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a, b)), cache)
    head = md.current_snapshot()
    assert head is not None
    dv_a, dv_b = write_dvs(md, {"a": (a, [0]), "b": (b, [1, 2])})
    md = commit(
        md,
        SnapshotChanges(
            Operation.DELETE,
            added_delete_files=(dv_a, dv_b),
            validate_from_snapshot_id=head.snapshot_id,
            validate_data_files_live=(a.file_path, b.file_path),
        ),
        cache,
    )
    second = md.current_snapshot()
    assert second is not None
    assert rows(md, cache) == [(2, "a"), (3, "a"), (4, "a"), (5, "b")]
    s = second.summary
    assert (s["added-dvs"], s["added-delete-files"], s["added-position-deletes"]) == ("2", "2", "3")
    assert "added-position-delete-files" not in s
    blobs = dv_a.content_size_in_bytes + dv_b.content_size_in_bytes  # type: ignore[operator]
    assert s["added-files-size"] == str(blobs) and s["changed-partition-count"] == "2"
    assert second.added_rows == 0 and md.next_row_id == 7  # delete manifests take no row ids

    # merge a new deletion into a's DV: remove the old blob by (puffin, data file), add the merged one
    (merged,) = write_dvs(md, {"a": (a, [0, 3])})
    md = commit(
        md,
        SnapshotChanges(
            Operation.DELETE,
            added_delete_files=(merged,),
            removed_delete_files=((dv_a.file_path, a.file_path),),
            validate_from_snapshot_id=second.snapshot_id,
            validate_data_files_live=(a.file_path,),
        ),
        cache,
    )
    third = md.current_snapshot()
    assert third is not None
    assert rows(md, cache) == [(2, "a"), (3, "a"), (5, "b")]
    s = third.summary
    assert (s["added-dvs"], s["removed-dvs"], s["removed-position-deletes"], s["total-position-deletes"]) == (
        "1",
        "1",
        "1",
        "4",
    )
    delete_manifests = [m for m in _manifests(third) if m.content is ManifestContent.DELETES]
    rewritten = delete_manifests[1]
    stored = read_manifest(read_bytes(rewritten.manifest_path), rewritten.manifest_path, inherit=False)
    assert [(e.status, e.data_file.referenced_data_file) for e in stored.entries] == [
        (EntryStatus.DELETED, a.file_path),
        (EntryStatus.EXISTING, b.file_path),
    ]

    # copy-on-write rewrite of b: its DV goes with it (Java's removeDanglingDeletesFor)
    b2 = write_data(md, [5], "b")
    md = commit(
        md,
        SnapshotChanges(
            Operation.OVERWRITE,
            added_data_files=(b2,),
            removed_data_files=(b.file_path,),
            validate_from_snapshot_id=third.snapshot_id,
            validate_no_new_deletes_for=(b.file_path,),
        ),
        cache,
    )
    fourth = md.current_snapshot()
    assert fourth is not None and rows(md, cache) == [(2, "a"), (3, "a"), (5, "b")]
    s = fourth.summary
    assert (
        s["deleted-data-files"],
        s["removed-dvs"],
        s["total-delete-files"],
        s["total-position-deletes"],
    ) == (
        "1",
        "1",
        "1",
        "2",
    )


def test_first_commit_after_upgrading_to_v3_assigns_row_ids_to_existing_files(tmp_path: Path) -> None:
    # "Snapshots that are created after upgrading to v3 must set the snapshot's first-row-id
    # and assign row IDs to existing and added files in the snapshot"
    cache = ManifestCache()
    md = new_table(tmp_path, format_version=2)
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [1, 2], "x"),)), cache)
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [3], "x"),)), cache)
    builder = MetadataBuilder(md)
    builder.upgrade_format_version(3)
    md = builder.build()
    assert md.next_row_id == 0
    assert rows(md, cache, extra_ids=(ROW_ID,)) == [(1, "x", None), (2, "x", None), (3, "x", None)]
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(write_data(md, [4], "y"),)), cache)
    head = md.current_snapshot()
    assert head is not None and (head.first_row_id, head.added_rows, md.next_row_id) == (0, 4, 4)
    assert [m.first_row_id for m in _manifests(head)] == [0, 1, 2]  # new, then the v2 manifests
    assert rows(md, cache, extra_ids=(ROW_ID,)) == [(1, "x", 2), (2, "x", 3), (3, "x", 1), (4, "y", 0)]
