"""SQL the scenario scripts do not cover, through a REST client and on a local warehouse:
format version 1, CTAS (created by stage-create and an ``assert-create`` commit), time travel
by snapshot id and tag, metadata tables, procedures (rollback, expire_snapshots,
rewrite_data_files), DROP ... PURGE removing every file, and the namespace statements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import iceduck
from tests.catalog.rest_client.conftest import Served
from tests.support.scenario_rows import iceduck_rows

FIRST_SNAPSHOT = "SELECT snapshot_id FROM m.c.snapshots ORDER BY committed_at LIMIT 1"

#: (statement, parameters: None, or a query giving them on each side)
STEPS: list[tuple[str, str | None]] = [
    ("CREATE NAMESPACE m", None),
    ("SHOW NAMESPACES", None),
    (
        "CREATE TABLE m.v1 (id bigint, s string) USING iceberg PARTITIONED BY (truncate(1, s)) "
        "TBLPROPERTIES ('format-version' = '1')",
        None,
    ),
    ("INSERT INTO m.v1 VALUES (1, 'aa'), (2, 'ab'), (3, 'bb')", None),
    ("DELETE FROM m.v1 WHERE id = 2", None),
    ("UPDATE m.v1 SET s = 'zz' WHERE id = 3", None),
    ("SELECT * FROM m.v1", None),
    (
        "CREATE TABLE m.c USING iceberg PARTITIONED BY (bucket(2, id)) "
        "AS SELECT id, s, id * 2 AS d FROM m.v1",
        None,
    ),
    ("SELECT * FROM m.c", None),
    ("INSERT INTO m.c VALUES (10, 'x', 20)", None),
    ("ALTER TABLE m.c CREATE TAG t1", None),
    ("INSERT INTO m.c VALUES (11, 'y', 22)", None),
    ("SELECT * FROM m.c VERSION AS OF 't1'", None),
    ("SELECT * FROM m.c VERSION AS OF ?", FIRST_SNAPSHOT),
    ("SELECT operation, summary['added-records'] FROM m.c.snapshots", None),
    ("SELECT record_count, file_format, content FROM m.c.files", None),
    ("SELECT name, type FROM m.c.refs", None),
    ("SELECT count(*) FROM m.c.manifests", None),
    ("SELECT is_current_ancestor FROM m.c.history", None),
    ("CALL system.rollback_to_snapshot('m.c', ?)", FIRST_SNAPSHOT),
    ("SELECT * FROM m.c", None),
    ("INSERT INTO m.c VALUES (12, 'z', 24)", None),
    ("CALL system.rewrite_data_files('m.c')", None),
    ("SELECT * FROM m.c", None),
    (
        "CALL system.expire_snapshots(table => 'm.c', older_than => TIMESTAMP '2999-01-01', "
        "retain_last => 1)",
        None,
    ),
    ("SELECT count(*) FROM m.c.snapshots", None),
    (
        "CREATE TABLE m.c3 USING iceberg TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = "
        "'merge-on-read') AS SELECT * FROM m.c",
        None,
    ),
    ("DELETE FROM m.c3 WHERE id = 10", None),
    ("SELECT content, record_count FROM m.c3.files", None),
    ("SELECT * FROM m.c3", None),
    ("SHOW TABLES IN m", None),
]


def _run(con: iceduck.Connection, sql: str, params_query: str | None) -> Any:
    params = [con.cursor().execute(params_query).fetchone()[0]] if params_query else None  # type: ignore[index]
    cur = con.cursor().execute(sql, params)
    if cur.result is not None and cur.result.written is not None:  # a write: its count
        return cur.rowcount
    return iceduck_rows(con, sql) if params is None else sorted(cur.fetchall(), key=repr)


def test_statements_through_rest_match_local(any_served: Served, tmp_path: Path) -> None:
    local = iceduck.connect(tmp_path / "local")
    remote = any_served.connect()
    for sql, params in STEPS:
        got, expected = _run(remote, sql, params), _run(local, sql, params)
        if sql.startswith("CALL system.rollback"):  # (previous, current) snapshot ids: per side
            got, expected = len(got), len(expected)
        assert got == expected, sql


def test_drop_purge_deletes_every_file_and_rename(served: Served, tmp_path: Path) -> None:
    con = served.connect()
    cur = con.cursor()
    cur.execute("CREATE NAMESPACE p")
    cur.execute("CREATE TABLE p.t (id bigint) USING iceberg TBLPROPERTIES ('format-version' = '2')")
    cur.execute("INSERT INTO p.t VALUES (1), (2)")
    cur.execute("ALTER TABLE p.t RENAME TO p.u")
    assert cur.execute("SELECT * FROM p.u ORDER BY id").fetchall() == [(1,), (2,)]
    location = Path(cur.execute("SELECT file_path FROM p.u.files").fetchone()[0]).parents[1]  # type: ignore[index]
    assert location.is_relative_to(served.warehouse) and location.exists()
    cur.execute("DROP TABLE p.u PURGE")
    assert not location.exists()
    assert cur.execute("SHOW TABLES IN p").fetchall() == []
    cur.execute("DROP NAMESPACE p")
    assert ("p",) not in cur.execute("SHOW NAMESPACES").fetchall()
