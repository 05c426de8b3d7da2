"""``CALL system.rewrite_data_files``: bin-pack compaction applying deletes, on v2 and v3
tables, partitioned (identity, bucket) and not, with evolved schemas and specs.

Every test compares the table's full result set before and after: a compaction must
never change a row (v3: nor its ``_row_id``)."""

from __future__ import annotations

from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from tests.support.faults import add_equality_deletes

PARTITIONING = {
    "identity": "PARTITIONED BY (p)",
    "bucket": "PARTITIONED BY (bucket(3, id))",
    "unpartitioned": "",
}


def make_table(
    con: Connection, version: int, partitioning: str = "", inserts: int = 6, rows: int = 100
) -> None:
    """db.t: ``inserts`` small files per partition (one INSERT each), merge-on-read."""
    con.execute(
        f"CREATE TABLE db.t (id bigint, name string, p int) USING iceberg {partitioning} "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read', "
        "'write.update.mode' = 'merge-on-read')"
    )
    for i in range(inserts):
        first, last = i * rows, (i + 1) * rows
        con.execute(
            f"INSERT INTO db.t SELECT i, 'n' || i, CAST(i % 2 AS int) FROM range({first}, {last}) r(i)"
        )


def table_rows(con: Connection, table: str = "db.t") -> list[tuple[Any, ...]]:
    return sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def lineage(con: Connection) -> list[tuple[Any, ...]]:
    return sorted(con.execute("SELECT _row_id, id FROM db.t").fetchall())


def count(con: Connection, sql: str) -> int:
    return int(con.execute(sql).fetchall()[0][0])


def data_files(con: Connection) -> list[str]:
    return sorted(r[0] for r in con.execute("SELECT file_path FROM db.t.data_files").fetchall())


def call(con: Connection, args: str) -> tuple[int, ...]:
    (row,) = con.execute(f"CALL system.rewrite_data_files({args})").fetchall()
    return tuple(row)


def last_operation(con: Connection) -> str:
    return str(
        con.execute("SELECT operation FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1").fetchall()[0][
            0
        ]
    )


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("layout", sorted(PARTITIONING))
def test_binpack_applies_deletes_and_keeps_every_row(con: Connection, version: int, layout: str) -> None:
    make_table(con, version, PARTITIONING[layout])
    con.execute("DELETE FROM db.t WHERE id % 10 = 3")
    con.execute("UPDATE db.t SET name = 'changed' WHERE id % 7 = 0")
    before, ids_before = table_rows(con), lineage(con) if version >= 3 else None
    files_before = count(con, "SELECT count(*) FROM db.t.data_files")
    deletes_before = count(con, "SELECT count(*) FROM db.t.delete_files")
    bytes_before = count(con, "SELECT sum(file_size_in_bytes) FROM db.t.data_files")
    partitions = (
        1 if not PARTITIONING[layout] else count(con, "SELECT count(DISTINCT partition) FROM db.t.data_files")
    )
    assert deletes_before > 0

    rewritten, added, rewritten_bytes, failed, removed = call(con, "'db.t'")

    assert (rewritten, rewritten_bytes, failed, removed) == (files_before, bytes_before, 0, deletes_before)
    assert added == partitions == count(con, "SELECT count(*) FROM db.t.data_files")
    assert count(con, "SELECT count(*) FROM db.t.delete_files") == 0
    assert table_rows(con) == before
    if version >= 3:  # rows keep their lineage ids
        assert lineage(con) == ids_before
    assert last_operation(con) == "replace"
    # nothing left to do: a second call rewrites nothing and commits nothing
    snapshots = count(con, "SELECT count(*) FROM db.t.snapshots")
    assert call(con, "'db.t'") == (0, 0, 0, 0, 0)
    assert count(con, "SELECT count(*) FROM db.t.snapshots") == snapshots


@pytest.mark.parametrize("version", [2, 3])
def test_equality_deletes_are_applied_and_dropped(con: Connection, version: int) -> None:
    make_table(con, version)
    add_equality_deletes(con, "db", "t", "id", [5, 105, 205, 999999])
    con.execute("DELETE FROM db.t WHERE id = 6")
    before = table_rows(con)
    assert 5 not in {r[0] for r in before} and len(before) == 600 - 4

    result = call(con, "table => 'db.t'")

    assert (result[0], result[4]) == (6, 2)  # the equality delete file and the DV / position delete file
    assert table_rows(con) == before
    assert count(con, "SELECT count(*) FROM db.t.delete_files") == 0


@pytest.mark.parametrize("version", [2, 3])
def test_evolved_schema_and_spec_files_move_to_the_current_spec(con: Connection, version: int) -> None:
    make_table(con, version, inserts=3)
    con.execute("ALTER TABLE db.t ADD COLUMN score double")
    con.execute("INSERT INTO db.t SELECT i, 'm' || i, 1, i / 2 FROM range(1000, 1100) r(i)")
    con.execute("ALTER TABLE db.t RENAME COLUMN name TO label")
    con.execute("ALTER TABLE db.t ADD PARTITION FIELD bucket(4, id)")
    con.execute("INSERT INTO db.t SELECT i, 'k' || i, 0, i * 1.5 FROM range(2000, 2050) r(i)")
    con.execute("DELETE FROM db.t WHERE id % 9 = 1")
    before = table_rows(con)
    specs = {r[0] for r in con.execute("SELECT spec_id FROM db.t.data_files").fetchall()}
    assert len(specs) == 2

    # the old-spec files are candidates even though only 1 to 3 share a partition
    call(con, "'db.t'")

    assert table_rows(con) == before
    current = count(con, "SELECT max(spec_id) FROM db.t.data_files")
    assert {r[0] for r in con.execute("SELECT spec_id FROM db.t.data_files").fetchall()} == {current}
    # the old-spec group became one file per bucket; the four current-spec files (one per
    # bucket, alone in their partition) were no candidates
    assert count(con, "SELECT count(*) FROM db.t.data_files") == 8
    # rewrite-all: one file per bucket, and no delete left
    call(con, "table => 'db.t', options => map('rewrite-all', 'true')")
    assert table_rows(con) == before
    assert count(con, "SELECT count(*) FROM db.t.data_files") == 4
    assert count(con, "SELECT count(*) FROM db.t.delete_files") == 0


def test_where_selects_files_by_partition_and_metrics(con: Connection) -> None:
    make_table(con, 3, PARTITIONING["identity"])
    before = table_rows(con)
    p0 = {r[0] for r in con.execute("SELECT file_path FROM db.t.data_files WHERE partition.p = 0").fetchall()}

    result = call(con, "table => 'db.t', where => 'p = 1 and name != \"zzz\"'")  # Spark's "string"

    assert result[:2] == (6, 1)
    assert table_rows(con) == before
    assert p0 <= set(data_files(con))  # partition 0 untouched
    assert count(con, "SELECT count(*) FROM db.t.data_files") == 7
    # metrics: files whose id range cannot match are no candidates
    con.execute("CREATE TABLE db.u (id bigint) TBLPROPERTIES ('format-version' = '2')")
    for i in range(6):
        con.execute(f"INSERT INTO db.u SELECT * FROM range({i * 10}, {i * 10 + 10})")
    assert call(con, "table => 'db.u', where => 'id >= 20', options => map('min-input-files', '2')")[:2] == (
        4,
        1,
    )
    assert count(con, "SELECT count(*) FROM db.u.data_files") == 3


def test_min_input_files_and_delete_thresholds(con: Connection) -> None:
    make_table(con, 3, PARTITIONING["identity"], inserts=2)
    # two small files per partition: fewer than min-input-files (5), nothing is worth it
    assert call(con, "'db.t'") == (0, 0, 0, 0, 0)
    assert call(con, "table => 'db.t', options => map('min-input-files', '2')")[:2] == (4, 2)
    con.execute("DELETE FROM db.t WHERE id = 1")  # one DV on the one p = 1 file
    # a single file with a delete: rewritten alone when delete-file-threshold says so
    result = call(con, "table => 'db.t', options => map('delete-file-threshold', '1')")
    assert (result[0], result[1], result[3], result[4]) == (1, 1, 0, 1)
    assert count(con, "SELECT count(*) FROM db.t.delete_files") == 0
    assert count(con, "SELECT count(*) FROM db.t WHERE id = 1") == 0


def test_rewrite_all_and_a_target_size_make_several_files(con: Connection) -> None:
    make_table(con, 2, inserts=2, rows=5000)
    before = table_rows(con)
    total = count(con, "SELECT sum(file_size_in_bytes) FROM db.t.data_files")
    target = total // 3
    result = call(
        con,
        f"table => 'db.t', options => map('rewrite-all', 'true', 'target-file-size-bytes', '{target}', "
        f"'min-file-size-bytes', '0')",
    )
    assert result[0] == 2 and result[1] >= 2
    assert table_rows(con) == before


@pytest.mark.parametrize("version", [2, 3])
def test_partial_progress_commits_groups_separately(con: Connection, version: int) -> None:
    make_table(con, version, PARTITIONING["bucket"])
    before = table_rows(con)
    snapshots = count(con, "SELECT count(*) FROM db.t.snapshots")
    result = call(
        con,
        "table => 'db.t', "
        "options => map('partial-progress.enabled', 'true', 'partial-progress.max-commits', '2')",
    )
    assert result[:2] == (18, 3) and result[3] == 0
    # three groups in at most two commits
    assert count(con, "SELECT count(*) FROM db.t.snapshots") == snapshots + 2
    assert table_rows(con) == before


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ("table => 'db.t', options => map('no-such', '1')", "cannot use options ['no-such']"),
        ("'db.t', 'spread'", "unsupported strategy 'spread'"),
        ("'db.t', 'binpack', 'id'", "cannot set a sort_order with the binpack strategy"),
        ("'db.t', 'sort'", "table's sort order is unsorted and no sort_order was given"),
        ("table => 'db.t', sort_order => 'nope DESC'", "nope"),
        ("table => 'db.t', sort_order => 'zorder(id) , name'", "cannot be combined"),
        ("table => 'db.t', where => 'id >'", "cannot read rewrite_data_files' where"),
        ("table => 'db.t', where => 'nope = 1'", "rewrite_data_files' where 'nope = 1'"),
        (
            "table => 'db.t', options => map('min-input-files', 'x')",
            "'min-input-files' must be a whole number",
        ),
        (
            "table => 'db.t', options => map('target-file-size-bytes', '100', 'min-file-size-bytes', '200')",
            "must be less",
        ),
        ("table => 'db.t', options => map('rewrite-all', 'yes')", "true or false"),
        ("table => 'db.t', options => map('partial-progress.max-commits', '0')", "must be > 0"),
        ("'db.nope'", "db.nope"),
    ],
)
def test_errors_name_the_problem(con: Connection, args: str, says: str) -> None:
    make_table(con, 2, inserts=1)
    with pytest.raises(iceduck.Error) as raised:
        call(con, args)
    assert says in str(raised.value)


def test_an_empty_table_has_nothing_to_rewrite(con: Connection) -> None:
    con.execute("CREATE TABLE db.e (id bigint)")
    assert call(con, "'db.e'") == (0, 0, 0, 0, 0)


def test_progress_is_reported_per_group(con: Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell's progress bar: the share of the input bytes rewritten, group by group."""
    from iceduck.session.session import Session

    make_table(con, 2, PARTITIONING["bucket"])
    reported: list[float] = []
    real = Session._report
    monkeypatch.setattr(
        Session, "_report", lambda self, duck, percent: (reported.append(percent), real(self, duck, percent))
    )
    call(con, "'db.t'")
    assert len(reported) == 3 and reported == sorted(reported) and reported[-1] == 100.0


def test_nothing_rewritten_says_why(con: Connection) -> None:
    """Spark's columns stay all zeros; the result's notice (printed by the shell under the
    rows) names the rule that held the files back and the option that rewrites them."""
    make_table(con, 2, PARTITIONING["identity"], inserts=3)
    cur = con.execute("CALL system.rewrite_data_files('db.t')")
    assert cur.fetchall() == [(0, 0, 0, 0, 0)]
    assert [d[0] for d in cur.description] == [
        "rewritten_data_files_count", "added_data_files_count", "rewritten_bytes_count",
        "failed_data_files_count", "removed_delete_files_count",
    ]  # fmt: skip
    assert cur.result is not None
    assert cur.result.notice == (
        "nothing rewritten: no file group reached min-input-files=5 (largest group: 3 files); "
        "options => map('min-input-files','3') or map('rewrite-all','true') rewrites them"
    )
    three = "table => 'db.t', options => map('min-input-files','3')"
    done = con.execute(f"CALL system.rewrite_data_files({three})")
    assert done.fetchone()[:2] == (6, 2)
    assert done.result is not None and done.result.notice is None
    lone = con.execute("CALL system.rewrite_data_files('db.t')").result
    assert lone is not None and lone.notice is not None
    assert "no partition has more than one file" in lone.notice and "rewrite-all" in lone.notice


def test_an_empty_table_says_so(con: Connection) -> None:
    con.execute("CREATE TABLE db.e (id bigint)")
    result = con.execute("CALL system.rewrite_data_files('db.e')").result
    assert result is not None and result.notice == "nothing rewritten: the table has no snapshot"
