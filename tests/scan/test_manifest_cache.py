"""The per-connection manifest cache: parse once, bounded LRU, errors naming the file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iceduck.errors import CorruptDataError
from iceduck.io.fileio import MissingFileError
from iceduck.scan.manifest_cache import ManifestCache, referenced_data_file
from iceduck.scan.planner import plan_scan
from iceduck.spec.expressions.predicates import EqualTo
from iceduck.spec.manifest import ManifestContent
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField
from tests.scan.builder import TableBuilder, data_file, deletion_vector, position_deletes

SCHEMA = Schema((NestedField(1, "id", LongType()),))


@pytest.fixture
def table(tmp_path: Path) -> TableBuilder:
    t = TableBuilder(tmp_path, SCHEMA)
    for i in range(4):
        t.commit([data_file(f"f{i}-{j}") for j in range(3)])
    return t


def test_manifests_and_lists_are_parsed_once(table: TableBuilder) -> None:
    md, cache = table.metadata, ManifestCache()
    first = plan_scan(md, cache=cache)
    assert (cache.manifests_parsed, cache.lists_parsed) == (4, 1)
    second = plan_scan(md, cache=cache)
    assert (cache.manifests_parsed, cache.lists_parsed) == (4, 1)
    assert second.tasks == first.tasks
    # older snapshots share their manifests with the current one
    plan_scan(md, snapshot=md.snapshots[1], cache=cache)
    assert (cache.manifests_parsed, cache.lists_parsed) == (4, 2)


def test_base_tasks_are_reused_when_nothing_changes_them(table: TableBuilder) -> None:
    md, cache = table.metadata, ManifestCache()
    a, b = plan_scan(md, cache=cache), plan_scan(md, cache=cache)
    assert all(x is y for x, y in zip(a.tasks, b.tasks, strict=True))


def test_the_cache_is_bounded_by_entries(table: TableBuilder) -> None:
    md = table.metadata
    cache = ManifestCache(max_entries=8)
    plan_scan(md, cache=cache)  # 4 list rows + 4 manifests of 3 entries
    assert cache.size <= 8
    parsed = cache.manifests_parsed
    plan_scan(md, cache=cache)
    assert cache.manifests_parsed > parsed  # evicted ones are parsed again
    cache.clear()
    assert cache.size == 0 and len(cache) == 0


def test_lru_keeps_the_recently_used(table: TableBuilder) -> None:
    md = table.metadata
    rows = ManifestCache().snapshot_manifests(md.current_snapshot())  # type: ignore[arg-type]
    cache = ManifestCache(max_entries=6)
    cache.parsed_manifest(rows[0])
    cache.parsed_manifest(rows[1])
    cache.parsed_manifest(rows[0])  # most recent now
    cache.parsed_manifest(rows[2])  # evicts rows[1]
    parsed = cache.manifests_parsed
    cache.parsed_manifest(rows[0])
    assert cache.manifests_parsed == parsed
    cache.parsed_manifest(rows[1])
    assert cache.manifests_parsed == parsed + 1


def test_a_manifest_read_with_other_inherited_values_is_parsed_again(table: TableBuilder) -> None:
    """A v2 manifest gets a first_row_id when the table is upgraded to v3."""
    row = ManifestCache().snapshot_manifests(table.metadata.current_snapshot())[0]  # type: ignore[arg-type]
    cache = ManifestCache()
    plain = cache.parsed_manifest(row)
    upgraded = cache.parsed_manifest(dataclasses.replace(row, first_row_id=100))
    assert cache.manifests_parsed == 2
    assert [t.first_row_id for t in plain.tasks] == [None, None, None]
    assert [t.first_row_id for t in upgraded.tasks] == [100, 110, 120]


def test_the_metadata_table_protocol_returns_lists(table: TableBuilder) -> None:
    md, cache = table.metadata, ManifestCache()
    snapshot = md.current_snapshot()
    assert snapshot is not None and snapshot.manifest_list is not None
    rows = cache.manifest_list(snapshot.manifest_list)
    assert isinstance(rows, list) and len(rows) == 4
    entries = cache.manifest(rows[0], md.specs_by_id())
    assert isinstance(entries, list) and len(entries) == 3
    entries.clear()  # a fresh list: the cache is not affected
    assert len(cache.manifest(rows[0], md.specs_by_id())) == 3
    assert cache.lists_parsed == 1 and cache.manifests_parsed == 1


def test_missing_manifests_are_named(table: TableBuilder) -> None:
    md = table.metadata
    row = ManifestCache().snapshot_manifests(md.current_snapshot())[0]  # type: ignore[arg-type]
    Path(row.manifest_path).unlink()
    with pytest.raises(MissingFileError, match=row.manifest_path):
        plan_scan(md, cache=ManifestCache())


def test_missing_manifest_lists_are_named(table: TableBuilder) -> None:
    md = table.metadata
    location = md.current_snapshot().manifest_list  # type: ignore[union-attr]
    Path(location).unlink()  # type: ignore[arg-type]
    with pytest.raises(MissingFileError, match="does not exist"):
        plan_scan(md, cache=ManifestCache())


def test_corrupt_manifests_are_named(table: TableBuilder) -> None:
    md = table.metadata
    row = ManifestCache().snapshot_manifests(md.current_snapshot())[0]  # type: ignore[arg-type]
    data = Path(row.manifest_path).read_bytes()
    Path(row.manifest_path).write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptDataError) as e:
        plan_scan(md, row_filter=EqualTo("id", 1), cache=ManifestCache())
    assert row.manifest_path in str(e.value)


def test_delete_files_take_their_referenced_file_from_equal_path_bounds(tmp_path: Path) -> None:
    t = TableBuilder(tmp_path, SCHEMA)
    t.commit([data_file("d1")])
    t.commit(
        deletes=[position_deletes("one", targets=["d1"]), position_deletes("two", targets=["d1", "d2"])],
        operation="delete",
    )
    cache = ManifestCache()
    rows = cache.snapshot_manifests(t.metadata.current_snapshot())  # type: ignore[arg-type]
    (deletes,) = [m for m in rows if m.content is ManifestContent.DELETES]
    by_path = {d.path: d for d in cache.parsed_manifest(deletes).deletes}
    assert by_path["one"].referenced_data_file == "d1"
    assert by_path["two"].referenced_data_file is None
    assert by_path["one"].sequence_number == 2 and by_path["one"].spec_id == 0
    assert referenced_data_file(deletion_vector("x.puffin", "d9")) == "d9"
    assert referenced_data_file(data_file("plain")) is None
