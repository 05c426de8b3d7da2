"""Compaction: a merge-on-read table with 10% of its rows deleted, after
``CALL system.rewrite_data_files``, against a table never deleted from.

Three tables of the same deterministic rows (``id``, ``v``, ``s``, as ``mor.py``), in a
fresh warehouse under ``bench/.warehouse/compact-<rows>/`` (namespace ``compact``):

* ``deleted``: written by 10 INSERTs (10 files), then 10% of the rows deleted scattered over
  every file (``id % 10 = 0``), as deletion vectors (v3) or position-delete files (v2);
* ``compacted``: the same, then ``CALL system.rewrite_data_files`` with default options
  (the 10 files are small: one group, rewritten with the deletes applied);
* ``clean``: the surviving 90% of the rows written once by ``CREATE TABLE AS`` -- a table
  never deleted from.

The query is the full scan ``SELECT count(*), sum(v), count(DISTINCT s)``; the runs of the
three tables are interleaved (a change in the machine's load hits all three) and each cell
is the median. The figure is ``compacted / clean``: compaction must bring a merge-on-read
table back to the cost of a table never deleted from (about 1.0x). The answers of the three
tables must agree.

    python3 bench/compaction.py [--rows N] [--runs N]
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import WAREHOUSE_ROOT, Measure, Section, fmt_ms, fmt_ratio, ratio, table_lines

import iceduck

NAMESPACE = "compact"
DATA = (
    "SELECT i::BIGINT AS id, ((i * 7919) % 1000003) / 100.0 AS v, 's' || (i % 100003) AS s "
    "FROM range({first}, {last}) r(i)"
)
QUERY = "SELECT count(*), sum(v), count(DISTINCT s) FROM {table}"
DELETED = "id % 10 = 0"
INSERTS = 10
VERSIONS = {"dv": 3, "position": 2}
SUM_TOLERANCE = 1e-9


def build(con: Any, kind: str, rows: int) -> dict[str, float]:
    """The three tables of ``kind``; the time of the DELETE and of the compaction (ms)."""
    version = VERSIONS[kind]
    props = f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read')"
    step = rows // INSERTS
    for name in ("deleted", "compacted"):
        table = f"{NAMESPACE}.{kind}_{name}"
        con.execute(f"CREATE TABLE {table} (id bigint, v double, s string) {props}")
        for i in range(INSERTS):
            con.execute(f"INSERT INTO {table} {DATA.format(first=i * step, last=(i + 1) * step)}")
    timings = {}
    for name in ("deleted", "compacted"):
        started = time.perf_counter()
        con.execute(f"DELETE FROM {NAMESPACE}.{kind}_{name} WHERE {DELETED}")
        timings["delete"] = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    result = con.execute(f"CALL system.rewrite_data_files('{NAMESPACE}.{kind}_compacted')").fetchall()
    timings["rewrite"] = (time.perf_counter() - started) * 1000
    assert result[0][0] == INSERTS and result[0][1] >= 1, result
    clean = DATA.format(first=0, last=step * INSERTS)
    con.execute(
        f"CREATE TABLE {NAMESPACE}.{kind}_clean {props} AS SELECT * FROM ({clean}) WHERE NOT ({DELETED})"
    )
    return timings


def interleaved(queries: dict[str, Callable[[], Any]], runs: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Median ms per query, runs interleaved; the last answer of each."""
    answers = {name: fn() for name, fn in queries.items()}  # untimed: warm caches
    times: dict[str, list[float]] = {name: [] for name in queries}
    for _ in range(runs):
        for name, fn in queries.items():
            started = time.perf_counter()
            answers[name] = fn()
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(t) for name, t in times.items()}, answers


def agree(answers: list[Any]) -> bool:
    """Same count and distinct count; sums equal up to the float rounding of summing in
    another order."""
    (first,) = answers[0]
    for (row,) in answers[1:]:
        if row[0] != first[0] or row[2] != first[2]:
            return False
        if abs(row[1] - first[1]) > SUM_TOLERANCE * max(1.0, abs(first[1])):
            return False
    return True


def run_section(rows: int, runs: int, root: Path | None = None) -> Section:
    warehouse = root or WAREHOUSE_ROOT / f"compact-{rows}"
    shutil.rmtree(warehouse, ignore_errors=True)
    section = Section("compaction")
    table_rows = []
    with iceduck.connect(warehouse) as con:
        con.execute(f"CREATE NAMESPACE {NAMESPACE}")
        for kind in VERSIONS:
            timings = build(con, kind, rows)
            queries = {
                name: (lambda t=f"{NAMESPACE}.{kind}_{name}": con.execute(QUERY.format(table=t)).fetchall())
                for name in ("deleted", "compacted", "clean")
            }
            medians, answers = interleaved(queries, runs)
            if not agree(list(answers.values())):
                section.mismatches.append(f"compaction {kind}: answers differ {answers}")
            files = {
                name: con.execute(f"SELECT count(*) FROM {NAMESPACE}.{kind}_{name}.data_files").fetchall()[0][
                    0
                ]
                for name in ("deleted", "compacted", "clean")
            }
            figure = ratio(medians["compacted"], medians["clean"])
            table_rows.append(
                [
                    kind,
                    f"{fmt_ms(medians['deleted'])} ({files['deleted']} files)",
                    f"{fmt_ms(medians['compacted'])} ({files['compacted']} files)",
                    f"{fmt_ms(medians['clean'])} ({files['clean']} files)",
                    fmt_ratio(figure),
                    fmt_ratio(ratio(medians["deleted"], medians["clean"])),
                    fmt_ms(timings["rewrite"]),
                ]
            )
            section.measures.append(
                Measure(
                    f"full scan after compaction ({kind}, 10% deleted)",
                    medians["compacted"],
                    medians["clean"],
                )
            )
            section.data[kind] = {
                "medians_ms": medians,
                "files": files,
                **timings,
                "compacted_vs_clean": figure,
            }
    header = [
        "deletes",
        "deleted",
        "compacted",
        "never deleted",
        "compacted/never",
        "deleted/never",
        "rewrite",
    ]
    section.lines = [
        f"compaction: {rows:,} rows, 10% deleted (id % 10 = 0) in {INSERTS} files, "
        f"full scan median of {runs} interleaved runs",
        *table_lines(header, table_rows),
    ]
    return section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    section = run_section(args.rows, args.runs)
    print("\n".join(section.lines))
    if section.mismatches:
        print("\n".join(section.mismatches), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
