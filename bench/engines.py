"""The engines of the benchmark and how each one is timed.

Every engine answers the same two aggregates over ``bench.events``:

* ``point``: ``SELECT count(*), sum(v) ... WHERE device_id = X AND ts >= T AND ts < T + 10h``;
* ``full``: ``SELECT count(*), sum(v)`` over the whole table.

Timing protocol, identical for all engines (medians, in milliseconds):

* cold: the first query on a fresh connection / catalog (opening it is not timed, loading
  the table from the catalog and its metadata is), repeated ``cold`` times after one untimed
  run that pays the process's one-time costs (imports, first allocations);
* warm: the same query again on one connection after one untimed run, repeated ``warm`` times
  (iceduck keeps parsed manifests per connection; PyIceberg keeps the loaded table object).

The operating system's file cache is warm for every engine (run.py reads every file once first).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
from events import EventsTable, PointQuery, bucket_of

BENCH_DIR = Path(__file__).resolve().parent
PEER_VENV = BENCH_DIR / ".venv"
PEER_SCRIPT = BENCH_DIR / "duckdb_iceberg_peer.py"
#: the DuckDB release the PyPI extension wheels are built for (they pin ``duckdb==`` it)
PEER_DUCKDB_VERSION = "1.5.5"
PEER_PACKAGES = (
    f"duckdb=={PEER_DUCKDB_VERSION}",
    f"duckdb-extension-iceberg=={PEER_DUCKDB_VERSION}",
    f"duckdb-extension-avro=={PEER_DUCKDB_VERSION}",
    # the TPC-H / TPC-DS data generators of run.py's tpch and tpcds sections
    f"duckdb-extension-tpch=={PEER_DUCKDB_VERSION}",
    f"duckdb-extension-tpcds=={PEER_DUCKDB_VERSION}",
    # S3 for the lake section (lake.py) and the S3 peer tests
    f"duckdb-extension-httpfs=={PEER_DUCKDB_VERSION}",
)


@dataclass(frozen=True)
class Query:
    name: str
    #: DuckDB SQL predicate over the table's columns ("" for none)
    where: str
    #: the data files a perfect planner reads (the physical baseline's file list)
    files: list[str]
    cold: int
    warm: int
    point: PointQuery | None = None


@dataclass
class Measurement:
    cold_ms: float
    warm_ms: float
    count: int
    total: float | None


@dataclass
class EngineResult:
    name: str
    measurements: dict[str, Measurement] = field(default_factory=dict)
    #: why the engine did not run (missing package, API not there yet...)
    unavailable: str | None = None
    notes: list[str] = field(default_factory=list)


def make_queries(
    table: EventsTable, point: PointQuery, cold: int, warm: int, full_cold: int, full_warm: int
) -> list[Query]:
    where = (
        f"device_id = {point.device_id} AND ts >= TIMESTAMPTZ '{point.start_text}' "
        f"AND ts < TIMESTAMPTZ '{point.end_text}'"
    )
    point_file = table.file_for(point.epoch_day, bucket_of(point.device_id, table.shape.buckets))
    return [
        Query("point", where, [point_file], cold, warm, point),
        Query("full", "", table.all_files(), full_cold, full_warm),
    ]


def _aggregate(row: Any) -> tuple[int, float | None]:
    count, total = row
    return int(count), None if total is None else float(total)


def measure(setup: Callable[[], Any], run: Callable[[Any], Any], cold: int, warm: int) -> Measurement:
    """See the module docstring; ``run(state)`` returns the ``(count, sum)`` row."""
    cold_times = []
    state = setup()  # untimed: one-time costs of the process (imports, first allocations)
    result: Any = run(state)
    _close(state)
    for _ in range(cold):
        state = setup()
        start = time.perf_counter()
        result = run(state)
        cold_times.append(time.perf_counter() - start)
        _close(state)
    state = setup()
    run(state)
    warm_times = []
    for _ in range(warm):
        start = time.perf_counter()
        result = run(state)
        warm_times.append(time.perf_counter() - start)
    _close(state)
    count, total = _aggregate(result)
    return Measurement(
        statistics.median(cold_times) * 1000, statistics.median(warm_times) * 1000, count, total
    )


def _close(state: Any) -> None:
    close = getattr(state, "close", None)
    if callable(close):
        close()


def _duckdb_connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    return con


def _file_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def warm_os_cache(table: EventsTable) -> None:
    """Read every data file once so no engine pays for the first disk read."""
    con = _duckdb_connection()
    con.execute(f"SELECT count(*), sum(v) FROM read_parquet({_file_list(table.all_files())})").fetchall()
    con.close()


# -- DuckDB reading exactly the needed files: the physical baseline ------------------------------


def run_baseline(queries: list[Query]) -> EngineResult:
    out = EngineResult(f"DuckDB {duckdb.__version__} read_parquet, needed files only (baseline)")
    for q in queries:
        where = f" WHERE {q.where}" if q.where else ""
        sql = f"SELECT count(*), sum(v) FROM read_parquet({_file_list(q.files)}){where}"
        out.measurements[q.name] = measure(
            _duckdb_connection, lambda con, sql=sql: con.execute(sql).fetchone(), q.cold, q.warm
        )
    out.notes.append(
        f"point query reads {len(queries[0].files)} file; full scan reads {len(queries[1].files)} files"
    )
    return out


# -- iceduck ---------------------------------------------------------------------------------


def iceduck_sql(table: EventsTable, q: Query) -> str:
    where = f" WHERE {q.where}" if q.where else ""
    return f"SELECT count(*), sum(v) FROM {table.identifier}{where}"


def run_iceduck(table: EventsTable, queries: list[Query]) -> list[EngineResult]:
    import iceduck

    out = EngineResult(f"iceduck {iceduck.__version__}")
    connect = getattr(iceduck, "connect", None)
    if connect is None:
        try:  # defined in iceduck.connection before it is exported from the package
            from iceduck.connection import connect
        except ImportError as e:
            out.unavailable = f"not available yet: no iceduck.connect ({type(e).__name__}: {e})"
            return [out]
        out.notes.append("iceduck.connect is not exported yet: used iceduck.connection.connect")

    def setup() -> Any:
        return connect(str(table.warehouse))

    for q in queries:
        sql = iceduck_sql(table, q)
        out.measurements[q.name] = measure(
            setup, lambda con, sql=sql: con.cursor().execute(sql).fetchone(), q.cold, q.warm
        )
    return [out, *_iceduck_planning(table, queries, setup)]


def _iceduck_planning(
    table: EventsTable, queries: list[Query], setup: Callable[[], Any]
) -> list[EngineResult]:
    """Planning alone, timed through ``EXPLAIN`` (which plans the scan but reads no data file)."""
    out = EngineResult("iceduck planning only (EXPLAIN)")
    try:
        for q in queries:
            sql = "EXPLAIN " + iceduck_sql(table, q)

            def run(con: Any, sql: str = sql) -> tuple[int, None]:
                rows = con.cursor().execute(sql).fetchall()
                return (len(rows), None)

            out.measurements[q.name] = measure(setup, run, q.cold, q.warm)
            con = setup()
            text = "\n".join(
                str(r[0]) if len(r) == 1 else " ".join(map(str, r))
                for r in con.cursor().execute(sql).fetchall()
            )
            _close(con)
            # the Iceberg part of the plan (DuckDB's own plan follows it)
            text = text.split("DuckDB plan:")[0].rstrip()
            out.notes.append(f"EXPLAIN {q.name}:\n" + text)
    except Exception as e:  # EXPLAIN may not exist yet: report, do not fail the benchmark
        return [EngineResult(out.name, unavailable=f"not available yet: {type(e).__name__}: {e}")]
    return [out]


class _PlannerState:
    """The SQLite catalog opened (not timed); the table and a fresh manifest cache on first use."""

    def __init__(self, warehouse: Path) -> None:
        from iceduck.catalog.sqlite import SqliteCatalog
        from iceduck.scan.manifest_cache import ManifestCache

        self.catalog = SqliteCatalog(warehouse, read_only=True)
        self.cache = ManifestCache()
        self.metadata: Any = None
        self.plan: Any = None

    def close(self) -> None:
        self.catalog.close()


def run_iceduck_planner(table: EventsTable, queries: list[Query]) -> EngineResult:
    """Planning alone through the planner API: catalog lookup, metadata, manifest list and
    manifests (cold), or the connection's cached manifests (warm); no data file is read."""
    name = "iceduck planning only (plan_scan API)"
    try:
        from iceduck.catalog.base import TableIdentifier
        from iceduck.scan.planner import plan_scan
        from iceduck.spec.expressions import predicates as p
    except ImportError as e:
        return EngineResult(name, unavailable=f"not available yet: {e}")
    out = EngineResult(name)
    ident = TableIdentifier((table.identifier.split(".")[0],), table.identifier.split(".")[1])
    for q in queries:
        row_filter: Any = p.AlwaysTrue()
        if q.point is not None:
            pt = q.point
            row_filter = p.and_(
                p.EqualTo("device_id", pt.device_id),
                p.GreaterThanOrEqual("ts", pt.start_us),
                p.LessThan("ts", pt.end_us),
            )

        def run(state: _PlannerState, row_filter: Any = row_filter) -> tuple[int, None]:
            if state.metadata is None:
                state.metadata = state.catalog.load_table(ident).metadata
            state.plan = plan_scan(state.metadata, row_filter=row_filter, cache=state.cache)
            return sum(t.record_count for t in state.plan.tasks), None

        try:
            out.measurements[q.name] = measure(lambda: _PlannerState(table.warehouse), run, q.cold, q.warm)
            state = _PlannerState(table.warehouse)
            run(state)
            state.close()
            out.notes.append(f"{q.name}: {state.plan.stats}")
        except Exception as e:  # the planner is being written: report, do not fail the benchmark
            return EngineResult(name, unavailable=f"failed: {type(e).__name__}: {e}")
    return out


# -- PyIceberg -------------------------------------------------------------------------------


class _PyIcebergState:
    """A fresh SQL catalog; the table is loaded by the first query (timed) and then kept."""

    def __init__(self, warehouse: Path) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        self.catalog = SqlCatalog(
            "iceduck", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}"
        )
        self.table: Any = None

    def close(self) -> None:
        self.catalog.engine.dispose()


def run_pyiceberg(table: EventsTable, queries: list[Query]) -> EngineResult:
    try:
        import pyarrow.compute as pc
        import pyiceberg
        from pyiceberg.expressions import AlwaysTrue, And, EqualTo, GreaterThanOrEqual, LessThan
    except ImportError as e:
        return EngineResult("PyIceberg", unavailable=f"not installed ({e}); pip install -e '.[bench]'")
    out = EngineResult(f"PyIceberg {pyiceberg.__version__}")
    try:
        import sqlalchemy  # noqa: F401  (SqlCatalog needs it)
    except ImportError as e:
        out.unavailable = f"SqlCatalog needs sqlalchemy ({e}); pip install -e '.[bench]'"
        return out
    for q in queries:
        if q.point is None:
            row_filter: Any = AlwaysTrue()
        else:
            p = q.point
            row_filter = And(
                EqualTo("device_id", p.device_id),
                And(
                    GreaterThanOrEqual("ts", p.start_text.replace(" ", "T")),
                    LessThan("ts", p.end_text.replace(" ", "T")),
                ),
            )

        def run(state: _PyIcebergState, row_filter: Any = row_filter) -> tuple[int, float | None]:
            if state.table is None:
                state.table = state.catalog.load_table(table.identifier)
            arrow = state.table.scan(row_filter=row_filter, selected_fields=("v",)).to_arrow()
            return arrow.num_rows, pc.sum(arrow["v"]).as_py()

        out.measurements[q.name] = measure(lambda: _PyIcebergState(table.warehouse), run, q.cold, q.warm)
    out.notes.append("scan(row_filter=..., selected_fields=('v',)).to_arrow(), then count and sum in pyarrow")
    return out


# -- DuckDB's Iceberg extension (subprocess in bench/.venv) ------------------------------------


def peer_python() -> Path:
    return PEER_VENV / "bin" / "python"


def setup_peer_venv() -> None:
    """Create ``bench/.venv`` with the DuckDB release the extension wheels are built for."""
    print(f"creating {PEER_VENV} with {' '.join(PEER_PACKAGES)} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    subprocess.run([str(peer_python()), "-m", "pip", "install", "-q", *PEER_PACKAGES], check=True)


def run_duckdb_iceberg(
    table: EventsTable,
    queries: list[Query],
    setup: list[str] | None = None,
    scan: str | None = None,
    label: str = "iceberg_scan(metadata.json)",
) -> list[EngineResult]:
    """DuckDB 1.5.5's ``iceberg_scan`` and ``read_parquet`` in bench/.venv; ``setup``
    statements (an S3 secret, an ATTACH) make it load httpfs and run them on every
    connection; ``scan`` replaces ``iceberg_scan(...)`` (a table of an attached catalog)."""
    name = f"DuckDB iceberg extension, {label}"
    if not peer_python().exists():
        return [EngineResult(name, unavailable=f"{PEER_VENV} missing; run bench/run.py without --no-setup")]
    job = {
        "setup": setup or [],
        "metadata_location": table.metadata_location,
        "scan": scan,
        "queries": {
            q.name: {"where": q.where, "files": q.files, "cold": q.cold, "warm": q.warm} for q in queries
        },
    }
    proc = subprocess.run(
        [str(peer_python()), str(PEER_SCRIPT)], input=json.dumps(job), capture_output=True, text=True
    )
    if proc.returncode != 0:
        return [EngineResult(name, unavailable=f"peer failed: {proc.stderr.strip()[-2000:]}")]
    data = json.loads(proc.stdout)
    versions = ", ".join(f"{k} {v}" for k, v in sorted(data["extension_versions"].items()))
    ext = EngineResult(f"DuckDB {data['duckdb_version']} iceberg extension, {label}")
    ext.notes.append(f"extensions: {versions}")
    base = EngineResult(f"DuckDB {data['duckdb_version']} read_parquet, needed files only")
    for result, key in ((ext, "iceberg"), (base, "read_parquet")):
        for qname, m in data[key].items():  # read_parquet is empty when ``scan`` is given
            count, total = _aggregate(m["result"][0])
            result.measurements[qname] = Measurement(m["cold_ms"], m["warm_ms"], count, total)
    return [ext, base] if base.measurements else [ext]
