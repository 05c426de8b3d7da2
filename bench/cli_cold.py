"""A cold CLI query: ``iceduck WAREHOUSE --csv -c "SELECT ..."`` as a new process, wall time.

What a user of the shell or a script pays per invocation: interpreter start, imports, the
catalog, the table's metadata, the read. The limit is a new Python process running the same
aggregate in DuckDB over ``read_parquet`` of the table's data files (interpreter + DuckDB
import + read: what any Python tool pays); the peers are a new process of bench/.venv running
DuckDB 1.5.5's ``iceberg_scan`` and of this interpreter running PyIceberg's scan. Each command
runs once untimed (the OS caches the files and the imports' bytecode), then ``runs`` times.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

from common import (
    BENCH_DIR,
    WAREHOUSE_ROOT,
    Measure,
    Section,
    fmt_ms,
    fmt_ratio,
    peer_missing,
    peer_python,
    ratio,
    read_marker,
    sql_list,
    write_marker,
)

import iceduck

ROWS = 100_000
QUERY = "SELECT count(*), sum(v) FROM {table}"


def build(root: Path) -> Path:
    """A small table ``cli.t`` (cached): the command's cost is start-up, not the read."""
    key = {"rows": ROWS}
    if read_marker(root / "bench-cli.json", key) is None:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        con = iceduck.connect(root)
        con.execute("CREATE NAMESPACE cli")
        con.execute(f"CREATE TABLE cli.t AS SELECT i::BIGINT AS id, i / 7 AS v FROM range({ROWS}) r(i)")
        con.close()
        write_marker(root / "bench-cli.json", key)
    return root


def iceduck_command(warehouse: Path) -> list[str]:
    """The installed ``iceduck`` script when it is this interpreter's, else the same entry point."""
    script = Path(sys.executable).parent / "iceduck"
    found = shutil.which("iceduck")
    if script.exists():
        return [str(script)]
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from iceduck.cli import main; sys.exit(main())"]


#: a user's installation keeps compiled bytecode; a shell with PYTHONDONTWRITEBYTECODE set
#: would make every timed run compile iceduck's modules again (about 0.1 s here)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_ms(argv: list[str], runs: int) -> tuple[float | None, str]:
    """Median wall time of ``runs`` runs after one untimed (which also leaves the bytecode a
    user's installation has); (ms, stdout or the error)."""
    out = subprocess.run(argv, capture_output=True, text=True, env=ENV)
    if out.returncode != 0:
        return None, (out.stderr.strip() or out.stdout.strip())[-300:]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, text=True, check=True, env=ENV)
        times.append((time.perf_counter() - started) * 1000)
    return median(times), out.stdout


def run_section(runs: int = 5, root: Path | None = None) -> Section:
    warehouse = build(root or WAREHOUSE_ROOT / "cli")
    con = iceduck.connect(warehouse)
    files = [r[0] for r in con.execute("SELECT file_path FROM cli.t.data_files").fetchall()]
    from tpc import metadata_location

    location = metadata_location(warehouse, "cli", "t")
    con.close()
    scan = QUERY.format(table=f"read_parquet({sql_list(files)})")
    commands: dict[str, list[str]] = {
        "python startup (python3 -c pass)": [sys.executable, "-c", "pass"],
        "iceduck CLI": [
            *iceduck_command(warehouse),
            str(warehouse),
            "--csv",
            "-c",
            QUERY.format(table="cli.t"),
        ],
        "limit: python3 + DuckDB read_parquet": [
            sys.executable,
            "-c",
            f"import duckdb; print(duckdb.connect().execute({scan!r}).fetchone())",
        ],
        "PyIceberg": [
            sys.executable,
            "-c",
            "import pyarrow.compute as pc; from pyiceberg.catalog.sql import SqlCatalog; "
            f"c = SqlCatalog('iceduck', uri='sqlite:///{warehouse}/catalog.db', "
            f"warehouse='file://{warehouse}'); "
            "a = c.load_table('cli.t').scan(selected_fields=('v',)).to_arrow(); "
            "print(a.num_rows, pc.sum(a['v']).as_py())",
        ],
    }
    if peer_missing("duckdb_extension_iceberg", "duckdb_extension_avro") is None:
        ext_query = QUERY.format(table=f"iceberg_scan('{location}')")
        commands["DuckDB ext (bench/.venv)"] = [
            str(peer_python()),
            "-c",
            f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); from duckdb_sql_peer import connect; "
            f"print(connect(['avro', 'iceberg']).execute({ext_query!r}).fetchone())",
        ]
    results = {name: wall_ms(argv, runs) for name, argv in commands.items()}
    sec = Section("cli")
    sec.lines.append(
        f"== cold CLI query: a new process per run, {QUERY.format(table='cli.t')} ({ROWS:,} rows), "
        f"median wall time of {runs} runs after one untimed"
    )
    limit = results["limit: python3 + DuckDB read_parquet"][0]
    for name, (ms, out) in results.items():
        answer = out.strip().splitlines()[-1] if ms is not None and out.strip() else out
        sec.lines.append(
            f"  {name:40} {fmt_ms(ms):>8} ms  {fmt_ratio(ratio(ms, limit)):>7}  -> {answer[:120]}"
        )
    ice_ms, ice_out = results["iceduck CLI"]
    if ice_ms is None or str(ROWS) not in ice_out.replace(",", ""):
        sec.mismatches.append(f"cli: iceduck printed {ice_out[:200]!r}, expected a count of {ROWS}")

    def cell(name: str) -> float | str | None:
        if name not in results:
            return "not available"
        ms, out = results[name]
        return ms if ms is not None else f"failed: {out[:80]}"

    sec.measures.append(
        Measure(
            "cold CLI query (new process, 100k-row table)",
            ice_ms,
            limit,
            cell("DuckDB ext (bench/.venv)"),
            cell("PyIceberg"),
            note=f"python startup alone {fmt_ms(results['python startup (python3 -c pass)'][0])} ms",
        )
    )
    sec.data = {name: {"ms": ms, "output": out[-300:]} for name, (ms, out) in results.items()}
    return sec
