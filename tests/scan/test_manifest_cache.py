"""The per-connection manifest cache: parse once, bounded LRU, errors naming the file."""

from __future__ import annotations

import dataclasses
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.errors import CorruptDataError
from iceduck.io.fileio import MissingFileError
from iceduck.scan.manifest_cache import ManifestCache, referenced_data_file
from iceduck.scan.planner import plan_scan
from iceduck.spec.expressions.predicates import (
    AlwaysTrue,
    EqualTo,
    GreaterThanOrEqual,
    LessThan,
    and_,
)
from iceduck.spec.manifest import ManifestContent
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import LongType, NestedField
from tests.scan.builder import (
    DAY_MICROS,
    EVENTS_DAY0,
    TableBuilder,
    data_file,
    deletion_vector,
    events_table,
    position_deletes,
)
from tests.support.s3 import S3Server, client

SCHEMA = Schema((NestedField(1, "id", LongType()),))
HOUR = 3_600_000_000


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
    plan_scan(md, row_filter=GreaterThanOrEqual("id", 0), cache=cache)  # another plan
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


# -- the bound, parallel reads, threads ----------------------------------------------------------


def _point(day: int) -> object:
    start = (EVENTS_DAY0 + day) * DAY_MICROS + 10 * HOUR
    return and_(EqualTo("device_id", 74), GreaterThanOrEqual("ts", start), LessThan("ts", start + 10 * HOUR))


def test_eviction_changes_no_plan(tmp_path: Path) -> None:
    md = events_table(tmp_path, days=40).metadata
    filters = [AlwaysTrue(), _point(3), _point(30), _point(3)]
    expected = [plan_scan(md, row_filter=f, cache=ManifestCache()) for f in filters]
    small = ManifestCache(max_entries=100)  # the list (40 rows) and a few manifests of 8
    for _ in range(2):
        for f, plan in zip(filters, expected, strict=True):
            got = plan_scan(md, row_filter=f, cache=small)
            assert got.tasks == plan.tasks and got.stats == plan.stats
            assert small.size <= 100
    assert small.manifests_parsed > 40  # evicted manifests were parsed again


def test_parallel_reads_plan_exactly_as_sequential(tmp_path: Path) -> None:
    table = events_table(tmp_path, days=40)
    b = parse_transform("bucket[8]").apply(LongType())(74)
    target = f"{tmp_path}/data/ts_day={EVENTS_DAY0 + 7}/device_id_bucket={b}/00007-{b}.parquet"
    table.commit(deletes=[position_deletes("pd", (EVENTS_DAY0 + 7, b), targets=[target])], operation="delete")
    md = table.metadata
    later = GreaterThanOrEqual("ts", (EVENTS_DAY0 + 20) * DAY_MICROS)  # no delete applies
    for f in (AlwaysTrue(), _point(7), later):
        sequential, parallel = ManifestCache(workers=1), ManifestCache(workers=4)
        a, c = plan_scan(md, row_filter=f, cache=sequential), plan_scan(md, row_filter=f, cache=parallel)
        assert a.tasks == c.tasks and a.stats == c.stats
        assert any(t.position_deletes for t in a.tasks) == (f is not later)
        assert sequential.manifests_parsed == parallel.manifests_parsed  # each parsed once
        assert plan_scan(md, row_filter=f, cache=parallel).tasks == a.tasks  # warm, too


def test_parallel_reads_name_the_first_bad_manifest_in_list_order(tmp_path: Path) -> None:
    md = events_table(tmp_path, days=20).metadata
    rows = ManifestCache().snapshot_manifests(md.current_snapshot())  # type: ignore[arg-type]
    for row in (rows[5], rows[12]):
        Path(row.manifest_path).write_bytes(b"Obj\x01 truncated")
    for workers in (1, 4):
        with pytest.raises(CorruptDataError) as e:
            plan_scan(md, cache=ManifestCache(workers=workers))
        assert e.value.path == rows[5].manifest_path


def test_threads_planning_at_once_share_one_cache(tmp_path: Path) -> None:
    md = events_table(tmp_path, days=30).metadata
    filters = [AlwaysTrue(), *(_point(d) for d in range(0, 30, 3))]
    expected = [plan_scan(md, row_filter=f, cache=ManifestCache()).tasks for f in filters]
    cache = ManifestCache(max_entries=120, workers=2)  # small: evictions race with reads
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            got = list(pool.map(lambda f: plan_scan(md, row_filter=f, cache=cache).tasks, filters))
            assert got == expected
    assert cache.size <= 120


def test_manifests_fetched_ahead_from_s3_fail_as_read_in_turn(
    s3_connection: Any, s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    """In an object store the manifests a plan needs are fetched together before they are
    parsed (:meth:`ManifestCache.prefetched`): the rows are those of the manifests, and a
    missing one still fails the plan naming it, as the sequential read does."""
    con = s3_connection
    location = f"s3://{s3_bucket}/m-{uuid.uuid4().hex[:8]}"
    con.execute(f"CREATE TABLE db.m (id bigint) USING iceberg LOCATION '{location}'")
    for i in range(3):
        con.execute(f"INSERT INTO db.m VALUES ({i})")
    manifests = [row[0] for row in con.execute("SELECT path FROM db.m.manifests ORDER BY path").fetchall()]
    assert len(manifests) == 3
    with iceduck.connect(tmp_path / "wh") as cold:
        assert sorted(cold.execute("SELECT id FROM db.m").fetchall()) == [(0,), (1,), (2,)]
    bucket, _, key = manifests[1].removeprefix("s3://").partition("/")
    client(s3_server.endpoint_url).delete_object(Bucket=bucket, Key=key)
    with iceduck.connect(tmp_path / "wh") as cold, pytest.raises(MissingFileError, match=manifests[1]):
        cold.execute("SELECT id FROM db.m").fetchall()
