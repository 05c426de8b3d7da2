"""``CALL system.remove_orphan_files``: files no metadata references are removed when old
enough, everything referenced stays -- the folder afterwards holds exactly the referenced
files -- and a crash in the middle of an expiry leaves a readable table whose leftovers
orphan removal cleans up."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from tests.ops.procedures.expire_support import (
    FUTURE,
    age_files,
    disk_files,
    referenced_files,
    rows_at,
    snapshot_ids,
    table_dir,
)
from tests.support.faults import add_equality_deletes


def location(con: Connection, name: str = "t") -> Path:
    return table_dir(con, "db", name)


def make_table(con: Connection, version: int) -> None:
    con.execute(
        "CREATE TABLE db.t (id bigint, s string) PARTITIONED BY (bucket(2, id)) TBLPROPERTIES "
        f"('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
    )
    for i in range(3):
        con.execute("INSERT INTO db.t VALUES (?, ?), (?, ?)", [2 * i, f"a{i}", 2 * i + 1, f"b{i}"])
    con.execute("DELETE FROM db.t WHERE id = 3")
    con.execute("UPDATE db.t SET s = 'u' WHERE id = 0")


def plant_orphans(root: Path) -> set[str]:
    """Files a failed write or an old expiry would leave: in data/, a partition folder,
    metadata/, and a new folder."""
    planted = [
        root / "data" / "orphan-1.parquet",
        root / "data" / "id_bucket=1" / "orphan-2.parquet",
        root / "metadata" / "snap-1-orphan.avro",
        root / "metadata" / "99999-orphan.metadata.json",
        root / "stray" / "deep" / "file.txt",
    ]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("orphan")
    return {str(p) for p in planted}


def orphans(con: Connection, call: str) -> set[str]:
    return {r[0] for r in con.execute(call).fetchall()}


@pytest.mark.parametrize("version", [2, 3])
def test_old_orphans_go_and_every_referenced_file_stays(con: Connection, version: int) -> None:
    make_table(con, version)
    root = location(con)
    planted = plant_orphans(root)
    hidden = root / "data" / ".in-progress.parquet.tmp"
    hidden.write_text("a write in progress")
    age_files(root)
    before = {sid: rows_at(con, "db.t", sid) for sid in snapshot_ids(con, "db.t")}
    assert orphans(con, "CALL system.remove_orphan_files(table => 'db.t', dry_run => true)") == planted
    assert planted <= disk_files(root)  # a dry run deletes nothing
    assert orphans(con, "CALL system.remove_orphan_files('db.t')") == planted
    assert disk_files(root) == referenced_files(con, "db.t", deleted_entries=True)
    assert hidden.exists()
    assert {sid: rows_at(con, "db.t", sid) for sid in snapshot_ids(con, "db.t")} == before
    assert orphans(con, "CALL system.remove_orphan_files('db.t')") == set()


def test_young_files_are_never_orphans(con: Connection) -> None:
    make_table(con, 2)
    root = location(con)
    age_files(root)
    young = root / "data" / "young.parquet"
    young.write_text("being written")
    old = root / "data" / "old.parquet"
    old.write_text("left behind")
    two_days_ago = time.time() - 2 * 86400  # older than a day, younger than the default three days
    os.utime(old, (two_days_ago, two_days_ago))
    assert orphans(con, "CALL system.remove_orphan_files('db.t')") == set()
    day_and_a_half_ago = "now() - INTERVAL 36 HOUR"
    assert orphans(con, f"CALL system.remove_orphan_files('db.t', {day_and_a_half_ago})") == {str(old)}
    assert young.exists() and not old.exists()


def test_location_narrows_the_listing_and_must_be_in_the_table(con: Connection, tmp_path: Path) -> None:
    make_table(con, 2)
    root = location(con)
    planted = plant_orphans(root)
    age_files(root)
    metadata_only = {p for p in planted if "/metadata/" in p}
    found = orphans(
        con, f"CALL system.remove_orphan_files(table => 'db.t', location => 'file:{root}/metadata')"
    )
    assert found == metadata_only
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "precious.parquet").write_text("x")
    age_files(outside)
    with pytest.raises(iceduck.Error, match="is not under the location of table"):
        con.execute(f"CALL system.remove_orphan_files(table => 'db.t', location => '{outside}')")
    with pytest.raises(iceduck.Error, match="is not under the location of table"):
        con.execute(f"CALL system.remove_orphan_files(table => 'db.t', location => '{root}-x')")
    assert (outside / "precious.parquet").exists()


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ("CALL system.remove_orphan_files('db.t', now() - INTERVAL 1 HOUR)", "less than 24 hours"),
        ("CALL system.remove_orphan_files(table => 'db.t', max_concurrent_deletes => -1)", "value > 0"),
        ("CALL system.remove_orphan_files(table => 'db.t', file_list_view => 'v')", "file_list_view"),
        ("CALL system.remove_orphan_files(table => 'db.t', prefix_mismatch_mode => 'x')", "Invalid prefix"),
    ],
)
def test_bad_arguments_name_the_problem(con: Connection, call: str, says: str) -> None:
    make_table(con, 2)
    with pytest.raises(iceduck.Error, match=says):
        con.execute(call)


def test_object_store_arguments_are_accepted_and_change_nothing(con: Connection) -> None:
    make_table(con, 2)
    root = location(con)
    planted = plant_orphans(root)
    age_files(root)
    call = (
        "CALL system.remove_orphan_files(table => 'db.t', equal_schemes => map('s3a', 's3'), "
        "equal_authorities => map('a', 'b'), prefix_mismatch_mode => 'ignore', prefix_listing => true, "
        "max_concurrent_deletes => 4)"
    )
    assert orphans(con, call) == planted


def test_gc_disabled_refuses(con: Connection) -> None:
    make_table(con, 2)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('gc.enabled'='false')")
    planted = plant_orphans(location(con))
    age_files(location(con))
    with pytest.raises(iceduck.Error, match="GC is disabled"):
        con.execute("CALL system.remove_orphan_files('db.t')")
    assert all(os.path.exists(p) for p in planted)


def test_a_hadoop_table_keeps_its_version_hint(tmp_path: Path) -> None:
    con = iceduck.connect(tmp_path / "wh", catalog_type="hadoop")
    con.execute("CREATE NAMESPACE db")
    make_table(con, 2)
    root = location(con)
    planted = plant_orphans(root)
    age_files(root)
    assert orphans(con, "CALL system.remove_orphan_files('db.t')") == planted
    assert (root / "metadata" / "version-hint.text").exists()
    assert rows_at(con, "db.t") == [(0, "u"), (1, "b0"), (2, "a1"), (4, "a2"), (5, "b2")]
    con.close()


def test_equality_deletes_and_expired_snapshots(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint) TBLPROPERTIES ('format-version'='2')")
    con.execute("INSERT INTO db.t VALUES (1), (2), (3)")
    add_equality_deletes(con, "db", "t", "id", [2])
    con.execute("INSERT INTO db.t VALUES (4)")
    con.execute(f"CALL system.expire_snapshots('db.t', {FUTURE})")
    root = location(con)
    planted = plant_orphans(root)
    age_files(root)
    assert orphans(con, "CALL system.remove_orphan_files('db.t')") == planted
    assert disk_files(root) == referenced_files(con, "db.t", deleted_entries=True)
    assert rows_at(con, "db.t") == [(1,), (3,), (4,)]


_CRASHING_EXPIRE = textwrap.dedent(
    """
    import os, signal, sys
    import iceduck
    import iceduck.txn.file_cleanup as cleanup

    deleted = []
    real_unlink = os.unlink

    class CrashingOs:
        # the cleanup's os module: the process dies (SIGKILL, no cleanup handlers) after
        # its second file deletion
        def __getattr__(self, name):
            return getattr(os, name)

        def unlink(self, path):
            real_unlink(path)
            deleted.append(path)
            if len(deleted) == 2:
                os.kill(os.getpid(), signal.SIGKILL)

    cleanup.os = CrashingOs()
    con = iceduck.connect(sys.argv[1])
    con.execute("CALL system.expire_snapshots('db.t', TIMESTAMP '2999-01-01 00:00:00')").fetchall()
    """
)


@pytest.mark.parametrize("version", [2, 3])
def test_a_crash_midway_through_expiry_leaves_a_readable_table(
    con: Connection, tmp_path: Path, version: int
) -> None:
    make_table(con, version)
    current = rows_at(con, "db.t")
    root = location(con)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", _CRASHING_EXPIRE, str(tmp_path / "wh")],
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == -9, done.stderr.decode()
    assert len(snapshot_ids(con, "db.t")) == 1  # the expiry committed before the crash
    assert rows_at(con, "db.t") == current
    # files that retained manifests list only as deleted are the expiry's to delete and
    # orphan removal's to keep: the folder holds the live files, maybe some of those, and
    # nothing else once the leftovers are gone
    live = referenced_files(con, "db.t")
    listed = referenced_files(con, "db.t", deleted_entries=True)
    left = disk_files(root) - listed
    assert left  # the crash left unreferenced files behind ...
    age_files(root)
    assert orphans(con, "CALL system.remove_orphan_files('db.t')") == left  # ... which go now
    assert live <= disk_files(root) <= listed
    assert rows_at(con, "db.t") == current


def test_the_result_column_is_sparks(con: Connection) -> None:
    make_table(con, 2)
    cur = con.execute("CALL system.remove_orphan_files('db.t')")
    assert [(d[0], d[1]) for d in cur.description] == [("orphan_file_location", "VARCHAR")]
    assert cur.fetchall() == []  # nothing planted, nothing old: nothing removed
