"""``CALL system.rewrite_position_delete_files``: small position delete files of a v2 table
compacted per partition, dangling deletes dropped, rows unchanged; options checked;
``where`` selects partitions; v3 tables keep their deletion vectors and turn legacy
position delete files into deletion vectors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.ops.procedures import position_deletes_v3
from tests.ops.procedures.test_rewrite_data_files_concurrency import before_commit


def build(con: Connection, version: int = 2) -> None:
    """Two partitions, one data file each, six DELETEs: six small position delete files
    (or DVs on v3) per partition."""
    con.execute(
        "CREATE TABLE db.t (id bigint, p int) USING iceberg PARTITIONED BY (p) "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read')"
    )
    con.execute("INSERT INTO db.t SELECT i, i % 2 FROM range(100) r(i)")
    for k in range(6):
        con.execute("DELETE FROM db.t WHERE id IN (?, ?)", [10 * k + 1, 10 * k + 2])


def rows(con: Connection) -> list[tuple[object, ...]]:
    return con.execute("SELECT * FROM db.t ORDER BY id").fetchall()


def delete_files(con: Connection) -> list[tuple[str, int, int]]:
    """(path, record count, size) of the current snapshot's delete files."""
    return sorted(
        con.execute("SELECT file_path, record_count, file_size_in_bytes FROM db.t.delete_files").fetchall()
    )


def files_on_disk(root: Path) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def test_small_files_are_compacted_per_partition(con: Connection, tmp_path: Path) -> None:
    build(con)
    expected = rows(con)
    before = delete_files(con)
    assert len(before) == 12
    on_disk = files_on_disk(tmp_path / "wh")
    cur = con.execute("CALL system.rewrite_position_delete_files('db.t')")
    assert [(d[0], d[1]) for d in cur.description] == [
        ("rewritten_delete_files_count", "INTEGER"),
        ("added_delete_files_count", "INTEGER"),
        ("rewritten_bytes_count", "BIGINT"),
        ("added_bytes_count", "BIGINT"),
    ]
    after = delete_files(con)
    assert cur.fetchall() == [(12, 2, sum(f[2] for f in before), sum(f[2] for f in after))]
    assert len(after) == 2 and sum(f[1] for f in after) == sum(f[1] for f in before) == 12
    assert rows(con) == expected
    # the new files are the only new files; the old ones stay for the older snapshots
    new = files_on_disk(tmp_path / "wh") - on_disk
    assert {f[0] for f in after} <= new and on_disk <= files_on_disk(tmp_path / "wh")
    op, summary = con.execute(
        "SELECT operation, summary FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).fetchone()
    summary = dict(summary)
    assert op == "replace"
    assert (summary["removed-position-delete-files"], summary["added-position-delete-files"]) == ("12", "2")
    assert summary["total-position-deletes"] == "12"
    # time travel before the rewrite reads the same rows
    first = con.execute("SELECT snapshot_id FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1 OFFSET 1")
    assert (
        con.execute(f"SELECT * FROM db.t VERSION AS OF {first.fetchone()[0]} ORDER BY id").fetchall()
        == expected
    )


def test_dangling_deletes_are_dropped(con: Connection) -> None:
    """Deletes of a data file that copy-on-write has since removed are dropped; those of
    the live file next to it in the same delete file are kept."""
    con.execute(
        "CREATE TABLE db.t (id bigint, p int) USING iceberg PARTITIONED BY (p) "
        "TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')"
    )
    con.execute("INSERT INTO db.t SELECT i, i % 2 FROM range(50) r(i)")
    con.execute("INSERT INTO db.t SELECT 100 + i, i % 2 FROM range(50) r(i)")
    for k in range(3):  # each delete file of a partition references both of its data files
        con.execute(
            "DELETE FROM db.t WHERE id IN (?, ?, ?, ?)", [10 * k + 2, 10 * k + 3, 110 + 10 * k, 111 + 10 * k]
        )
    assert len(delete_files(con)) == 6
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')")
    con.execute("DELETE FROM db.t WHERE id = 40")  # partition 0's first file is rewritten
    expected = rows(con)
    before = delete_files(con)
    assert len(before) == 6 and sum(f[1] for f in before) == 12
    result = con.execute(
        "CALL system.rewrite_position_delete_files(table => 'db.t', options => map('rewrite-all', 'true'))"
    ).fetchall()
    assert result[0][:2] == (6, 2)
    after = delete_files(con)
    assert sorted(f[1] for f in after) == [3, 6]  # partition 0 kept only the live file's deletes
    assert rows(con) == expected


def test_min_input_files_decides(con: Connection) -> None:
    build(con)
    options = "map('min-input-files', '7')"
    assert con.execute(f"CALL system.rewrite_position_delete_files('db.t', {options})").fetchall() == [
        (0, 0, 0, 0)
    ]
    assert len(delete_files(con)) == 12
    options = "map('min-input-files', '6', 'max-concurrent-file-group-rewrites', '2')"
    assert con.execute(f"CALL system.rewrite_position_delete_files('db.t', {options})").fetchone()[:2] == (
        12,
        2,
    )
    # nothing left to do: two files, each alone in its partition
    assert con.execute("CALL system.rewrite_position_delete_files('db.t')").fetchone() == (0, 0, 0, 0)


def test_v3_deletion_vectors_are_not_rewritten(con: Connection) -> None:
    build(con, 3)
    expected, before = rows(con), delete_files(con)
    assert con.execute("CALL system.rewrite_position_delete_files('db.t')").fetchall() == [(0, 0, 0, 0)]
    assert (rows(con), delete_files(con)) == (expected, before)


def formats(con: Connection) -> list[tuple[str, int, str | None]]:
    """(format, record count, referenced data file) of the live delete files."""
    return sorted(
        con.execute(
            "SELECT file_format, record_count, referenced_data_file FROM db.t.delete_files"
        ).fetchall(),
        key=lambda r: (r[0], r[2] or "", r[1]),
    )


def test_v3_legacy_position_delete_files_become_deletion_vectors(con: Connection) -> None:
    build(con, 2)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    expected, before = rows(con), delete_files(con)
    files = dict(con.execute("SELECT p, _file FROM db.t").fetchall())
    result = con.execute("CALL system.rewrite_position_delete_files('db.t')").fetchone()
    assert result[:3] == (12, 2, sum(f[2] for f in before))
    assert formats(con) == sorted([("PUFFIN", 6, files[0]), ("PUFFIN", 6, files[1])])
    assert rows(con) == expected
    op = con.execute("SELECT operation FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1").fetchone()
    assert op == ("replace",)
    # nothing legacy left: a second call has nothing to do
    assert con.execute("CALL system.rewrite_position_delete_files('db.t')").fetchone() == (0, 0, 0, 0)


def test_v3_conversion_keeps_existing_dvs_and_multi_file_deletes(con: Connection) -> None:
    """File A already has a DV (which merged the two-file delete file); B gets a DV of
    its share; the two-file Parquet file leaves."""
    con.execute(
        "CREATE TABLE db.t (id bigint, p int) USING iceberg PARTITIONED BY (p) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    con.execute("INSERT INTO db.t SELECT i, 1 FROM range(10) r(i)")
    con.execute("INSERT INTO db.t SELECT i, 1 FROM range(10, 20) r(i)")
    files = dict(con.execute("SELECT id, _file FROM db.t").fetchall())
    a, b = files[0], files[10]
    con.execute("DELETE FROM db.t WHERE id IN (1, 11, 12)")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    con.execute("DELETE FROM db.t WHERE id = 2")
    assert formats(con) == [("PARQUET", 3, None), ("PUFFIN", 2, a)]
    expected = rows(con)
    result = con.execute("CALL system.rewrite_position_delete_files('db.t', map('rewrite-all', 'true'))")
    assert result.fetchone()[:2] == (1, 1)
    assert formats(con) == sorted([("PUFFIN", 2, a), ("PUFFIN", 2, b)])
    assert rows(con) == expected == [(i, 1) for i in range(20) if i not in (1, 2, 11, 12)]


def test_v3_dv_holds_deletes_of_files_outside_the_group(con: Connection) -> None:
    """Only the small files are rewritten; the big one (also for the same data file)
    stays, and the new DV holds its deletes too: once a data file has a DV, readers ignore
    its position delete files."""
    con.execute(
        "CREATE TABLE db.t (id bigint) USING iceberg "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    con.execute("INSERT INTO db.t SELECT i FROM range(5000) r(i)")
    con.execute("DELETE FROM db.t WHERE id >= 1000 AND id % 3 = 0")  # one big delete file
    for k in range(3):
        con.execute("DELETE FROM db.t WHERE id = ?", [k])
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    expected = rows(con)
    sizes = sorted(f[2] for f in delete_files(con))
    limit = (sizes[-2] + sizes[-1]) // 2
    options = (
        f"map('min-file-size-bytes', '{limit}', 'target-file-size-bytes', '{limit}', "
        "'min-input-files', '2')"
    )
    result = con.execute(f"CALL system.rewrite_position_delete_files('db.t', {options})").fetchone()
    assert result[:2] == (3, 1)
    kept = [f for f in formats(con) if f[0] == "PARQUET"]
    assert [f[1] for f in kept] == [1333]
    assert [f[1] for f in formats(con) if f[0] == "PUFFIN"] == [1333 + 3]
    assert rows(con) == expected


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ("'db.t', map('no-such', '1')", "unknown options no-such"),
        ("'db.t', map('min-input-files', 'x')", "min-input-files takes a number"),
        ("'db.t', map('min-input-files', '0')", "must be positive"),
        ("'db.t', map('rewrite-all', 'yes')", "rewrite-all takes true or false"),
        ("'db.t', map('target-file-size-bytes', '100', 'max-file-size-bytes', '50')", "must hold"),
        ("'db.t', map(), 'nope = 1'", "nope"),
        ("'db.t', map(), 'p = '", "where"),
        ("'db.nope'", "db.nope"),
    ],
)
def test_errors(con: Connection, arguments: str, says: str) -> None:
    build(con)
    before = delete_files(con)
    with pytest.raises(iceduck.Error) as raised:
        con.execute(f"CALL system.rewrite_position_delete_files({arguments})")
    assert says in str(raised.value)
    assert delete_files(con) == before


def partition_of_deletes(con: Connection) -> list[tuple[int, int]]:
    """(partition p, delete file count) of the current snapshot."""
    return con.execute(
        "SELECT partition.p, count(*) FROM db.t.delete_files GROUP BY ALL ORDER BY 1"
    ).fetchall()


def test_where_selects_the_partitions_it_matches(con: Connection) -> None:
    build(con)
    expected = rows(con)
    assert partition_of_deletes(con) == [(0, 6), (1, 6)]
    cur = con.execute("CALL system.rewrite_position_delete_files(table => 'db.t', where => 'p = 1')")
    assert cur.fetchall()[0][:2] == (6, 1)
    assert partition_of_deletes(con) == [(0, 6), (1, 1)]
    assert rows(con) == expected
    # no partition matches: nothing to do
    none = con.execute("CALL system.rewrite_position_delete_files('db.t', map(), 'p = 5')")
    assert none.fetchall() == [(0, 0, 0, 0)]
    # a condition on other columns cannot exclude a partition: the rest is rewritten
    rest = con.execute("CALL system.rewrite_position_delete_files('db.t', map(), 'id > 1000')")
    assert rest.fetchall()[0][:2] == (6, 1)
    assert partition_of_deletes(con) == [(0, 1), (1, 1)]
    assert rows(con) == expected


def test_where_after_partition_evolution(con: Connection) -> None:
    """Files of the old spec (p) and the new (p, bucket of id) are both selected by p."""
    build(con)
    con.execute("ALTER TABLE db.t ADD PARTITION FIELD bucket(4, id)")
    con.execute("INSERT INTO db.t SELECT i, i % 2 FROM range(100, 140) r(i)")
    for k in range(3):
        con.execute("DELETE FROM db.t WHERE id IN (?, ?)", [101 + 2 * k, 103 + 2 * k])
    expected = rows(con)
    before = con.execute("SELECT count(*) FROM db.t.delete_files WHERE partition.p = 1").fetchone()[0]
    cur = con.execute(
        "CALL system.rewrite_position_delete_files('db.t', map('rewrite-all', 'true'), 'p = 1')"
    )
    assert cur.fetchall()[0][0] == before
    assert con.execute("SELECT count(*) FROM db.t.delete_files WHERE partition.p = 0").fetchone()[0] == 6
    assert rows(con) == expected


def test_v3_conversion_racing_a_delete_never_writes_a_second_dv(
    con: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DELETE committed between the conversion's read and its commit gives file A a DV
    (the two-file Parquet file stays: B has none): the conversion, about to give A a DV
    too, fails rather than add a second one, and runs cleanly on the new state."""
    con.execute(
        "CREATE TABLE db.t (id bigint, p int) USING iceberg PARTITIONED BY (p) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    con.execute("INSERT INTO db.t SELECT i, 1 FROM range(10) r(i)")
    con.execute("INSERT INTO db.t SELECT i, 1 FROM range(10, 20) r(i)")
    con.execute("DELETE FROM db.t WHERE id IN (1, 11, 12)")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('format-version' = '3')")
    other = iceduck.connect(tmp_path / "wh")
    expected = [(i, 1) for i in range(20) if i not in (1, 2, 11, 12)]
    try:
        concurrent_delete = lambda: other.execute("DELETE FROM db.t WHERE id = 2")  # noqa: E731
        before_commit(monkeypatch, position_deletes_v3, concurrent_delete)
        with pytest.raises(iceduck.OperationalError, match=r"found new delete file|only one"):
            con.execute("CALL system.rewrite_position_delete_files('db.t', map('rewrite-all', 'true'))")
    finally:
        other.close()
    assert rows(con) == expected
    assert [f[:2] for f in formats(con)] == [("PARQUET", 3), ("PUFFIN", 2)]
    result = con.execute("CALL system.rewrite_position_delete_files('db.t', map('rewrite-all', 'true'))")
    assert result.fetchone()[:2] == (1, 1)
    assert [f[:2] for f in formats(con)] == [("PUFFIN", 2), ("PUFFIN", 2)]
    assert rows(con) == expected


def test_where_is_checked_on_an_empty_table(con: Connection) -> None:
    con.execute("CREATE TABLE db.e (id bigint) USING iceberg")
    with pytest.raises(iceduck.Error, match="nope"):
        con.execute("CALL system.rewrite_position_delete_files('db.e', map(), 'nope = 1')")
    cur = con.execute("CALL system.rewrite_position_delete_files('db.e', map(), 'id = 1')")
    assert cur.fetchone() == (0, 0, 0, 0)


def test_nothing_rewritten_says_why(con: Connection) -> None:
    build(con)
    options = "map('min-input-files', '7')"
    cur = con.execute(f"CALL system.rewrite_position_delete_files('db.t', {options})")
    assert cur.fetchall() == [(0, 0, 0, 0)]
    assert cur.result is not None
    assert cur.result.notice == (
        "nothing rewritten: no file group reached min-input-files=7 (largest group: 6 files); "
        "options => map('min-input-files','6') or map('rewrite-all','true') rewrites them"
    )
    v3 = con.execute("CREATE TABLE db.v (id bigint) TBLPROPERTIES ('format-version' = '3')")
    assert v3 is not None
    con.execute("INSERT INTO db.v VALUES (1), (2)")
    con.execute("DELETE FROM db.v WHERE id = 1")
    dvs = con.execute("CALL system.rewrite_position_delete_files('db.v')").result
    assert dvs is not None and dvs.notice is not None and "no position delete file" in dvs.notice
