"""The planner finds each deletion vector's index file where the writer put it: in
``index/`` by default, beside the data files under ``index-file-in-data-file-dir``
(tables of ``tests/fixtures/paimon``, written by pypaimon)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import iceduck
from iceduck.formats.paimon.table_files import latest_snapshot, read_schema
from iceduck.scan.paimon.planner import plan_paimon_scan
from tests.formats.paimon.fixture import table


@pytest.mark.parametrize(("name", "live"), [("dv", [0, 2, 3, 6, 7, 8]), ("dv_beside", [1, 2, 4, 5])])
def test_deletion_vectors_are_found_and_applied(tmp_path: Path, name: str, live: list[int]) -> None:
    location = table(name)
    snapshot = latest_snapshot(location)
    assert snapshot is not None
    plan = plan_paimon_scan(location, snapshot, read_schema(location, snapshot.schema_id))
    vectors = [f.deletion_vector for s in plan.splits for f in s.files]
    assert vectors and all(v is not None and os.path.isfile(v.index_path) for v in vectors)
    con = iceduck.connect(str(tmp_path))
    rows = con.execute(f"SELECT id FROM paimon_scan('{location}') ORDER BY id").fetchall()
    assert [r[0] for r in rows] == live
