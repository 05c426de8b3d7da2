"""Paimon system tables of a pypaimon-written table: Paimon's column names, and contents
checked against the files on disk and what pypaimon wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from iceduck.errors import NotFoundError
from iceduck.formats.paimon.table_files import latest_snapshot_id, read_schema, read_snapshot
from iceduck.scan.paimon.metadata_tables import paimon_metadata_table
from tests.engine.paimon.pypaimon_tables import run_pypaimon

SCRIPT = """
s = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
t = create("m", s, partition_keys=["dt"], options={"metadata.stats-mode": "full", "bucket": "-1"})
commit(t, {"id": [1, 2, 3], "name": ["a", "b", None], "dt": ["2024-01-01", "2024-01-02", "2024-01-01"]}, s)
cat.create_tag("db.m", "t1", 1)
commit(t, {"id": [11], "name": ["k"], "dt": ["2024-01-02"]}, s)
result["m"] = rows("m")
"""


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    warehouse = tmp_path_factory.mktemp("paimon_meta")
    run_pypaimon(warehouse, SCRIPT)
    return str(warehouse / "db.db" / "m")


def system_table(table: str, name: str) -> list[dict]:
    sid = latest_snapshot_id(table)
    assert sid is not None
    snapshot = read_snapshot(table, sid)
    return paimon_metadata_table(name, table, snapshot, read_schema(table, snapshot.schema_id)).to_pylist()


def test_snapshots(table: str) -> None:
    rows = system_table(table, "snapshots")
    assert [r["snapshot_id"] for r in rows] == [1, 2]
    assert [r["total_record_count"] for r in rows] == [3, 4]
    assert rows[0]["commit_kind"] == "APPEND" and rows[0]["commit_time"] is not None
    assert list(rows[0]) == [
        "snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind", "commit_time",
        "base_manifest_list", "delta_manifest_list", "changelog_manifest_list", "total_record_count",
        "delta_record_count", "changelog_record_count", "watermark",
    ]  # fmt: skip


def test_files_are_the_data_files_on_disk(table: str) -> None:
    rows = system_table(table, "files")
    on_disk = sorted(str(p) for p in Path(table).glob("dt=*/bucket-*/*.parquet"))
    assert sorted(r["file_path"] for r in rows) == on_disk
    assert sum(r["record_count"] for r in rows) == 4
    assert {r["partition"] for r in rows} == {"[2024-01-01]", "[2024-01-02]"}
    first = next(r for r in rows if r["partition"] == "[2024-01-01]")
    assert first["min_value_stats"] == "{dt=2024-01-01, id=1, name=a}"
    assert first["max_value_stats"] == "{dt=2024-01-01, id=3, name=a}"
    assert first["null_value_counts"] == "{dt=0, id=0, name=1}"
    assert first["file_format"] == "parquet" and first["level"] == 0


def test_manifests(table: str) -> None:
    rows = system_table(table, "manifests")
    assert all((Path(table) / "manifest" / r["file_name"]).exists() for r in rows)
    assert sum(r["num_added_files"] for r in rows) == 3
    assert {(r["min_partition_stats"], r["max_partition_stats"]) for r in rows} >= {
        ("[2024-01-02]", "[2024-01-02]")
    }


def test_schemas_options_and_tags(table: str) -> None:
    (schema,) = system_table(table, "schemas")
    assert (schema["schema_id"], schema["partition_keys"], schema["primary_keys"]) == (0, '["dt"]', "[]")
    assert '"name":"id"' in schema["fields"]
    options = {r["key"]: r["value"] for r in system_table(table, "options")}
    assert options["metadata.stats-mode"] == "full"
    (tag,) = system_table(table, "tags")
    assert (tag["tag_name"], tag["snapshot_id"], tag["record_count"]) == ("t1", 1, 3)


def test_unknown_system_table(table: str) -> None:
    with pytest.raises(NotFoundError, match="audit_log"):
        system_table(table, "audit_log")


def test_empty_table_has_no_files(tmp_path: Path) -> None:
    run_pypaimon(tmp_path, 'create("e", pa.schema([("id", pa.int64())]))')
    location = str(tmp_path / "db.db" / "e")
    schema = read_schema(location, 0)
    assert paimon_metadata_table("files", location, None, schema).num_rows == 0
    assert paimon_metadata_table("snapshots", location, None, schema).num_rows == 0
