"""iceduck's benchmarks as one command: iceduck against DuckDB reading exactly the needed
Parquet files (the limit), DuckDB's Iceberg extension and PyIceberg, measured in one run.

Usage::

    python3 bench/run.py --all [--markdown] [--json out.json]   # every section (docs/performance.md)
    python3 bench/run.py --only tpch,mor                         # some sections
    python3 bench/run.py [--scale small|full|10x] [--peers baseline,iceduck,duckdb-iceberg,pyiceberg]

Sections: events (the events table at 1x and 10x), tpch (TPC-H, 22 queries), tpcds (TPC-DS,
99 queries), mor (merge-on-read), compaction (a full scan after rewrite_data_files), writes,
commits (one-row commits per catalog), cli (a cold CLI query), stream (peak memory and first batch of a
large result streamed out), lake (the events table in an S3 bucket on loopback), lake-latency
(its cold queries through a proxy delaying each S3 request ``--lake-latency-ms``), rest (DuckDB
1.5.5 reading the events table through ``iceduck serve``), paimon (pypaimon-written Paimon tables,
append-only and primary-key, against DuckDB reading their Parquet files), serve_load (16
concurrent clients loading, listing and committing through ``iceduck serve``; every acknowledged
commit checked to be in its table's history exactly once).
Data sets are built deterministically and cached under ``bench/.warehouse``, keyed by shape.

Without ``--all``/``--only`` it is the events benchmark alone, as before:

The table (the metadata-indexing post's shape, see events.py) is built once under
``bench/.warehouse/<scale>`` and reused. DuckDB's Iceberg extension runs in ``bench/.venv``
(created on first use, see bench/README.md). Prints one row per engine with cold and warm medians
in milliseconds and their multiple of the baseline measured in the same run.
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import engines
import events
import report as suite_report
from common import WAREHOUSE_ROOT, Section, machine
from common import Measure as SuiteMeasure
from engines import EngineResult, Measurement, Query

PEERS = ("baseline", "iceduck", "duckdb-iceberg", "pyiceberg")
SECTIONS = ("events", "tpch", "tpcds", "mor", "compaction", "writes", "commits", "cli", "stream", "lake")
SECTIONS += ("rest", "paimon")
SECTIONS += ("lake-latency", "upserts")
SECTIONS += ("serve_load",)
#: the sections that never run bench/.venv's DuckDB 1.5.5
NO_PEER_SECTIONS = frozenset({"compaction", "writes", "commits", "stream", "paimon", "upserts", "serve_load"})
#: (point cold, point warm, full cold, full warm) runs of the events section per scale: 10x
#: has 10x the files, and PyIceberg's full scan of 20,000 files takes seconds
EVENTS_RUNS = {"full": (5, 20, 3, 5), "10x": (3, 10, 1, 3), "small": (3, 10, 2, 3)}
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
    suite = p.add_argument_group("sections (--all / --only)")
    suite.add_argument("--all", action="store_true", help="run every section: " + ",".join(SECTIONS))
    suite.add_argument("--only", help="comma-separated sections to run: " + ",".join(SECTIONS))
    suite.add_argument("--markdown", action="store_true", help="print docs/performance.md's table")
    suite.add_argument("--cache-dir", type=Path, default=WAREHOUSE_ROOT, help="data sets (bench/.warehouse)")
    suite.add_argument("--events-scales", default="full,10x", help="events scales (full = 1x, 10x, small)")
    suite.add_argument("--tpch-sf", type=float, default=1.0, help="TPC-H scale factor")
    suite.add_argument("--tpcds-sf", type=float, default=1.0, help="TPC-DS scale factor")
    suite.add_argument("--tpch-queries", help="TPC-H query numbers to run (default: all 22)")
    suite.add_argument("--tpcds-queries", help="TPC-DS query numbers to run (default: all 99)")
    suite.add_argument("--tpc-runs", type=int, default=3, help="timed runs per TPC query (after one untimed)")
    suite.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per query run (TPC; MoR's DuckDB ext)"
    )
    suite.add_argument("--mor-rows", type=int, default=5_000_000, help="rows per merge-on-read table")
    suite.add_argument("--mor-runs", type=int, default=3, help="timed runs per merge-on-read query")
    suite.add_argument(
        "--compaction-rows", type=int, default=5_000_000, help="rows per table of the compaction section"
    )
    suite.add_argument(
        "--upserts-rows", type=int, default=2_000_000, help="rows per table of the upserts section"
    )
    suite.add_argument("--writes-rows", type=int, default=2_000_000, help="rows the writes section writes")
    suite.add_argument("--commits", type=int, default=50, help="one-row commits timed per catalog")
    suite.add_argument("--commit-warmups", type=int, default=5, help="untimed one-row commits first")
    suite.add_argument(
        "--commit-catalogs", help="catalogs of the commits section (default: every one; see commits.py)"
    )
    suite.add_argument("--cli-runs", type=int, default=5, help="cold CLI runs timed")
    suite.add_argument("--stream-sf", type=float, default=1.0, help="TPC-H scale of the stream section")
    suite.add_argument("--stream-runs", type=int, default=1, help="runs of each form in the stream section")
    suite.add_argument("--lake-days", type=int, default=50, help="daily appends of the lake section's table")
    suite.add_argument(
        "--lake-latency-ms",
        type=float,
        default=20,
        help="the delay per S3 request of the lake-latency section",
    )
    suite.add_argument("--rest-days", type=int, default=63, help="daily appends of the rest section's table")
    suite.add_argument("--paimon-rows", type=int, default=1_000_000, help="rows per Paimon table")
    suite.add_argument("--load-clients", type=int, default=16, help="concurrent clients of serve_load")
    suite.add_argument("--load-seconds", type=float, default=30.0, help="how long serve_load's clients run")
    suite.add_argument(
        "--load-ops", type=int, help="operations per serve_load client instead of --load-seconds"
    )
    suite.add_argument(
        "--load-catalog",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="the catalog iceduck serve serves",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        raise SystemExit(f"unknown peers {unknown}; choose from {', '.join(PEERS)}")
    if args.all or args.only:
        return run_suite(args, peers, argv)
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

    results = run_engines(table, queries, peers, args.no_setup)
    print(report(table, queries, results))
    if args.json:
        args.json.write_text(json.dumps(to_json(table, queries, results), indent=1))
    return 0


def run_engines(
    table: events.EventsTable, queries: list[Query], peers: list[str], no_setup: bool
) -> list[EngineResult]:
    """The baseline first (every ratio is against it), then each peer asked for."""
    if "duckdb-iceberg" in peers and not engines.peer_python().exists() and not no_setup:
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
    return results


def guarded(name: str, run: Callable[[], list[EngineResult]]) -> list[EngineResult]:
    """An engine that fails becomes a row saying how, instead of ending the benchmark."""
    try:
        return run()
    except Exception as e:
        return [EngineResult(name, unavailable=f"failed: {type(e).__name__}: {e}")]


# -- report ----------------------------------------------------------------------------------


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


# -- the one command: every section ----------------------------------------------------------------


def run_suite(args: argparse.Namespace, peers: list[str], argv: list[str] | None) -> int:
    """Run the chosen sections in order, printing each as it ends (a long run shows progress,
    and a section that fails says how without ending the others)."""
    chosen = list(SECTIONS) if args.all else [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        raise SystemExit(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    for line in suite_report.header():
        print(line, flush=True)
    if needs_peer_venv(chosen, peers) and not args.no_setup:
        if not engines.peer_python().exists():
            engines.setup_peer_venv()
    sections: list[Section] = []
    for name in chosen:
        for runner in section_runners(name, args, peers):
            started = datetime.now(UTC)
            try:
                sec = runner()
            except Exception as e:
                sec = Section(name, lines=[f"== {name}: failed: {type(e).__name__}: {e}"])
                sec.mismatches.append(f"{name}: the section failed ({type(e).__name__}: {e})")
            seconds = (datetime.now(UTC) - started).total_seconds()
            sec.lines.append(f"({name} took {seconds:.0f} s; load average {suite_report.load_average()})")
            sections.append(sec)
            print("", *sec.lines, sep="\n", flush=True)
    print("", *suite_report.summary_lines(sections), sep="\n")
    print("", *suite_report.target_lines(sections), sep="\n")
    if args.markdown:
        print("\n" + suite_report.markdown(sections))
    if args.json:
        args.json.write_text(json.dumps(suite_report.to_json(sections, list(argv or sys.argv[1:])), indent=1))
    return 0


def needs_peer_venv(chosen: list[str], peers: list[str]) -> bool:
    """Whether the chosen sections run DuckDB 1.5.5 in bench/.venv (created when missing):
    not when every one is in :data:`NO_PEER_SECTIONS` (``--only commits`` installs nothing)."""
    if set(chosen) <= NO_PEER_SECTIONS:
        return False
    return "duckdb-iceberg" in peers or bool({"tpch", "tpcds"} & set(chosen))


def progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def _query_list(text: str | None) -> list[str] | None:
    return None if not text else [q.strip() for q in text.split(",") if q.strip()]


def section_runners(name: str, args: argparse.Namespace, peers: list[str]) -> list[Callable[[], Section]]:
    """The section's runs (events has one per scale), each building its data set if needed."""
    cache: Path = args.cache_dir
    ext = "duckdb-iceberg" in peers
    pyi = "pyiceberg" in peers
    if name == "events":
        scales = [s.strip() for s in args.events_scales.split(",") if s.strip()]
        return [lambda scale=scale: events_section(scale, cache, peers, args) for scale in scales]
    if name in ("tpch", "tpcds"):
        import tpc

        kind = tpc.TPCH if name == "tpch" else tpc.TPCDS
        sf = args.tpch_sf if name == "tpch" else args.tpcds_sf
        only = _query_list(args.tpch_queries if name == "tpch" else args.tpcds_queries)
        return [
            lambda: tpc.run_section(
                kind,
                sf,
                runs=args.tpc_runs,
                timeout=args.timeout,
                pyiceberg=pyi and name == "tpch",
                only=only,
                peers=ext,
                root=cache / f"{kind.name}-sf{sf:g}",
                force=args.rebuild,
                progress=progress,
            )
        ]
    if name == "mor":
        import mor

        return [
            lambda: mor.run_section(
                args.mor_rows,
                args.mor_runs,
                peers=ext or pyi,
                timeout=args.timeout,
                root=cache / f"mor-{args.mor_rows}",
                force=args.rebuild,
                progress=progress,
            )
        ]
    if name == "compaction":
        import compaction

        return [lambda: compaction.run_section(args.compaction_rows, args.mor_runs, cache / "compaction")]
    if name == "upserts":
        import upserts

        return [lambda: upserts.run_section(args.upserts_rows, args.mor_runs, cache / "upserts")]
    if name == "writes":
        import writes

        return [lambda: writes.run_section(args.writes_rows, cache / "writes")]
    if name == "commits":
        import commits

        names = _query_list(args.commit_catalogs)
        return [lambda: commits.run_section(args.commits, cache / "commits", args.commit_warmups, names)]
    if name == "stream":
        import stream_memory

        return [
            lambda: stream_memory.run_section(
                args.stream_sf, args.stream_runs, cache / f"stream-sf{args.stream_sf:g}"
            )
        ]
    if name == "lake":
        import lake

        return [lambda: lake.run_section(args.lake_days, root=cache / "lake", progress=progress)]
    if name == "lake-latency":
        import lake

        return [
            lambda: lake.run_section(
                args.lake_days,
                root=cache / "lake-latency",
                progress=progress,
                latency_ms=args.lake_latency_ms,
            )
        ]
    if name == "rest":
        import rest

        return [
            lambda: rest.run_section(
                args.rest_days, root=cache / f"rest-{args.rest_days}", force=args.rebuild, progress=progress
            )
        ]
    if name == "paimon":
        import paimon

        return [
            lambda: paimon.run_section(
                args.paimon_rows,
                root=cache / f"paimon-{args.paimon_rows}",
                force=args.rebuild,
                progress=progress,
            )
        ]
    if name == "serve_load":
        import serve_load

        settings = serve_load.Settings(
            args.load_clients, args.load_seconds, args.load_ops, catalog=args.load_catalog
        )
        return [lambda: serve_load.run_section(settings, cache / "serve_load")]
    import cli_cold

    return [lambda: cli_cold.run_section(args.cli_runs, cache / "cli")]


def events_section(scale: str, cache: Path, peers: list[str], args: argparse.Namespace) -> Section:
    """The events benchmark at one scale, as a section: its table, and performance-table rows for the
    point and full queries, cold and warm."""
    shape = events.SCALES[scale]
    table = events.build(cache / scale, shape, force=args.rebuild, quiet=True)
    cold, warm, full_cold, full_warm = EVENTS_RUNS.get(
        scale, (args.cold, args.repeat, args.full_cold, args.full_repeat)
    )
    queries = engines.make_queries(table, events.point_query(shape), cold, warm, full_cold, full_warm)
    results = run_engines(table, queries, peers, args.no_setup)
    label = "1x" if scale == "full" else scale
    sec = Section(f"events-{label}")
    sec.lines.append(f"== events {label}: {shape.days:,} manifests, {len(table.files):,} data files")
    sec.lines += report(table, queries, results).splitlines()[1:]
    add_results(sec, queries, results, f"events {label} ({shape.days:,} manifests)")
    sec.data = to_json(table, queries, results)
    if "iceduck" in peers:
        add_repeated(
            sec, table, events.point_query(shape), warm, f"events {label} ({shape.days:,} manifests)"
        )
    return sec


def add_repeated(
    sec: Section, table: events.EventsTable, point: events.PointQuery, warm: int, label: str
) -> None:
    """The repeated point query (see repeated.py), printed with its target, and performance-table rows:
    parameter sets that come back (a dashboard), and new values at every run (an ORM)."""
    import repeated

    for fresh, what in (
        (False, f"{repeated.SETS} parameter sets, each run again"),
        (True, "new values each run"),
    ):
        ice, limit, agree = repeated.measure(
            table, point, max(warm // 2, 5) * (4 if fresh else 1), fresh=fresh
        )
        sec.lines.append(
            f"point query repeated with parameters ({what}): iceduck {ice:.2f} ms, "
            f"limit {limit:.2f} ms: {ice / limit:.2f}x (target <= {repeated.TARGET}x)"
        )
        if not agree:
            sec.mismatches.append(f"{label} repeated point query ({what}): iceduck's answers differ")
        sec.measures.append(
            SuiteMeasure(f"{label}: point query repeated with parameters, {what}", ice, limit)
        )


def add_results(sec: Section, queries: list[Query], results: list[EngineResult], label: str) -> None:
    """A section's answer checks and performance-table rows from the events engines' results: every
    engine's answers against ``results[0]`` (the baseline), and one row per query and
    cold/warm with iceduck, the baseline, DuckDB's extension and PyIceberg."""
    base = results[0]

    def find(test: Callable[[str], bool]) -> EngineResult | None:
        return next(
            (r for r in results if test(r.name) and "planning" not in r.name and not r.unavailable), None
        )

    ice = find(lambda name: name.startswith("iceduck"))
    ext = find(lambda name: "iceberg extension" in name)
    pyi = find(lambda name: name.startswith("PyIceberg"))
    for r in results:
        if r.unavailable or "planning" in r.name:
            continue
        for qname, m in r.measurements.items():
            b = base.measurements.get(qname)
            if b is not None and not check(m, b):
                sec.mismatches.append(f"{label} {qname}: {r.name} count {m.count} sum {m.total}")
    for q in queries:
        for kind, attr in (("cold", "cold_ms"), ("warm", "warm_ms")):

            def ms(r: EngineResult | None, q: Query = q, attr: str = attr) -> float | None:
                m = r.measurements.get(q.name) if r is not None else None
                return None if m is None else getattr(m, attr)

            sec.measures.append(
                SuiteMeasure(
                    f"{label}: {q.name} query, {kind}",
                    ms(ice),
                    ms(base),
                    ms(ext) if ext is not None else "not run",
                    ms(pyi) if pyi is not None else "not run",
                )
            )


if __name__ == "__main__":
    sys.exit(main())
