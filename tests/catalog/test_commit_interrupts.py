"""An outcome that is unknown never deletes files.

A ``KeyboardInterrupt`` (Ctrl-C) or a signal handler's ``SystemExit`` can arrive just after
the catalog's swap ran, before Python returns from it. The swap has then landed, and the
files the catalog points to must stay. The interrupt is injected for real: the catalog's
SQLite connection runs the statement, then raises the signal at the calling thread, which
is where a signal arriving during the C call is delivered.
"""

from __future__ import annotations

import re
import signal
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from iceduck.catalog.sqlite import SqliteCatalog, connect_sqlite
from iceduck.errors import CommitStateUnknownError
from iceduck.session.session import Session

COMMIT_UPDATE = r"^UPDATE iceberg_tables SET metadata_location"
CREATE_INSERT = r"^INSERT INTO iceberg_tables"
COMMIT = r"^COMMIT$"


class _FaultAfter:
    """The catalog's real SQLite connection which, once armed, raises a fault right after the
    first statement matching a pattern ran; ``fail_reads`` makes every later statement fail,
    as a lost connection would."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._pattern: re.Pattern[str] | None = None
        self._fault: Any = None
        self._fail_reads = False
        self.fired = False

    def arm(self, pattern: str, fault: Any, fail_reads: bool = False) -> None:
        self._pattern, self._fault, self._fail_reads = re.compile(pattern), fault, fail_reads

    def disarm(self) -> None:
        self._pattern, self._fail_reads = None, False

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        if self.fired and self._fail_reads:
            raise sqlite3.OperationalError("disk I/O error")
        cursor = self._conn.execute(sql, params)
        if self._pattern is not None and not self.fired and self._pattern.search(sql.strip()):
            self.fired = True
            if isinstance(self._fault, int):
                signal.raise_signal(self._fault)
            else:
                raise self._fault
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@pytest.fixture
def wired(tmp_path: Path) -> Iterator[tuple[Session, _FaultAfter]]:
    """A session whose catalog connection goes through a (not yet armed) :class:`_FaultAfter`."""
    proxies: list[_FaultAfter] = []

    def connect(db_path: Path, read_only: bool) -> _FaultAfter:
        proxies.append(_FaultAfter(connect_sqlite(db_path, read_only)))
        return proxies[-1]

    warehouse = tmp_path / "wh"
    s = Session(warehouse, catalog_impl=SqliteCatalog(warehouse, connect=connect))
    s.run("CREATE NAMESPACE db")
    s.run(
        "CREATE TABLE db.t (k bigint, v bigint) USING iceberg "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    s.run("INSERT INTO db.t SELECT i, i FROM range(0, 1000) r(i)")
    yield s, proxies[0]
    s.close()


def _fresh(warehouse: Path) -> Session:
    """Another process's view: a new session on the same warehouse."""
    return Session(warehouse)


def _all_referenced_files_exist(session: Session, table: str) -> None:
    for (path,) in session.run(f"SELECT file_path FROM {table}.all_files").fetchall():
        assert Path(path.removeprefix("file:")).exists(), path
    for (path,) in session.run(f"SELECT path FROM {table}.all_manifests").fetchall():
        assert Path(path.removeprefix("file:")).exists(), path


STATEMENTS = {
    "insert": ("INSERT INTO db.t SELECT i, i FROM range(1000, 1500) r(i)", 1500),
    "delete": ("DELETE FROM db.t WHERE k < 100", 900),
    "update": ("UPDATE db.t SET v = -v WHERE k >= 900", 1000),
    "alter": ("ALTER TABLE db.t ADD COLUMN note string", 1000),
}


@pytest.mark.parametrize("statement", sorted(STATEMENTS))
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_after_the_swap_keeps_every_file(
    wired: tuple[Session, _FaultAfter], tmp_path: Path, statement: str, signum: int
) -> None:
    session, proxy = wired
    sql, rows_after = STATEMENTS[statement]
    exits = KeyboardInterrupt if signum == signal.SIGINT else SystemExit

    def terminate(signum: int, frame: FrameType | None) -> None:
        sys.exit(143)  # what a service's SIGTERM handler typically does

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        proxy.arm(COMMIT_UPDATE, signum)
        with pytest.raises(exits):
            session.run(sql)
        assert proxy.fired
    finally:
        signal.signal(signal.SIGTERM, previous)
    proxy.disarm()
    # the swap landed: the statement's effect is there, and every file the table names exists
    other = _fresh(tmp_path / "wh")
    assert other.run("SELECT count(*) FROM db.t").fetchall() == [(rows_after,)]
    _all_referenced_files_exist(other, "db.t")
    other.run("INSERT INTO db.t (k, v) VALUES (-1, -1)")  # and the table still takes writes
    assert other.run("SELECT count(*) FROM db.t").fetchall() == [(rows_after + 1,)]


@pytest.mark.parametrize("where", ["before-commit", "after-commit"])
def test_interrupt_around_the_create_commit(
    wired: tuple[Session, _FaultAfter], tmp_path: Path, where: str
) -> None:
    """CREATE TABLE ... AS SELECT inserts the row inside BEGIN IMMEDIATE .. COMMIT: an
    interrupt before the COMMIT rolls it back (nothing exists, the metadata file goes); one
    after it leaves a complete table."""
    session, proxy = wired
    proxy.arm(CREATE_INSERT if where == "before-commit" else COMMIT, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        session.run("CREATE TABLE db.c USING iceberg AS SELECT i AS k FROM range(0, 300) r(i)")
    assert proxy.fired
    proxy.disarm()
    other = _fresh(tmp_path / "wh")
    metadata_dir = tmp_path / "wh" / "db" / "c" / "metadata"
    if where == "before-commit":
        assert other.run("SHOW TABLES IN db").fetchall() == [("db", "t")]
        assert not list(metadata_dir.glob("*.metadata.json"))
        other.run("CREATE TABLE db.c USING iceberg AS SELECT 1 AS k")  # the name is free again
        assert other.run("SELECT count(*) FROM db.c").fetchall() == [(1,)]
    else:
        assert other.run("SELECT count(*) FROM db.c").fetchall() == [(300,)]
        _all_referenced_files_exist(other, "db.c")


def test_an_error_after_the_swap_that_landed_is_a_success(
    wired: tuple[Session, _FaultAfter], tmp_path: Path
) -> None:
    """Not an interrupt but an error from the driver after the UPDATE ran: reading the row
    back shows the swap landed, so the statement succeeded (Java's checkCommitStatus)."""
    session, proxy = wired
    proxy.arm(COMMIT_UPDATE, RuntimeError("connection reset after the statement"))
    result = session.run("DELETE FROM db.t WHERE k < 10")
    assert proxy.fired and result.rowcount == 10
    proxy.disarm()
    other = _fresh(tmp_path / "wh")
    assert other.run("SELECT count(*) FROM db.t").fetchall() == [(990,)]
    _all_referenced_files_exist(other, "db.t")


def test_an_unknown_outcome_keeps_the_files_and_says_so(
    wired: tuple[Session, _FaultAfter], tmp_path: Path
) -> None:
    """The error after the UPDATE, and the catalog cannot be read back either: the outcome
    is unknown, so nothing is deleted and the error says to look before retrying."""
    session, proxy = wired
    proxy.arm(COMMIT_UPDATE, RuntimeError("connection lost"), fail_reads=True)
    with pytest.raises(CommitStateUnknownError, match=r"may or may not have landed.*db\.t\.snapshots"):
        session.run("INSERT INTO db.t SELECT i, i FROM range(1000, 1100) r(i)")
    proxy.disarm()
    other = _fresh(tmp_path / "wh")
    assert other.run("SELECT count(*) FROM db.t").fetchall() == [(1100,)]  # it had landed
    _all_referenced_files_exist(other, "db.t")
