"""Run SQL in DuckDB 1.5.5 with extensions from PyPI wheels (bench/.venv), timed.

Why a subprocess: the ``duckdb-extension-*`` wheels are built for one DuckDB release and
refuse any other, and the project runs DuckDB 2.x (see bench/README.md, "Peers: setup").
This file must not import iceduck: the venv has only DuckDB, its extensions and pyarrow.

Job (JSON on stdin)::

    {"extensions": ["avro", "iceberg"],        # loaded in order from duckdb_extension_<name>
     "setup": ["CREATE VIEW ...", ...],        # run once, untimed
     "queries": [{"id": "q1", "sql": "..."}],  # each: one untimed run, then `runs` timed runs
     "runs": 3, "timeout": 30}

Result (JSON on stdout): ``duckdb_version``, ``extension_versions`` and ``results``:
{id: {"ms": median or null, "row_count": n, "rows": first rows (as text when not JSON),
"error": null | "timeout" | message}}. A failing setup statement fails every query with
its message (the engine cannot read the table: that is a finding, not a crash).
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys
import threading
import time
from typing import Any

import duckdb


def extension_path(extension: str) -> str:
    """The ``.duckdb_extension`` file shipped in the ``duckdb-extension-<name>`` wheel."""
    module = __import__(f"duckdb_extension_{extension}")
    pattern = os.path.join(
        os.path.dirname(module.__file__), "extensions", "*", f"{extension}.duckdb_extension"
    )
    found = sorted(glob.glob(pattern))
    if not found:
        raise SystemExit(f"no {extension}.duckdb_extension in duckdb_extension_{extension} ({pattern})")
    return found[-1]


def connect(extensions: list[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    for name in extensions:
        con.load_extension(extension_path(name))
    return con


def run_once(con: duckdb.DuckDBPyConnection, sql: str, timeout: float | None) -> tuple[float, list[Any]]:
    """One run, interrupted after ``timeout`` seconds (raises TimeoutError)."""
    box: dict[str, Any] = {}

    def run() -> None:
        started = time.perf_counter()
        try:
            box["rows"] = con.execute(sql).fetchall()
        except BaseException as e:
            box["error"] = e
        box["seconds"] = time.perf_counter() - started

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        con.interrupt()
        worker.join(60)
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box["seconds"], box["rows"]


def measure(con: duckdb.DuckDBPyConnection, sql: str, runs: int, timeout: float | None) -> dict[str, Any]:
    try:
        _, rows = run_once(con, sql, timeout)
        times = []
        for _ in range(runs):
            seconds, rows = run_once(con, sql, timeout)
            times.append(seconds)
    except TimeoutError:
        return {"ms": None, "row_count": None, "rows": None, "error": "timeout"}
    except Exception as e:
        message = str(e).splitlines()[0][:300] if str(e) else ""
        return {"ms": None, "row_count": None, "rows": None, "error": f"{type(e).__name__}: {message}"}
    return {
        "ms": statistics.median(times) * 1000 if times else None,
        "row_count": len(rows),
        "rows": [list(r) for r in rows[:5]],
        "error": None,
    }


def main() -> None:
    job = json.load(sys.stdin)
    extensions = job.get("extensions", [])
    con = connect(extensions)
    versions = dict(
        con.execute(
            "SELECT extension_name, extension_version FROM duckdb_extensions() WHERE loaded"
        ).fetchall()
    )
    setup_error = None
    for sql in job.get("setup", []):
        try:
            con.execute(sql)
        except Exception as e:
            setup_error = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
            break
    results = {}
    for q in job["queries"]:
        if setup_error is not None:
            results[q["id"]] = {"ms": None, "row_count": None, "rows": None, "error": setup_error}
        else:
            results[q["id"]] = measure(con, q["sql"], job.get("runs", 3), job.get("timeout"))
    out = {
        "duckdb_version": duckdb.__version__,
        "extension_versions": {k: v for k, v in versions.items() if k in extensions},
        "results": results,
    }
    json.dump(out, sys.stdout, default=str)


if __name__ == "__main__":
    main()
