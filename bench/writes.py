"""Write statements timed against DuckDB writing the same rows to plain Parquet (same run).

The baseline is the physical work a write cannot avoid: DuckDB's ``COPY ... TO`` of the same
query, zstd-compressed, unpartitioned or with ``PARTITION_BY`` into as many partitions as the
Iceberg table gets (``days(ts), bucket(16, id)``: 30 days x 16). The ratio is iceduck's
overhead: field ids, partition transforms, metrics, manifests and the commit.

    python3 bench/writes.py [--rows 2000000] [--dir /tmp/iceduck-bench-writes]

``run.py --only writes`` runs the same statements as a section of the one command (rows
``--writes-rows``), adding PyIceberg's ``append`` of the same rows as the peer of the
unpartitioned INSERT.
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
from common import Measure, Section, fmt_ms, fmt_ratio, ratio, table_lines, timed_ms

import iceduck

QUERY = (
    "SELECT i::BIGINT AS id, TIMESTAMPTZ '2024-01-01' + to_seconds(i % 2592000) AS ts, "
    "'k' || (i % 100) AS kind, random() AS v FROM range({rows}) r(i)"
)


@dataclass
class WriteRow:
    """One statement: its time, the baseline's (when one applies) and the rows it wrote."""

    label: str
    ms: float
    baseline_ms: float | None = None
    rowcount: int | None = None


def measure(rows: int, root: Path) -> tuple[list[WriteRow], float | str]:
    """Every statement once, in order (each one changes the tables the next one reads), and
    PyIceberg's ``append`` of the same rows as Arrow (ms, or why it could not run)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    query = QUERY.format(rows=rows)

    duck = duckdb.connect()
    plain_sql = f"COPY ({query}) TO '{root}/plain.parquet' (FORMAT parquet, COMPRESSION zstd)"
    plain = timed_ms(lambda: duck.execute(plain_sql))
    parted_query = (
        f"SELECT *, date_diff('day', TIMESTAMPTZ '1970-01-01', ts) AS day, id % 16 AS b FROM ({query})"
    )
    parted = timed_ms(
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
    cur.execute("CREATE TABLE b.pyiceberg (id bigint, ts timestamptz, kind string, v double)")
    out = [
        WriteRow("baseline: DuckDB COPY to one Parquet file", plain),
        WriteRow("baseline: DuckDB COPY PARTITION_BY (480 partitions)", parted),
    ]

    def run(label: str, sql: str, baseline: float | None = None) -> None:
        ms = timed_ms(lambda: cur.execute(sql))
        out.append(WriteRow(label, ms, baseline, cur.rowcount))

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
    pyiceberg: float | str
    try:
        from pyiceberg.catalog.sql import SqlCatalog

        warehouse = root / "warehouse"
        catalog = SqlCatalog(
            "iceduck", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}"
        )
        table = catalog.load_table("b.pyiceberg")
        arrow = duck.sql(query).to_arrow_table().cast(table.schema().as_arrow())
        pyiceberg = timed_ms(lambda: table.append(arrow))
        catalog.engine.dispose()
    except Exception as e:
        pyiceberg = f"failed: {type(e).__name__}: {str(e)[:200]}"
    cur.close()
    duck.close()
    return out, pyiceberg


def run_section(rows: int, root: Path) -> Section:
    """The statements as a section of run.py: one performance-table row each (the limit only where a
    plain-Parquet write does the same physical work)."""
    written, pyiceberg = measure(rows, root)
    sec = Section("writes")
    sec.lines.append(f"== writes: {rows:,} generated rows, each statement once, in order; tables in {root}")
    sec.lines += table_lines(
        ["statement", "rows", "ms", "vs baseline"],
        [
            [
                w.label,
                "-" if w.rowcount is None else f"{w.rowcount:,}",
                fmt_ms(w.ms),
                fmt_ratio(ratio(w.ms, w.baseline_ms)),
            ]
            for w in written
        ],
    )
    sec.lines.append(
        "PyIceberg append of the same rows as Arrow (unpartitioned; the Arrow conversion not timed): "
        + (f"{fmt_ms(pyiceberg)} ms" if isinstance(pyiceberg, float) else pyiceberg)
    )
    for w in written:
        if w.label.startswith("baseline"):
            continue
        peer = pyiceberg if w.label == "INSERT, unpartitioned" else None
        sec.measures.append(Measure(f"write: {w.label} ({rows:,} rows)", w.ms, w.baseline_ms, None, peer))
    sec.data = {
        "rows": rows,
        "statements": [dataclasses.asdict(w) for w in written],
        "pyiceberg_ms": pyiceberg,
    }
    return sec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--dir", default="/tmp/iceduck-bench-writes")
    args = parser.parse_args()
    written, _ = measure(args.rows, Path(args.dir))
    print(f"| statement ({args.rows:,} rows written) | ms | vs baseline |\n|---|---|---|")
    for w in written:
        label = w.label if w.rowcount is None else f"{w.label} ({w.rowcount:,} rows)"
        print(f"| {label} | {w.ms:.0f} | {fmt_ratio(ratio(w.ms, w.baseline_ms)) if w.baseline_ms else ''} |")


if __name__ == "__main__":
    main()
