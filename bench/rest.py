"""The events table behind ``iceduck serve``: DuckDB 1.5.5 reading it through the REST catalog
against iceduck reading the same warehouse.

The metadata-indexing post's table (``events.py``: ``day(ts), bucket(8, device_id)``, one
append per day) at about a million rows (63 daily appends of 16,000 rows: 63 manifests, 504
data files), built once under ``bench/.warehouse/rest``. ``iceduck serve`` serves that
warehouse in its own process on a loopback port; then the events benchmark's point query and
full scan run, cold and warm, on:

* **limit**: the project's DuckDB ``read_parquet([...])`` of exactly the needed files;
* **iceduck**: ``iceduck.connect`` on the warehouse (its own catalog, no HTTP), and
  ``iceduck.connect(catalog_uri=<the server>)``: its REST client, through the same server;
* **DuckDB 1.5.5 via REST**: its ``iceberg`` extension attached to the server
  (``ATTACH '' AS r (TYPE iceberg, ENDPOINT ..., AUTHORIZATION_TYPE 'none')``, part of every
  connection's untimed setup) querying ``r.bench.events``: a cold run includes loading the
  table through ``GET .../tables/events``;
* **DuckDB 1.5.5 iceberg_scan**: the same extension on the metadata file (what the REST hop
  costs DuckDB), and its ``read_parquet`` of the needed files.

The last lines give iceduck's times (on the warehouse, and through the server) over
DuckDB-through-REST's, per query, cold and warm.

    python3 bench/rest.py [--days N] [--runs 5,10,2,3] [--warehouse DIR]
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import engines
import events
from common import WAREHOUSE_ROOT, Section, add_runs_option, peer_missing, print_section
from engines import EngineResult, Query

#: (point cold, point warm, full cold, full warm) runs
RUNS = (5, 10, 3, 5)
#: 63 x 16,000 = 1,008,000 rows
DEFAULT_DAYS = 63
REST_LABEL = "attached through iceduck serve (REST)"


@contextmanager
def served(warehouse: Path | str, *options: str) -> Iterator[str]:
    """``iceduck serve WAREHOUSE --port 0 [OPTIONS]`` in its own process; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "iceduck", "serve", str(warehouse), "--port", "0", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # "Serving ... at http://127.0.0.1:PORT"
        found = re.search(r"http://[0-9.]+:[0-9]+", line)
        if found is None:
            raise RuntimeError(f"iceduck serve did not start: {line.strip() or proc.wait(10)}")
        yield found.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run_engines(url: str, table: events.EventsTable, queries: list[Query]) -> list[EngineResult]:
    from run import guarded

    engines.warm_os_cache(table)
    results = [engines.run_baseline(queries)]
    results += guarded("iceduck", lambda: engines.run_iceduck(table, queries)[:1])
    results += guarded("iceduck via REST", lambda: [run_iceduck_rest(url, table, queries)])
    why = peer_missing("duckdb_extension_iceberg", "duckdb_extension_httpfs")
    if why is not None:
        results.append(EngineResult("DuckDB 1.5.5 iceberg + httpfs", unavailable=why))
        return results
    attach = f"ATTACH '' AS r (TYPE iceberg, ENDPOINT '{url}', AUTHORIZATION_TYPE 'none')"
    scan = f"r.{events.NAMESPACE}.{events.TABLE}"
    results += guarded(
        "DuckDB via REST",
        lambda: engines.run_duckdb_iceberg(table, queries, [attach], scan=scan, label=REST_LABEL),
    )
    results += guarded("DuckDB iceberg_scan", lambda: engines.run_duckdb_iceberg(table, queries))
    return results


def run_iceduck_rest(url: str, table: events.EventsTable, queries: list[Query]) -> EngineResult:
    """iceduck through its own REST client (``catalog_uri=<url>``), as DuckDB reads."""
    import iceduck

    out = EngineResult(f"iceduck {iceduck.__version__} {REST_LABEL}")
    for q in queries:
        sql = engines.iceduck_sql(table, q)
        out.measurements[q.name] = engines.measure(
            lambda: iceduck.connect(catalog_uri=url),
            lambda con, sql=sql: con.cursor().execute(sql).fetchone(),
            q.cold,
            q.warm,
        )
    return out


def ratio_lines(queries: list[Query], results: list[EngineResult]) -> list[str]:
    """iceduck's medians (on the warehouse, and through the server) over DuckDB-through-REST's,
    per query, cold and warm."""

    def find(name_starts: str, through_rest: bool) -> EngineResult | None:
        return next(
            (
                r
                for r in results
                if r.name.startswith(name_starts)
                and (REST_LABEL in r.name) == through_rest
                and not r.unavailable
            ),
            None,
        )

    duck = find("DuckDB", True)
    lines = []
    for label, ice in (("iceduck", find("iceduck", False)), ("iceduck via REST", find("iceduck", True))):
        if ice is None or duck is None:
            lines.append(f"{label} / DuckDB via REST: not measured (an engine is unavailable)")
            continue
        cells = []
        for q in queries:
            a, b = ice.measurements[q.name], duck.measurements[q.name]
            cells.append(f"{q.name} cold {a.cold_ms / b.cold_ms:.2f}x, warm {a.warm_ms / b.warm_ms:.2f}x")
        lines.append(f"{label} / DuckDB 1.5.5 via REST (same run): " + "; ".join(cells))
    return lines


def run_section(
    days: int = DEFAULT_DAYS,
    runs: tuple[int, int, int, int] = RUNS,
    root: Path | None = None,
    force: bool = False,
    progress: Any = None,
) -> Section:
    """Build (or reuse) the table, serve it, time every engine, report as run.py does."""
    from run import add_results, report

    shape = events.EventsShape(days=days)
    warehouse = root or WAREHOUSE_ROOT / f"rest-{days}"
    table = events.build(warehouse, shape, force=force, quiet=True)
    queries = engines.make_queries(table, events.point_query(shape), *runs)
    sec = Section("rest")
    with served(warehouse) as url:
        if progress:
            progress(f"rest: timing the limit, iceduck and DuckDB 1.5.5 attached to {url}")
        started = time.perf_counter()
        results = run_engines(url, table, queries)
        seconds = time.perf_counter() - started
    sec.lines.append(
        f"== rest: bench.events ({shape.days * shape.rows_per_day:,} rows, {shape.days} manifests, "
        f"{len(table.files):,} data files) served by iceduck serve on loopback ({url}, its own process)"
    )
    sec.lines += report(table, queries, results).splitlines()[1:]
    sec.lines += ratio_lines(queries, results)
    add_results(sec, queries, results, f"rest ({shape.days} manifests, DuckDB through iceduck serve)")
    sec.data = {"seconds": seconds, "files": len(table.files), "shape": vars(shape)}
    return sec


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--days", type=int, default=DEFAULT_DAYS, help="daily appends of 16,000 rows")
    add_runs_option(p, RUNS)
    p.add_argument("--warehouse", type=Path, help="default bench/.warehouse/rest-<days>")
    p.add_argument("--rebuild", action="store_true", help="rebuild the table even if cached")
    args = p.parse_args(argv)
    return print_section(run_section(args.days, args.runs, args.warehouse, args.rebuild))


if __name__ == "__main__":
    sys.exit(main())
