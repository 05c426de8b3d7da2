"""A table written by Spark 3.5 with Iceberg Java 1.4.3 (tests/fixtures/java_1_4): its
manifest lists name fields 504-506 ``added_data_files_count``, ... as Java did before 1.5,
and iceduck reads them by field id -- the counts Spark showed, every row -- and appends to
the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import iceduck
from iceduck.formats.manifest_list import read_manifest_list
from tests.fixtures.java_1_4.tables import TABLE, expected, linked_root, local
from tests.formats.old_writers import JAVA_1_4_NAMES, decode

COUNTS = "added_data_files_count, existing_data_files_count, deleted_data_files_count"


@pytest.fixture(scope="module")
def root() -> Path:
    found = linked_root()
    if found is None:
        pytest.skip("/tmp/iceduck-java14-fixtures is taken by something other than these fixtures")
    return found


@pytest.mark.parametrize("listing", expected()["manifest_lists"])
def test_java_1_4_lists_read_with_sparks_counts(listing: str) -> None:
    data = local(listing).read_bytes()
    _, schema, _ = decode(data)
    names = {f["field-id"]: f["name"] for f in schema["fields"]}
    assert {i: names[i] for i in JAVA_1_4_NAMES} == JAVA_1_4_NAMES  # the old writer's names
    for m in read_manifest_list(data, listing):
        want = expected()["manifests"][m.manifest_path.removeprefix("file:")]
        assert [m.added_files_count, m.existing_files_count, m.deleted_files_count] == want


def test_rows_and_manifests_table_of_the_java_1_4_table(root: Path, tmp_path: Path) -> None:
    con = iceduck.connect(tmp_path / "wh")
    scan = f"iceduck_scan('{root / TABLE.replace('.', '/')}')"
    assert [list(r) for r in con.execute(f"SELECT id, s FROM {scan} ORDER BY id").fetchall()] == expected()[
        "rows"
    ]
    con.execute("CREATE NAMESPACE ns")
    con.execute(f"CALL system.register_table('ns.t', '{expected()['metadata']}')")
    got = con.execute(f"SELECT path, {COUNTS} FROM ns.t.manifests ORDER BY path").fetchall()
    assert {p.removeprefix("file:"): list(c) for p, *c in got} == expected()["manifests"]


def test_insert_into_a_copy_of_the_java_1_4_table(root: Path, tmp_path: Path) -> None:
    """The copy's metadata JSON names a new location (where the INSERT writes); its
    snapshots still name Java's manifest lists and manifests, read from the fixture."""
    metadata = json.loads(local(expected()["metadata"]).read_text())
    location = tmp_path / "t"
    metadata["location"] = str(location)
    copy = location / "metadata" / "v3.metadata.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(metadata))
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE ns")
    con.execute(f"CALL system.register_table('ns.t', '{copy}')")
    con.execute("INSERT INTO ns.t VALUES (4, 'c')")
    rows = con.execute("SELECT id, s FROM ns.t ORDER BY id").fetchall()
    assert [list(r) for r in rows] == [*expected()["rows"], [4, "c"]]
    counts = con.execute(f"SELECT {COUNTS} FROM ns.t.manifests").fetchall()
    assert sorted(counts) == [(1, 0, 0), (1, 0, 0), (2, 0, 0)]
