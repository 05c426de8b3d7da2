"""Manifest merging on commit (iceduck.txn.manifest_merge), checked on real tables written
by the snapshot producer and read back through the planner; Spark comparison in
tests/interop/test_txn_manifest_merge_spark.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from iceduck.formats.manifests import read_manifest
from iceduck.io.fileio import read_bytes
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import plan_scan
from iceduck.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from iceduck.spec.properties import (
    MANIFEST_MERGE_ENABLED,
    MANIFEST_MIN_MERGE_COUNT,
    MANIFEST_TARGET_SIZE_BYTES,
)
from iceduck.spec.snapshot import Operation
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.manifest_merge import MergeSettings, merged_entries, pack_end, plan_merge
from iceduck.txn.snapshot import SnapshotChanges
from tests.txn.snapshot_support import (
    BY_S,
    commit,
    new_table,
    rows,
    write_data,
    write_position_deletes,
)

ROW_ID_FIELDS = (2147483540,)  # _row_id


def _with_props(md: TableMetadata, **props: str) -> TableMetadata:
    return dataclasses.replace(md, properties={**md.properties, **props})


def _manifests(md: TableMetadata, cache: ManifestCache) -> tuple[ManifestFile, ...]:
    head = md.current_snapshot()
    assert head is not None
    return cache.snapshot_manifests(head, md.format_version)


def _append(md: TableMetadata, cache: ManifestCache, i: int, s: str = "x") -> TableMetadata:
    f = write_data(md, [i], s)
    return commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(f,)), cache)


def _scan(md: TableMetadata, cache: ManifestCache) -> dict[str, tuple[int, int | None]]:
    """path -> (data sequence number, first row id) of every live data file."""
    return {t.path: (t.data_sequence_number, t.first_row_id) for t in plan_scan(md, cache=cache).tasks}


def _stored(m: ManifestFile) -> list[ManifestEntry]:
    return read_manifest(read_bytes(m.manifest_path), m.manifest_path, inherit=False).entries


def _avro_files(md: TableMetadata) -> set[str]:
    return {str(p) for p in (Path(md.location) / "metadata").glob("*-m*.avro")}


def _referenced(md: TableMetadata, cache: ManifestCache) -> set[str]:
    return {m.manifest_path for s in md.snapshots for m in cache.snapshot_manifests(s, md.format_version)}


def _mf(path: str, length: int, spec_id: int = 0) -> ManifestFile:
    return ManifestFile(manifest_path=path, manifest_length=length, partition_spec_id=spec_id)


# -- planning --------------------------------------------------------------------------------


def test_pack_end_fills_from_the_end_and_keeps_order() -> None:
    assert pack_end([5, 5, 5, 5, 5], lambda w: w, 12) == [[5], [5, 5], [5, 5]]
    items = ["a", "b", "c", "d"]
    weights = {"a": 3, "b": 20, "c": 3, "d": 4}
    # b is heavier than the target: a bin of its own; packing never looks back past it
    assert pack_end(items, weights.__getitem__, 10) == [["a"], ["b"], ["c", "d"]]
    assert pack_end([], lambda w: w, 10) == []
    assert pack_end([4, 6], lambda w: w, 10) == [[4, 6]]  # exactly the target still fits


def test_plan_merge_min_count_applies_to_the_bin_of_the_first_manifest() -> None:
    ms = [_mf(f"m{i}", 10) for i in range(4)]
    keep = [(m,) for m in ms]
    assert plan_merge(ms, MergeSettings(min_count_to_merge=5)) == keep
    assert plan_merge(ms, MergeSettings(min_count_to_merge=4)) == [tuple(ms)]
    assert plan_merge(ms, MergeSettings(enabled=False, min_count_to_merge=1)) == keep
    # target 25: bins [m0, m1] [m2, m3] (packed from the end); only m0's bin waits for the count
    assert plan_merge(ms, MergeSettings(min_count_to_merge=5, target_size_bytes=25)) == [
        (ms[0],),
        (ms[1],),
        (ms[2], ms[3]),
    ]


def test_plan_merge_groups_by_spec_in_descending_spec_order() -> None:
    new = _mf("new", 10, spec_id=0)
    old0 = _mf("old0", 10, spec_id=0)
    a1, b1 = _mf("a1", 10, spec_id=1), _mf("b1", 10, spec_id=1)
    ms = [new, a1, old0, b1]
    # spec 1's bin does not hold the first manifest: merged although below the count
    assert plan_merge(ms, MergeSettings()) == [(a1, b1), (new,), (old0,)]
    assert plan_merge(ms, MergeSettings(min_count_to_merge=2)) == [(a1, b1), (new, old0)]
    # disabled: nothing moves
    assert plan_merge(ms, MergeSettings(enabled=False)) == [(m,) for m in ms]


def test_merged_entries_statuses() -> None:
    def entry(status: EntryStatus, snapshot_id: int, seq: int | None) -> ManifestEntry:
        f = DataFile(FileContent.DATA, f"f{status}-{snapshot_id}", FileFormat.PARQUET, (), 1, 1)
        return ManifestEntry(status, snapshot_id, f, seq, seq)

    new = entry(EntryStatus.ADDED, 9, None)
    old_added, old_existing = entry(EntryStatus.ADDED, 1, 1), entry(EntryStatus.EXISTING, 2, 2)
    deleted_now, deleted_before = entry(EntryStatus.DELETED, 9, 3), entry(EntryStatus.DELETED, 4, 4)
    out = merged_entries([new, old_added, old_existing, deleted_now, deleted_before], snapshot_id=9)
    assert [(e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number) for e in out] == [
        (EntryStatus.ADDED, 9, None, None),
        (EntryStatus.EXISTING, 1, 1, 1),
        (EntryStatus.EXISTING, 2, 2, 2),
        (EntryStatus.DELETED, 9, 3, 3),
    ]


def test_settings_from_properties() -> None:
    assert MergeSettings.of({}) == MergeSettings(True, 100, 8388608)
    props = {
        MANIFEST_MERGE_ENABLED: "FALSE",
        MANIFEST_MIN_MERGE_COUNT: "5",
        MANIFEST_TARGET_SIZE_BYTES: "1024",
    }
    assert MergeSettings.of(props) == MergeSettings(False, 5, 1024)


# -- on tables -------------------------------------------------------------------------------


def test_120_appends_merge_like_java_and_keep_files_sequence_numbers_and_row_ids(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = new_table(tmp_path, format_version=3)
    counts = []
    before_merge: dict[str, tuple[int, int | None]] = {}
    next_row_id_before_merge = None
    for i in range(1, 121):
        if i == 100:
            before_merge = _scan(md, cache)
            next_row_id_before_merge = md.next_row_id
        md = _append(md, cache, i)
        counts.append(len(_manifests(md, cache)))
    # Java (min-count 100, 8 MB target): one manifest per commit until the 100th commit's
    # bin holds 100 manifests and is merged; then one more per commit again
    assert counts == [*range(1, 100), *range(1, 22)]

    after = _scan(md, cache)
    assert len(after) == 120
    assert all(after[p] == v for p, v in before_merge.items())  # sequence numbers and row ids kept
    assert sorted(seq for seq, _ in after.values()) == list(range(1, 121))
    (added_at_100,) = [p for p, (seq, _) in after.items() if seq == 100]
    assert after[added_at_100][1] == next_row_id_before_merge  # inherits the merged manifest's id
    assert rows(md, cache) == [(i, "x") for i in range(1, 121)]
    assert rows(md, cache, extra_ids=ROW_ID_FIELDS) == sorted(
        (i, "x", after[p][1]) for p, i in _paths_to_ids(after).items()
    )

    merged = _manifests(md, cache)[-1]  # the oldest: the one commit 100 merged
    entries = _stored(merged)
    assert merged.added_files_count == 1 and merged.existing_files_count == 99
    assert entries[0].status is EntryStatus.ADDED and entries[0].data_file.first_row_id is None
    existing = entries[1:]
    assert all(e.status is EntryStatus.EXISTING for e in existing)
    assert all(e.sequence_number is not None and e.file_sequence_number is not None for e in existing)
    assert all(e.data_file.first_row_id is not None for e in existing)
    assert len({e.snapshot_id for e in existing}) == 99  # each keeps the snapshot that added it
    # the manifest commit 100 wrote for its file was merged away and deleted
    assert _avro_files(md) == _referenced(md, cache)


def _paths_to_ids(scan: dict[str, tuple[int, int | None]]) -> dict[str, int]:
    """Data file path -> the one id it holds (files are written with one row each)."""
    return {p: pq.read_table(p).column("id")[0].as_py() for p in scan}


def test_disabled_by_property(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = _with_props(new_table(tmp_path), **{MANIFEST_MERGE_ENABLED: "false", MANIFEST_MIN_MERGE_COUNT: "2"})
    for i in range(1, 6):
        md = _append(md, cache, i)
    assert len(_manifests(md, cache)) == 5
    md = _with_props(md, **{MANIFEST_MERGE_ENABLED: "true"})
    md = _append(md, cache, 6)
    assert len(_manifests(md, cache)) == 1
    assert rows(md, cache) == [(i, "x") for i in range(1, 7)]


def _two_spec_table(root: Path) -> TableMetadata:
    md = new_table(root)
    by_s = dataclasses.replace(BY_S, spec_id=1)
    return dataclasses.replace(
        md, partition_specs=(*md.partition_specs, by_s), default_spec_id=1, last_partition_id=1000
    )


def _append_spec(md: TableMetadata, cache: ManifestCache, i: int, spec_id: int) -> TableMetadata:
    f = write_data(md, [i], "p")
    f = dataclasses.replace(f, spec_id=spec_id, partition=("p",) if spec_id == 1 else ())
    return commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(f,)), cache)


def test_manifests_merge_per_partition_spec(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = _with_props(_two_spec_table(tmp_path), **{MANIFEST_MIN_MERGE_COUNT: "3"})
    md = _append_spec(md, cache, 1, 0)
    md = _append_spec(md, cache, 2, 0)
    assert [m.partition_spec_id for m in _manifests(md, cache)] == [0, 0]
    md = _append_spec(md, cache, 3, 1)
    # the spec-0 bin lacks the new manifest: merged although below the count; spec 1 first
    ms = _manifests(md, cache)
    assert [(m.partition_spec_id, m.existing_files_count) for m in ms] == [(1, 0), (0, 2)]
    md = _append_spec(md, cache, 4, 1)
    assert [m.partition_spec_id for m in _manifests(md, cache)] == [1, 1, 0]
    md = _append_spec(md, cache, 5, 1)  # spec 1 reaches three manifests
    ms = _manifests(md, cache)
    assert [(m.partition_spec_id, m.added_files_count, m.existing_files_count) for m in ms] == [
        (1, 1, 2),
        (0, 0, 2),
    ]
    for m in ms:
        assert {e.data_file.spec_id for e in _stored(m)} <= {m.partition_spec_id}
        assert all(len(e.data_file.partition) == (1 if m.partition_spec_id == 1 else 0) for e in _stored(m))
    assert rows(md, cache) == [(i, "p") for i in range(1, 6)]
    assert sorted(seq for seq, _ in _scan(md, cache).values()) == [1, 2, 3, 4, 5]


def test_delete_manifests_merge_separately_and_old_deletes_are_dropped(tmp_path: Path) -> None:
    cache = ManifestCache()
    md = _with_props(new_table(tmp_path), **{MANIFEST_MIN_MERGE_COUNT: "2"})
    a = write_data(md, [1, 2, 3], "x")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a,)), cache)
    b = write_data(md, [4, 5], "x")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(b,)), cache)
    assert [m.existing_files_count for m in _manifests(md, cache)] == [1]
    for pos in (0, 1):
        d = write_position_deletes(md, a, [pos])
        md = commit(
            md,
            SnapshotChanges(
                Operation.OVERWRITE, added_delete_files=(d,), validate_data_files_live=(a.file_path,)
            ),
            cache,
        )
    ms = _manifests(md, cache)
    assert [m.content for m in ms] == [ManifestContent.DATA, ManifestContent.DELETES]
    assert (ms[1].added_files_count, ms[1].existing_files_count) == (1, 1)
    assert rows(md, cache) == [(3, "x"), (4, "x"), (5, "x")]

    # remove b: its manifest is rewritten with a DELETED entry, then merged with nothing
    # else (the only data manifest); the DELETED entry stays for this snapshot only
    c = write_data(md, [6], "x")
    removing = SnapshotChanges(Operation.OVERWRITE, added_data_files=(c,), removed_data_files=(b.file_path,))
    md = commit(md, removing, cache)
    (data,) = [m for m in _manifests(md, cache) if m.content is ManifestContent.DATA]
    statuses = sorted(e.status.name for e in _stored(data))
    assert statuses == ["ADDED", "DELETED", "EXISTING"]
    md = _append(md, cache, 7)
    (data,) = [m for m in _manifests(md, cache) if m.content is ManifestContent.DATA]
    assert sorted(e.status.name for e in _stored(data)) == ["ADDED", "EXISTING", "EXISTING"]
    assert rows(md, cache) == [(3, "x"), (6, "x"), (7, "x")]
    assert _avro_files(md) == _referenced(md, cache)


@pytest.mark.parametrize("format_version", [1, 2])
def test_merge_on_older_format_versions(tmp_path: Path, format_version: int) -> None:
    cache = ManifestCache()
    md = _with_props(new_table(tmp_path, format_version=format_version), **{MANIFEST_MIN_MERGE_COUNT: "3"})
    for i in range(1, 5):
        md = _append(md, cache, i)
    assert [len(_manifests(md, cache))] == [2]
    assert rows(md, cache) == [(i, "x") for i in range(1, 5)]


def test_merge_keeps_row_ids_of_entries_this_commit_rewrote(tmp_path: Path) -> None:
    """Java's testRewritePreservesExistingFileFirstRowIds (fixed after 1.10): a commit that
    removes A and adds C merges its rewritten manifest [A deleted, B existing] with C's; B
    keeps its row ids and C gets fresh ones."""
    cache = ManifestCache()
    md = _with_props(new_table(tmp_path, format_version=3), **{MANIFEST_MIN_MERGE_COUNT: "1"})
    a, b = write_data(md, [1, 2], "x"), write_data(md, [3, 4, 5], "x")
    md = commit(md, SnapshotChanges(Operation.APPEND, added_data_files=(a, b)), cache)
    assert _scan(md, cache)[b.file_path] == (1, 2)
    c = write_data(md, [6], "x")
    rewrite = SnapshotChanges(Operation.REPLACE, added_data_files=(c,), removed_data_files=(a.file_path,))
    md = commit(md, rewrite, cache)
    (merged,) = _manifests(md, cache)
    assert [e.status.name for e in _stored(merged)] == ["ADDED", "DELETED", "EXISTING"]
    assert _scan(md, cache) == {b.file_path: (1, 2), c.file_path: (2, 5)}
    assert rows(md, cache, extra_ids=ROW_ID_FIELDS) == [(3, "x", 2), (4, "x", 3), (5, "x", 4), (6, "x", 5)]
