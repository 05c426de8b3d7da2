"""A change feed's MERGE on an upsert table is written by key (equality deletes), without
reading the table, and gives what the MERGE gives on a plain DuckDB table."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from iceduck.connection import Connection

FEED_MERGE = (
    "MERGE INTO db.t t USING db.feed s ON t.id = s.id "
    "WHEN MATCHED AND s.op = 'D' THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET * "
    "WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *"
)
FEED_ROWS = "(1, 'x', 'D'), (2, 'u2', 'U'), (20, 'new', 'I'), (21, 'gone', 'D'), (3, 'u3', 'U')"


def _tables(con: Connection, upsert: str = "true", partition: str = "bucket(2, id)") -> None:
    con.execute(f"CREATE TABLE db.t (id INT NOT NULL, v STRING, op STRING) PARTITIONED BY ({partition})")
    con.execute("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    con.execute("INSERT INTO db.t SELECT i, 'v' || i, 'I' FROM range(10) r(i)")
    con.execute(f"ALTER TABLE db.t SET TBLPROPERTIES ('write.upsert.enabled'='{upsert}')")
    con.execute("CREATE TABLE db.feed (id INT, v STRING, op STRING)")
    con.execute(f"INSERT INTO db.feed VALUES {FEED_ROWS}")


def _reference(merge: str) -> list[tuple]:
    duck = duckdb.connect()
    duck.execute("CREATE SCHEMA db")
    duck.execute("CREATE TABLE db.t AS SELECT i::INT AS id, 'v' || i AS v, 'I' AS op FROM range(10) r(i)")
    duck.execute("CREATE TABLE db.feed (id INT, v VARCHAR, op VARCHAR)")
    duck.execute(f"INSERT INTO db.feed VALUES {FEED_ROWS}")
    duck.execute(merge)
    return duck.execute("SELECT * FROM db.t ORDER BY id").fetchall()


def _rows(con: Connection) -> list[tuple]:
    return con.execute("SELECT * FROM db.t ORDER BY id").fetchall()


def _equality_deletes(con: Connection) -> int:
    return con.execute("SELECT count(*) FROM db.t.delete_files WHERE content = 2").fetchall()[0][0]


def test_feed_merge_is_written_by_key_and_equals_duckdb(con: Connection, tmp_path: Path) -> None:
    _tables(con)
    for f in (tmp_path / "wh" / "db" / "t" / "data").rglob("*.parquet"):
        f.unlink()  # nothing of the table is read
    cur = con.execute(FEED_MERGE)
    assert cur.rowcount == -1  # rows deleted by key: not counted
    assert _equality_deletes(con) > 0
    assert con.execute("SELECT count(*) FROM db.t.data_files").fetchall() == [(4,)]  # 2 + 2 partitions


def test_feed_merge_rows(con: Connection) -> None:
    _tables(con)
    con.execute(FEED_MERGE)
    assert _rows(con) == _reference(FEED_MERGE)


@pytest.mark.parametrize(
    "merge",
    [
        "MERGE INTO db.t USING db.feed ON db.t.id = db.feed.id WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *",
        "MERGE INTO db.t AS t USING (SELECT * FROM db.feed WHERE op <> 'D') AS s ON s.id = t.id "
        "WHEN NOT MATCHED THEN INSERT * WHEN MATCHED THEN UPDATE SET *",
        "MERGE INTO db.t t USING db.feed s ON t.id = s.id WHEN MATCHED AND s.op = 'D' THEN DELETE",
    ],
)
def test_other_feed_shapes(con: Connection, merge: str) -> None:
    _tables(con)
    con.execute(merge)
    assert _equality_deletes(con) > 0
    assert _rows(con) == _reference(merge)


@pytest.mark.parametrize(
    "merge",
    [
        # a condition on the target row
        "MERGE INTO db.t t USING db.feed s ON t.id = s.id WHEN MATCHED AND t.v = 'v2' THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *",
        # updates existing rows only: which exist needs the table
        "MERGE INTO db.t t USING db.feed s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *",
        # an assignment, not SET *
        "MERGE INTO db.t t USING db.feed s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED THEN INSERT *",
        # ON more than the key
        "MERGE INTO db.t t USING db.feed s ON t.id = s.id AND t.op = 'I' WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *",
        # inserts only where the key is new; deletes only where it exists and the row says so
        "MERGE INTO db.t t USING db.feed s ON t.id = s.id WHEN MATCHED AND s.op = 'D' THEN DELETE "
        "WHEN NOT MATCHED THEN INSERT *",
    ],
)
def test_merges_that_need_the_table_read_it(con: Connection, merge: str) -> None:
    _tables(con)
    cur = con.execute(merge)
    assert cur.rowcount >= 0
    assert _equality_deletes(con) == 0
    assert _rows(con) == _reference(merge)


def test_without_the_upsert_property_a_merge_reads(con: Connection) -> None:
    _tables(con, upsert="false")
    assert con.execute(FEED_MERGE).rowcount == 4
    assert _equality_deletes(con) == 0
    assert _rows(con) == _reference(FEED_MERGE)


def test_repeated_keys_in_the_feed_apply_in_order(con: Connection) -> None:
    _tables(con)
    con.execute(
        "INSERT INTO db.feed VALUES "
        "(5, 'a', 'U'), (5, 'b', 'D'), (6, 'a', 'D'), (6, 'b', 'U'), (30, 'z', 'I')"
    )
    con.execute(FEED_MERGE)
    rows = dict((r[0], r[1]) for r in _rows(con))
    assert 5 not in rows and rows[6] == "b" and rows[30] == "z"


def test_explain_says_by_key(con: Connection) -> None:
    _tables(con)
    lines = [r[0] for r in con.execute(f"EXPLAIN {FEED_MERGE}").fetchall()]
    assert "by key" in lines[1]
