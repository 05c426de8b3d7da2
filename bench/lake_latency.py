"""The lake at cloud latency: cold queries through a proxy that delays every S3 request.

``lake.py --latency-ms 20`` puts :class:`tests.support.latency_proxy.LatencyProxy` in front
of the moto server once the table is written: every request through it waits the given
time before it is forwarded, as a request to a bucket in a cloud region waits 10-30 ms for
the network and the store. Then each engine runs the point query and the full scan *cold*,
each run in a fresh process (nothing cached by an earlier query), and the proxy reports
for each run:

* **waves**, the sequential round trips: the longest chain of requests each sent after
  the previous one was answered (requests in flight together count once; defined and
  computed in tests/support/latency_proxy.py). ``waves x latency`` is time the query
  cannot avoid waiting, however fast the client;
* **requests**, all of them;
* the query's time in its process (connecting and loading extensions not counted).

Engines: iceduck (``iceduck.duckdb-io=fsspec``: pyarrow's S3 client for metadata and
data; DuckDB 2.0 here has no httpfs, and "auto" would try to INSTALL it in every fresh
process), DuckDB 1.5.5's ``iceberg_scan`` of the metadata file over httpfs, and DuckDB
1.5.5's ``read_parquet`` of exactly the needed files over httpfs (the data alone, no
metadata: a floor for the data part).

The median of the runs is reported (``--latency-runs``, 3 by default). The delay is a real
sleep in the proxy: the figures are times on a 2-core machine plus the simulated network,
not a cloud measurement (no bandwidth limit, no throttling, moto answering in Python).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import engines
import events
from common import Measure, table_lines
from engines import Query

REPO = Path(__file__).resolve().parent.parent
#: cold runs per engine and query
RUNS = 3

#: iceduck in a fresh process: configured and connected, then ``ready``; the query runs
#: once on a line from stdin, and its time and row are printed
ICEDUCK_ONCE = r"""
import json, sys, time
import iceduck
from iceduck.io import object_store
job = json.loads(sys.argv[1])
object_store.configure(job["properties"], replace=True)
con = iceduck.connect(job["warehouse"])
print("ready", flush=True)
sys.stdin.readline()
start = time.perf_counter()
row = con.cursor().execute(job["sql"]).fetchone()
elapsed = time.perf_counter() - start
con.close()
print(json.dumps({"ms": elapsed * 1000, "row": list(row) if row else None}, default=float), flush=True)
"""


@dataclass
class ColdRuns:
    engine: str
    query: str
    ms: list[float] = field(default_factory=list)
    waves: list[int] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    rows: list[Any] = field(default_factory=list)
    failed: str | None = None


def _repo_on_path() -> None:
    if str(REPO) not in sys.path:
        sys.path.append(str(REPO))


def run_once(command: list[str], proxy: Any) -> tuple[float, Any, int, int]:
    """One cold query in a process of its own: (ms, row, waves, requests), the requests
    counted from its ``ready`` on, so connecting is not counted."""
    proc = subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"did not start: {proc.communicate(timeout=60)[1].strip()[-2000:]}")
        proxy.log.clear()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        spans = proxy.log.snapshot()
        if not line:
            raise RuntimeError(f"failed: {proc.communicate(timeout=60)[1].strip()[-2000:]}")
        out = json.loads(line)
    finally:
        if proc.poll() is None:
            proc.communicate(timeout=120)
    from tests.support.latency_proxy import waves

    return float(out["ms"]), out["row"], waves(spans), len(spans)


def commands(
    table: events.EventsTable, q: Query, properties: dict[str, str], secret: str
) -> dict[str, list[str]]:
    """The cold-run command of each engine for query ``q``."""
    where = f" WHERE {q.where}" if q.where else ""
    aggregate = "SELECT count(*), sum(v)"
    metadata = table.metadata_location.replace("'", "''")
    iceberg = {
        "iceberg": True,
        "setup": [secret],
        "sql": f"{aggregate} FROM iceberg_scan('{metadata}'){where}",
    }
    files = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in q.files) + "]"
    parquet = {"iceberg": False, "setup": [secret], "sql": f"{aggregate} FROM read_parquet({files}){where}"}
    # fsspec named, not "auto": without httpfs installed, "auto" tries INSTALL httpfs once per
    # process, which offline costs seconds of every cold run (and with it DuckDB reads the data)
    io = {**properties, "iceduck.duckdb-io": "fsspec"}
    job = {"properties": io, "warehouse": str(table.warehouse), "sql": engines.iceduck_sql(table, q)}
    peer = [str(engines.peer_python()), str(engines.PEER_SCRIPT), "--once"]
    return {
        "iceduck (pyarrow S3 via fsspec)": [sys.executable, "-c", ICEDUCK_ONCE, json.dumps(job)],
        "DuckDB 1.5.5 iceberg_scan (httpfs)": [*peer, json.dumps(iceberg)],
        "DuckDB 1.5.5 read_parquet, needed files (httpfs)": [*peer, json.dumps(parquet)],
    }


def measure(
    endpoint: str,
    latency_ms: float,
    table: events.EventsTable,
    queries: list[Query],
    properties: dict[str, str],
    secret: Any,
    runs: int = RUNS,
    progress: Any = None,
) -> tuple[list[str], list[ColdRuns]]:
    """Every engine's cold runs of each query through a proxy of ``latency_ms`` in front
    of ``endpoint``; the report's lines and the runs. ``properties(endpoint)`` and
    ``secret(endpoint)`` reach an endpoint as iceduck and DuckDB's httpfs are told to."""
    _repo_on_path()
    from tests.support.latency_proxy import latency_proxy

    results: list[ColdRuns] = []
    with latency_proxy(endpoint, latency_ms / 1000) as proxy:
        for q in queries:
            for engine, command in commands(
                table, q, properties(proxy.endpoint), secret(proxy.endpoint)
            ).items():
                if progress:
                    progress(f"lake at {latency_ms:g} ms: {engine}, {q.name}")
                found = ColdRuns(engine, q.name)
                results.append(found)
                for _ in range(runs):
                    try:
                        ms, row, waves, requests = run_once(command, proxy)
                    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
                        found.failed = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
                        break
                    found.ms.append(ms)
                    found.waves.append(waves)
                    found.requests.append(requests)
                    found.rows.append(row)
    return report(latency_ms, results), results


def measures(latency_ms: float, results: list[ColdRuns]) -> list[Measure]:
    """The performance table's rows (docs/performance.md): iceduck's cold time against DuckDB
    1.5.5's ``read_parquet`` of the needed files (the limit), the ``iceberg_scan`` as the peer;
    round trips in the note."""
    by = {(r.query, r.engine.split(" (")[0].split(",")[0]): r for r in results if r.ms}
    rows = []
    for query, label in (("point", "cold point query"), ("full", "cold full scan")):
        ours = by.get((query, "iceduck"))
        limit = by.get((query, "DuckDB 1.5.5 read_parquet"))
        ext = by.get((query, "DuckDB 1.5.5 iceberg_scan"))
        if ours is None:
            continue
        waves = ", ".join(
            f"{name} {statistics.median(r.waves):g}"
            for name, r in (("iceduck", ours), ("ext", ext), ("limit", limit))
            if r
        )
        rows.append(
            Measure(
                f"{label}, events table in S3 at {latency_ms:g} ms a request",
                statistics.median(ours.ms),
                statistics.median(limit.ms) if limit else None,
                statistics.median(ext.ms) if ext else None,
                note=f"sequential round trips: {waves}",
            )
        )
        if query == "point":  # the target is on the round trips themselves
            rows.append(
                Measure(
                    f"sequential round trips of a cold point query, events table in S3 at {latency_ms:g} ms",
                    statistics.median(ours.waves),
                    statistics.median(limit.waves) if limit else None,
                    statistics.median(ext.waves) if ext else None,
                    unit="round trips",
                )
            )
    return rows


def report(latency_ms: float, results: list[ColdRuns]) -> list[str]:
    lines = [
        f"== lake at {latency_ms:g} ms a request (a proxy delaying each S3 request), cold: each run a "
        "fresh process; waves = sequential round trips (median of the runs)"
    ]
    rows = []
    for r in results:
        if r.failed is not None or not r.ms:
            rows.append((r.query, r.engine, "-", "-", f"failed: {r.failed}"))
            continue
        rows.append(
            (
                r.query,
                r.engine,
                f"{statistics.median(r.waves):g}",
                f"{statistics.median(r.requests):g}",
                f"{statistics.median(r.ms):,.0f} ms",
            )
        )
    lines += table_lines(("query", "engine", "waves", "requests", "time"), rows)
    # sums of doubles in another order differ in the last digits
    answers = {
        (r.query, json.dumps([row[0], None if row[1] is None else round(float(row[1]), 2)]))
        for r in results
        for row in r.rows
        if row
    }
    for query in dict.fromkeys(r.query for r in results):
        found = [a for q, a in answers if q == query]
        if len(found) > 1:
            lines.append(f"ANSWERS DIFFER for {query}: {found}")
    return lines
