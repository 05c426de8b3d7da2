"""The session's write path: dispatch, results of write statements, targets, metadata columns."""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection


@pytest.fixture
def con(tmp_path: Path) -> Connection:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute(
        "CREATE TABLE db.t (id bigint, s string) "
        "TBLPROPERTIES ('format-version'='3', 'write.update.mode'='merge-on-read')"
    )
    return con


def test_a_write_statement_reports_its_rowcount_and_duckdbs_count_row(con: Connection) -> None:
    cur = con.cursor()
    cur.execute("INSERT INTO db.t SELECT i, 'x' || i FROM range(5) r(i)")
    assert cur.rowcount == 5
    assert cur.result is not None and cur.result.description is None  # the session's Result: no rows
    assert cur.result.fetchall() == []
    assert cur.description == [("Count", "BIGINT", None, None, None, None, None)]
    assert cur.fetchall() == [(5,)]  # the DB-API cursor: DuckDB's answer to a write
    cur.execute("DELETE FROM db.t WHERE id >= 3")
    assert cur.rowcount == 2
    cur.execute("CREATE NAMESPACE other")
    assert cur.rowcount == -1
    assert cur.execute("SELECT count(*) FROM db.t").fetchone() == (3,)


def test_row_lineage_columns_are_selected_by_name(con: Connection) -> None:
    con.execute("INSERT INTO db.t SELECT i, 'x' || i FROM range(5) r(i)")  # sequence number 1
    con.execute("INSERT INTO db.t VALUES (10, 'y')")  # 2
    con.execute("UPDATE db.t SET s = 'upd' WHERE id IN (1, 10)")  # 3
    query = "SELECT _row_id, _last_updated_sequence_number, id, s FROM db.t ORDER BY id"
    rows = con.execute(query).fetchall()
    # an UPDATE keeps the row's id and gives it the new sequence number (spec, "Row Lineage")
    assert rows == [(0, 1, 0, "x0"), (1, 3, 1, "upd"), (2, 1, 2, "x2"), (3, 1, 3, "x3"), (4, 1, 4, "x4"),
                    (5, 3, 10, "upd")]  # fmt: skip
    # without naming them, * has only the table's columns
    assert [d[0] for d in con.execute("SELECT * FROM db.t").description] == ["id", "s"]
    [(exists, pos)] = con.execute("SELECT _file IS NOT NULL, _pos FROM db.t WHERE id = 3").fetchall()
    assert exists and pos == 3


def test_write_targets_are_checked(con: Connection) -> None:
    con.execute("INSERT INTO db.t VALUES (1, 'a')")
    con.execute("ALTER TABLE db.t CREATE TAG v1")
    with pytest.raises(iceduck.ProgrammingError, match="tags are read-only"):
        con.execute("INSERT INTO db.t.tag_v1 VALUES (2, 'b')")
    with pytest.raises(iceduck.ProgrammingError, match="has no branch 'dev'"):
        con.execute("INSERT INTO db.t.branch_dev VALUES (2, 'b')")
    with pytest.raises(iceduck.ProgrammingError, match="metadata table"):
        con.execute("DELETE FROM db.t.snapshots")
    with pytest.raises(iceduck.ProgrammingError, match="name the namespace"):
        con.execute("CREATE TABLE t (a int)")
    con.execute("ALTER TABLE db.t CREATE BRANCH dev")
    con.execute("INSERT INTO db.t.branch_dev VALUES (2, 'b')")
    assert con.execute("SELECT count(*) FROM db.t").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM db.t VERSION AS OF 'dev'").fetchone() == (2,)


def test_a_relative_warehouse_path_gives_tables_absolute_locations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    con = iceduck.connect("relative-wh")
    con.execute("CREATE NAMESPACE a")
    con.execute("CREATE TABLE a.t (x int)")
    con.execute("INSERT INTO a.t VALUES (1)")
    [(location,)] = con.execute("SELECT file FROM a.t.metadata_log_entries LIMIT 1").fetchall()
    assert Path(location).is_absolute()
    monkeypatch.chdir("/")
    assert iceduck.connect(tmp_path / "relative-wh").execute("SELECT x FROM a.t").fetchall() == [(1,)]


@pytest.mark.parametrize("catalog_type", [None, "hadoop"], ids=["sqlite", "hadoop"])
def test_a_table_changed_by_another_connection_between_statements_is_seen(
    tmp_path: Path, catalog_type: str | None
) -> None:
    """A connection remembers the metadata it committed, but each statement still asks the
    catalog which file is current: another writer's commit in between is seen."""
    kwargs = {"catalog_type": catalog_type} if catalog_type else {}
    ours, theirs = iceduck.connect(tmp_path / "wh", **kwargs), iceduck.connect(tmp_path / "wh", **kwargs)
    ours.execute("CREATE NAMESPACE db")
    ours.execute("CREATE TABLE db.t (id bigint)")
    ours.execute("INSERT INTO db.t VALUES (1)")
    assert ours.execute("SELECT count(*) FROM db.t").fetchall() == [(1,)]
    theirs.execute("INSERT INTO db.t VALUES (2)")
    assert ours.execute("SELECT sum(id) FROM db.t").fetchall() == [(3,)]
    ours.execute("INSERT INTO db.t VALUES (3)")  # commits on their snapshot, not a stale one
    theirs.execute("ALTER TABLE db.t ADD COLUMN s string")
    ours.execute("INSERT INTO db.t VALUES (4, 'x')")
    assert theirs.execute("SELECT id, s FROM db.t ORDER BY id").fetchall() == [
        (1, None),
        (2, None),
        (3, None),
        (4, "x"),
    ]
