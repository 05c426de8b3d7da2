"""A compaction killed (SIGKILL) midway leaves the table readable, in the old or the new state.

The compaction runs in a child process that kills itself at a chosen point -- after writing
the new files but before committing, or right after the commit -- so the point is exact
rather than a race. The parent then reads the table: the same rows either way, with the
old files (and the written files left as orphans) or the new ones."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import iceduck

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import iceduck
    from iceduck.ops.procedures import rewrite_data

    real = rewrite_data.commit_changes

    def dying(*args, **kwargs):
        if sys.argv[2] == "after":
            real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    rewrite_data.commit_changes = dying
    con = iceduck.connect(sys.argv[1])
    con.execute("CALL system.rewrite_data_files('db.t')")
    """
)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_killed_compaction_leaves_the_old_or_the_new_state(tmp_path: Path, version: int, when: str) -> None:
    warehouse = tmp_path / "wh"
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE db")
        con.execute(
            "CREATE TABLE db.t (id bigint, name string) PARTITIONED BY (bucket(2, id)) "
            f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read')"
        )
        for i in range(6):
            con.execute(f"INSERT INTO db.t SELECT i, 'n' || i FROM range({i * 50}, {(i + 1) * 50}) r(i)")
        con.execute("DELETE FROM db.t WHERE id % 4 = 1")
        before = sorted(con.execute("SELECT * FROM db.t").fetchall())
        files = sorted(r[0] for r in con.execute("SELECT file_path FROM db.t.data_files").fetchall())

    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(warehouse), when], capture_output=True, timeout=300
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()

    with iceduck.connect(warehouse) as con:
        assert sorted(con.execute("SELECT * FROM db.t").fetchall()) == before
        now = sorted(r[0] for r in con.execute("SELECT file_path FROM db.t.data_files").fetchall())
        deletes = con.execute("SELECT count(*) FROM db.t.delete_files").fetchall()[0][0]
        if when == "before":
            assert now == files and deletes > 0  # the old state
        else:
            assert len(now) == 2 and not set(now) & set(files) and deletes == 0  # the new state
