"""rollback_to_snapshot, rollback_to_timestamp, set_current_snapshot, cherrypick_snapshot,
fast_forward through ``CALL``, on v2 and v3 tables with several snapshots, a partition
spec, merge-on-read deletes (position deletes on v2, deletion vectors on v3) and an
evolved schema. Expected rows are what the table held at each snapshot (read with
``VERSION AS OF`` before the procedure runs), and the rules and messages are Java's
``SetSnapshotOperation`` / ``CherryPickOperation`` / ``UpdateSnapshotReferencesOperation``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import IceduckError, NotFoundError, UserError, ValidationError
from iceduck.ops.procedures import snapshots as procedure_commits
from iceduck.spec.table_metadata import TableMetadata


@dataclass
class History:
    """db.t after: s1 insert (a), s2 insert (b), s3 merge-on-read delete, ADD COLUMN, s4 insert."""

    s1: int
    s2: int
    s3: int
    s4: int


def metadata(con: Connection) -> TableMetadata:
    return con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata


def table_rows(con: Connection, version: int | str | None = None) -> list[tuple[Any, ...]]:
    at = (
        ""
        if version is None
        else f" VERSION AS OF {version!r}"
        if isinstance(version, str)
        else f" VERSION AS OF {version}"
    )
    return sorted(con.execute(f"SELECT id, cat FROM db.t{at}").fetchall())


def at_ms(epoch_ms: int) -> str:
    """A timestamp argument (a string, as Spark casts one) for epoch milliseconds."""
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).isoformat(sep=" ", timespec="milliseconds")


def current(con: Connection) -> int | None:
    return metadata(con).current_snapshot_id


@pytest.fixture(params=[2, 3])
def con(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute(
        "CREATE TABLE db.t (id bigint, cat string) PARTITIONED BY (cat) TBLPROPERTIES "
        f"('format-version'='{request.param}', 'write.delete.mode'='merge-on-read')"
    )
    yield con
    con.close()


def build_history(con: Connection) -> History:
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (2, 'a'), (3, 'b')")
    s1 = current(con)
    con.execute("INSERT INTO db.t VALUES (4, 'a'), (5, 'b')")
    s2 = current(con)
    con.execute("DELETE FROM db.t WHERE id IN (2, 5)")
    s3 = current(con)
    con.execute("ALTER TABLE db.t ADD COLUMN note string")
    con.execute("INSERT INTO db.t VALUES (6, 'b', 'new')")
    s4 = current(con)
    assert None not in (s1, s2, s3, s4)
    return History(s1, s2, s3, s4)  # type: ignore[arg-type]


def test_rollback_to_an_ancestor_then_forward_again(con: Connection) -> None:
    h = build_history(con)
    at = {sid: table_rows(con, sid) for sid in (h.s1, h.s2, h.s3, h.s4)}
    snapshots_before = len(metadata(con).snapshots)
    cur = con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s2])
    assert [(d[0], d[1]) for d in cur.description] == [
        ("previous_snapshot_id", "BIGINT"),
        ("current_snapshot_id", "BIGINT"),
    ]
    assert cur.fetchall() == [(h.s4, h.s2)]
    assert current(con) == h.s2
    # the deleted rows are back; the table's schema (with note) reads them, as in Spark
    assert table_rows(con) == at[h.s2] == [(1, "a"), (2, "a"), (3, "b"), (4, "a"), (5, "b")]
    assert con.execute("SELECT * FROM db.t WHERE id = 5").fetchall() == [(5, "b", None)]
    meta = metadata(con)
    assert len(meta.snapshots) == snapshots_before  # nothing removed, nothing added
    assert meta.refs["main"].snapshot_id == h.s2 and meta.snapshot_log[-1].snapshot_id == h.s2
    # the newer snapshots are still readable, and set_current_snapshot goes back to them
    assert table_rows(con, h.s4) == at[h.s4]
    assert con.execute("CALL system.set_current_snapshot('db.t', ?)", [h.s4]).fetchall() == [(h.s2, h.s4)]
    assert table_rows(con) == at[h.s4]


def test_rollback_refuses_unknown_snapshots_and_other_lineages(con: Connection) -> None:
    h = build_history(con)
    with pytest.raises(NotFoundError, match="Cannot roll back to unknown snapshot id: 42"):
        con.execute("CALL system.rollback_to_snapshot('db.t', 42)")
    con.execute("CALL system.rollback_to_snapshot(table => 'db.t', snapshot_id => ?)", [h.s1])
    # s2..s4 are no longer ancestors of the current snapshot
    with pytest.raises(ValidationError, match=f"not an ancestor of the current state: {h.s3}"):
        con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s3])
    assert current(con) == h.s1
    with pytest.raises(UserError, match="snapshot_id"):
        con.execute("CALL system.rollback_to_snapshot('db.t')")


def test_rollback_to_current_changes_nothing(con: Connection) -> None:
    h = build_history(con)
    log = metadata(con).snapshot_log
    assert con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s4]).fetchall() == [(h.s4, h.s4)]
    assert metadata(con).snapshot_log == log


def test_rollback_to_timestamp_takes_the_newest_older_ancestor(con: Connection) -> None:
    h = build_history(con)
    meta = metadata(con)
    ts = {s.snapshot_id: s.timestamp_ms for s in meta.snapshots}
    expected = table_rows(con, h.s2)
    # strictly older: at s3's own timestamp the target is the newest ancestor before it
    older_than_s3 = max((sid for sid in (h.s1, h.s2) if ts[sid] < ts[h.s3]), key=lambda s: ts[s])
    rows = con.execute("CALL system.rollback_to_timestamp('db.t', ?)", [at_ms(ts[h.s3])]).fetchall()
    assert rows == [(h.s4, older_than_s3)]
    if older_than_s3 == h.s2:
        assert table_rows(con) == expected
    with pytest.raises(ValidationError, match=f"no valid snapshot older than: {ts[h.s1]}"):
        con.execute("CALL system.rollback_to_timestamp('db.t', ?)", [at_ms(ts[h.s1])])


def test_rollback_to_timestamp_literal(con: Connection) -> None:
    h = build_history(con)
    rows = con.execute(
        "CALL system.rollback_to_timestamp('db.t', TIMESTAMP '2999-01-01 00:00:00')"
    ).fetchall()
    assert rows == [(h.s4, h.s4)]
    with pytest.raises(ValidationError, match="no valid snapshot older than"):
        con.execute("CALL system.rollback_to_timestamp('db.t', TIMESTAMP '2000-01-01 00:00:00')")


def test_set_current_snapshot_by_id_or_ref(con: Connection) -> None:
    h = build_history(con)
    con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s1])
    con.execute("INSERT INTO db.t VALUES (7, 'c', 'x')")  # another lineage
    other = current(con)
    con.execute(f"ALTER TABLE db.t CREATE TAG v3 AS OF VERSION {h.s3}")
    # s3 is not an ancestor: rollback refuses, set_current_snapshot takes it
    with pytest.raises(ValidationError):
        con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s3])
    assert con.execute("CALL system.set_current_snapshot(table => 'db.t', ref => 'v3')").fetchall() == [
        (other, h.s3)
    ]
    assert table_rows(con) == table_rows(con, h.s3) == [(1, "a"), (3, "b"), (4, "a")]
    assert con.execute("CALL system.set_current_snapshot('db.t', ?)", [other]).fetchall() == [(h.s3, other)]
    assert table_rows(con) == [(1, "a"), (2, "a"), (3, "b"), (7, "c")]


@pytest.mark.parametrize(
    ("args", "error", "says"),
    [
        ("'db.t'", UserError, "Either snapshot_id or ref must be provided, not both"),
        ("'db.t', 1, 'main'", UserError, "Either snapshot_id or ref must be provided, not both"),
        ("table => 'db.t', ref => 'nope'", NotFoundError, "Cannot find matching snapshot ID for ref nope"),
        ("'db.t', 42", NotFoundError, "Cannot roll back to unknown snapshot id: 42"),
        ("'db.nope', 42", NotFoundError, "nope"),
    ],
)
def test_set_current_snapshot_errors(con: Connection, args: str, error: type[Exception], says: str) -> None:
    build_history(con)
    before = metadata(con)
    with pytest.raises(error, match=says):
        con.execute(f"CALL system.set_current_snapshot({args})")
    assert metadata(con) == before


def test_cherrypick_fast_forwards_when_the_parent_is_current(con: Connection) -> None:
    h = build_history(con)
    expected = {sid: table_rows(con, sid) for sid in (h.s2, h.s3)}
    con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s1])
    count = len(metadata(con).snapshots)
    assert con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [h.s2]).fetchall() == [(h.s2, h.s2)]
    # a delete is not re-applied, but it can be fast-forwarded to
    assert con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [h.s3]).fetchall() == [(h.s3, h.s3)]
    assert table_rows(con) == expected[h.s3]
    assert len(metadata(con).snapshots) == count  # no new snapshot: main moved


def test_cherrypick_reapplies_an_append_on_a_new_state(con: Connection) -> None:
    h = build_history(con)
    con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s1])
    con.execute("INSERT INTO db.t VALUES (8, 'b', NULL)")
    head = current(con)
    picked = con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [h.s2]).fetchall()
    new = current(con)
    assert picked == [(h.s2, new)] and new not in (h.s2, head)
    snapshot = metadata(con).snapshot_by_id(new)  # type: ignore[arg-type]
    assert snapshot.parent_snapshot_id == head and snapshot.operation == "append"
    assert snapshot.summary["source-snapshot-id"] == str(h.s2)
    assert snapshot.summary["added-records"] == "2" and snapshot.summary["total-records"] == "6"
    assert table_rows(con) == [(1, "a"), (2, "a"), (3, "b"), (4, "a"), (5, "b"), (8, "b")]
    # the same files: no data file was copied
    files = con.execute(f"SELECT file_path FROM db.t.files VERSION AS OF {new}").fetchall()
    s2_files = con.execute(f"SELECT file_path FROM db.t.files VERSION AS OF {h.s2}").fetchall()
    assert set(s2_files) <= set(files)
    if metadata(con).format_version >= 3:  # the re-added rows get new row ids
        ids = con.execute("SELECT _row_id FROM db.t").fetchall()
        assert len(set(ids)) == 6
    with pytest.raises(
        ValidationError, match=f"Cannot cherrypick snapshot {h.s2}: already picked to create ancestor {new}"
    ):
        con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [h.s2])
    with pytest.raises(ValidationError, match=f"Cannot cherrypick snapshot {h.s1}: already an ancestor"):
        con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [h.s1])
    with pytest.raises(ValidationError, match="not append, dynamic overwrite, or fast-forward"):
        con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [h.s3])
    with pytest.raises(NotFoundError, match="Cannot cherry-pick unknown snapshot ID: 42"):
        con.execute("CALL system.cherrypick_snapshot('db.t', 42)")
    assert current(con) == new


def test_cherrypick_a_branch_commit_onto_main(con: Connection) -> None:
    h = build_history(con)
    con.execute("ALTER TABLE db.t CREATE BRANCH dev")
    con.execute("INSERT INTO db.t.branch_dev VALUES (10, 'a', 'dev')")
    dev = metadata(con).refs["dev"].snapshot_id
    con.execute("INSERT INTO db.t VALUES (11, 'a', 'main')")
    main_rows = table_rows(con)
    con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [dev])
    assert table_rows(con) == sorted([*main_rows, (10, "a")])
    assert metadata(con).refs["dev"].snapshot_id == dev  # the branch is untouched
    assert h.s4 in {s.snapshot_id for s in metadata(con).snapshots}


def test_fast_forward_a_branch(con: Connection) -> None:
    build_history(con)
    con.execute("ALTER TABLE db.t CREATE BRANCH audit")
    main = current(con)
    con.execute("INSERT INTO db.t.branch_audit VALUES (20, 'a', 'audited')")
    con.execute("DELETE FROM db.t.branch_audit WHERE id = 1")
    audit = metadata(con).refs["audit"].snapshot_id
    expected = table_rows(con, "audit")
    cur = con.execute("CALL system.fast_forward('db.t', 'main', 'audit')")
    assert [(d[0], d[1]) for d in cur.description] == [
        ("branch_updated", "VARCHAR"),
        ("previous_ref", "BIGINT"),
        ("updated_ref", "BIGINT"),
    ]
    assert cur.fetchall() == [("main", main, audit)]
    assert current(con) == audit and table_rows(con) == expected
    # already there: nothing changes
    assert con.execute("CALL system.fast_forward('db.t', 'main', 'audit')").fetchall() == [
        ("main", audit, audit)
    ]


@pytest.mark.parametrize(
    ("args", "error", "says"),
    [
        ("'db.t', 'audit', 'main'", ValidationError, "Cannot fast-forward: audit is not an ancestor of main"),
        ("'db.t', 'nope', 'main'", NotFoundError, "Target branch does not exist: nope"),
        ("'db.t', 'main', 'nope'", NotFoundError, "Ref does not exist: nope"),
        ("'db.t', 'v1', 'main'", ValidationError, "Ref v1 is a tag not a branch"),
    ],
)
def test_fast_forward_errors(con: Connection, args: str, error: type[Exception], says: str) -> None:
    build_history(con)
    con.execute("ALTER TABLE db.t CREATE BRANCH audit")
    con.execute("ALTER TABLE db.t CREATE TAG v1")
    con.execute("INSERT INTO db.t.branch_audit VALUES (20, 'a', 'x')")
    con.execute("INSERT INTO db.t VALUES (21, 'a', 'y')")  # main and audit diverged
    before = metadata(con)
    with pytest.raises(error, match=says):
        con.execute(f"CALL system.fast_forward({args})")
    assert metadata(con) == before


class Race:
    """Runs ``statement`` in a second connection right before the procedure's first commit."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, warehouse: Path, statement: str) -> None:
        self.fired = False
        real = procedure_commits.commit

        def racing(*args: Any, **kwargs: Any) -> Any:
            if not self.fired:
                self.fired = True
                other = iceduck.connect(warehouse)
                try:
                    other.execute(statement)
                finally:
                    other.close()
            return real(*args, **kwargs)

        monkeypatch.setattr(procedure_commits, "commit", racing)


def test_cherrypick_over_a_concurrent_insert_revalidates(
    con: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = build_history(con)
    con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s1])
    Race(monkeypatch, tmp_path / "wh", "INSERT INTO db.t VALUES (9, 'a', NULL)")
    # planned as a fast-forward (s2's parent is current); the concurrent insert makes it a
    # re-applied append on top of the concurrent snapshot, which is kept
    [(source, new)] = con.execute("CALL system.cherrypick_snapshot('db.t', ?)", [h.s2]).fetchall()
    assert source == h.s2 and new != h.s2
    assert table_rows(con) == [(1, "a"), (2, "a"), (3, "b"), (4, "a"), (5, "b"), (9, "a")]


def test_rollback_over_a_concurrent_commit_that_leaves_its_lineage_fails(
    con: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = build_history(con)
    Race(monkeypatch, tmp_path / "wh", f"CALL system.rollback_to_snapshot('db.t', {h.s1})")
    # the concurrent rollback to s1 makes s3 no ancestor: the re-check on the refreshed table refuses
    with pytest.raises(IceduckError, match="not an ancestor of the current state"):
        con.execute("CALL system.rollback_to_snapshot('db.t', ?)", [h.s3])
    assert current(con) == h.s1
