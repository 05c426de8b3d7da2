"""DELETE by key on an upsert table: equality deletes, without reading the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from iceduck.connection import Connection


def _table(con: Connection, partition: str = "bucket(2, id)", upsert: str = "true") -> None:
    con.execute(
        f"CREATE TABLE db.t (id INT NOT NULL, v STRING) PARTITIONED BY ({partition}) "
        f"TBLPROPERTIES ('write.upsert.enabled'='{upsert}')"
    )
    con.execute("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    con.execute("INSERT INTO db.t SELECT i, 'v' || i FROM range(10) r(i)")


def _ids(con: Connection) -> list[int]:
    return [r[0] for r in con.execute("SELECT id FROM db.t ORDER BY id").fetchall()]


def _last_operation(con: Connection) -> tuple:
    return con.execute(
        "SELECT operation, summary['added-equality-deletes'] FROM db.t.snapshots "
        "WHERE snapshot_id = (SELECT snapshot_id FROM db.t.refs WHERE name = 'main')"
    ).fetchall()[0]


def test_delete_by_key_writes_equality_deletes(con: Connection) -> None:
    _table(con)
    cur = con.execute("DELETE FROM db.t WHERE id = 1 OR id IN (2, 2.5, NULL, 42)")
    assert cur.rowcount == -1
    assert _ids(con) == [0, 3, 4, 5, 6, 7, 8, 9]
    assert _last_operation(con) == ("delete", "3")  # 1, 2 and 42; 2.5 and NULL match no int key


def test_delete_keys_of_a_change_feed(con: Connection) -> None:
    _table(con)
    con.execute("CREATE TABLE db.feed (id BIGINT, op STRING)")
    con.execute("INSERT INTO db.feed VALUES (3, 'D'), (4, 'U'), (5, 'D')")
    con.execute("DELETE FROM db.t WHERE id IN (SELECT id FROM db.feed WHERE op = 'D')")
    assert _ids(con) == [0, 1, 2, 4, 6, 7, 8, 9]
    assert _last_operation(con)[0] == "delete"


def test_delete_by_key_reads_no_data_file(con: Connection, tmp_path: Path) -> None:
    _table(con)
    for f in (tmp_path / "wh" / "db" / "t" / "data").rglob("*.parquet"):
        f.unlink()
    con.execute("DELETE FROM db.t WHERE id = 4")
    assert con.execute("SELECT record_count FROM db.t.delete_files ORDER BY 1 DESC LIMIT 1").fetchall()


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM db.t WHERE id > 7",
        "DELETE FROM db.t WHERE id = 8 AND v = 'v8'",
        "DELETE FROM db.t t WHERE id IN (SELECT id FROM db.t u WHERE u.v = t.v AND u.id > 7)",
    ],
)
def test_other_deletes_read_the_table_and_count_rows(con: Connection, statement: str) -> None:
    _table(con)
    cur = con.execute(statement)
    assert cur.rowcount >= 1
    assert 8 not in _ids(con)
    assert _last_operation(con)[0] != "delete" or _last_operation(con)[1] is None


def test_without_the_upsert_property_a_delete_reads(con: Connection) -> None:
    _table(con, upsert="false")
    assert con.execute("DELETE FROM db.t WHERE id IN (1, 2)").rowcount == 2
    assert _last_operation(con)[1] is None


def test_partitioned_by_a_non_key_column_reads_as_usual(con: Connection) -> None:
    con.execute(
        "CREATE TABLE db.t (id INT NOT NULL, v STRING) PARTITIONED BY (v) "
        "TBLPROPERTIES ('write.upsert.enabled'='true')"
    )
    con.execute("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.upsert.enabled'='false')")
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.upsert.enabled'='true')")
    assert con.execute("DELETE FROM db.t WHERE id = 1").rowcount == 1
    assert _ids(con) == [2]


def test_deleted_key_can_be_upserted_again(con: Connection) -> None:
    _table(con)
    con.execute("DELETE FROM db.t WHERE id = 5")
    con.execute("INSERT INTO db.t VALUES (5, 'back')")
    assert con.execute("SELECT v FROM db.t WHERE id = 5").fetchall() == [("back",)]
    con.execute("DELETE FROM db.t WHERE id = 5")
    assert 5 not in _ids(con)
