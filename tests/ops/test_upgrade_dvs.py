"""A v2 table with position delete files upgraded to v3: the next DELETE, UPDATE or MERGE
writes deletion vectors that merge the old positions, and the position delete files they
replace leave the snapshot exactly when every data file they hold deletes for has a DV."""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.ops import row_changes
from tests.ops.procedures.test_rewrite_data_files_concurrency import before_commit

MOR = ", ".join(f"'write.{op}.mode' = 'merge-on-read'" for op in ("delete", "update", "merge"))


def rows(con: Connection) -> list[tuple[object, ...]]:
    return con.execute("SELECT * FROM db.t ORDER BY id").fetchall()


def deletes(con: Connection) -> list[tuple[str, str, int, str | None]]:
    """(path, format, record count, referenced data file) of the live delete files."""
    return sorted(
        con.execute(
            "SELECT file_path, file_format, record_count, referenced_data_file FROM db.t.delete_files"
        ).fetchall(),
        key=lambda r: (r[1], r[0], r[3] or ""),
    )


def data_files(con: Connection) -> dict[int, str]:
    """The data file holding each id (ids are unique)."""
    return dict(con.execute("SELECT id, _file FROM db.t").fetchall())


def build(con: Connection) -> tuple[str, str, str]:
    """v2, partitioned by p; two inserts give two files per partition; in partition p=1, a
    DELETE leaves one position delete file for two data files (ids 1 and 21) and one for
    one file (id 3); partition p=0 gets a file-scoped one (id 2). Returns the p=1 files A
    (ids < 20), B (ids >= 20), and the p=0 file C (ids < 20)."""
    con.execute(
        "CREATE TABLE db.t (id bigint, p int, s string) USING iceberg PARTITIONED BY (p) "
        f"TBLPROPERTIES ('format-version' = '2', {MOR})"
    )
    con.execute("INSERT INTO db.t SELECT i, i % 2, 'a' || i FROM range(20) r(i)")
    con.execute("INSERT INTO db.t SELECT i, i % 2, 'b' || i FROM range(20, 40) r(i)")
    files = data_files(con)
    con.execute("DELETE FROM db.t WHERE id IN (1, 21, 2)")
    con.execute("DELETE FROM db.t WHERE id = 3")
    return files[5], files[25], files[4]


def expected_after(ids: set[int]) -> list[tuple[object, ...]]:
    out = []
    for i in range(40):
        if i not in ids:
            out.append((i, i % 2, ("a" if i < 20 else "b") + str(i)))
    return out


def test_upgrade_keeps_position_deletes_until_a_write(con: Connection) -> None:
    build(con)
    before = deletes(con)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    assert deletes(con) == before and rows(con) == expected_after({1, 2, 3, 21})
    assert [d[1] for d in before] == ["PARQUET"] * 3


def test_delete_merges_old_positions_into_dvs(con: Connection) -> None:
    a, b, c = build(con)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    multi = next(d[0] for d in deletes(con) if d[3] is None)
    con.execute("DELETE FROM db.t WHERE id IN (5, 7)")  # file A only
    assert rows(con) == expected_after({1, 2, 3, 21, 5, 7})
    now = deletes(con)
    dvs = [d for d in now if d[1] == "PUFFIN"]
    # A's DV holds 1 and 3 (old) and 5, 7 (new); A's file-scoped Parquet file is gone, the
    # two-file one stays (B has no DV yet), C's is untouched
    assert [(d[2], d[3]) for d in dvs] == [(4, a)]
    parquet = [d for d in now if d[1] == "PARQUET"]
    assert sorted((d[2], d[3]) for d in parquet if d[3]) == [(1, c)]
    assert [d[0] for d in parquet if d[3] is None] == [multi]
    # B's first DV covers the last data file of the two-file delete file: it leaves
    con.execute("UPDATE db.t SET s = 'x' WHERE id = 25")
    now = deletes(con)
    assert all(d[0] != multi for d in now)
    assert sorted((d[2], d[3]) for d in now if d[1] == "PUFFIN") == [(2, b), (4, a)]
    assert (25, 1, "x") in rows(con) and (21, 1, "b21") not in rows(con)
    # no data file has both a DV and a position delete file that applies to it
    assert sorted((d[3], d[2]) for d in now if d[1] == "PARQUET") == [(c, 1)]


def test_merge_converts_and_time_travel_reads_old_state(con: Connection) -> None:
    _, _, c = build(con)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    last = "SELECT snapshot_id FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1"
    old = con.execute(last).fetchone()[0]
    con.execute(
        "MERGE INTO db.t USING (SELECT 4 AS id, 'm' AS s UNION ALL SELECT 100, 'n') AS src "
        "ON db.t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s "
        "WHEN NOT MATCHED THEN INSERT (id, p, s) VALUES (src.id, 0, src.s)"
    )
    expected = [r if r[0] != 4 else (4, 0, "m") for r in expected_after({1, 2, 3, 21})] + [(100, 0, "n")]
    assert rows(con) == sorted(expected)
    now = deletes(con)
    # C got a DV with 2 (old) and 4 (updated): its file-scoped Parquet file left
    assert [(d[1], d[2]) for d in now if d[3] == c] == [("PUFFIN", 2)]
    assert con.execute(f"SELECT count(*) FROM db.t VERSION AS OF {old}").fetchone()[0] == 36


def test_delete_of_whole_file_drops_its_share(con: Connection) -> None:
    """A data file removed whole counts as covered: B's rows all go, so only A's DV is
    needed for the two-file delete file to leave."""
    a, _, _ = build(con)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    con.execute("DELETE FROM db.t WHERE id >= 20 AND p = 1")
    con.execute("DELETE FROM db.t WHERE id = 9")
    assert rows(con) == [r for r in expected_after({1, 2, 3, 21, 9}) if not (r[0] >= 20 and r[1] == 1)]
    assert all(d[3] is not None for d in deletes(con))
    assert [(d[1], d[2]) for d in deletes(con) if d[3] == a] == [("PUFFIN", 3)]


def test_a_conversion_committed_during_a_delete_fails_the_delete(
    con: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The DELETE would give B a DV and drop the two-file Parquet file; a concurrent
    rewrite_position_delete_files did both first: the DELETE fails (never a second DV, no
    row lost), and runs on the new state."""
    a, b, c = build(con)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    con.execute("DELETE FROM db.t WHERE id = 5")  # A gets its DV
    other = iceduck.connect(tmp_path / "wh")
    try:
        convert = lambda: other.execute(  # noqa: E731
            "CALL system.rewrite_position_delete_files('db.t', map('rewrite-all', 'true'))"
        )
        before_commit(monkeypatch, row_changes, convert)
        with pytest.raises(iceduck.OperationalError):
            con.execute("DELETE FROM db.t WHERE id = 25")
    finally:
        other.close()
    assert rows(con) == expected_after({1, 2, 3, 21, 5})
    assert all(d[1] == "PUFFIN" for d in deletes(con))
    con.execute("DELETE FROM db.t WHERE id = 25")
    assert rows(con) == expected_after({1, 2, 3, 21, 5, 25})
    assert sorted(d[3] for d in deletes(con)) == sorted([a, b, c])
