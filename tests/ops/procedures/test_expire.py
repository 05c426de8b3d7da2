"""``CALL system.expire_snapshots``: the retention policy, the metadata it commits, and the
files it deletes -- after every expiry the files on disk are exactly the files the
metadata still references, and every retained snapshot reads as before."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from tests.ops.procedures.expire_support import (
    FUTURE,
    disk_files,
    referenced_files,
    rows_at,
    snapshot_ids,
    table_dir,
)
from tests.support.clock import wait_until
from tests.support.faults import add_equality_deletes


def make_table(con: Connection, version: int) -> None:
    """Several snapshots of small files, merge-on-read deletes (position-delete files on v2,
    deletion vectors on v3), an update and an overwrite."""
    con.execute(
        "CREATE TABLE db.t (id bigint, s string) PARTITIONED BY (bucket(2, id)) TBLPROPERTIES "
        f"('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read')"
    )
    for i in range(4):
        con.execute("INSERT INTO db.t VALUES (?, ?), (?, ?)", [2 * i, f"a{i}", 2 * i + 1, f"b{i}"])
    con.execute("DELETE FROM db.t WHERE id = 3")
    con.execute("UPDATE db.t SET s = 'changed' WHERE id = 4")
    con.execute("DELETE FROM db.t WHERE id = 6")


def assert_exact(con: Connection, name: str = "t") -> None:
    """The table folder holds exactly the files the metadata references."""
    on_disk = disk_files(table_dir(con, "db", name))
    referenced = referenced_files(con, f"db.{name}")
    assert on_disk - referenced == set(), "unreferenced files left behind"
    assert referenced - on_disk == set(), "referenced files deleted"


def content_files(con: Connection, content: int, *, live: bool) -> set[str]:
    """Distinct paths of one kind of content file (0 data, 1 position deletes or DVs, 2
    equality deletes) in the entries of every snapshot's manifests."""
    status = " AND status <> 2" if live else ""
    query = (
        "SELECT DISTINCT data_file.file_path FROM db.t.all_entries "
        f"WHERE data_file.content = {content}{status}"
    )
    return {r[0] for r in con.execute(query).fetchall()}


def expected_content_counts(con: Connection, call: str) -> tuple[int, ...]:
    """Run ``call``; the content counts it returned, checked against the files that were
    reached before (any entry) and are no longer reached live after."""
    before = [content_files(con, c, live=False) for c in range(3)]
    counts = expire(con, call)
    after = [content_files(con, c, live=True) for c in range(3)]
    assert counts[:3] == tuple(len(b - a) for b, a in zip(before, after, strict=True))
    return counts


def expire(con: Connection, call: str, params: list[object] | None = None) -> tuple[int, ...]:
    rows = con.execute(call, params).fetchall()
    assert len(rows) == 1
    return tuple(rows[0])


@pytest.mark.parametrize("version", [2, 3])
def test_retain_last_keeps_the_newest_and_deletes_exactly_the_rest(con: Connection, version: int) -> None:
    make_table(con, version)
    ids = snapshot_ids(con, "db.t")
    before = {sid: rows_at(con, "db.t", sid) for sid in ids[-2:]}
    counts = expected_content_counts(con, f"CALL system.expire_snapshots('db.t', {FUTURE}, 2)")
    assert snapshot_ids(con, "db.t") == ids[-2:]
    for sid, rows in before.items():
        assert rows_at(con, "db.t", sid) == rows
    assert counts[0] > 0 and counts[3] > 0 and counts[4] == len(ids) - 2
    assert counts[2] == 0 and counts[5] == 0
    assert_exact(con)
    with pytest.raises(iceduck.Error, match=str(ids[0])):
        con.execute(f"SELECT * FROM db.t VERSION AS OF {ids[0]}")


@pytest.mark.parametrize("version", [2, 3])
def test_expiring_all_but_the_current_snapshot(con: Connection, version: int) -> None:
    make_table(con, version)
    con.execute("INSERT OVERWRITE db.t SELECT * FROM db.t")  # the deletes are applied: no longer needed
    current = rows_at(con, "db.t")
    delete_files = content_files(con, 1, live=False)
    counts = expected_content_counts(
        con, f"CALL system.expire_snapshots(table => 'db.t', older_than => {FUTURE})"
    )
    assert len(snapshot_ids(con, "db.t")) == 1
    assert rows_at(con, "db.t") == current
    assert_exact(con)
    assert counts[1] == len(delete_files) > 0
    # and the table takes writes and expiry again
    con.execute("INSERT INTO db.t VALUES (100, 'new')")
    expire(con, f"CALL system.expire_snapshots('db.t', {FUTURE})")
    assert rows_at(con, "db.t") == sorted([*current, (100, "new")])
    assert_exact(con)


def test_branches_and_tags_keep_their_snapshots_and_files(con: Connection) -> None:
    make_table(con, 2)
    ids = snapshot_ids(con, "db.t")
    con.execute(f"ALTER TABLE db.t CREATE TAG first AS OF VERSION {ids[0]}")
    con.execute(f"ALTER TABLE db.t CREATE BRANCH b AS OF VERSION {ids[2]}")
    con.execute("INSERT INTO db.t.branch_b VALUES (50, 'on b')")
    con.execute("DELETE FROM db.t WHERE id < 2")
    tag_rows, branch_rows, main_rows = (
        rows_at(con, "db.t", "first"),
        rows_at(con, "db.t", "b"),
        rows_at(con, "db.t"),
    )
    expire(con, f"CALL system.expire_snapshots('db.t', {FUTURE})")
    remaining = set(snapshot_ids(con, "db.t"))
    refs = dict(con.execute("SELECT name, snapshot_id FROM db.t.refs").fetchall())
    assert set(refs) == {"main", "first", "b"}
    assert remaining == set(refs.values())
    assert rows_at(con, "db.t", "first") == tag_rows
    assert rows_at(con, "db.t", "b") == branch_rows
    assert rows_at(con, "db.t") == main_rows
    assert_exact(con)


def test_equality_deletes_are_counted_once_unreachable(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint) TBLPROPERTIES ('format-version'='2')")
    con.execute("INSERT INTO db.t VALUES (1), (2), (3)")
    add_equality_deletes(con, "db", "t", "id", [2])
    assert rows_at(con, "db.t") == [(1,), (3,)]
    con.execute("INSERT OVERWRITE db.t SELECT id FROM db.t")  # rewrites: the deletes are no longer needed
    con.execute("INSERT INTO db.t VALUES (4)")
    counts = expire(con, f"CALL system.expire_snapshots('db.t', {FUTURE})")
    assert counts[2] == 1 and counts[0] == 1
    assert rows_at(con, "db.t") == [(1,), (3,), (4,)]
    assert_exact(con)


def test_snapshot_ids_expire_those_and_a_ref_head_is_refused(con: Connection) -> None:
    make_table(con, 2)
    ids = snapshot_ids(con, "db.t")
    call = "CALL system.expire_snapshots(table => 'db.t', snapshot_ids => array(?, ?))"
    expire(con, call, [ids[1], ids[3]])
    assert snapshot_ids(con, "db.t") == [i for i in ids if i not in (ids[1], ids[3])]
    assert_exact(con)
    con.execute(f"ALTER TABLE db.t CREATE TAG keep AS OF VERSION {ids[0]}")
    with pytest.raises(iceduck.Error, match=rf"Cannot expire {ids[0]}. Still referenced by refs: \[keep\]"):
        con.execute(f"CALL system.expire_snapshots(table => 'db.t', snapshot_ids => array({ids[0]}))")
    with pytest.raises(iceduck.Error, match=rf"Cannot expire {ids[-1]}. Still referenced by refs: \[main\]"):
        con.execute(f"CALL system.expire_snapshots(table => 'db.t', snapshot_ids => array({ids[-1]}))")
    assert snapshot_ids(con, "db.t")[0] == ids[0]


def test_table_properties_set_the_policy_and_old_refs_expire(con: Connection) -> None:
    make_table(con, 2)
    ids = snapshot_ids(con, "db.t")
    con.execute(f"ALTER TABLE db.t CREATE TAG old AS OF VERSION {ids[0]}")
    con.execute(f"ALTER TABLE db.t CREATE BRANCH young AS OF VERSION {ids[-1]} RETAIN 30 DAYS")
    con.execute(
        "ALTER TABLE db.t SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms'='1', "
        "'history.expire.min-snapshots-to-keep'='3', 'history.expire.max-ref-age-ms'='1')"
    )
    newest = con.execute("SELECT max(committed_at) FROM db.t.snapshots").fetchone()[0]
    # ages of 1 ms: wait for the wall clock (what expire reads) to pass the newest snapshot
    wait_until(lambda: time.time() * 1000 > newest.timestamp() * 1000 + 1, 5, "1 ms to pass")
    expire(con, "CALL system.expire_snapshots('db.t')")
    refs = {r[0] for r in con.execute("SELECT name FROM db.t.refs").fetchall()}
    assert refs == {"main", "young"}  # the tag aged out; main never does; young keeps its own age
    assert snapshot_ids(con, "db.t") == ids[-3:]
    assert_exact(con)


def test_a_branch_retention_overrides_the_table_default(con: Connection) -> None:
    make_table(con, 2)
    ids = snapshot_ids(con, "db.t")
    con.execute(
        f"ALTER TABLE db.t CREATE BRANCH b AS OF VERSION {ids[3]} WITH SNAPSHOT RETENTION 3 SNAPSHOTS"
    )
    expire(con, f"CALL system.expire_snapshots('db.t', {FUTURE}, 1)")
    assert snapshot_ids(con, "db.t") == [ids[1], ids[2], ids[3], ids[-1]]
    assert_exact(con)


def test_nothing_to_expire_commits_nothing(con: Connection) -> None:
    make_table(con, 2)
    metadata_before = con.execute("SELECT count(*) FROM db.t.metadata_log_entries").fetchall()
    assert expire(con, "CALL system.expire_snapshots('db.t')") == (0, 0, 0, 0, 0, 0)
    assert con.execute("SELECT count(*) FROM db.t.metadata_log_entries").fetchall() == metadata_before


def test_clean_expired_metadata_removes_unused_specs_and_schemas(con: Connection) -> None:
    make_table(con, 2)
    con.execute("ALTER TABLE db.t ADD COLUMN n int")
    con.execute("ALTER TABLE db.t DROP PARTITION FIELD bucket(2, id)")
    con.execute("INSERT OVERWRITE db.t SELECT * FROM db.t")
    # the overwrite's own manifest list still lists its deleted entries (in spec 0); the
    # next commit no longer carries them, so spec 0 is then unused
    con.execute("INSERT INTO db.t VALUES (99, 'x', 1)")
    current = rows_at(con, "db.t")
    expire(
        con,
        "CALL system.expire_snapshots(table => 'db.t', "
        f"older_than => {FUTURE}, clean_expired_metadata => true)",
    )
    metadata = con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata
    assert [s.spec_id for s in metadata.partition_specs] == [metadata.default_spec_id]
    assert [s.schema_id for s in metadata.schemas] == [metadata.current_schema_id]
    assert rows_at(con, "db.t") == current
    assert_exact(con)


def test_without_clean_expired_metadata_specs_and_schemas_stay(con: Connection) -> None:
    make_table(con, 2)
    con.execute("ALTER TABLE db.t ADD COLUMN n int")
    con.execute("INSERT OVERWRITE db.t SELECT * FROM db.t")
    expire(con, f"CALL system.expire_snapshots('db.t', {FUTURE})")
    metadata = con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata
    assert len(metadata.schemas) == 2


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (f"CALL system.expire_snapshots('db.t', {FUTURE}, 0)", "must be at least 1, cannot be: 0"),
        (
            "CALL system.expire_snapshots(table => 'db.t', max_concurrent_deletes => 0)",
            "should have value > 0",
        ),
        ("CALL system.expire_snapshots('db.nope')", "db.nope"),
        ("CALL system.expire_snapshots('db.t', 'not a time')", "not a time"),
    ],
)
def test_bad_arguments_name_the_problem(con: Connection, call: str, says: str) -> None:
    make_table(con, 2)
    with pytest.raises(iceduck.Error, match=says):
        con.execute(call)


def test_gc_disabled_refuses(con: Connection) -> None:
    make_table(con, 2)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('gc.enabled'='false')")
    with pytest.raises(iceduck.Error, match="GC is disabled"):
        con.execute(f"CALL system.expire_snapshots('db.t', {FUTURE})")
    assert len(snapshot_ids(con, "db.t")) == 7


def test_result_columns_are_sparks(con: Connection) -> None:
    make_table(con, 2)
    cur = con.execute("CALL system.expire_snapshots('db.t')")
    assert [(d[0], d[1]) for d in cur.description] == [
        ("deleted_data_files_count", "BIGINT"),
        ("deleted_position_delete_files_count", "BIGINT"),
        ("deleted_equality_delete_files_count", "BIGINT"),
        ("deleted_manifest_files_count", "BIGINT"),
        ("deleted_manifest_lists_count", "BIGINT"),
        ("deleted_statistics_files_count", "BIGINT"),
    ]


def test_a_v1_table(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint) TBLPROPERTIES ('format-version'='1')")
    for i in range(3):
        con.execute("INSERT INTO db.t VALUES (?)", [i])
    con.execute("INSERT OVERWRITE db.t SELECT id * 10 FROM db.t")
    ids = snapshot_ids(con, "db.t")
    counts = expected_content_counts(con, f"CALL system.expire_snapshots('db.t', {FUTURE})")
    assert counts[0] == 3 and counts[4] == len(ids) - 1
    assert rows_at(con, "db.t") == [(0,), (10,), (20,)]
    assert_exact(con)


def test_an_unreadable_retained_manifest_deletes_nothing(con: Connection) -> None:
    make_table(con, 2)
    root = table_dir(con, "db", "t")
    current_manifests = {r[0] for r in con.execute("SELECT path FROM db.t.manifests").fetchall()}
    damaged = sorted(current_manifests)[0]
    Path(damaged).write_bytes(b"not avro")
    files_before = disk_files(root)
    with pytest.raises(iceduck.Error, match="were expired, but no file was deleted"):
        con.execute(f"CALL system.expire_snapshots('db.t', {FUTURE})")
    assert len(snapshot_ids(con, "db.t")) == 1  # the metadata change landed (a new metadata file) ...
    assert files_before <= disk_files(root)  # ... and no file went


def test_a_commit_racing_the_expiry_is_kept_with_its_files(con: Connection) -> None:
    """The expiry decided on a table that then changed: the commit loop re-decides on the
    new state, so the new snapshot (main's head now) and its files stay."""
    from iceduck.ops.procedures.expire import expire as run_expiry
    from iceduck.txn.expire import ExpireRequest
    from tests.ops.ddl_support import op_context

    make_table(con, 2)
    stale = con.session.catalog.load_table(TableIdentifier(("db",), "t"))
    con.execute("INSERT INTO db.t VALUES (77, 'raced')")
    raced = snapshot_ids(con, "db.t")[-1]
    expected = rows_at(con, "db.t")
    now = int(time.time() * 1000)
    request = ExpireRequest(now_ms=now, older_than_ms=now + 10_000)
    run_expiry(op_context(con.session), stale, request)
    assert snapshot_ids(con, "db.t") == [raced]
    assert rows_at(con, "db.t") == expected
    assert_exact(con)


def test_old_metadata_files_follow_the_tables_settings(con: Connection) -> None:
    """Metadata JSON files are not the expiry's: the commit drops those that fall out of the
    log when ``write.metadata.delete-after-commit.enabled`` says so, as every commit does."""
    make_table(con, 2)
    con.execute(
        "ALTER TABLE db.t SET TBLPROPERTIES ('write.metadata.delete-after-commit.enabled'='true', "
        "'write.metadata.previous-versions-max'='2')"
    )
    con.execute(f"CALL system.expire_snapshots('db.t', {FUTURE})")
    metadata_files = {p for p in disk_files(table_dir(con, "db", "t")) if p.endswith(".metadata.json")}
    assert len(metadata_files) == 3  # the current one and the two the log keeps
    assert_exact(con)
