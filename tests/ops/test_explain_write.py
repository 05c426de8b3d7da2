"""EXPLAIN of write statements: which write each would do; nothing is written."""

from __future__ import annotations

import pytest

from iceduck.connection import Connection
from iceduck.errors import UserError


def _explain(con: Connection, sql: str) -> list[str]:
    return [row[0] for row in con.execute(f"EXPLAIN {sql}").fetchall()]


def _snapshots(con: Connection) -> int:
    return con.execute("SELECT count(*) FROM db.t.snapshots").fetchall()[0][0]


def test_each_kind_of_write_is_named_and_nothing_is_written(con: Connection) -> None:
    con.execute(
        "CREATE TABLE db.t (id INT NOT NULL, v STRING) PARTITIONED BY (id) TBLPROPERTIES "
        "('format-version'='3', 'write.merge.mode'='merge-on-read', "
        "'write.delete.isolation-level'='snapshot')"
    )
    con.execute("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    con.execute("INSERT INTO db.t VALUES (1, 'a')")
    before = _snapshots(con)
    assert _explain(con, "INSERT INTO db.t VALUES (2, 'b')")[1].startswith("  write: append:")
    assert (
        "upsert by identifier fields (id)" in _explain(con, "INSERT OR REPLACE INTO db.t VALUES (1, 'b')")[1]
    )
    assert "dynamic overwrite" in _explain(con, "INSERT OVERWRITE db.t VALUES (1, 'b')")[1]
    assert "static overwrite" in _explain(con, "INSERT OVERWRITE db.t PARTITION (id = 1) VALUES ('b')")[1]
    merge = _explain(
        con,
        "MERGE INTO db.t t USING (SELECT 1 AS id, 'x' AS v) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    )
    assert merge[0] == "Iceberg write to db.t (branch main)"
    assert "deletion vectors" in merge[1] and "added as data files" in merge[1]
    assert merge[2:4] == [
        "  mode: write.merge.mode=merge-on-read",
        "  isolation: write.merge.isolation-level=serializable",
    ]
    delete = _explain(con, "DELETE FROM db.t WHERE id = 1")
    assert (
        delete[1] == "  write: copy-on-write: the data files holding changed rows are rewritten without them"
    )
    assert delete[3] == "  isolation: write.delete.isolation-level=snapshot"
    insert_only = _explain(
        con, "MERGE INTO db.t t USING db.t s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *"
    )
    assert "insert-only MERGE" in insert_only[1]
    assert _snapshots(con) == before
    assert con.execute("SELECT * FROM db.t").fetchall() == [(1, "a")]


def test_v2_merge_on_read_names_position_deletes(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT, v STRING) TBLPROPERTIES ('write.update.mode'='merge-on-read')")
    assert "position delete files" in _explain(con, "UPDATE db.t SET v = 'x' WHERE id = 1")[1]


def test_explained_upsert_is_refused_as_the_upsert_would_be(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT, v STRING)")
    with pytest.raises(UserError, match="no identifier fields"):
        con.execute("EXPLAIN INSERT OR REPLACE INTO db.t VALUES (1, 'a')")


def test_comment_before_explain(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id INT, v STRING)")
    rows = con.execute("/* why */ -- and\n explain insert into db.t values (1, 'a')").fetchall()
    assert rows[0] == ("Iceberg write to db.t (branch main)",)
