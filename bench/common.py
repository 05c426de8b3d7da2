"""What every section of ``run.py --all`` shares: where data sets live, how a query is timed
(median of several runs, a per-run timeout that interrupts the engine), the result types the
report prints, and the DuckDB-extension peer (``bench/.venv``, a subprocess).

Why one module: every section must time the same way (one untimed run first, then medians),
or ratios between sections would not mean the same thing.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

BENCH_DIR = Path(__file__).resolve().parent
#: cached data sets, one folder per shape (gitignored); resolved, so that a checkout whose
#: ``.warehouse`` is a link to another's (a git worktree sharing the data sets) finds them
#: cached under the same paths and writes the same paths into the tables it loads
WAREHOUSE_ROOT = (BENCH_DIR / ".warehouse").resolve()
PEER_VENV = BENCH_DIR / ".venv"
SQL_PEER = BENCH_DIR / "duckdb_sql_peer.py"
TIMEOUT = "timeout"


def peer_python() -> Path:
    return PEER_VENV / "bin" / "python"


def peer_missing(*modules: str) -> str | None:
    """Why bench/.venv cannot run ``modules`` (None when it can): the peer sections say so
    instead of failing."""
    if not peer_python().exists():
        return f"{PEER_VENV} missing (see bench/README.md, 'Peers: setup')"
    code = "import " + ", ".join(("duckdb", *modules))
    proc = subprocess.run([str(peer_python()), "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"{PEER_VENV} lacks {', '.join(modules)}: {proc.stderr.strip().splitlines()[-1]}"
    return None


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    return con


def sql_list(paths: Sequence[str]) -> str:
    """A DuckDB list literal of file paths (quotes doubled)."""
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


# -- timing ----------------------------------------------------------------------------------


@dataclass
class Timing:
    """Median of the timed runs in ms, the last result, or why there is none."""

    ms: float | None = None
    rows: list[tuple[Any, ...]] | None = None
    error: str | None = None
    #: the answer's row count (the peer returns only the first rows, and this)
    count: int | None = None

    def __post_init__(self) -> None:
        if self.count is None and self.rows is not None:
            self.count = len(self.rows)

    @property
    def ok(self) -> bool:
        return self.ms is not None and self.error is None

    def cell(self) -> str:
        if self.error == TIMEOUT:
            return TIMEOUT
        if self.error is not None:
            return "error"
        return fmt_ms(self.ms)


def call_with_timeout(
    fn: Callable[[], Any], timeout: float | None, interrupt: Callable[[], None] | None
) -> tuple[float, Any]:
    """Run ``fn`` in a thread, interrupting the engine after ``timeout`` seconds: a query
    that runs away must become a "timeout" cell, not end the benchmark. Returns (seconds,
    result); raises TimeoutError or the function's error."""
    if timeout is None or interrupt is None:
        started = time.perf_counter()
        result = fn()
        return time.perf_counter() - started, result
    box: dict[str, Any] = {}

    def run() -> None:
        started = time.perf_counter()
        try:
            box["result"] = fn()
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e
        box["seconds"] = time.perf_counter() - started

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        interrupt()
        worker.join(60)
        raise TimeoutError(f"over {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["seconds"], box["result"]


def time_query(
    fn: Callable[[], list[tuple[Any, ...]]],
    runs: int,
    *,
    timeout: float | None = None,
    interrupt: Callable[[], None] | None = None,
) -> Timing:
    """One untimed run (warms caches, finds errors and timeouts cheaply), then ``runs`` timed
    runs; the median in ms."""
    try:
        _, rows = call_with_timeout(fn, timeout, interrupt)
        times = []
        for _ in range(runs):
            seconds, rows = call_with_timeout(fn, timeout, interrupt)
            times.append(seconds)
    except TimeoutError:
        return Timing(error=TIMEOUT)
    except Exception as e:
        return Timing(error=f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
    return Timing(statistics.median(times) * 1000 if times else None, rows)


def timed_ms(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:,.0f}"
    return f"{ms:,.1f}"


def ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base <= 0:
        return None
    return value / base


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


# -- results ---------------------------------------------------------------------------------


@dataclass
class Measure:
    """One row of the performance table (docs/performance.md): a measure in ms for iceduck, the limit
    (DuckDB on exactly the needed files, or the physical work a write cannot avoid), and the
    peers; a peer's cell is text when it did not run (why) or needs a unit."""

    name: str
    iceduck: float | None
    limit: float | None
    duckdb_ext: float | str | None = None
    pyiceberg: float | str | None = None
    note: str = ""
    #: the unit of ``iceduck`` and ``limit`` (ms unless a row counts something else)
    unit: str = "ms"

    @property
    def ratio(self) -> float | None:
        return ratio(self.iceduck, self.limit)


@dataclass
class Section:
    """A section's printed lines, its rows for the performance table (docs/performance.md), and
    its data for ``--json``."""

    name: str
    lines: list[str] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    #: answers that disagreed with the baseline (the smoke test asserts there are none)
    mismatches: list[str] = field(default_factory=list)


def table_lines(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A plain-text table, columns padded to their widest cell."""
    cells = [[str(c) for c in header], *([str(c) for c in row] for row in rows)]
    widths = [max(len(r[i]) for r in cells if i < len(r)) for i in range(len(header))]
    out = [" | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True))]
    out.append("-+-".join("-" * w for w in widths))
    for row in cells[1:]:
        out.append(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)))
    return out


# -- environment -------------------------------------------------------------------------------


def add_runs_option(parser: Any, default: tuple[int, int, int, int]) -> None:
    """``--runs`` of an events-shaped section run alone: point cold, point warm, full cold,
    full warm."""
    text = ",".join(map(str, default))
    parser.add_argument(
        "--runs",
        type=runs_option,
        default=default,
        help=f"point cold, point warm, full cold, full warm runs (default {text})",
    )


def runs_option(text: str) -> tuple[int, int, int, int]:
    import argparse

    try:
        a, b, c, d = (int(n) for n in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--runs takes four numbers, not {text!r}") from None
    return a, b, c, d


def print_section(sec: Section) -> int:
    """A section run alone: its lines, then its mismatches; the exit status (1 on a mismatch)."""
    print("\n".join(sec.lines))
    for m in sec.mismatches:
        print("MISMATCH:", m)
    return 1 if sec.mismatches else 0


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


def load_average() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


# -- marker files: cached data sets are keyed by their shape ---------------------------------------


def read_marker(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The marker at ``path`` when it was written for exactly ``key``, else None."""
    try:
        marker = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return marker if marker.get("key") == key else None


def write_marker(path: Path, key: dict[str, Any], **data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, **data}, indent=1))


# -- DuckDB's extensions in bench/.venv ------------------------------------------------------------


def run_sql_peer(job: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """Run ``duckdb_sql_peer.py`` in bench/.venv on ``job`` (see its docstring); raises
    RuntimeError with the peer's stderr when it fails."""
    proc = subprocess.run(
        [str(peer_python()), str(SQL_PEER)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"peer failed: {proc.stderr.strip()[-1500:]}")
    return json.loads(proc.stdout)


def peer_timing(result: dict[str, Any]) -> Timing:
    rows = [tuple(r) for r in result["rows"]] if result.get("rows") is not None else None
    return Timing(result.get("ms"), rows, result.get("error"), result.get("row_count"))
