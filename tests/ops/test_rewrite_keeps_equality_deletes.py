"""A copy-on-write rewrite applies every equality delete of the files it rewrites.

A query's plan may leave out an equality delete whose key bounds exclude the query's
filter (it cannot delete a matching row), but a DELETE/UPDATE/MERGE that rewrites a file
copies the file's *other* rows too: leaving that delete out brought deleted rows back.
"""

from __future__ import annotations

import pytest

from iceduck.connection import Connection

STATEMENTS = [
    "DELETE FROM db.t WHERE id > 8",
    "UPDATE db.t SET v = 'u' WHERE id = 7",
    "MERGE INTO db.t t USING (SELECT 7 AS id, 'm' AS v) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *",
]


@pytest.mark.parametrize("statement", STATEMENTS)
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
@pytest.mark.parametrize("version", [2, 3])
def test_row_replaced_by_key_stays_replaced(con: Connection, statement: str, mode: str, version: int) -> None:
    con.execute(
        f"CREATE TABLE db.t (id INT NOT NULL, v STRING) TBLPROPERTIES ('format-version'='{version}', "
        f"'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
    )
    con.execute("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    con.execute("INSERT INTO db.t SELECT i, 'v' || i FROM range(10) r(i)")
    con.execute("INSERT OR REPLACE INTO db.t VALUES (3, 'x')")  # an equality delete of key 3
    con.execute(statement)
    assert con.execute("SELECT * FROM db.t WHERE id = 3").fetchall() == [(3, "x")]
    assert con.execute("SELECT count(*), count(DISTINCT id) FROM db.t").fetchall() in ([(10, 10)], [(9, 9)])
    con.execute("SET iceduck.pruning = false")  # the same answer without pruning
    assert con.execute("SELECT * FROM db.t WHERE id = 3").fetchall() == [(3, "x")]
