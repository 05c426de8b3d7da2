"""The events table in an S3 bucket: iceduck against DuckDB reading the same objects.

The metadata-indexing post's table (``events.py``'s rows and partitioning: ``day(ts),
bucket(8, device_id)``, one append per day) is written by iceduck itself, one ``INSERT``
per day, into a bucket of moto's S3 server (``moto[server]``) started on a loopback port
in its own process -- a real S3 HTTP endpoint, so every byte read travels as HTTP
requests, as from a cloud bucket, but without the network. Then the point query and the
full scan of the events benchmark run, cold and warm, on:

* **limit**: the project's DuckDB, ``read_parquet([...])`` over exactly the data files a
  perfect planner keeps, through the same S3 client iceduck uses when DuckDB's ``httpfs``
  cannot load (DuckDB 2.0 here: no httpfs build): pyarrow's ``S3FileSystem`` wrapped by
  fsspec's ``ArrowFSWrapper`` and given to ``register_filesystem``;
* **iceduck**: ``iceduck.connect`` on the catalog, the table's location in the bucket;
* **DuckDB 1.5.5**: its ``iceberg`` and ``httpfs`` extensions (bench/.venv), ``iceberg_scan``
  of the metadata file in the bucket with an S3 secret, and its own ``read_parquet`` of the
  needed files over httpfs.

moto keeps objects in memory, so the table is written again on every run (about 20 s for
the default 50 days). A loopback figure is not a cloud figure: no network latency, no
bandwidth limit, no request throttling, and moto answers in Python on the same 2 cores. It
tells what iceduck adds on top of reading the same objects through the same client, not
what a query against S3 costs.

    python3 bench/lake.py [--days N] [--rows-per-day N] [--runs 5,10,2,3] [--warehouse DIR]

**Latency mode** (``--latency-ms 20``, bench/lake_latency.py): the same table, then cold
point queries and full scans through a loopback proxy that delays every S3 request by that
time (tests/support/latency_proxy.py), each run in a fresh process, for iceduck and DuckDB
1.5.5's ``iceberg_scan`` and ``read_parquet`` over httpfs: the number of *sequential round
trips* (waves: the longest chain of requests each sent after the previous one was
answered), the requests and the time.

    python3 bench/lake.py --latency-ms 20 [--latency-runs 3] [--days N]
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import engines
import events
from common import WAREHOUSE_ROOT, Section, add_runs_option, peer_missing, print_section, sql_list
from engines import EngineResult, Query

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"
BUCKET = "bench-lake"
#: (point cold, point warm, full cold, full warm) runs
RUNS = (5, 10, 2, 3)
DEFAULT_DAYS = 50

INSERT_DAY = """
INSERT INTO {table}
SELECT (i % {devices})::BIGINT AS device_id,
       make_timestamp({day} * {micros} + (i * 2654435761 + {day} * 40503) % {micros})::TIMESTAMPTZ AS ts,
       ((i * 7919 + {day} * 104729) % 100000) / 100.0 AS v,
       ([{types}])[1 + (i * 31 + {day}) % {n_types}] AS event_type
FROM range({rows}) s(i)
"""


def properties(endpoint: str) -> dict[str, str]:
    """The Iceberg catalog properties of the moto endpoint (Java's S3FileIOProperties names)."""
    return {
        "s3.endpoint": endpoint,
        "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY,
        "s3.path-style-access": "true",
        "client.region": REGION,
    }


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's S3 server in its own process on a free loopback port; yields the endpoint URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    code = "import sys; from moto.server import main; main(sys.argv[1:])"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's server did not start (pip install 'moto[server]')") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def s3_filesystem(endpoint: str) -> Any:
    """pyarrow's S3 client of the endpoint."""
    import pyarrow.fs as pafs

    host = endpoint.split("://", 1)[1]
    return pafs.S3FileSystem(
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        endpoint_override=host,
        scheme="http",
        region=REGION,
        force_virtual_addressing=False,
        allow_bucket_creation=True,
    )


def fsspec_connection(endpoint: str) -> duckdb.DuckDBPyConnection:
    """The project's DuckDB reading ``s3://`` through pyarrow's client (fsspec's wrapper)."""
    from fsspec.implementations.arrow import ArrowFSWrapper

    class S3(ArrowFSWrapper):  # type: ignore[misc]
        protocol = ("s3",)

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    con.register_filesystem(S3(s3_filesystem(endpoint)))
    return con


def duckdb_secret(endpoint: str) -> str:
    host = endpoint.split("://", 1)[1]
    return (
        f"CREATE SECRET (TYPE s3, KEY_ID '{ACCESS_KEY}', SECRET '{SECRET_KEY}', ENDPOINT '{host}', "
        f"URL_STYLE 'path', USE_SSL false, REGION '{REGION}')"
    )


# -- the table ---------------------------------------------------------------------------------


def write_table(warehouse: Path, shape: events.EventsShape, location: str) -> events.EventsTable:
    """``bench.events`` at ``location``, written by iceduck one day per commit."""
    import iceduck

    shutil.rmtree(warehouse, ignore_errors=True)
    table = f"{events.NAMESPACE}.{events.TABLE}"
    types = ", ".join(f"'{t}'" for t in events.EVENT_TYPES)
    with iceduck.connect(warehouse) as con:
        con.execute(f"CREATE NAMESPACE {events.NAMESPACE}")
        con.execute(
            f"CREATE TABLE {table} (device_id bigint, ts timestamptz, v double, event_type string) "
            f"USING iceberg PARTITIONED BY (days(ts), bucket({shape.buckets}, device_id)) "
            f"LOCATION '{location}'"
        )
        for day in range(shape.first_epoch_day, shape.first_epoch_day + shape.days):
            con.execute(
                INSERT_DAY.format(
                    table=table,
                    devices=shape.devices,
                    day=day,
                    micros=events.MICROS_PER_DAY,
                    types=types,
                    n_types=len(events.EVENT_TYPES),
                    rows=shape.rows_per_day,
                )
            )
        files = {}
        for path, partition in con.execute(f"SELECT file_path, partition FROM {table}.files").fetchall():
            day = (partition["ts_day"] - date(1970, 1, 1)).days
            key = f"{day}/{partition['device_id_bucket']}"
            if key in files:
                raise RuntimeError(f"two data files for partition {key}")
            files[key] = path
        log = f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1"
        metadata_location = con.execute(log).fetchone()[0]
    return events.EventsTable(warehouse, shape, metadata_location, files)


# -- the engines ---------------------------------------------------------------------------------


def run_limit(endpoint: str, queries: list[Query]) -> EngineResult:
    out = EngineResult(
        f"DuckDB {duckdb.__version__} read_parquet via fsspec+pyarrow S3, needed files only (limit)"
    )
    for q in queries:
        where = f" WHERE {q.where}" if q.where else ""
        sql = f"SELECT count(*), sum(v) FROM read_parquet({sql_list(q.files)}){where}"
        out.measurements[q.name] = engines.measure(
            lambda: fsspec_connection(endpoint),
            lambda con, sql=sql: con.execute(sql).fetchone(),
            q.cold,
            q.warm,
        )
    return out


def run_engines(endpoint: str, table: events.EventsTable, queries: list[Query]) -> list[EngineResult]:
    from run import guarded

    results = [run_limit(endpoint, queries)]
    results += guarded("iceduck", lambda: engines.run_iceduck(table, queries))
    why = peer_missing("duckdb_extension_iceberg", "duckdb_extension_httpfs")
    if why is None:
        results += guarded(
            "DuckDB iceberg extension",
            lambda: engines.run_duckdb_iceberg(table, queries, [duckdb_secret(endpoint)]),
        )
    else:
        results.append(EngineResult("DuckDB 1.5.5 iceberg + httpfs", unavailable=why))
    return results


# -- the section ---------------------------------------------------------------------------------


def run_section(
    days: int = DEFAULT_DAYS,
    rows_per_day: int | None = None,
    runs: tuple[int, int, int, int] = RUNS,
    root: Path | None = None,
    progress: Any = None,
    latency_ms: float | None = None,
    latency_runs: int = 3,
) -> Section:
    """Write the table into a fresh moto bucket, time every engine, report as run.py does;
    with ``latency_ms``, instead, the cold queries at that latency (lake_latency.py)."""
    from run import add_results, report

    from iceduck.io import object_store

    shape = events.EventsShape(days=days, **({"rows_per_day": rows_per_day} if rows_per_day else {}))
    warehouse = root or WAREHOUSE_ROOT / "lake"
    sec = Section("lake")
    with moto_server() as endpoint:
        s3_filesystem(endpoint).create_dir(BUCKET)
        object_store.configure(properties(endpoint))
        if progress:
            progress(f"lake: writing {shape.days} daily appends into s3://{BUCKET} on {endpoint}")
        started = time.perf_counter()
        table = write_table(warehouse, shape, f"s3://{BUCKET}/{events.NAMESPACE}/{events.TABLE}")
        written_s = time.perf_counter() - started
        queries = engines.make_queries(table, events.point_query(shape), *runs)
        if latency_ms is not None:
            import lake_latency

            lines, cold = lake_latency.measure(
                endpoint, latency_ms, table, queries, properties, duckdb_secret, latency_runs, progress
            )
            sec.lines.append(
                f"== lake: bench.events in a moto S3 bucket ({shape.days} manifests, {len(table.files):,} "
                f"data files, written by iceduck in {written_s:.1f} s)"
            )
            sec.lines += lines
            sec.mismatches += [line for line in lines if line.startswith("ANSWERS DIFFER")]
            sec.measures += lake_latency.measures(latency_ms, cold)
            sec.data = {"latency_ms": latency_ms, "cold": [vars(c) for c in cold], "shape": vars(shape)}
            return sec
        if progress:
            progress("lake: timing the limit, iceduck and DuckDB 1.5.5")
        results = run_engines(endpoint, table, queries)
    sec.lines.append(
        f"== lake: bench.events in a moto S3 bucket on loopback ({endpoint}, its own process), "
        f"{shape.days} manifests, {len(table.files):,} data files, written by iceduck in {written_s:.1f} s "
        f"({shape.days} INSERTs); a loopback figure is not a cloud figure"
    )
    sec.lines += report(table, queries, results).splitlines()[1:]
    add_results(sec, queries, results, f"lake (S3 on loopback, {shape.days} manifests)")
    sec.data = {"written_s": written_s, "files": len(table.files), "shape": vars(shape)}
    return sec


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--days", type=int, default=DEFAULT_DAYS, help="daily appends (manifests)")
    p.add_argument("--rows-per-day", type=int, help="rows per append (default: events.py's 16,000)")
    add_runs_option(p, RUNS)
    p.add_argument("--warehouse", type=Path, help="the catalog's folder (default bench/.warehouse/lake)")
    p.add_argument(
        "--latency-ms",
        type=float,
        help="instead: cold queries through a proxy delaying each S3 request this long (lake_latency.py)",
    )
    p.add_argument(
        "--latency-runs", type=int, default=3, help="cold runs per engine and query at that latency"
    )
    args = p.parse_args(argv)
    section = run_section(
        args.days,
        args.rows_per_day,
        args.runs,
        args.warehouse,
        latency_ms=args.latency_ms,
        latency_runs=args.latency_runs,
    )
    return print_section(section)


if __name__ == "__main__":
    sys.exit(main())
