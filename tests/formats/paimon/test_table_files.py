"""Snapshots, schemas, tags and the LATEST/EARLIEST hints of pypaimon-written tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from iceduck.errors import CorruptDataError, NotFoundError, UnsupportedError
from iceduck.formats.paimon.table_files import (
    earliest_snapshot_id,
    is_paimon_table,
    latest_snapshot_id,
    read_schema,
    read_snapshot,
    read_tag,
    schema_ids,
    snapshot_at_or_before,
    snapshot_ids,
    tag_names,
)
from tests.formats.paimon.fixture import DATABASE, copy_table, table

PK = table("pk")


def test_listing() -> None:
    assert is_paimon_table(PK) and is_paimon_table(PK + "/")
    assert not is_paimon_table(str(DATABASE)) and not is_paimon_table(str(DATABASE / "nope"))
    assert snapshot_ids(PK) == [1, 2, 3] and schema_ids(PK) == [0, 1] and tag_names(PK) == ["t1"]
    assert latest_snapshot_id(PK) == 3 and earliest_snapshot_id(PK) == 1
    assert tag_names(table("app")) == []


def test_snapshots_schemas_and_tags() -> None:
    first, second, third = (read_snapshot(PK, i) for i in (1, 2, 3))
    assert [s.id for s in (first, second, third)] == [1, 2, 3]
    assert (first.schema_id, third.schema_id) == (0, 1)
    assert first.total_record_count == 4 and first.commit_kind == "APPEND"
    assert first.time_millis <= second.time_millis <= third.time_millis
    assert read_tag(PK, "t1") == first
    old, new = read_schema(PK, 0), read_schema(PK, 1)
    assert old.field_names == ("id", "v", "n", "rk") and new.field_names == ("id", "v", "n", "rk", "extra")
    assert new.field_by_name("extra").id == 4  # type: ignore[union-attr]
    assert new.bucket == 2 and new.options["rowkind.field"] == "rk"


def test_time_travel_by_time() -> None:
    snapshots = [read_snapshot(PK, i) for i in (1, 2, 3)]
    assert snapshot_at_or_before(PK, snapshots[0].time_millis - 1) is None
    assert snapshot_at_or_before(PK, snapshots[0].time_millis) == snapshots[0]
    assert snapshot_at_or_before(PK, snapshots[2].time_millis + 10**9) == snapshots[2]


def test_missing_versions_are_not_found() -> None:
    with pytest.raises(NotFoundError, match="snapshot 7 does not exist"):
        read_snapshot(PK, 7)
    with pytest.raises(NotFoundError, match="tag 'nope'"):
        read_tag(PK, "nope")
    with pytest.raises(CorruptDataError, match="schema-5"):
        read_schema(PK, 5)


@pytest.mark.parametrize(("hint", "latest"), [("1", 3), ("3", 3), ("99", 3), ("garbage", 3), ("", 3)])
def test_latest_hint_is_checked(tmp_path: Path, hint: str, latest: int) -> None:
    location = copy_table("pk", tmp_path)
    (tmp_path / "pk" / "snapshot" / "LATEST").write_text(hint)
    assert latest_snapshot_id(location) == latest


def test_hints_missing_or_stale(tmp_path: Path) -> None:
    location = copy_table("pk", tmp_path)
    folder = tmp_path / "pk" / "snapshot"
    (folder / "LATEST").unlink()
    (folder / "EARLIEST").write_text("1")
    (folder / "snapshot-1").unlink()  # expired after the hint was written
    assert (latest_snapshot_id(location), earliest_snapshot_id(location)) == (3, 2)
    (folder / "EARLIEST").write_text("3")
    assert earliest_snapshot_id(location) == 3
    for name in ("snapshot-2", "snapshot-3", "EARLIEST"):
        (folder / name).unlink()
    assert (latest_snapshot_id(location), earliest_snapshot_id(location)) == (None, None)
    assert snapshot_at_or_before(location, 2**62) is None


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"version": 3, "id": 2, "schemaId"', "not valid JSON"),
        (b"\xff\xfe garbage", "not UTF-8"),
        (b"[1, 2]", "JSON object"),
        (b'{"id": 2, "schemaId": 0}', "baseManifestList|commitKind"),
    ],
)
def test_corrupt_snapshot_names_the_file(tmp_path: Path, content: bytes, problem: str) -> None:
    location = copy_table("pk", tmp_path)
    (tmp_path / "pk" / "snapshot" / "snapshot-2").write_bytes(content)
    with pytest.raises(CorruptDataError, match=problem) as info:
        read_snapshot(location, 2)
    assert str(tmp_path / "pk" / "snapshot" / "snapshot-2") in str(info.value)


def test_snapshot_file_of_another_id(tmp_path: Path) -> None:
    location = copy_table("pk", tmp_path)
    folder = tmp_path / "pk" / "snapshot"
    (folder / "snapshot-2").write_bytes((folder / "snapshot-1").read_bytes())
    with pytest.raises(CorruptDataError, match="holds snapshot 1"):
        read_snapshot(location, 2)


def test_schema_with_unknown_type_names_the_file(tmp_path: Path) -> None:
    location = copy_table("pk", tmp_path)
    path = tmp_path / "pk" / "schema" / "schema-1"
    path.write_text(
        path.read_text()
        .replace('"type" : "STRING"', '"type" : "STRANG"')
        .replace('"type": "STRING"', '"type": "STRANG"')
    )
    with pytest.raises(UnsupportedError, match="Paimon type 'STRANG' is not supported") as info:
        read_schema(location, 1)
    assert str(path) in str(info.value)
