"""``rewrite_data_files`` against concurrent writers (two connections on one warehouse): a
delete committed between the rewrite's read and its commit must never be lost.

The other connection's statement runs at the exact moment in between: the rewrite's
commit step is wrapped so the other statement commits first, then the real commit runs
(and retries on the refreshed table as always)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.ops import row_changes
from iceduck.ops.procedures import rewrite_data
from tests.support.faults import add_equality_deletes


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    return tmp_path / "wh"


@pytest.fixture
def con(warehouse: Path) -> Iterator[Connection]:
    con = iceduck.connect(warehouse)
    con.execute("CREATE NAMESPACE db")
    yield con
    con.close()


@pytest.fixture
def other(con: Connection, warehouse: Path) -> Iterator[Connection]:
    other = iceduck.connect(warehouse)
    yield other
    other.close()


def make_table(con: Connection, version: int, mode: str = "merge-on-read") -> None:
    con.execute(
        "CREATE TABLE db.t (id bigint, name string) "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = '{mode}')"
    )
    for i in range(6):
        con.execute(f"INSERT INTO db.t SELECT i, 'n' || i FROM range({i * 100}, {(i + 1) * 100}) r(i)")


def ids(con: Connection) -> list[int]:
    return sorted(r[0] for r in con.execute("SELECT id FROM db.t").fetchall())


def before_commit(monkeypatch: pytest.MonkeyPatch, module: Any, action: Callable[[], None]) -> None:
    """Run ``action`` once, just before ``module``'s next commit."""
    real = module.commit_changes
    done: list[bool] = []

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not done:
            done.append(True)
            action()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "commit_changes", wrapped)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_a_delete_committed_during_the_rewrite_fails_the_rewrite(
    con: Connection, other: Connection, monkeypatch: pytest.MonkeyPatch, version: int, mode: str
) -> None:
    make_table(con, version, mode)
    before_commit(monkeypatch, rewrite_data, lambda: other.execute("DELETE FROM db.t WHERE id % 50 = 7"))
    with pytest.raises(iceduck.OperationalError, match=r"rewrite would resurrect|no longer live"):
        con.execute("CALL system.rewrite_data_files('db.t')")
    expected = [i for i in range(600) if i % 50 != 7]
    assert ids(con) == expected  # the delete stands
    # and nothing is lost when the rewrite runs again afterwards
    con.execute("CALL system.rewrite_data_files(table => 'db.t', options => map('rewrite-all', 'true'))")
    assert ids(con) == expected
    assert ids(other) == expected


@pytest.mark.parametrize("version", [2, 3])
def test_a_rewrite_committed_during_a_delete_fails_the_delete(
    con: Connection, other: Connection, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    make_table(con, version)
    before_commit(monkeypatch, row_changes, lambda: other.execute("CALL system.rewrite_data_files('db.t')"))
    with pytest.raises(iceduck.OperationalError):
        con.execute("DELETE FROM db.t WHERE id % 50 = 7")
    assert ids(con) == list(range(600))  # the rewrite kept every row; the delete did not land
    con.execute("DELETE FROM db.t WHERE id % 50 = 7")  # re-run on the new state
    assert ids(con) == [i for i in range(600) if i % 50 != 7]


@pytest.mark.parametrize("version", [2, 3])
def test_equality_deletes_committed_during_the_rewrite_still_apply(
    con: Connection, other: Connection, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    """The new files carry the starting snapshot's sequence number, so an equality delete
    committed meanwhile (sequence number higher) applies to them: no conflict, no loss."""
    make_table(con, version)
    before_commit(monkeypatch, rewrite_data, lambda: add_equality_deletes(other, "db", "t", "id", [3, 303]))
    assert con.execute("CALL system.rewrite_data_files('db.t')").fetchall()[0][:2] == (6, 1)
    assert ids(con) == [i for i in range(600) if i not in (3, 303)]
    sequence = con.execute(
        "SELECT sequence_number FROM db.t.entries WHERE status = 1 AND data_file.content = 0"
    ).fetchall()
    starting = con.execute(
        "SELECT max(sequence_number) FROM db.t.entries WHERE data_file.content = 0"
    ).fetchall()
    assert len(sequence) == 1 and sequence[0][0] == 6 and starting[0][0] == 6  # the 6th insert's


@pytest.mark.parametrize("version", [2, 3])
def test_without_the_starting_sequence_number_an_equality_delete_conflicts(
    con: Connection, other: Connection, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    make_table(con, version)
    before_commit(monkeypatch, rewrite_data, lambda: add_equality_deletes(other, "db", "t", "id", [3]))
    with pytest.raises(iceduck.OperationalError, match="resurrect"):
        con.execute(
            "CALL system.rewrite_data_files(table => 'db.t', "
            "options => map('use-starting-sequence-number', 'false'))"
        )
    assert 3 not in ids(con)


def test_partial_progress_counts_the_files_of_a_failed_commit(
    con: Connection, other: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    con.execute(
        "CREATE TABLE db.t (id bigint, name string) PARTITIONED BY (bucket(2, id)) "
        "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"
    )
    for i in range(6):
        con.execute(f"INSERT INTO db.t SELECT i, 'n' || i FROM range({i * 100}, {(i + 1) * 100}) r(i)")
    files = con.execute("SELECT count(*) FROM db.t.data_files").fetchall()[0][0]
    # a DV for the file holding id 7: the commit of its bucket's group fails, the other lands
    before_commit(monkeypatch, rewrite_data, lambda: other.execute("DELETE FROM db.t WHERE id = 7"))
    result = con.execute(
        "CALL system.rewrite_data_files(table => 'db.t', options => map('partial-progress.enabled', 'true'))"
    ).fetchall()[0]
    rewritten, _, _, failed, _ = result
    assert (rewritten, failed) == (6, 6) and files == 12
    assert ids(con) == [i for i in range(600) if i != 7]


def test_more_failed_commits_than_allowed_fail_the_call(
    con: Connection, other: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_table(con, 3)
    before_commit(monkeypatch, rewrite_data, lambda: other.execute("DELETE FROM db.t WHERE id = 7"))
    with pytest.raises(iceduck.OperationalError, match="1 of 1 commits failed, more than"):
        con.execute(
            "CALL system.rewrite_data_files(table => 'db.t', options => map("
            "'partial-progress.enabled', 'true', 'partial-progress.max-failed-commits', '0'))"
        )
    assert ids(con) == [i for i in range(600) if i != 7]
