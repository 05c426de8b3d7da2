"""A change feed replayed: 100 batches of inserts, updates and deletes by key into a
partitioned upsert table, compared after every batch with the same changes applied in
order to a plain DuckDB table.

Each batch goes through one of the by-key writes (a feed MERGE, INSERT OR REPLACE then
DELETE by key, or INSERT with ``write.upsert.enabled`` then DELETE ... IN (subquery)), with
repeated keys inside a batch (the last change of a key wins); every 25 batches the table is
compacted. Seeded: the same feed every run.
"""

from __future__ import annotations

import random
from pathlib import Path

import duckdb

import iceduck

BATCHES = 100
KEYS = 400


def _feed(rng: random.Random, batch: int, live: set[int]) -> list[tuple[int, str, str]]:
    """(id, value, op) rows: op I (insert), U (update) or D (delete); repeats allowed."""
    rows = []
    for n in range(rng.randint(5, 40)):
        key = rng.randrange(KEYS)
        op = rng.choice("IUD") if key in live else rng.choice("II D")
        op = "D" if op == "D" else ("U" if key in live else "I")
        rows.append((key, f"b{batch}-{n}", op))
        if op == "D":
            live.discard(key)
        else:
            live.add(key)
    return rows


def _reference(duck: duckdb.DuckDBPyConnection, rows: list[tuple[int, str, str]]) -> None:
    for key, value, op in rows:  # in order: the last change of a key wins
        duck.execute("DELETE FROM t WHERE id = ?", [key])
        if op != "D":
            duck.execute("INSERT INTO t VALUES (?, ?)", [key, value])


def _last_per_key(rows: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    last = {}
    for row in rows:
        last[row[0]] = row
    return list(last.values())


def _values(rows: list[tuple[int, str, str]]) -> str:
    return ", ".join(f"({k}, '{v}', '{op}')" for k, v, op in rows)


def _apply(con: iceduck.Connection, batch: int, rows: list[tuple[int, str, str]]) -> None:
    way = batch % 3
    if way == 0:  # one feed MERGE, the feed's own order deciding
        con.execute(
            f"MERGE INTO db.t t USING (VALUES {_values(rows)}) AS s(id, v, op) ON t.id = s.id "
            "WHEN MATCHED AND s.op = 'D' THEN DELETE WHEN MATCHED THEN UPDATE SET * "
            "WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *"
        )
        return
    final = _last_per_key(rows)
    writes = [(k, v) for k, v, op in final if op != "D"]
    deletes = [k for k, _, op in final if op == "D"]
    if writes:
        verb = "INSERT OR REPLACE INTO" if way == 1 else "INSERT INTO"
        con.execute(f"{verb} db.t VALUES {', '.join(f'({k}, {v!r})' for k, v in writes)}")
    if deletes and way == 1:
        con.execute(f"DELETE FROM db.t WHERE id IN ({', '.join(map(str, deletes))})")
    elif deletes:
        con.execute("CREATE OR REPLACE TEMP TABLE gone AS SELECT unnest(?) AS id", [deletes])
        con.execute("DELETE FROM db.t WHERE id IN (SELECT id FROM gone)")


def test_replayed_feed_equals_duckdb(tmp_path: Path) -> None:
    rng = random.Random(34)
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute(
        "CREATE TABLE db.t (id BIGINT NOT NULL, v STRING) PARTITIONED BY (bucket(8, id)) "
        "TBLPROPERTIES ('write.upsert.enabled'='true')"
    )
    con.execute("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    duck = duckdb.connect()
    duck.execute("CREATE TABLE t (id BIGINT, v VARCHAR)")
    live: set[int] = set()
    for batch in range(BATCHES):
        rows = _feed(rng, batch, live)
        _apply(con, batch, rows)
        _reference(duck, rows)
        if batch % 25 == 24:
            compact = "CALL system.rewrite_data_files(table => 'db.t', options => map('rewrite-all', 'true'))"
            con.execute(compact)
        got = con.execute("SELECT * FROM db.t ORDER BY id").fetchall()
        assert got == duck.execute("SELECT * FROM t ORDER BY id").fetchall(), f"after batch {batch}"
    kinds = con.execute("SELECT DISTINCT operation FROM db.t.snapshots ORDER BY 1").fetchall()
    assert kinds == [("delete",), ("overwrite",), ("replace",)]
    con.close()
