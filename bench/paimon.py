"""Paimon tables written by pypaimon: iceduck's point query and full scan against DuckDB reading
the same Parquet files directly.

Two tables of about a million rows (``paimon_build.py``, run in the pypaimon venv
``tests/.venv-paimon``, created on first use): ``bench.append`` (append-only, 8 files) and
``bench.pk`` (primary key ``id``, 4 buckets, 4 inserting commits and 3 overlapping updating and
deleting ones). Built once under ``bench/.warehouse/paimon-<rows>``. Queries, cold (a fresh
connection per run) and warm (one connection):

* point: ``SELECT id, device, v, s FROM t WHERE id = <k>``;
* full: ``SELECT count(*), sum(v) FROM t``.

Engines:

* **iceduck**: ``iceduck.connect(..., paimon=<warehouse>)``, ``FROM paimon.bench.<table>``;
* **baseline**: DuckDB's ``read_parquet([...])`` of the live data files pypaimon's scan plans.
  For ``append`` this is the same answer; for ``pk`` it is a lower bound, NOT the same answer:
  the raw files hold every version of a key, including deleted ones, and no merge is done;
* **merged by hand** (``pk`` only): DuckDB on the same raw files with the merge a user would
  write (``QUALIFY row_number() OVER (PARTITION BY _KEY_id ORDER BY _SEQUENCE_NUMBER DESC) = 1``,
  deletes dropped): the same answer, the fair measure of iceduck's merge.

iceduck's answers must equal pypaimon's own (written by ``paimon_build.py``), and for ``append``
the baseline's too; a difference is a MISMATCH (exit status 1). Ratios are iceduck over the
baseline measured in the same run, reported, never asserted.

    python3 bench/paimon.py [--rows 1000000] [--runs 3,5] [--warehouse DIR] [--rebuild]
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import hashlib
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    BENCH_DIR,
    WAREHOUSE_ROOT,
    Measure,
    Section,
    Timing,
    duckdb_connection,
    fmt_ratio,
    print_section,
    ratio,
    sql_list,
    table_lines,
    time_query,
)

DEFAULT_ROWS = 1_000_000
#: (cold runs, warm runs)
RUNS = (3, 5)
BUILDER = BENCH_DIR / "paimon_build.py"
TABLES = ("append", "pk")
LOWER_BOUND = (
    "DuckDB on the raw files: a lower bound (every version of every key, no merge), not the same answer"
)
HAND_MERGED = (
    "DuckDB on the raw files with the merge written by hand (newest _SEQUENCE_NUMBER per key, "
    "deletes dropped): the same answer"
)


def hand_merged(paths: str) -> str:
    """The ``pk`` table as a DuckDB user who knows Paimon's layout would merge it by hand: the
    same answer as iceduck's, the fair baseline of its merge (the bench's key is ``id``, so the
    key column is ``_KEY_id``; a key lives in one bucket, so no bucket column is needed)."""
    newest = (
        f"SELECT * FROM read_parquet({paths}) "
        "QUALIFY row_number() OVER (PARTITION BY _KEY_id ORDER BY _SEQUENCE_NUMBER DESC) = 1"
    )
    return f"(SELECT * FROM ({newest}) WHERE _VALUE_KIND NOT IN (1, 3))"


def pypaimon_python() -> Path:
    """The pypaimon venv's interpreter (tests/support/paimon.py creates the venv when missing)."""
    repo = str(BENCH_DIR.parent)
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from tests.support.paimon import ensure_venv

    return ensure_venv()


def build(warehouse: Path, rows: int, force: bool = False) -> dict[str, Any]:
    """The tables and pypaimon's answers (``_bench.json``); rebuilt when the builder changed."""
    digest = hashlib.sha256(BUILDER.read_bytes()).hexdigest()[:16]
    stamp = warehouse / "_builder"
    if force or not stamp.exists() or stamp.read_text() != digest or not (warehouse / "_bench.json").exists():
        done = subprocess.run(
            [str(pypaimon_python()), str(BUILDER), str(warehouse), str(rows)], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"paimon_build.py failed: {done.stderr[-3000:]}")
        stamp.write_text(digest)
    return json.loads((warehouse / "_bench.json").read_text())


def queries(point: int) -> dict[str, Callable[[str], str]]:
    return {
        "point": lambda src: f"SELECT id, device, v, s FROM {src} WHERE id = {point}",
        "full": lambda src: f"SELECT count(*), sum(v) FROM {src}",
    }


def cold_warm(setup: Callable[[], Any], sql: str, runs: tuple[int, int]) -> tuple[Timing, Timing]:
    """Medians of ``sql`` cold (the first query on a fresh connection; opening it is not timed,
    as in the events benchmark) and warm (one connection, after one untimed run)."""
    cold_ms, rows = [], None
    try:
        for _ in range(runs[0] + 1):  # the first run is untimed: one-time costs of the process
            con = setup()
            try:
                started = time.perf_counter()
                rows = con.execute(sql).fetchall()
                cold_ms.append((time.perf_counter() - started) * 1000)
            finally:
                con.close()
        cold = Timing(statistics.median(cold_ms[1:]) if runs[0] else None, rows)
        con = setup()
        try:
            warm = time_query(lambda: con.execute(sql).fetchall(), runs[1])
        finally:
            con.close()
    except Exception as e:
        failed = Timing(error=f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
        return failed, failed
    return cold, warm


def check(label: str, name: str, rows: list[tuple[Any, ...]] | None, expected: dict[str, Any]) -> str | None:
    """Why ``rows`` (an answer to query ``name``) differs from pypaimon's, or None."""
    if rows is None:
        return f"{label}: no answer"
    if name == "point":
        got = sorted([list(r) for r in rows])
        return (
            None if got == sorted(expected["point_rows"]) else f"{label}: {got} != {expected['point_rows']}"
        )
    (count, total), want = rows[0], (expected["count"], expected["sum_v"])
    if count != want[0] or not math.isclose(float(total), want[1], rel_tol=1e-9):
        return f"{label}: count, sum(v) = {count}, {total}; pypaimon's {want[0]}, {want[1]}"
    return None


def run_section(
    rows: int = DEFAULT_ROWS,
    runs: tuple[int, int] = RUNS,
    root: Path | None = None,
    force: bool = False,
    progress: Any = None,
) -> Section:
    warehouse = root or WAREHOUSE_ROOT / f"paimon-{rows}"
    if progress:
        progress(f"paimon: building (or reusing) {rows:,}-row tables with pypaimon in {warehouse}")
    built = build(warehouse, rows, force)
    import iceduck

    sec = Section("paimon")
    header = [
        "table",
        "query",
        "iceduck cold",
        "iceduck warm",
        "baseline cold",
        "baseline warm",
        "warm ratio",  # iceduck warm / baseline warm
    ]
    body, data = [], {}
    iceberg = tempfile.mkdtemp(prefix="iceduck-bench-paimon-")  # the connections' own Iceberg warehouse
    for table in TABLES:
        expected = built[table]
        paths = sql_list(expected["files"])
        for name, make in queries(expected["point"]).items():
            if progress:
                progress(f"paimon: {table} {name}")
            ice = make(f"paimon.bench.{table}")
            ice_cold, ice_warm = cold_warm(lambda: iceduck.connect(iceberg, paimon=str(warehouse)), ice, runs)
            base_cold, base_warm = cold_warm(duckdb_connection, make(f"read_parquet({paths})"), runs)
            for label, t in (("iceduck cold", ice_cold), ("iceduck warm", ice_warm)):
                why = t.error or check(f"{table} {name} {label}", name, t.rows, expected)
                if why:
                    sec.mismatches.append(f"paimon {table} {name} {label}: {why}")
            if table == "append" and (
                why := check(f"{table} {name} baseline", name, base_warm.rows, expected)
            ):
                sec.mismatches.append(f"paimon: {why}")
            r = ratio(ice_warm.ms, base_warm.ms)
            body.append(
                [
                    table,
                    name,
                    ice_cold.cell(),
                    ice_warm.cell(),
                    base_cold.cell(),
                    base_warm.cell(),
                    fmt_ratio(r),
                ]
            )
            note = LOWER_BOUND if table == "pk" else "DuckDB read_parquet of the same files"
            sec.measures.append(
                Measure(f"paimon {table} {name} (warm)", ice_warm.ms, base_warm.ms, note=note)
            )
            data[f"{table}/{name}"] = {
                "iceduck_cold_ms": ice_cold.ms,
                "iceduck_warm_ms": ice_warm.ms,
                "baseline_cold_ms": base_cold.ms,
                "baseline_warm_ms": base_warm.ms,
            }
            if table != "pk":
                continue
            merged_cold, merged_warm = cold_warm(duckdb_connection, make(hand_merged(paths)), runs)
            if why := merged_warm.error or check(f"pk {name} hand-merged", name, merged_warm.rows, expected):
                sec.mismatches.append(f"paimon: {why}")
            body.append(
                [
                    "pk, merged by hand",
                    name,
                    ice_cold.cell(),
                    ice_warm.cell(),
                    merged_cold.cell(),
                    merged_warm.cell(),
                    fmt_ratio(ratio(ice_warm.ms, merged_warm.ms)),
                ]
            )
            sec.measures.append(
                Measure(
                    f"paimon pk {name} vs hand merge (warm)", ice_warm.ms, merged_warm.ms, note=HAND_MERGED
                )
            )
            data[f"pk-hand-merged/{name}"] = {
                "iceduck_cold_ms": ice_cold.ms,
                "iceduck_warm_ms": ice_warm.ms,
                "baseline_cold_ms": merged_cold.ms,
                "baseline_warm_ms": merged_warm.ms,
            }
    shutil.rmtree(iceberg, ignore_errors=True)
    files = {t: len(built[t]["files"]) for t in TABLES}
    sec.lines.append(
        f"== paimon: pypaimon-written tables of {rows:,} rows: bench.append ({files['append']} files), "
        f"bench.pk ({files['pk']} files in 4 buckets, {built['pk']['count']:,} live keys after updates)"
    )
    sec.lines += table_lines(header, body)
    sec.lines.append(
        f"baseline: DuckDB read_parquet([...]) of the live files (runs: cold {runs[0]}, warm {runs[1]})"
    )
    sec.lines.append(f"pk baseline: {LOWER_BOUND}")
    sec.lines.append(f"pk, merged by hand: {HAND_MERGED}")
    sec.lines.append(
        "iceduck / baseline (same run): "
        + "; ".join(
            f"{key} cold {fmt_ratio(ratio(d['iceduck_cold_ms'], d['baseline_cold_ms']))}, "
            f"warm {fmt_ratio(ratio(d['iceduck_warm_ms'], d['baseline_warm_ms']))}"
            for key, d in data.items()
        )
    )
    sec.data = {"rows": rows, "files": files, "timings": data}
    return sec


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="rows per table")
    p.add_argument("--runs", default=",".join(map(str, RUNS)), help="cold,warm timed runs per query")
    p.add_argument("--warehouse", type=Path, help="default bench/.warehouse/paimon-<rows>")
    p.add_argument("--rebuild", action="store_true", help="rebuild the tables even if cached")
    args = p.parse_args(argv)
    cold, warm = (int(x) for x in args.runs.split(","))
    return print_section(run_section(args.rows, (cold, warm), args.warehouse, args.rebuild))


if __name__ == "__main__":
    sys.exit(main())
