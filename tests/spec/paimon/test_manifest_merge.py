"""merge_entries: Java ``FileEntry.mergeEntries`` rules, on entries built by hand."""

from __future__ import annotations

import dataclasses

import pytest

from iceduck.errors import CorruptDataError
from iceduck.spec.paimon.manifest import (
    DataFileMeta,
    FileKind,
    IndexManifestEntry,
    ManifestEntry,
    SimpleStats,
    live_files,
    merge_entries,
    merge_index_entries,
)

_EMPTY = bytes(12)
_STATS = SimpleStats(_EMPTY, _EMPTY, ())


def _entry(kind: FileKind, name: str, level: int = 0, bucket: int = 0) -> ManifestEntry:
    file = DataFileMeta(name, 1, 1, _EMPTY, _EMPTY, _STATS, _STATS, 0, 0, 0, level)
    return ManifestEntry(kind, _EMPTY, bucket, 1, file)


ADD, DELETE = FileKind.ADD, FileKind.DELETE


def test_add_then_delete_cancel() -> None:
    a, b = _entry(ADD, "a"), _entry(ADD, "b")
    assert merge_entries([a, b, _entry(DELETE, "a")]) == [b]
    assert live_files([a, _entry(DELETE, "a")]) == []


def test_delete_of_an_earlier_manifest_is_kept_until_its_add_is_merged() -> None:
    orphan = _entry(DELETE, "a")
    assert merge_entries([orphan, _entry(ADD, "b")]) == [orphan, _entry(ADD, "b")]
    assert live_files([orphan]) == []


def test_compaction_moves_a_file_up_a_level() -> None:
    """The level is part of the identity: delete at level 0, add at level 5."""
    merged = merge_entries([_entry(ADD, "a"), _entry(DELETE, "a"), _entry(ADD, "a", level=5)])
    assert merged == [_entry(ADD, "a", level=5)]


def test_same_name_in_another_bucket_is_another_file() -> None:
    assert len(merge_entries([_entry(ADD, "a"), _entry(ADD, "a", bucket=1)])) == 2


def test_a_file_added_twice_is_corrupt() -> None:
    with pytest.raises(CorruptDataError, match="added twice") as info:
        merge_entries([_entry(ADD, "a"), _entry(ADD, "a")], "t/manifest/manifest-1")
    assert "t/manifest/manifest-1" in str(info.value)


def test_re_added_after_delete_goes_last() -> None:
    a, b = _entry(ADD, "a"), _entry(ADD, "b")
    assert merge_entries([a, b, _entry(DELETE, "a"), a]) == [b, a]


def test_index_entries() -> None:
    dv = IndexManifestEntry(ADD, _EMPTY, 0, "DELETION_VECTORS", "index-1", 10, 1)
    newer = dataclasses.replace(dv, file_name="index-2")
    assert merge_index_entries([dv, dataclasses.replace(dv, kind=DELETE), newer]) == [newer]
