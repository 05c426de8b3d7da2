"""Isolation levels of row-level writes, with two real sessions on one warehouse.

Session A runs a statement; just before A commits, session B commits an INSERT (a hook on
the commit function the ops call: A has read the table, B's snapshot lands, then A's
commit finds the table moved, reloads and re-validates). Under ``serializable`` (Spark's
default ``write.<op>.isolation-level``) B's rows, if A's condition may match them, make
A fail and leave nothing behind; under ``snapshot`` A commits and B's rows stay; B's rows
in a partition A's condition cannot reach never conflict.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.errors import CommitConflictError, ValidationError
from iceduck.ops import snapshot_commit
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit, commit

TABLE = "ns.t"


@pytest.fixture
def warehouse(tmp_path: Path) -> Iterator[Path]:
    wh = tmp_path / "wh"
    con = iceduck.connect(wh)
    con.execute("CREATE NAMESPACE ns")
    con.close()
    yield wh


def _create(warehouse: Path, mode: str = "copy-on-write", level: str | None = None) -> Any:
    """Session A with ``ns.t (id int, p int)`` partitioned by ``p``: ids 1..4 in p = 1 and
    11..14 in p = 2 (one file each), row-level ``mode``, and ``level`` for every operation."""
    con = iceduck.connect(warehouse)
    props = ["'format-version'='2'"] + [f"'write.{op}.mode'='{mode}'" for op in ("delete", "update", "merge")]
    if level is not None:
        props += [f"'write.{op}.isolation-level'='{level}'" for op in ("delete", "update", "merge")]
    con.execute(
        f"CREATE TABLE {TABLE} (id INT, p INT) USING iceberg PARTITIONED BY (p) "
        f"TBLPROPERTIES ({', '.join(props)})"
    )
    con.execute(f"INSERT INTO {TABLE} VALUES (1, 1), (2, 1), (3, 1), (4, 1), (11, 2), (12, 2), (13, 2)")
    return con


def _files(warehouse: Path) -> set[Path]:
    return {p for p in (warehouse / "ns" / "t").rglob("*") if p.is_file()}


class Race:
    """Runs ``statement`` in a second session right before the first commit of session A."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, warehouse: Path, statement: str) -> None:
        #: what the table folder should hold if A's statement fails: before A, plus B's files
        self.expected_after_failure = _files(warehouse)
        self.started = False
        real = snapshot_commit.commit

        def racing(*args: Any, **kwargs: Any) -> Any:
            if not self.started:  # A's commit (B's own commit goes straight through)
                self.started = True
                before_b = _files(warehouse)
                b = iceduck.connect(warehouse)
                try:
                    b.execute(statement)
                finally:
                    b.close()
                self.expected_after_failure |= _files(warehouse) - before_b
            return real(*args, **kwargs)

        monkeypatch.setattr(snapshot_commit, "commit", racing)


def _rows(con: Any) -> list[tuple[int, int]]:
    return sorted(con.execute(f"SELECT id, p FROM {TABLE}").fetchall())


BASE = [(1, 1), (2, 1), (3, 1), (4, 1), (11, 2), (12, 2), (13, 2)]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
@pytest.mark.parametrize("where", ["p = 1", "p = 1 AND id = 2"])
def test_serializable_delete_fails_on_a_concurrent_insert_it_may_match(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch, mode: str, where: str
) -> None:
    a = _create(warehouse, mode)  # no property: serializable is the default
    race = Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (2, 1), (5, 1)")
    with pytest.raises(CommitConflictError) as raised:
        a.execute(f"DELETE FROM {TABLE} WHERE {where}")
    message = str(raised.value)
    assert f"DELETE FROM iceduck.{TABLE}" in message or f"DELETE FROM {TABLE}" in message
    assert "found conflicting data file" in message and "write.delete.isolation-level" in message
    assert _files(warehouse) == race.expected_after_failure  # nothing of A's is left
    assert _rows(a) == sorted([*BASE, (2, 1), (5, 1)])
    a.close()


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_snapshot_isolation_delete_commits_and_keeps_the_concurrent_rows(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    a = _create(warehouse, mode, level="snapshot")
    race = Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (2, 1), (5, 1)")
    assert a.execute(f"DELETE FROM {TABLE} WHERE p = 1 AND id = 2").rowcount == 1
    assert race.started
    # A did not see B's (2, 1): it stays, as does (5, 1)
    assert _rows(a) == sorted([r for r in BASE if r != (2, 1)] + [(2, 1), (5, 1)])
    a.close()


@pytest.mark.parametrize("level", [None, "snapshot"])
def test_a_concurrent_insert_into_another_partition_never_conflicts(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch, level: str | None
) -> None:
    a = _create(warehouse, level=level)
    race = Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (20, 2)")
    assert a.execute(f"DELETE FROM {TABLE} WHERE p = 1 AND id = 2").rowcount == 1
    assert race.started
    assert _rows(a) == sorted([r for r in BASE if r != (2, 1)] + [(20, 2)])
    a.close()


def test_update_and_merge_check_what_their_condition_implies(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """UPDATE's WHERE and what MERGE's ON says about the target are the conflict filters;
    a concurrent file whose metrics rule the condition out does not conflict."""
    a = _create(warehouse)
    Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (3, 1)")
    with pytest.raises(CommitConflictError, match=r"UPDATE .*found conflicting data file"):
        a.execute(f"UPDATE {TABLE} SET id = id + 100 WHERE p = 1 AND id = 3")
    assert _rows(a) == sorted([*BASE, (3, 1)])
    monkeypatch.undo()

    Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (6, 1)")  # id bounds [6, 6]: no id 4
    assert a.execute(f"UPDATE {TABLE} SET id = id + 100 WHERE p = 1 AND id = 4").rowcount == 1
    assert _rows(a) == sorted([r for r in BASE if r != (4, 1)] + [(3, 1), (104, 1), (6, 1)])
    monkeypatch.undo()

    Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (7, 1)")
    merge = (
        f"MERGE INTO {TABLE} AS t USING (SELECT 3 AS id) AS s ON t.id = s.id AND t.p = {{p}} "
        "WHEN MATCHED THEN DELETE"
    )
    with pytest.raises(CommitConflictError, match=r"MERGE INTO .*found conflicting data file"):
        a.execute(merge.format(p=1))
    monkeypatch.undo()

    a.execute(f"INSERT INTO {TABLE} VALUES (3, 2)")
    race = Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (8, 1)")  # not p = 2
    assert a.execute(merge.format(p=2)).rowcount == 1
    assert race.started
    rows = sorted([r for r in BASE if r != (4, 1)] + [(3, 1), (104, 1), (6, 1), (7, 1), (8, 1)])
    assert _rows(a) == rows
    a.close()


def test_insert_overwrite_conflicts_only_in_the_partitions_it_replaces(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _create(warehouse)
    race = Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (9, 1)")
    with pytest.raises(CommitConflictError, match=r"INSERT OVERWRITE .*found conflicting data file"):
        a.execute(f"INSERT OVERWRITE {TABLE} VALUES (100, 1)")
    assert _files(warehouse) == race.expected_after_failure
    monkeypatch.undo()

    Race(monkeypatch, warehouse, f"INSERT INTO {TABLE} VALUES (21, 2)")
    a.execute(f"INSERT OVERWRITE {TABLE} VALUES (100, 1)")
    assert _rows(a) == [(11, 2), (12, 2), (13, 2), (21, 2), (100, 1)]
    a.close()


def test_an_unknown_isolation_level_is_refused(warehouse: Path) -> None:
    a = _create(warehouse, level="Snapshot")  # case does not matter, as in Java
    a.execute(f"DELETE FROM {TABLE} WHERE id = 1")
    with pytest.raises(ValidationError, match=r"'write\.delete\.isolation-level' must be"):
        a.execute(f"ALTER TABLE {TABLE} SET TBLPROPERTIES ('write.delete.isolation-level'='strict')")
    # a table another engine gave that value: the statement that reads it refuses it
    identifier = TableIdentifier(("ns",), "t")

    def strict(base: LoadedTable) -> PendingCommit:
        builder = MetadataBuilder(base.metadata)
        builder.set_properties({"write.delete.isolation-level": "strict"})
        return PendingCommit(builder.build(), [])

    commit(a.session.catalog, identifier, strict)
    with pytest.raises(ValidationError, match=r"write\.delete\.isolation-level='strict'"):
        a.execute(f"DELETE FROM {TABLE} WHERE id = 2")
    assert len(_rows(a)) == len(BASE) - 1
    a.close()
