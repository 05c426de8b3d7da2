"""A v3 table written by Spark 3.5 with Iceberg Java 1.8.1 (tests/fixtures/java_1_8): its
metadata has no ``next-row-id`` (Java 1.8 wrote v3 before row lineage was final) and its
deletes are deletion vectors. iceduck reads every snapshot as Spark 1.8.1 read it, and its
first commit to the table starts ``next-row-id`` at 0 -- without Spark, in every run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import iceduck
from tests.fixtures.java_1_8.tables import TABLE, expected, linked_root


@pytest.fixture(scope="module")
def root() -> Path:
    found = linked_root()
    if found is None:
        pytest.skip("/tmp/iceduck-java18-fixtures is taken by something other than these fixtures")
    return found


def test_the_fixture_is_a_v3_table_without_next_row_id(root: Path) -> None:
    metadata = json.loads(Path(expected()["metadata"]).read_text())
    assert metadata["format-version"] == 3 and "next-row-id" not in metadata
    assert "row-lineage" not in metadata


def test_every_snapshot_reads_as_spark_1_8_read_it(root: Path, tmp_path: Path) -> None:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE ns")
    con.execute(f"CALL system.register_table('{TABLE}', '{expected()['metadata']}')")
    snapshots = expected()["snapshots"]
    assert len(snapshots) == 4
    for snapshot, rows in snapshots.items():
        got = con.execute(f"SELECT id, data FROM {TABLE} VERSION AS OF {snapshot} ORDER BY id").fetchall()
        assert [list(r) for r in got] == rows, snapshot
    dvs = con.execute(f"SELECT count(*) FROM {TABLE}.files WHERE file_format = 'PUFFIN'").fetchone()
    assert dvs is not None and dvs[0] >= 1  # the deletes are deletion vectors


def test_the_first_commit_starts_row_ids_at_zero(root: Path, tmp_path: Path) -> None:
    """A copy whose metadata names a new location (where the INSERT writes); its snapshots
    still name Java's files, read from the fixture."""
    metadata = json.loads(Path(expected()["metadata"]).read_text())
    location = tmp_path / "t"
    metadata["location"] = str(location)
    copy = location / "metadata" / "v6.metadata.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(metadata))
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE ns")
    con.execute(f"CALL system.register_table('ns.t', '{copy}')")
    con.execute("INSERT INTO ns.t VALUES (100, 'iceduck'), (101, 'iceduck')")
    current = list(expected()["snapshots"].values())[-1]
    rows = con.execute("SELECT id, data FROM ns.t ORDER BY id").fetchall()
    assert [list(r) for r in rows] == sorted([*current, [100, "iceduck"], [101, "iceduck"]])
    newest = max((location / "metadata").glob("*.metadata.json"), key=lambda p: p.stat().st_mtime_ns)
    written = json.loads(newest.read_text())
    # "Snapshots that are created after upgrading to v3 must set the snapshot's first-row-id
    # and assign row IDs to existing and added files in the snapshot": the rows Java wrote get
    # ids too, so next-row-id passes every row of the table, from 0
    snapshot = written["snapshots"][-1]
    assert snapshot["first-row-id"] == 0 and written["next-row-id"] == snapshot["added-rows"] >= len(rows)
    ids = con.execute("SELECT count(*), count(DISTINCT _row_id), min(_row_id) FROM ns.t").fetchone()
    assert ids == (len(rows), len(rows), 0)
