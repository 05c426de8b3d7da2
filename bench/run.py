"""The events-table benchmark: iceduck against DuckDB's Iceberg extension, PyIceberg and
DuckDB reading exactly the needed Parquet files.

Usage::

    python3 bench/run.py [--scale small|full] [--peers baseline,iceduck,duckdb-iceberg,pyiceberg]

The table (the metadata-indexing post's shape, see events.py) is built once under
``bench/.warehouse/<scale>`` and reused. DuckDB's Iceberg extension runs in ``bench/.venv``
(created on first use, see README.md). Prints one row per engine with cold and warm medians
in milliseconds and their multiple of the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import engines
import events
from engines import EngineResult, Measurement, Query

PEERS = ("baseline", "iceduck", "duckdb-iceberg", "pyiceberg")
#: relative tolerance when comparing an engine's sum(v) with the baseline's (summation order differs)
SUM_TOLERANCE = 1e-9


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", choices=sorted(events.SCALES), default="full")
    p.add_argument("--days", type=int, help="override the scale's number of daily appends")
    p.add_argument("--rows-per-day", type=int, help="override the scale's rows per append")
    p.add_argument("--devices", type=int, help="override the scale's number of devices")
    p.add_argument("--warehouse", type=Path, help="default: bench/.warehouse/<scale>")
    p.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of " + ",".join(PEERS))
    p.add_argument("--repeat", type=int, default=20, help="warm runs of the point query")
    p.add_argument("--cold", type=int, default=5, help="cold runs (fresh connections) of the point query")
    p.add_argument("--full-repeat", type=int, default=5, help="warm runs of the full scan")
    p.add_argument("--full-cold", type=int, default=3, help="cold runs of the full scan")
    p.add_argument("--rebuild", action="store_true", help="rebuild the table even if cached")
    p.add_argument("--no-setup", action="store_true", help="do not create bench/.venv when missing")
    p.add_argument("--json", type=Path, help="also write the results as JSON here")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        raise SystemExit(f"unknown peers {unknown}; choose from {', '.join(PEERS)}")
    shape = events.SCALES[args.scale]
    overrides = {"days": args.days, "rows_per_day": args.rows_per_day, "devices": args.devices}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if overrides:
        shape = dataclasses.replace(shape, **overrides)
    key = args.scale if not overrides else f"{shape.days}x{shape.rows_per_day}"
    warehouse = args.warehouse or engines.BENCH_DIR / ".warehouse" / key
    table = events.build(warehouse, shape, force=args.rebuild)
    point = events.point_query(shape)
    queries = engines.make_queries(table, point, args.cold, args.repeat, args.full_cold, args.full_repeat)

    if "duckdb-iceberg" in peers and not engines.peer_python().exists() and not args.no_setup:
        engines.setup_peer_venv()
    engines.warm_os_cache(table)
    results: list[EngineResult] = [engines.run_baseline(queries)]
    if "iceduck" in peers:
        results += guarded("iceduck", lambda: engines.run_iceduck(table, queries))
        results += guarded("iceduck planning", lambda: [engines.run_iceduck_planner(table, queries)])
    if "duckdb-iceberg" in peers:
        results += guarded("DuckDB iceberg extension", lambda: engines.run_duckdb_iceberg(table, queries))
    if "pyiceberg" in peers:
        results += guarded("PyIceberg", lambda: [engines.run_pyiceberg(table, queries)])

    print(report(table, queries, results))
    if args.json:
        args.json.write_text(json.dumps(to_json(table, queries, results), indent=1))
    return 0


def guarded(name: str, run: Callable[[], list[EngineResult]]) -> list[EngineResult]:
    """An engine that fails becomes a row saying how, instead of ending the benchmark."""
    try:
        return run()
    except Exception as e:
        return [EngineResult(name, unavailable=f"failed: {type(e).__name__}: {e}")]


# -- report ----------------------------------------------------------------------------------


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _cell(m: Measurement | None, base: Measurement | None, attr: str) -> str:
    if m is None:
        return "-"
    value = getattr(m, attr)
    if base is None or m is base:
        return f"{value:,.1f}"
    return f"{value:,.1f} ({value / getattr(base, attr):.2f}x)"


def check(m: Measurement, base: Measurement) -> bool:
    """Same count and sum(v) as the baseline (sum within ``SUM_TOLERANCE``)."""
    if m.count != base.count:
        return False
    if m.total is None or base.total is None:
        return m.total is base.total
    return abs(m.total - base.total) <= SUM_TOLERANCE * max(1.0, abs(base.total))


def report(table: events.EventsTable, queries: list[Query], results: list[EngineResult]) -> str:
    shape = table.shape
    base = results[0]
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"iceduck events benchmark, {when}, {machine()}, DuckDB {duckdb.__version__}, load average {load}",
        f"table {table.identifier} in {table.warehouse}: {shape.days} daily appends x "
        f"{shape.rows_per_day:,} rows = {shape.days * shape.rows_per_day:,} rows; {shape.days} manifests, "
        f"{len(table.files):,} data files; partitioned by day(ts), bucket({shape.buckets}, device_id)",
    ]
    for q in queries:
        where = f" WHERE {q.where}" if q.where else ""
        lines.append(f"  {q.name:5}: SELECT count(*), sum(v) FROM {table.identifier}{where}")
    lines.append(
        "medians in ms; cold = first query on a fresh connection, warm = repeated on one connection; "
        "(Nx) = multiple of the baseline (cold vs cold, warm vs warm)"
    )
    header = ["engine"] + [f"{q.name} {kind}" for q in queries for kind in ("cold", "warm")] + ["answers"]
    rows = []
    for r in results:
        if r.unavailable:
            rows.append([r.name, r.unavailable])
            continue
        cells = [r.name]
        answers = []
        for q in queries:
            m = r.measurements.get(q.name)
            b = base.measurements.get(q.name)
            cells += [_cell(m, b, "cold_ms"), _cell(m, b, "warm_ms")]
            if m is not None and b is not None and "planning" not in r.name:
                answers.append(f"{q.name} {m.count}" + ("" if check(m, b) else f" MISMATCH (sum {m.total})"))
        rows.append([*cells, "; ".join(answers)])
    full_rows = [header, *(row for row in rows if len(row) == len(header))]
    widths = [max(len(str(row[i])) for row in full_rows) for i in range(len(header))]
    lines.append(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    lines.append("-+-".join("-" * w for w in widths))
    for row in rows:
        if len(row) == 2:
            lines.append(f"{row[0].ljust(widths[0])} | {row[1]}")
        else:
            lines.append(" | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
    for r in results:
        for note in r.notes:
            lines.append(f"[{r.name}] {note}")
    return "\n".join(lines)


def to_json(table: events.EventsTable, queries: list[Query], results: list[EngineResult]) -> dict:
    return {
        "shape": dataclasses.asdict(table.shape),
        "machine": machine(),
        "queries": {q.name: q.where for q in queries},
        "results": [
            {
                "name": r.name,
                "unavailable": r.unavailable,
                "measurements": {k: dataclasses.asdict(m) for k, m in r.measurements.items()},
                "answers_match_baseline": {
                    k: check(m, results[0].measurements[k]) for k, m in r.measurements.items()
                },
            }
            for r in results
        ],
    }


if __name__ == "__main__":
    sys.exit(main())
