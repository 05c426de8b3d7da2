"""``table_changes(...)``: the rows each snapshot inserted and deleted, checked against the
multiset difference of consecutive snapshots' full contents, for every kind of history."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UserError


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    yield con
    con.close()


def _snapshots(con: Connection, table: str = "db.t") -> list[tuple[int, str]]:
    """(snapshot id, operation) of the current ancestry, oldest first."""
    rows = con.execute(
        f"SELECT h.snapshot_id, s.operation FROM {table}.history h "
        f"JOIN {table}.snapshots s USING (snapshot_id) WHERE h.is_current_ancestor ORDER BY h.made_current_at"
    ).fetchall()
    return [(int(a), str(b)) for a, b in rows]


def _contents(con: Connection, snapshot: int | None) -> Counter:
    if snapshot is None:
        return Counter()
    return Counter(con.execute(f"SELECT * FROM db.t VERSION AS OF {snapshot}").fetchall())


def _expected(con: Connection) -> list[tuple]:
    """Per non-replace snapshot: the rows it deleted and inserted, by multiset difference."""
    out = []
    parent = None
    ordinal = 0
    for snapshot, operation in _snapshots(con):
        if operation != "replace":
            before, after = _contents(con, parent), _contents(con, snapshot)
            out += [(*r, "DELETE", ordinal, snapshot) for r in (before - after).elements()]
            out += [(*r, "INSERT", ordinal, snapshot) for r in (after - before).elements()]
            ordinal += 1
        parent = snapshot
    return sorted(out, key=repr)


def _changes(con: Connection, args: str = "NULL, NULL") -> list[tuple]:
    return sorted(con.execute(f"SELECT * FROM table_changes('db.t', {args})").fetchall(), key=repr)


HISTORIES = {
    "appends": [
        "INSERT INTO db.t VALUES (5, 'e', 'y')",
        "INSERT INTO db.t SELECT i, 'n', 'x' FROM range(20, 25) r(i)",
    ],
    "copy-on-write": [
        "DELETE FROM db.t WHERE id = 2",
        "UPDATE db.t SET v = 'C' WHERE id = 3",
        "MERGE INTO db.t t USING (SELECT 1 AS id, 'M' AS v, 'x' AS p UNION ALL SELECT 7, 'new', 'y') s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    ],
    "merge-on-read": [
        "ALTER TABLE db.t SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')",
        "DELETE FROM db.t WHERE id = 2",
        "UPDATE db.t SET v = 'C' WHERE id = 3",
        "DELETE FROM db.t WHERE id = 3",
    ],
    "overwrite and compaction": [
        "INSERT OVERWRITE db.t SELECT 10, 'o', 'x'",
        "INSERT INTO db.t VALUES (11, 'p', 'x'), (11, 'p', 'x')",
        "CALL system.rewrite_data_files(table => 'db.t', options => map('rewrite-all', 'true'))",
        "DELETE FROM db.t WHERE v = 'p'",
    ],
    "upserts": [
        "ALTER TABLE db.t SET IDENTIFIER FIELDS id, p",
        "INSERT OR REPLACE INTO db.t VALUES (1, 'A', 'x'), (8, 'h', 'y')",
        "ALTER TABLE db.t SET TBLPROPERTIES ('write.upsert.enabled'='true')",
        "DELETE FROM db.t WHERE (id, p) IN ((3, 'y'), (8, 'y'))",
        "INSERT INTO db.t VALUES (3, 'again', 'y')",
    ],
}


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("history", sorted(HISTORIES))
def test_changes_are_the_differences_of_the_snapshots(con: Connection, history: str, version: int) -> None:
    con.execute(
        "CREATE TABLE db.t (id INT NOT NULL, v STRING, p STRING NOT NULL) PARTITIONED BY (p) "
        f"TBLPROPERTIES ('format-version'='{version}')"
    )
    con.execute("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), (4, 'd', 'y')")
    for statement in HISTORIES[history]:
        con.execute(statement)
    assert _changes(con) == _expected(con)


def test_bounds_snapshot_ids_refs_and_times(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT, v STRING)")
    for i in range(4):
        con.execute(f"INSERT INTO db.t VALUES ({i}, 'v{i}')")
    ids = [s for s, _ in _snapshots(con)]
    assert [r[0] for r in _changes(con, f"{ids[0]}, {ids[2]}")] == [1, 2]  # start exclusive, end inclusive
    assert [r[0] for r in _changes(con, f"{ids[1]}")] == [2, 3]  # end: the current snapshot
    con.execute(f"ALTER TABLE db.t CREATE TAG first AS OF VERSION {ids[0]}")
    assert [r[0] for r in _changes(con, "'first', NULL")] == [1, 2, 3]
    times = [
        t for (t,) in con.execute("SELECT committed_at FROM db.t.snapshots ORDER BY committed_at").fetchall()
    ]
    start = con.execute(
        "SELECT min(committed_at) FROM db.t.snapshots WHERE snapshot_id = ?", [ids[2]]
    ).fetchall()
    assert start[0][0] in times
    by_time = con.execute(
        f"SELECT id FROM table_changes('db.t', TIMESTAMPTZ '{start[0][0].isoformat()}') ORDER BY id"
    ).fetchall()
    assert [r[0] for r in by_time][-1] == 3 and 0 not in [r[0] for r in by_time]
    assert _changes(con, f"{ids[3]}, {ids[3]}") == []


def test_updates_and_net_changes(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT NOT NULL, v STRING)")
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    con.execute("UPDATE db.t SET v = 'B' WHERE id = 2")
    con.execute("DELETE FROM db.t WHERE id = 1")
    con.execute("INSERT INTO db.t VALUES (1, 'a')")
    rows = con.execute(
        "SELECT id, v, _change_type, _change_ordinal FROM table_changes('db.t', NULL, NULL, "
        "identifier_columns := ['id']) ORDER BY _change_ordinal, _change_type"
    ).fetchall()
    assert rows == [
        (1, "a", "INSERT", 0),
        (2, "b", "INSERT", 0),
        (2, "B", "UPDATE_AFTER", 1),
        (2, "b", "UPDATE_BEFORE", 1),
        (1, "a", "DELETE", 2),
        (1, "a", "INSERT", 3),
    ]
    net = con.execute(
        "SELECT id, v, _change_type, _change_ordinal "
        "FROM table_changes('db.t', NULL, NULL, net_changes := true) ORDER BY id"
    ).fetchall()
    # Spark's net changes: the DELETE rewrote the file holding (2, 'B') and copied it (a
    # carry-over at ordinal 2), so its open change is the copy's
    assert net == [(1, "a", "INSERT", 3), (2, "B", "INSERT", 2)]
    with pytest.raises(UserError, match="Not support net changes with update images"):
        con.execute(
            "SELECT * FROM table_changes('db.t', NULL, NULL, compute_updates := true, net_changes := true)"
        )
    with pytest.raises(UserError, match="identifier columns are not set"):
        con.execute("SELECT * FROM table_changes('db.t', NULL, NULL, compute_updates := true)")


def test_two_deletes_of_one_identifier_is_sparks_error(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT, v STRING)")
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (1, 'b')")
    con.execute("DELETE FROM db.t WHERE id = 1")
    with pytest.raises(iceduck.DatabaseError, match="multiple rows with the same identifier fields"):
        con.execute(
            "SELECT * FROM table_changes('db.t', NULL, NULL, identifier_columns := ['id'])"
        ).fetchall()


def test_a_snapshot_reads_only_its_own_files(con: Connection, tmp_path: Path) -> None:
    con.execute(
        "CREATE TABLE db.t (id INT, v STRING) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    for i in range(5):
        con.execute(f"INSERT INTO db.t SELECT i, 'v' FROM range({i * 100}, {i * 100 + 100}) r(i)")
    con.execute("DELETE FROM db.t WHERE id = 450")  # a DV on the last file
    last_two = [s for s, _ in _snapshots(con)][-3]
    data = sorted((tmp_path / "wh" / "db" / "t" / "data").glob("*.parquet"), key=lambda p: p.stat().st_mtime)
    for old in data[:-1]:
        old.unlink()  # only the last data file (and the DV) may be read
    rows = con.execute(
        f"SELECT id, _change_type FROM table_changes('db.t', {last_two}) ORDER BY ALL"
    ).fetchall()
    assert (450, "DELETE") in rows and len(rows) == 101


def test_errors_name_the_problem(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT)")
    con.execute("INSERT INTO db.t VALUES (1)")
    con.execute("INSERT INTO db.t VALUES (2)")
    ids = [s for s, _ in _snapshots(con)]
    with pytest.raises(NotFoundError, match=r"db\.nope"):
        con.execute("SELECT * FROM table_changes('db.nope')")
    with pytest.raises(UserError, match="not a parent ancestor"):
        con.execute(f"SELECT * FROM table_changes('db.t', {ids[1]}, {ids[0]})")
    with pytest.raises(NotFoundError, match="snapshot 42"):
        con.execute("SELECT * FROM table_changes('db.t', 42)")
    with pytest.raises(NotFoundError, match="no branch or tag named 'nope'"):
        con.execute("SELECT * FROM table_changes('db.t', 'nope')")
    with pytest.raises(UserError, match="no argument colour"):
        con.execute("SELECT * FROM table_changes('db.t', colour := 1)")
    with pytest.raises(UserError, match="names the table"):
        con.execute("SELECT * FROM table_changes(1)")


def test_empty_table(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT, v STRING)")
    rows = con.execute("SELECT * FROM table_changes('db.t')")
    assert rows.fetchall() == []
    assert [d[0] for d in rows.description] == [
        "id",
        "v",
        "_change_type",
        "_change_ordinal",
        "_commit_snapshot_id",
    ]
