"""The drop-and-recreate race, end to end through SQL.

Statement A writes rows into ``db.t(k bigint, v bigint)``; meanwhile another writer drops
``db.t`` and creates a new ``db.t(name varchar, note varchar)`` (or renames the old one away
first). A must fail, and neither table may receive A's rows. The deterministic tests place
the other writer's statements exactly between A's table load and A's swap; the timing race
runs both for real in two threads, a bounded version of tests/stress/stress_commit_races.py.
"""

from __future__ import annotations

import random
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.sqlite import SqliteCatalog, connect_sqlite
from iceduck.errors import CommitConflictError, NotFoundError
from iceduck.session.session import Session

SWAP = re.compile(r"^UPDATE iceberg_tables SET metadata_location")


class _BeforeSwap:
    """The catalog's real SQLite connection, running ``meanwhile`` once just before the
    first compare-and-swap statement: another writer's commit landing at that instant."""

    def __init__(self, conn: sqlite3.Connection, meanwhile: Any) -> None:
        self._conn = conn
        self._meanwhile = meanwhile
        self.fired = False

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        if not self.fired and SWAP.search(sql.strip()):
            self.fired = True
            self._meanwhile()
        return self._conn.execute(sql, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class _OnLoad:
    """The catalog's real SQLite connection, setting ``loaded`` once a table's row was read."""

    def __init__(self, conn: sqlite3.Connection, loaded: threading.Event) -> None:
        self._conn = conn
        self._loaded = loaded

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        cursor = self._conn.execute(sql, params)
        if sql.startswith("SELECT metadata_location"):
            self._loaded.set()
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _setup(warehouse: Path) -> None:
    s = Session(warehouse)
    s.run("CREATE NAMESPACE db")
    s.run("CREATE TABLE db.t (k bigint, v bigint)")
    s.run("INSERT INTO db.t VALUES (1, 1)")
    s.close()


def _recreate(warehouse: Path, rename: bool) -> None:
    b = Session(warehouse)
    if rename:
        b.run("ALTER TABLE db.t RENAME TO db.t_old")
    else:
        b.run("DROP TABLE db.t")
    b.run("CREATE TABLE db.t (name varchar, note varchar)")
    b.run("INSERT INTO db.t VALUES ('x', 'y')")
    b.close()


def _check_no_rows_leaked(warehouse: Path, rename: bool) -> None:
    s = Session(warehouse)
    assert s.run("SELECT * FROM db.t").fetchall() == [("x", "y")]
    assert s.run("SELECT count(*) FROM db.t.files").fetchall() == [(1,)]  # readable, and only B's file
    if rename:
        assert s.run("SELECT * FROM db.t_old").fetchall() == [(1, 1)]
    s.close()


STATEMENTS = [
    "INSERT INTO db.t SELECT i, i FROM range(0, 30000) r(i)",
    "INSERT OVERWRITE db.t SELECT i, i FROM range(0, 300) r(i)",
    "DELETE FROM db.t WHERE k = 1",
    "UPDATE db.t SET v = 7",
    "MERGE INTO db.t USING (SELECT 1 AS k, 5 AS v) s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v",
    "ALTER TABLE db.t ADD COLUMN extra int",
    "ALTER TABLE db.t SET TBLPROPERTIES ('owner' = 'a')",
]


@pytest.mark.parametrize("rename", [False, True], ids=["drop", "rename"])
@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.split(" (")[0][:30])
def test_statement_racing_a_replaced_table_fails(tmp_path: Path, statement: str, rename: bool) -> None:
    warehouse = tmp_path / "wh"
    _setup(warehouse)
    proxies: list[_BeforeSwap] = []

    def connect(db_path: Path, read_only: bool) -> _BeforeSwap:
        proxies.append(_BeforeSwap(connect_sqlite(db_path, read_only), lambda: _recreate(warehouse, rename)))
        return proxies[-1]

    a = Session(warehouse, catalog_impl=SqliteCatalog(warehouse, connect=connect))
    with pytest.raises(CommitConflictError, match="UUID does not match"):
        a.run(statement)
    assert proxies[0].fired
    a.close()
    _check_no_rows_leaked(warehouse, rename)


def test_timing_race_never_lands_rows_in_the_new_table(tmp_path: Path) -> None:
    """A's INSERT and B's DROP + CREATE run at once, B starting at a random moment; A either
    lands before B (its rows then went with the dropped table) or fails -- a conflict, or the
    table not found when its swap falls between B's DROP and CREATE -- and the new table only
    ever holds B's rows."""
    rng = random.Random(9)
    outcomes = {"landed-first": 0, "refused": 0}
    for trial in range(6):
        warehouse = tmp_path / f"wh{trial}"
        _setup(warehouse)
        errors: list[BaseException] = []
        loaded = threading.Event()

        def connect(db_path: Path, read_only: bool, loaded: threading.Event = loaded) -> _OnLoad:
            return _OnLoad(connect_sqlite(db_path, read_only), loaded)

        a = Session(warehouse, catalog_impl=SqliteCatalog(warehouse, connect=connect))

        def insert(
            a: Session = a, errors: list[BaseException] = errors, loaded: threading.Event = loaded
        ) -> None:
            try:
                a.run("INSERT INTO db.t SELECT i, i FROM range(0, 200000) r(i)")
            except BaseException as e:
                errors.append(e)
            finally:
                loaded.set()
                a.close()

        thread = threading.Thread(target=insert)
        thread.start()
        loaded.wait()  # B starting before A loads the table would be no race, just a later INSERT
        threading.Event().wait(rng.uniform(0.0, 0.2))
        _recreate(warehouse, rename=trial % 2 == 1)
        thread.join()
        if errors:  # a conflict, or "not found" when A's swap came between B's DROP and CREATE
            assert isinstance(errors[0], CommitConflictError | NotFoundError), errors[0]
            outcomes["refused"] += 1
        else:
            outcomes["landed-first"] += 1
        s = Session(warehouse)
        assert s.run("SELECT * FROM db.t").fetchall() == [("x", "y")]
        assert s.run("SELECT count(*) FROM db.t.files").fetchall() == [(1,)]
        s.close()
    assert sum(outcomes.values()) == 6
