"""Write-audit-publish end to end: ``SET iceduck.wap_id`` stages INSERT/DELETE/UPDATE/MERGE
snapshots (summary ``wap.id``, main not moved), auditing reads them by ``VERSION AS OF``,
``publish_changes`` cherry-picks them onto main; ``SET iceduck.wap_branch`` sends writes
(and reads) to a branch, published with ``fast_forward``. Only tables with
``write.wap.enabled=true`` are affected, as in Spark. On v2 and v3, merge-on-read deletes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UserError, ValidationError
from iceduck.spec.table_metadata import TableMetadata


def metadata(con: Connection) -> TableMetadata:
    return con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata


def rows(con: Connection, at: str = "") -> list[tuple[Any, ...]]:
    return sorted(con.execute(f"SELECT id, cat FROM db.t {at}").fetchall())


def staged(con: Connection, wap_id: str) -> int:
    [snapshot] = [s for s in metadata(con).snapshots if s.summary.get("wap.id") == wap_id]
    return snapshot.snapshot_id


@pytest.fixture(params=[2, 3])
def con(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    modes = ", ".join(f"'write.{op}.mode'='merge-on-read'" for op in ("delete", "update", "merge"))
    con.execute(
        "CREATE TABLE db.t (id bigint, cat string) PARTITIONED BY (cat) TBLPROPERTIES "
        f"('format-version'='{request.param}', 'write.wap.enabled'='true', {modes})"
    )
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (2, 'a'), (3, 'b')")
    yield con
    con.close()


BASE = [(1, "a"), (2, "a"), (3, "b")]


def test_stage_audit_publish_an_insert(con: Connection) -> None:
    main = metadata(con).current_snapshot_id
    log = metadata(con).snapshot_log
    con.execute("SET iceduck.wap_id = 'nightly-1'")
    con.execute("INSERT INTO db.t VALUES (4, 'b'), (5, 'c')")
    meta = metadata(con)
    sid = staged(con, "nightly-1")
    # staged: in the snapshots, parent = main's head, main and the snapshot log unchanged
    assert meta.current_snapshot_id == main and meta.snapshot_log == log
    assert meta.snapshot_by_id(sid).parent_snapshot_id == main and set(meta.refs) == {"main"}
    assert rows(con) == BASE
    assert rows(con, f"VERSION AS OF {sid}") == [*BASE, (4, "b"), (5, "c")]  # the audit
    con.execute("RESET iceduck.wap_id")
    cur = con.execute("CALL system.publish_changes('db.t', 'nightly-1')")
    assert [d[0] for d in cur.description] == ["source_snapshot_id", "current_snapshot_id"]
    assert cur.fetchall() == [(sid, sid)]
    assert rows(con) == [*BASE, (4, "b"), (5, "c")]  # a fast-forward: main is the staged snapshot
    with pytest.raises(ValidationError, match="wap id that was published already: nightly-1"):
        con.execute("CALL system.publish_changes('db.t', 'nightly-1')")


def test_publish_over_newer_commits_reapplies_the_append(con: Connection) -> None:
    con.execute("SET spark.wap.id = 'w2'")  # Spark's spelling
    con.execute("INSERT INTO db.t VALUES (10, 'c')")
    con.execute("RESET spark.wap.id")
    con.execute("INSERT INTO db.t VALUES (11, 'a')")  # main moves on meanwhile
    head = metadata(con).current_snapshot_id
    sid = staged(con, "w2")
    [(source, new)] = con.execute("CALL system.publish_changes(wap_id => 'w2', table => 'db.t')").fetchall()
    assert (
        source == sid
        and new not in (head, sid)
        and metadata(con).snapshot_by_id(new).parent_snapshot_id == head
    )
    summary = metadata(con).snapshot_by_id(new).summary
    assert summary["published-wap-id"] == "w2" and summary["source-snapshot-id"] == str(sid)
    assert rows(con) == [*BASE, (10, "c"), (11, "a")]
    with pytest.raises(ValidationError, match="published already: w2"):
        con.execute("CALL system.publish_changes('db.t', 'w2')")
    with pytest.raises(ValidationError, match="published already: w2"):
        con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [sid])


def test_staged_deletes_updates_and_merges(con: Connection) -> None:
    main = metadata(con).current_snapshot_id
    con.execute("SET iceduck.wap_id = 'd'")
    con.execute("DELETE FROM db.t WHERE id = 2")
    con.execute("SET iceduck.wap_id = 'u'")
    con.execute("UPDATE db.t SET cat = 'z' WHERE id = 3")
    con.execute("SET iceduck.wap_id = 'm'")
    con.execute("MERGE INTO db.t USING (SELECT 1 AS id) s ON db.t.id = s.id WHEN MATCHED THEN DELETE")
    con.execute("RESET iceduck.wap_id")
    assert metadata(con).current_snapshot_id == main and rows(con) == BASE
    # each staged on main's head, seeing only the published state
    assert rows(con, f"VERSION AS OF {staged(con, 'd')}") == [(1, "a"), (3, "b")]
    assert rows(con, f"VERSION AS OF {staged(con, 'u')}") == [(1, "a"), (2, "a"), (3, "z")]
    assert rows(con, f"VERSION AS OF {staged(con, 'm')}") == [(2, "a"), (3, "b")]
    # a staged delete can only be published as a fast-forward
    assert con.execute("CALL system.publish_changes('db.t', 'd')").fetchall() == [(staged(con, "d"),) * 2]
    assert rows(con) == [(1, "a"), (3, "b")]
    with pytest.raises(ValidationError, match="not append, dynamic overwrite, or fast-forward"):
        con.execute("CALL system.publish_changes('db.t', 'u')")


def test_wap_id_without_write_wap_enabled_commits_normally(con: Connection) -> None:
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.wap.enabled'='false')")
    con.execute("SET iceduck.wap_id = 'ignored'")
    con.execute("INSERT INTO db.t VALUES (4, 'b')")
    assert rows(con) == [*BASE, (4, "b")]
    assert all("wap.id" not in s.summary for s in metadata(con).snapshots)


def test_wap_branch_writes_and_reads_the_branch(con: Connection) -> None:
    main = metadata(con).current_snapshot_id
    con.execute("SET iceduck.wap_branch = 'audit'")
    con.execute("INSERT INTO db.t VALUES (4, 'b')")  # creates the branch from main
    con.execute("DELETE FROM db.t WHERE id = 1")
    meta = metadata(con)
    assert meta.current_snapshot_id == main and meta.refs["audit"].is_branch
    assert rows(con) == [(2, "a"), (3, "b"), (4, "b")]  # reads follow the WAP branch
    assert rows(con, "VERSION AS OF 'main'") == BASE
    with pytest.raises(ValidationError, match=r"Cannot write to both branch and WAP branch"):
        con.execute("ALTER TABLE db.t CREATE BRANCH other")
        con.execute("INSERT INTO db.t.branch_other VALUES (9, 'x')")
    con.execute("SET iceduck.wap_id = 'x'")
    with pytest.raises(
        ValidationError, match=r"Cannot set both WAP ID and branch, but got ID \[x\] and branch \[audit\]"
    ):
        con.execute("INSERT INTO db.t VALUES (9, 'x')")
    con.execute("RESET iceduck.wap_id")
    con.execute("RESET iceduck.wap_branch")
    assert rows(con) == BASE
    audit = metadata(con).refs["audit"].snapshot_id
    assert con.execute("CALL system.fast_forward('db.t', 'main', 'audit')").fetchall() == [
        ("main", main, audit)
    ]
    assert rows(con) == [(2, "a"), (3, "b"), (4, "b")]


@pytest.mark.parametrize(
    ("statement", "error", "says"),
    [
        ("CALL system.publish_changes('db.t', 'nope')", NotFoundError, "Cannot apply unknown WAP ID 'nope'"),
        ("SET iceduck.wap_id = ''", UserError, "the value is empty"),
        ("SET iceduck.wap_id = 1 + 2", UserError, "expected a string"),
    ],
)
def test_wap_errors(con: Connection, statement: str, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        con.execute(statement)


def test_a_wap_id_staged_twice_is_refused(con: Connection) -> None:
    con.execute("SET iceduck.wap_id = 'twice'")
    con.execute("INSERT INTO db.t VALUES (7, 'a')")
    con.execute("INSERT INTO db.t VALUES (8, 'a')")
    with pytest.raises(
        ValidationError, match=r"non-unique WAP ID\. Found multiple snapshots with WAP ID 'twice'"
    ):
        con.execute("CALL system.publish_changes('db.t', 'twice')")
    assert rows(con) == BASE
