"""TPC-H and TPC-DS through iceduck, against DuckDB reading the same data files.

The data and the query texts come from DuckDB's ``tpch``/``tpcds`` extensions, which only
bench/.venv has (``tpc_gen_peer.py``); they are written once as Parquet under
``bench/.warehouse/<kind>-sf<sf>/src`` and loaded into Iceberg tables in
``bench/.warehouse/<kind>-sf<sf>/wh`` (SQLite catalog ``catalog.db``, catalog ``iceduck``):

* namespace ``<kind>``: ``CREATE TABLE <kind>.<t> AS SELECT * FROM read_parquet(...)``
  through iceduck (timed against DuckDB's ``COPY`` of the same rows to Parquet, the physical
  work any writer does);
* namespace ``<kind>_pyiceberg`` (when asked): PyIceberg's ``create_table`` + one
  ``append`` per table, so iceduck is also measured on files another writer laid out.

Every query then runs, interleaved per query, on: DuckDB 2.x with a view per table over
``read_parquet`` of exactly the data files the Iceberg table holds (the limit: no engine
reading Iceberg can read less), iceduck on each load, and (a subprocess in bench/.venv)
DuckDB 1.5.5's Iceberg extension over ``iceberg_scan(<metadata.json>)`` and DuckDB 1.5.5's
``read_parquet`` of the same files, which separates "the extension" from "the DuckDB
release". iceduck needs ``namespace.table`` names, so the query texts are qualified with
sqlglot (CTE names are left alone).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlglot
from common import (
    TIMEOUT,
    WAREHOUSE_ROOT,
    Measure,
    Section,
    Timing,
    duckdb_connection,
    fmt_ms,
    fmt_ratio,
    peer_missing,
    peer_python,
    peer_timing,
    ratio,
    read_marker,
    run_sql_peer,
    sql_list,
    table_lines,
    time_query,
    timed_ms,
    write_marker,
)
from sqlglot import exp

import iceduck

GEN_PEER = Path(__file__).resolve().parent / "tpc_gen_peer.py"
#: bump when generation or loading changes, so cached data sets are rebuilt
GENERATOR_VERSION = 1


@dataclass(frozen=True)
class TpcKind:
    """Which benchmark: the extension (and its ``<name>_queries()``) and the display title."""

    name: str
    title: str


TPCH = TpcKind("tpch", "TPC-H")
TPCDS = TpcKind("tpcds", "TPC-DS")


@dataclass(frozen=True)
class Source:
    """The generated Parquet files and query texts of one scale factor."""

    folder: Path
    tables: list[str]
    queries: dict[str, str]


@dataclass
class Loaded:
    """The Iceberg tables of one data set and what loading them cost (ms per table)."""

    warehouse: Path
    namespaces: list[str]
    load_ms: dict[str, dict[str, float]]
    limit_ms: dict[str, float]
    cached: bool
    built_at: str = ""


@dataclass
class QueryResult:
    number: str
    limit: Timing
    iceduck: Timing
    extra: dict[str, Timing] = field(default_factory=dict)


def dataset_dir(kind: TpcKind, sf: float) -> Path:
    return WAREHOUSE_ROOT / f"{kind.name}-sf{sf:g}"


# -- data --------------------------------------------------------------------------------------


def generate(kind: TpcKind, sf: float, root: Path, *, force: bool = False) -> Source:
    """The data set's Parquet files and queries, generated in bench/.venv unless cached."""
    folder = root / "src"
    key = {"kind": kind.name, "sf": sf, "generator": GENERATOR_VERSION}
    marker = folder / "bench-source.json"
    if force or read_marker(marker, key) is None:
        why = peer_missing(f"duckdb_extension_{kind.name}")
        if why is not None:
            raise RuntimeError(why)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        job = {"kind": kind.name, "sf": sf, "out": str(folder)}
        proc = subprocess.run(
            [str(peer_python()), str(GEN_PEER)], input=json.dumps(job), capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{kind.title} generation failed: {proc.stderr.strip()[-1500:]}")
        write_marker(marker, key)
    meta = json.loads((folder / "meta.json").read_text())
    return Source(folder, meta["tables"], meta["queries"])


def load(kind: TpcKind, source: Source, root: Path, *, pyiceberg: bool, force: bool = False) -> Loaded:
    """The Iceberg tables, loaded unless cached (the load times are the build's)."""
    warehouse = root / "wh"
    namespaces = [kind.name] + ([f"{kind.name}_pyiceberg"] if pyiceberg else [])
    key = {
        "source": str(source.folder),
        "tables": source.tables,
        "namespaces": namespaces,
        "generator": GENERATOR_VERSION,
    }
    marker_path = root / "bench-load.json"
    marker = None if force else read_marker(marker_path, key)
    if marker is not None:
        return Loaded(warehouse, namespaces, marker["load_ms"], marker["limit_ms"], True, marker["built_at"])
    shutil.rmtree(warehouse, ignore_errors=True)
    warehouse.mkdir(parents=True)
    load_ms = {kind.name: load_iceduck(source, warehouse, kind.name)}
    if pyiceberg:
        load_ms[namespaces[1]] = load_pyiceberg(source, warehouse, namespaces[1])
    limit_ms = copy_limit(source)
    built_at = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    write_marker(marker_path, key, load_ms=load_ms, limit_ms=limit_ms, built_at=built_at)
    return Loaded(warehouse, namespaces, load_ms, limit_ms, False, built_at)


def load_iceduck(source: Source, warehouse: Path, namespace: str) -> dict[str, float]:
    """``CREATE TABLE ... AS SELECT`` per table through iceduck; ms per table."""
    con = iceduck.connect(warehouse)
    con.execute(f"CREATE NAMESPACE IF NOT EXISTS {namespace}")
    out = {}
    for table in source.tables:
        path = str(source.folder / f"{table}.parquet")
        sql = f"CREATE TABLE {namespace}.{table} AS SELECT * FROM read_parquet('{path}')"
        out[table] = timed_ms(lambda sql=sql: con.execute(sql))
    con.close()
    return out


def load_pyiceberg(source: Source, warehouse: Path, namespace: str) -> dict[str, float]:
    """PyIceberg's ``create_table`` + one ``append`` per table (reading the Parquet file into
    Arrow is not timed: PyIceberg's input is Arrow); ms per table."""
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("iceduck", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace(namespace)
    out = {}
    for table in source.tables:
        arrow = pq.read_table(source.folder / f"{table}.parquet")

        def append(table: str = table, arrow: Any = arrow) -> None:
            catalog.create_table(f"{namespace}.{table}", schema=arrow.schema).append(arrow)

        out[table] = timed_ms(append)
    catalog.engine.dispose()
    return out


def copy_limit(source: Source) -> dict[str, float]:
    """DuckDB's ``COPY`` of each table's rows to one zstd Parquet file: the physical work of
    any load (read the input, encode, write), the limit of the load row."""
    con = duckdb_connection()
    out = {}
    with tempfile.TemporaryDirectory(prefix="iceduck-bench-copy-") as tmp:
        for table in source.tables:
            src = source.folder / f"{table}.parquet"
            sql = (
                f"COPY (SELECT * FROM read_parquet('{src}')) TO '{tmp}/{table}.parquet' "
                "(FORMAT parquet, COMPRESSION zstd)"
            )
            out[table] = timed_ms(lambda sql=sql: con.execute(sql))
    con.close()
    return out


# -- queries -----------------------------------------------------------------------------------


def qualify(sql: str, tables: set[str], namespace: str) -> str:
    """The query with every base-table name as ``namespace.table`` (iceduck resolves tables
    in the catalog; CTEs keep their names)."""
    out = []
    for statement in sqlglot.parse(sql, read="duckdb"):
        if statement is None:
            continue
        ctes = {c.alias for c in statement.find_all(exp.CTE)}
        for t in statement.find_all(exp.Table):
            if t.name in tables and not t.db and t.name not in ctes:
                t.set("db", exp.to_identifier(namespace))
        out.append(statement.sql("duckdb"))
    return ";\n".join(out)


def data_files(con: Any, namespace: str, table: str) -> list[str]:
    return [r[0] for r in con.execute(f"SELECT file_path FROM {namespace}.{table}.data_files").fetchall()]


def metadata_location(warehouse: Path, namespace: str, table: str) -> str:
    db = sqlite3.connect(warehouse / "catalog.db")
    try:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?",
            (namespace, table),
        ).fetchone()
    finally:
        db.close()
    if row is None:
        raise LookupError(f"{namespace}.{table} not in {warehouse}/catalog.db")
    return str(row[0])


def parquet_views(files: dict[str, list[str]]) -> list[str]:
    return [
        f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM read_parquet({sql_list(f)})" for t, f in files.items()
    ]


def select_queries(source: Source, only: list[str] | None) -> list[str]:
    numbers = sorted(source.queries, key=int)
    return [n for n in numbers if only is None or n in only]


def run_queries(
    kind: TpcKind,
    source: Source,
    loaded: Loaded,
    numbers: list[str],
    runs: int,
    timeout: float,
    *,
    peers: bool = True,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[QueryResult], dict[str, Any]]:
    """Every query on every engine; (results, peer info). Engines in this process run
    interleaved per query so load drift hits them alike."""
    tables = set(source.tables)
    engines: list[tuple[str, Any, Any, dict[str, list[str]]]] = []
    for namespace in loaded.namespaces:
        con = iceduck.connect(loaded.warehouse)
        files = {t: data_files(con, namespace, t) for t in source.tables}
        duck = duckdb_connection()
        for view in parquet_views(files):
            duck.execute(view)
        engines.append((namespace, con, duck, files))
    results = []
    for number in numbers:
        text = source.queries[number]
        first: QueryResult | None = None
        for namespace, con, duck, _ in engines:
            qualified = qualify(text, tables, namespace)
            limit = time_query(
                lambda duck=duck, text=text: duck.execute(text).fetchall(),
                runs,
                timeout=timeout,
                interrupt=duck.interrupt,
            )
            ice = time_query(
                lambda con=con, q=qualified: con.execute(q).fetchall(),
                runs,
                timeout=timeout,
                interrupt=con.interrupt,
            )
            if first is None:
                first = QueryResult(number, limit, ice)
            else:
                first.extra[f"limit {namespace}"] = limit
                first.extra[f"iceduck {namespace}"] = ice
        assert first is not None
        results.append(first)
        if progress is not None:
            progress(
                f"{kind.title} q{number}: limit {first.limit.cell()} ms, iceduck {first.iceduck.cell()} ms"
            )
    for _, con, duck, _ in engines:
        con.close()
        duck.close()
    info: dict[str, Any] = {}
    if peers:
        info = run_peers(loaded, source, engines[0][3], numbers, runs, timeout, results)
    return results, info


def run_peers(
    loaded: Loaded,
    source: Source,
    files: dict[str, list[str]],
    numbers: list[str],
    runs: int,
    timeout: float,
    results: list[QueryResult],
) -> dict[str, Any]:
    """DuckDB 1.5.5's Iceberg extension, and its read_parquet of the same files, in bench/.venv."""
    why = peer_missing("duckdb_extension_iceberg", "duckdb_extension_avro")
    if why is not None:
        return {"unavailable": why}
    namespace = loaded.namespaces[0]
    queries = [{"id": n, "sql": source.queries[n]} for n in numbers]
    locations = {t: metadata_location(loaded.warehouse, namespace, t) for t in source.tables}
    scans = [f"CREATE VIEW {t} AS SELECT * FROM iceberg_scan('{locations[t]}')" for t in source.tables]
    info: dict[str, Any] = {}
    for label, extensions, setup in (
        ("DuckDB ext", ["avro", "iceberg"], scans),
        ("DuckDB 1.5.5 read_parquet", [], parquet_views(files)),
    ):
        try:
            out = run_sql_peer(
                {
                    "extensions": extensions,
                    "setup": setup,
                    "queries": queries,
                    "runs": runs,
                    "timeout": timeout,
                }
            )
        except Exception as e:
            info[label] = f"failed: {e}"
            continue
        info["duckdb_version"] = out["duckdb_version"]
        info.setdefault("extension_versions", {}).update(out["extension_versions"])
        for r in results:
            r.extra[label] = peer_timing(out["results"][r.number])
    return info


# -- report ------------------------------------------------------------------------------------


def rows_of(t: Timing) -> int | None:
    return t.count if t.ok else None


def answers_agree(limit: Timing, other: Timing) -> bool | None:
    """Row counts equal (None when either did not answer)."""
    if not limit.ok or not other.ok or limit.count is None or other.count is None:
        return None
    return limit.count == other.count


def section(
    kind: TpcKind,
    sf: float,
    loaded: Loaded,
    results: list[QueryResult],
    info: dict[str, Any],
    timeout: float,
    runs: int,
) -> Section:
    """Per-query table, totals, worst queries, load times; performance-table rows."""
    title = f"{kind.title} SF{sf:g}"
    sec = Section(kind.name)
    built = "measured now" if not loaded.cached else f"measured when the tables were built, {loaded.built_at}"
    sec.lines.append(
        f"== {title}: {len(results)} queries; medians of {runs} runs after one untimed run; "
        f"timeout {timeout:g} s per run; tables in {loaded.warehouse}"
    )
    sec.lines.append("limit = DuckDB read_parquet of exactly the data files each Iceberg table holds (views)")
    ns = loaded.namespaces
    header = ["query", "limit ms", "iceduck ms", "ratio"]
    if len(ns) > 1:
        header += ["limit (PyIceberg files)", "iceduck on PyIceberg load", "ratio"]
    has_peer = any("DuckDB ext" in r.extra for r in results)
    if has_peer:
        header += ["DuckDB ext ms", "ext/limit", "DuckDB 1.5.5 read_parquet"]
    header += ["rows", "answers"]
    rows = []
    totals: dict[str, float] = {
        "limit": 0.0,
        "iceduck": 0.0,
        "limit2": 0.0,
        "iceduck2": 0.0,
        "ext": 0.0,
        "ext_limit": 0.0,
        "old": 0.0,
    }
    counted = counted2 = ext_counted = 0
    ratios: list[tuple[float, str]] = []
    problems: list[str] = []
    for r in results:
        cells: list[Any] = [
            f"q{r.number}",
            r.limit.cell(),
            r.iceduck.cell(),
            fmt_ratio(ratio(r.iceduck.ms, r.limit.ms)),
        ]
        verdicts = []
        ext_note = ""
        if r.limit.ok and r.iceduck.ok:
            totals["limit"] += r.limit.ms or 0
            totals["iceduck"] += r.iceduck.ms or 0
            counted += 1
            ratios.append((ratio(r.iceduck.ms, r.limit.ms) or 0, r.number))
        if answers_agree(r.limit, r.iceduck) is False:
            verdicts.append(f"iceduck {rows_of(r.iceduck)} rows")
        if not r.iceduck.ok:
            problems.append(f"q{r.number} iceduck: {r.iceduck.error}")
        if not r.limit.ok:
            problems.append(f"q{r.number} limit: {r.limit.error}")
        if len(ns) > 1:
            lim2 = r.extra[f"limit {ns[1]}"]
            ice2 = r.extra[f"iceduck {ns[1]}"]
            cells += [lim2.cell(), ice2.cell(), fmt_ratio(ratio(ice2.ms, lim2.ms))]
            if lim2.ok and ice2.ok:
                totals["limit2"] += lim2.ms or 0
                totals["iceduck2"] += ice2.ms or 0
                counted2 += 1
            if answers_agree(r.limit, ice2) is False:
                verdicts.append(f"iceduck on PyIceberg load {rows_of(ice2)} rows")
            if not ice2.ok:
                problems.append(f"q{r.number} iceduck on PyIceberg load: {ice2.error}")
        if has_peer:
            ext = r.extra.get("DuckDB ext", Timing(error="not run"))
            old = r.extra.get("DuckDB 1.5.5 read_parquet", Timing(error="not run"))
            cells += [ext.cell(), fmt_ratio(ratio(ext.ms, r.limit.ms)), old.cell()]
            if ext.ok and r.limit.ok:
                totals["ext"] += ext.ms or 0
                totals["ext_limit"] += r.limit.ms or 0
                ext_counted += 1
            if answers_agree(r.limit, ext) is False:
                ext_note = f"DuckDB ext {rows_of(ext)} rows"
            if not ext.ok:
                problems.append(f"q{r.number} DuckDB ext: {ext.error}")
        cells.append("-" if rows_of(r.limit) is None else rows_of(r.limit))
        answer = "MISMATCH: " + "; ".join(verdicts) if verdicts else ("ok" if r.limit.ok else "-")
        cells.append(answer + (f" (peer differs: {ext_note})" if ext_note else ""))
        if verdicts:
            sec.mismatches.append(
                f"{title} q{r.number}: limit {rows_of(r.limit)} rows, " + "; ".join(verdicts)
            )
        rows.append(cells)
    sec.lines += table_lines(header, rows)
    total_ratio = ratio(totals["iceduck"], totals["limit"])
    sec.lines.append(
        f"total over the {counted} queries both answered: limit {fmt_ms(totals['limit'])} ms, "
        f"iceduck {fmt_ms(totals['iceduck'])} ms ({fmt_ratio(total_ratio)})"
    )
    if len(ns) > 1:
        sec.lines.append(
            f"on the PyIceberg-written tables ({counted2} queries): limit {fmt_ms(totals['limit2'])} ms, "
            f"iceduck {fmt_ms(totals['iceduck2'])} ms "
            f"({fmt_ratio(ratio(totals['iceduck2'], totals['limit2']))})"
        )
    if has_peer:
        sec.lines.append(
            f"DuckDB ext answered {ext_counted} of {len(results)}: {fmt_ms(totals['ext'])} ms vs limit "
            f"{fmt_ms(totals['ext_limit'])} ms on those "
            f"({fmt_ratio(ratio(totals['ext'], totals['ext_limit']))}); "
            f"DuckDB {info.get('duckdb_version', '?')}, extensions {info.get('extension_versions', {})}"
        )
    elif info.get("unavailable") or any(isinstance(v, str) for v in info.values()):
        sec.lines.append(f"DuckDB ext: {info}")
    worst = sorted(ratios, reverse=True)[:5]
    sec.lines.append("worst ratios: " + ", ".join(f"q{n} {x:.2f}x" for x, n in worst))
    timeouts = [r.number for r in results if r.iceduck.error == TIMEOUT]
    if timeouts:
        sec.lines.append(f"iceduck timeouts: {', '.join('q' + n for n in timeouts)}")
    for p in problems:
        sec.lines.append(f"  {p}")
    ice_load = sum(loaded.load_ms[ns[0]].values())
    limit_load = sum(loaded.limit_ms.values())
    sec.lines.append(
        f"load ({built}): iceduck CTAS {fmt_ms(ice_load)} ms "
        f"vs DuckDB COPY to Parquet {fmt_ms(limit_load)} ms "
        f"({fmt_ratio(ratio(ice_load, limit_load))})"
        + (
            f"; PyIceberg create_table + append {fmt_ms(sum(loaded.load_ms[ns[1]].values()))} ms"
            if len(ns) > 1
            else ""
        )
    )
    pyi_load = sum(loaded.load_ms[ns[1]].values()) if len(ns) > 1 else "not loaded"
    sec.measures.append(
        Measure(
            f"{title} load ({len(loaded.limit_ms)} tables)",
            ice_load,
            limit_load,
            "n/a (no writes to a SQL catalog)",
            pyi_load,
        )
    )
    ext_cell: float | str | None = totals["ext"] if has_peer else str(info.get("unavailable", "-"))
    if has_peer and ext_counted < len(results):
        ext_cell = f"{fmt_ms(totals['ext'])} ({ext_counted}/{len(results)} answered)"
    sec.measures.append(
        Measure(
            f"{title} {len(results)} queries, total",
            totals["iceduck"],
            totals["limit"],
            ext_cell,
            "n/a (no SQL)",
            note=f"{counted} answered" + (f", {len(timeouts)} timeouts" if timeouts else ""),
        )
    )
    if len(ns) > 1:
        sec.measures.append(
            Measure(
                f"{title} {len(results)} queries on PyIceberg-written tables, total",
                totals["iceduck2"],
                totals["limit2"],
            )
        )
    if worst:
        w = next(r for r in results if r.number == worst[0][1])
        sec.measures.append(
            Measure(
                f"{title} worst query (q{w.number})",
                w.iceduck.ms,
                w.limit.ms,
                w.extra.get("DuckDB ext", Timing()).ms,
            )
        )
    sec.data = {
        "sf": sf,
        "runs": runs,
        "timeout_s": timeout,
        "load_ms": loaded.load_ms,
        "load_limit_ms": loaded.limit_ms,
        "load_cached": loaded.cached,
        "peer": {k: v for k, v in info.items()},
        "queries": {
            r.number: {
                "limit_ms": r.limit.ms,
                "iceduck_ms": r.iceduck.ms,
                "limit_error": r.limit.error,
                "iceduck_error": r.iceduck.error,
                "rows": rows_of(r.limit),
                "iceduck_rows": rows_of(r.iceduck),
                **{k: {"ms": t.ms, "error": t.error} for k, t in r.extra.items()},
            }
            for r in results
        },
    }
    return sec


def run_section(
    kind: TpcKind,
    sf: float,
    *,
    runs: int,
    timeout: float,
    pyiceberg: bool,
    only: list[str] | None = None,
    peers: bool = True,
    root: Path | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Section:
    """Generate (cached), load (cached), run, report."""
    root = root or dataset_dir(kind, sf)
    source = generate(kind, sf, root, force=force)
    loaded = load(kind, source, root, pyiceberg=pyiceberg, force=force)
    numbers = select_queries(source, only)
    results, info = run_queries(kind, source, loaded, numbers, runs, timeout, peers=peers, progress=progress)
    return section(kind, sf, loaded, results, info, timeout, runs)
