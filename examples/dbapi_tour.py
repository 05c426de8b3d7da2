"""A tour of iceduck through Python's DB-API: create, load, query, change, travel back, inspect.

    python3 examples/dbapi_tour.py [WAREHOUSE]     # default: a fresh temporary folder

Every statement is a commit to an Iceberg table that Spark can read (see spark_sharing.py).
"""

from __future__ import annotations

import sys
import tempfile
from datetime import datetime, timedelta

import iceduck


def main(warehouse: str) -> None:
    with iceduck.connect(warehouse) as con:
        cur = con.cursor()
        cur.execute("CREATE NAMESPACE IF NOT EXISTS tour")
        cur.execute("DROP TABLE IF EXISTS tour.readings PURGE")
        cur.execute(
            """CREATE TABLE tour.readings (sensor bigint NOT NULL, read_at timestamp, celsius double)
               USING iceberg PARTITIONED BY (days(read_at), bucket(4, sensor))
               TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"""
        )

        # executemany: one INSERT, one Iceberg commit, however many rows
        start = datetime(2024, 6, 1)
        rows = [(s, start + timedelta(hours=h), 15.0 + s + h / 10) for s in range(5) for h in range(48)]
        cur.executemany("INSERT INTO tour.readings VALUES (?, ?, ?)", rows)
        print(f"inserted {cur.rowcount} rows")

        cur.execute(
            "SELECT sensor, round(avg(celsius), 2) FROM tour.readings WHERE sensor < ? GROUP BY 1 ORDER BY 1",
            [2],
        )
        print("average by sensor:", cur.fetchall())
        print("columns:", [(d[0], d[1]) for d in cur.description])

        cur.execute("ALTER TABLE tour.readings CREATE TAG before_cleanup")
        cur.execute("DELETE FROM tour.readings WHERE celsius > 22")   # deletion vectors
        print(f"deleted {cur.rowcount} rows")

        cur.execute("SELECT count(*) FROM tour.readings")
        now = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM tour.readings VERSION AS OF 'before_cleanup'")
        print(f"rows now: {now}, at tag before_cleanup: {cur.fetchone()[0]}")

        # a snapshot's total-records counts the rows in its data files; rows deleted by deletion
        # vectors or position-delete files are counted apart, so the live rows are the difference
        cur.execute(
            "SELECT operation, summary['total-records']::BIGINT AS in_files, "
            "summary['total-position-deletes']::BIGINT AS deleted, in_files - deleted AS live "
            "FROM tour.readings.snapshots ORDER BY committed_at"
        )
        print("snapshots (operation, rows in files, deleted, live):", cur.fetchall())
        cur.execute("SELECT content, count(*) FROM tour.readings.files GROUP BY 1 ORDER BY 1")
        print("live files by content (0 data, 1 position deletes and deletion vectors):", cur.fetchall())

        cur.execute(
            "EXPLAIN SELECT * FROM tour.readings "
            "WHERE sensor = 3 AND read_at >= TIMESTAMP '2024-06-02 00:00:00'"
        )
        print("\n".join(line for (line,) in cur.fetchall() if "manifests:" in line or "data files:" in line))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="iceduck-tour-"))
