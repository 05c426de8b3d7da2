"""Transactions on one machine (SQLite catalog): read-your-writes, ROLLBACK leaving no file,
conflicts that can and cannot be rebased, what a transaction refuses, and the DB-API
surface (autocommit, with-blocks, close)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.connection import Connection
from iceduck.errors import CommitConflictError, UnsupportedError, UserError
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField
from iceduck.spec.view_metadata import ViewRepresentation, new_view
from iceduck.txn.transaction import Transaction

FAST = "'commit.retry.min-wait-ms'='1', 'commit.retry.max-wait-ms'='5'"


def files(root: Path) -> set[str]:
    """Every file under ``root`` but the SQLite catalog's own."""
    found = {os.path.join(d, f) for d, _, names in os.walk(root) for f in names}
    return {f for f in found if not os.path.basename(f).startswith("catalog.db")}


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    warehouse = tmp_path / "wh"
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE db")
        for table in ("a", "b"):
            con.execute(f"CREATE TABLE db.{table} (id BIGINT, v STRING) TBLPROPERTIES ({FAST})")
        con.execute("INSERT INTO db.a VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    return warehouse


def rows(con: Connection, table: str) -> list[tuple[object, ...]]:
    return con.execute(f"SELECT id, v FROM db.{table} ORDER BY id").fetchall()


def test_read_your_writes(wh: Path) -> None:
    con, other = iceduck.connect(wh), iceduck.connect(wh)
    con.execute("BEGIN")
    con.execute("INSERT INTO db.a VALUES (4, 'four')")
    con.execute("UPDATE db.a SET v = 'FOUR' WHERE id = 4")  # rows inserted earlier in it
    con.execute("DELETE FROM db.a WHERE id = 1")
    con.execute("INSERT INTO db.b SELECT * FROM db.a WHERE id > 2")
    assert rows(con, "a") == [(2, "two"), (3, "three"), (4, "FOUR")]
    assert rows(con, "b") == [(3, "three"), (4, "FOUR")]
    # metadata tables and time travel see the committed and the pending snapshots
    snapshots = con.execute(
        "SELECT snapshot_id, operation FROM db.a.snapshots ORDER BY committed_at"
    ).fetchall()
    assert len(snapshots) == 4
    first = snapshots[1][0]  # the transaction's INSERT
    assert con.execute(f"SELECT count(*) FROM db.a FOR VERSION AS OF {first}").fetchone() == (4,)
    # nobody else sees any of it
    assert rows(other, "b") == [] and len(rows(other, "a")) == 3
    assert other.execute("SELECT count(*) FROM db.a.snapshots").fetchone() == (1,)
    con.execute("COMMIT")
    assert rows(other, "a") == [(2, "two"), (3, "three"), (4, "FOUR")]
    assert rows(other, "b") == [(3, "three"), (4, "FOUR")]
    # one snapshot per statement, as Java's Transaction
    assert other.execute("SELECT count(*) FROM db.a.snapshots").fetchone() == (4,)


def test_rollback_leaves_tables_and_folder_unchanged(wh: Path) -> None:
    con = iceduck.connect(wh)
    before, before_rows = files(wh), rows(con, "a")
    con.execute("START TRANSACTION")
    con.execute("INSERT INTO db.a VALUES (9, 'nine')")
    con.execute("UPDATE db.a SET v = 'x' WHERE id < 3")
    con.execute("MERGE INTO db.b t USING db.a s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    assert files(wh) > before  # the statements wrote their files
    con.execute("ROLLBACK")
    assert rows(con, "a") == before_rows and rows(con, "b") == []
    assert files(wh) == before


def test_concurrent_appends_are_rebased(wh: Path) -> None:
    con, other = iceduck.connect(wh), iceduck.connect(wh)
    con.execute("BEGIN")
    con.execute("INSERT INTO db.a VALUES (10, 'ten')")
    con.execute("UPDATE db.a SET v = 'TEN' WHERE id = 10")  # validates from the pending snapshot
    con.execute("INSERT INTO db.b VALUES (10, 'ten')")
    other.execute("INSERT INTO db.a VALUES (11, 'eleven')")
    other.execute("INSERT INTO db.b VALUES (11, 'eleven')")
    con.execute("COMMIT")
    assert [r[0] for r in rows(other, "a")] == [1, 2, 3, 10, 11]
    assert rows(other, "a")[3] == (10, "TEN")
    assert rows(other, "b") == [(10, "ten"), (11, "eleven")]


@pytest.mark.parametrize("second_statement", [False, True])
def test_a_conflict_that_cannot_be_rebased_commits_nothing(wh: Path, second_statement: bool) -> None:
    con, other = iceduck.connect(wh), iceduck.connect(wh)
    start = files(wh)
    con.execute("BEGIN")
    if second_statement:  # the conflicting statement validates from the transaction's own snapshot
        con.execute("INSERT INTO db.a VALUES (20, 'twenty')")
    con.execute("INSERT INTO db.b VALUES (1, 'moved')")
    con.execute("DELETE FROM db.a WHERE id = 1")  # serializable (the default)
    pending = files(wh) - start
    other.execute("INSERT INTO db.a VALUES (1, 'again')")  # a row the DELETE would have matched
    with pytest.raises(CommitConflictError, match=r"db\.a"):
        con.execute("COMMIT")
    assert not con.in_transaction  # a failed COMMIT ends the transaction
    assert rows(other, "b") == []
    assert [r[0] for r in rows(other, "a")] == [1, 1, 2, 3]
    assert not (files(wh) & pending)  # every file of the transaction is gone


def test_what_a_transaction_refuses(wh: Path, tmp_path: Path) -> None:
    con = iceduck.connect(wh)
    with pytest.raises(UserError, match="no transaction is active"):
        con.execute("COMMIT")
    with pytest.raises(UserError, match="no transaction is active"):
        con.execute("ROLLBACK WORK")
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(UserError, match="within a transaction"):
        con.execute("BEGIN")
    con.execute("INSERT INTO db.a VALUES (5, 'five')")
    for sql, named in [
        ("CREATE TABLE db.c (x INT)", "CREATE TABLE"),
        ("CREATE TABLE db.c AS SELECT * FROM db.a", "CREATE TABLE ... AS SELECT"),
        ("ALTER TABLE db.a ADD COLUMN w INT", "ALTER TABLE"),
        ("DROP TABLE db.b", "DROP TABLE"),
        ("CALL iceduck.system.expire_snapshots(table => 'db.a')", "CALL"),
    ]:
        refused = f"^{re.escape(named)} cannot run inside a transaction"
        with pytest.raises(UnsupportedError, match=refused):
            con.execute(sql)
    with pytest.raises(UnsupportedError, match="ISOLATION"):
        con.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
    assert con.in_transaction  # a failed statement leaves the transaction as it was
    con.execute("END")
    assert len(rows(con, "a")) == 4
    assert "db.c" not in str(iceduck.connect(wh).execute("SHOW TABLES IN db").fetchall())


def test_hadoop_catalog_takes_one_table_per_transaction(tmp_path: Path) -> None:
    con = iceduck.connect(tmp_path / "h", catalog_type="hadoop")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.a (id BIGINT)")
    con.execute("CREATE TABLE db.b (id BIGINT)")
    before = files(tmp_path / "h")
    con.execute("BEGIN")
    con.execute("INSERT INTO db.a VALUES (1)")
    with pytest.raises(UnsupportedError, match="cannot commit to several tables atomically"):
        con.execute("INSERT INTO db.b VALUES (1)")
    con.execute("COMMIT")
    assert con.execute("SELECT * FROM db.a").fetchall() == [(1,)]
    assert con.execute("SELECT * FROM db.b").fetchall() == []
    assert not any("db/b/data" in f for f in files(tmp_path / "h") - before)


def test_dbapi_autocommit_off(wh: Path) -> None:
    other = iceduck.connect(wh)
    con = iceduck.connect(wh)
    assert con.autocommit is True and not con.in_transaction
    con.autocommit = False
    con.execute("INSERT INTO db.b VALUES (1, 'x')")
    assert con.in_transaction and rows(other, "b") == []
    con.rollback()
    assert not con.in_transaction and rows(con, "b") == []
    con.cursor().executemany("INSERT INTO db.b VALUES (?, ?)", [(2, "y"), (3, "z")])
    con.execute("DELETE FROM db.b WHERE id = 2")
    con.commit()
    assert rows(other, "b") == [(3, "z")]
    con.execute("INSERT INTO db.b VALUES (4, 'w')")
    con.close()  # closing rolls the open transaction back
    assert rows(other, "b") == [(3, "z")]


def test_with_block_commits_or_rolls_back(wh: Path) -> None:
    with iceduck.connect(wh) as con:
        con.autocommit = False
        con.execute("INSERT INTO db.b VALUES (1, 'kept')")
    with pytest.raises(RuntimeError), iceduck.connect(wh) as con:
        con.autocommit = False
        con.execute("INSERT INTO db.b VALUES (2, 'lost')")
        raise RuntimeError("boom")
    assert rows(iceduck.connect(wh), "b") == [(1, "kept")]


def test_turning_autocommit_on_commits(wh: Path) -> None:
    con = iceduck.connect(wh)
    con.autocommit = False
    con.execute("INSERT INTO db.b VALUES (1, 'x')")
    con.execute("CREATE TABLE db.c (x INT)")  # DDL commits first (MySQL's implicit commit)
    assert rows(iceduck.connect(wh), "b") == [(1, "x")]
    con.execute("INSERT INTO db.b VALUES (2, 'y')")
    con.autocommit = True
    assert len(rows(iceduck.connect(wh), "b")) == 2


def test_executemany_is_one_commit_all_or_nothing(tmp_path: Path) -> None:
    """A statement that cannot be batched into one INSERT still commits once: its parameter
    sets run in one transaction (one snapshot each, as in BEGIN ... COMMIT), and a failing
    set leaves none applied."""
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE n")
    con.execute("CREATE TABLE n.t (id BIGINT, v STRING)")
    con.execute("INSERT INTO n.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    table = TableIdentifier(("n",), "t")

    def metadata() -> str:
        return con.session.base_catalog.load_table(table).metadata_location

    before = metadata()
    con.executemany("UPDATE n.t SET v = ? WHERE id = ?", [("x", 1), ("y", 2)])
    after = metadata()
    assert before != after and not con.in_transaction
    log = [e.metadata_file for e in con.session.base_catalog.load_table(table).metadata.metadata_log]
    assert log[-1] == before  # one swap: the previous metadata is the one before the batch
    assert con.execute("SELECT * FROM n.t ORDER BY id").fetchall() == [(1, "x"), (2, "y"), (3, "c")]
    with pytest.raises(iceduck.Error):
        con.executemany("UPDATE n.t SET id = CAST(? AS BIGINT) WHERE id = ?", [("9", 1), ("oops", 2)])
    assert metadata() == after and not con.in_transaction
    assert con.execute("SELECT * FROM n.t ORDER BY id").fetchall() == [(1, "x"), (2, "y"), (3, "c")]


def test_a_transaction_reads_views_and_refuses_view_ddl(tmp_path: Path) -> None:
    """Views are DDL: inside BEGIN .. COMMIT they are read through, never written."""
    catalog = SqliteCatalog(tmp_path)
    catalog.create_namespace(("ns",))
    v = TableIdentifier(("ns",), "v")
    md = new_view(
        catalog.default_view_location(v),
        Schema((NestedField(1, "id", LongType()),)),
        [ViewRepresentation("SELECT 1 AS id", "spark")],
        ("ns",),
    )
    created = catalog.create_view(v, md)
    txn = Transaction(catalog)
    assert txn.list_views(("ns",)) == [v] and txn.view_exists(v)
    assert txn.load_view(v) == created
    with pytest.raises(UnsupportedError, match=r"cannot create view 'ns\.w' inside a transaction"):
        txn.create_view(TableIdentifier(("ns",), "w"), md)
    with pytest.raises(UnsupportedError, match=r"cannot drop view 'ns\.v' inside a transaction"):
        txn.drop_view(v)
    assert catalog.view_exists(v)
    catalog.close()
