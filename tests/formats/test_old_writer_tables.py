"""Tables whose manifest lists an older Iceberg Java wrote (1.4 and before: fields 504-506
named ``added_data_files_count``, ...) read and write through a session: fields are matched
by id, as the spec identifies them, not by name."""

from __future__ import annotations

from pathlib import Path

import iceduck
from iceduck.connection import Connection
from tests.formats.old_writers import JAVA_1_4_NAMES, decode, java_1_4_manifest_list

COUNTS = "added_data_files_count, existing_data_files_count, deleted_data_files_count"


def _table_with_java_1_4_list(warehouse: Path) -> str:
    """A v2 table of two snapshots whose current manifest list is Java 1.4's; its path."""
    con = iceduck.connect(warehouse)
    con.execute("CREATE NAMESPACE ns")
    con.execute(
        "CREATE TABLE ns.t (id bigint, s string) PARTITIONED BY (s) TBLPROPERTIES ('format-version'='2')"
    )
    con.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')")
    con.execute("INSERT INTO ns.t VALUES (3, 'a')")
    [(listing,)] = con.execute(
        "SELECT manifest_list FROM ns.t.snapshots ORDER BY committed_at DESC, snapshot_id LIMIT 1"
    ).fetchall()
    con.close()
    path = Path(listing.removeprefix("file:"))
    old = java_1_4_manifest_list(path.read_bytes())
    _, schema, _ = decode(old)
    assert {f["name"] for f in schema["fields"]} >= set(JAVA_1_4_NAMES.values())
    path.write_bytes(old)
    return str(path)


def _manifest_counts(con: Connection) -> list[tuple[object, ...]]:
    """Each manifest's counts, sorted (snapshot ids are random, not in commit order)."""
    return sorted(con.execute(f"SELECT {COUNTS} FROM ns.t.manifests").fetchall())


def test_manifests_table_shows_the_counts_of_a_java_1_4_list(tmp_path: Path) -> None:
    _table_with_java_1_4_list(tmp_path / "wh")
    con = iceduck.connect(tmp_path / "wh")
    # the first INSERT added two files (one per partition), the second one
    assert _manifest_counts(con) == [(1, 0, 0), (2, 0, 0)]


def test_insert_into_a_table_with_a_java_1_4_list(tmp_path: Path) -> None:
    _table_with_java_1_4_list(tmp_path / "wh")
    con = iceduck.connect(tmp_path / "wh")
    con.execute("INSERT INTO ns.t VALUES (4, 'c')")
    assert con.execute("SELECT id, s FROM ns.t ORDER BY id").fetchall() == [
        (1, "a"),
        (2, "b"),
        (3, "a"),
        (4, "c"),
    ]
    assert _manifest_counts(con) == [(1, 0, 0), (1, 0, 0), (2, 0, 0)]
