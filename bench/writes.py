"""Write statements timed against DuckDB writing the same rows to plain Parquet (same run).

The baseline is the physical work a write cannot avoid: DuckDB's ``COPY ... TO`` of the same
query, zstd-compressed, unpartitioned or with ``PARTITION_BY`` into as many partitions as the
Iceberg table gets (``days(ts), bucket(16, id)``: 30 days x 16). The ratio is iceduck's
overhead: field ids, partition transforms, metrics, manifests and the commit.

    python3 bench/writes.py [--rows 2000000] [--dir /tmp/iceduck-bench-writes]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import duckdb

import iceduck

QUERY = (
    "SELECT i::BIGINT AS id, TIMESTAMPTZ '2024-01-01' + to_seconds(i % 2592000) AS ts, "
    "'k' || (i % 100) AS kind, random() AS v FROM range({rows}) r(i)"
)


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--dir", default="/tmp/iceduck-bench-writes")
    args = parser.parse_args()
    root = Path(args.dir)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    query = QUERY.format(rows=args.rows)

    duck = duckdb.connect()
    plain_sql = f"COPY ({query}) TO '{root}/plain.parquet' (FORMAT parquet, COMPRESSION zstd)"
    plain = timed(lambda: duck.execute(plain_sql))
    parted_query = (
        f"SELECT *, date_diff('day', TIMESTAMPTZ '1970-01-01', ts) AS day, id % 16 AS b FROM ({query})"
    )
    parted = timed(
        lambda: duck.execute(
            f"COPY ({parted_query}) TO '{root}/parted' "
            "(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (day, b))"
        )
    )

    cur = iceduck.connect(root / "warehouse").cursor()
    cur.execute("CREATE NAMESPACE b")
    cur.execute(
        "CREATE TABLE b.u (id bigint, ts timestamptz, kind string, v double) "
        "TBLPROPERTIES ('format-version'='3')"
    )
    cur.execute(
        "CREATE TABLE b.p (id bigint, ts timestamptz, kind string, v double) USING iceberg "
        "PARTITIONED BY (days(ts), bucket(16, id)) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    rows: list[tuple[str, float, str]] = []

    def run(label: str, sql: str, baseline: float | None = None) -> None:
        ms = timed(lambda: cur.execute(sql))
        ratio = f"{ms / baseline:.2f}x" if baseline else ""
        rows.append((f"{label} ({cur.rowcount:,} rows)", ms, ratio))

    rows.append(("baseline: DuckDB COPY to one Parquet file", plain, ""))
    rows.append(("baseline: DuckDB COPY PARTITION_BY (480 partitions)", parted, ""))
    run("INSERT, unpartitioned", f"INSERT INTO b.u {query}", plain)
    run("INSERT, days(ts) x bucket(16, id)", f"INSERT INTO b.p {query}", parted)
    run("DELETE 10%, merge-on-read (deletion vectors)", "DELETE FROM b.p WHERE id % 10 = 0")
    run("DELETE whole partitions (no data read)", "DELETE FROM b.p WHERE ts < TIMESTAMPTZ '2024-01-05'")
    run("UPDATE 1%, copy-on-write", "UPDATE b.u SET v = 0 WHERE id % 100 = 0")
    run(
        "MERGE matching 10,000 rows, copy-on-write",
        "MERGE INTO b.u t USING (SELECT i::BIGINT AS id FROM range(0, 20000, 2) r(i)) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = -1",
    )
    print(f"| statement ({args.rows:,} rows written) | ms | vs baseline |\n|---|---|---|")
    for label, ms, ratio in rows:
        print(f"| {label} | {ms:.0f} | {ratio} |")


if __name__ == "__main__":
    main()
