"""Measure DuckDB's Iceberg extension (and DuckDB's ``read_parquet`` of the same version).

Runs inside ``bench/.venv`` (see bench/README.md): the ``duckdb-extension-iceberg`` and
``duckdb-extension-avro`` wheels on PyPI carry extension binaries built for one DuckDB
release (1.5.5 at the time of writing) and pin ``duckdb==<that release>``; an extension
refuses to load into any other DuckDB version, so it cannot share the project's interpreter.

The extensions load offline: each wheel ships ``<package>/extensions/v<version>/<name>.duckdb_extension``
and ``DuckDBPyConnection.load_extension(path)`` loads that file (no ``INSTALL``, no network).
avro is loaded first because iceberg reads manifests through it.

Protocol: a JSON job on stdin, a JSON result on stdout (see :func:`main`). This file must not
import iceduck (the venv has only DuckDB and the two extensions).
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import duckdb


def extension_path(module_name: str, extension: str) -> str:
    """The ``.duckdb_extension`` file shipped in a ``duckdb-extension-*`` wheel."""
    module = __import__(module_name)
    pattern = os.path.join(
        os.path.dirname(module.__file__), "extensions", "*", f"{extension}.duckdb_extension"
    )
    found = sorted(glob.glob(pattern))
    if not found:
        raise SystemExit(f"no {extension}.duckdb_extension in {module_name} ({pattern})")
    return found[-1]


def connect(with_iceberg: bool, setup: list[str] | None = None) -> duckdb.DuckDBPyConnection:
    """A fresh connection; with ``setup`` statements (a ``CREATE SECRET`` for S3), the
    ``httpfs`` extension is loaded first (from the ``duckdb-extension-httpfs`` wheel)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    if with_iceberg:
        con.load_extension(extension_path("duckdb_extension_avro", "avro"))
        con.load_extension(extension_path("duckdb_extension_iceberg", "iceberg"))
    if setup:
        con.load_extension(extension_path("duckdb_extension_httpfs", "httpfs"))
        for statement in setup:
            con.execute(statement)
    return con


def measure(
    setup: Callable[[], duckdb.DuckDBPyConnection], sql: str, cold_runs: int, warm_runs: int
) -> dict[str, Any]:
    """Cold: first query on a fresh connection (setup not timed); warm: repeats on one connection."""
    cold = []
    con = setup()  # untimed: one-time costs of the process
    result: Any = con.execute(sql).fetchall()
    con.close()
    for _ in range(cold_runs):
        con = setup()
        start = time.perf_counter()
        result = con.execute(sql).fetchall()
        cold.append(time.perf_counter() - start)
        con.close()
    con = setup()
    con.execute(sql).fetchall()
    warm = []
    for _ in range(warm_runs):
        start = time.perf_counter()
        result = con.execute(sql).fetchall()
        warm.append(time.perf_counter() - start)
    con.close()
    return {
        "cold_ms": statistics.median(cold) * 1000,
        "warm_ms": statistics.median(warm) * 1000,
        "result": [list(row) for row in result],
    }


def file_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def main() -> None:
    """Job (stdin JSON): ``metadata_location``, ``queries``: {name: {"where": SQL or "",
    "files": [...], "cold": n, "warm": n}}, optional ``setup`` (statements run on every
    connection after loading httpfs) and ``scan`` (what the Iceberg queries read instead of
    ``iceberg_scan(metadata_location)``: a table of a catalog the setup attached). Result:
    {engine: {query: measurement}}, versions."""
    job = json.load(sys.stdin)
    setup = job.get("setup") or None
    aggregate = "SELECT count(*), sum(v)"
    out: dict[str, Any] = {
        "duckdb_version": duckdb.__version__,
        "extension_versions": {},
        "iceberg": {},
        "read_parquet": {},
    }
    probe = connect(True, setup)
    out["extension_versions"] = dict(
        probe.execute(
            "SELECT extension_name, extension_version FROM duckdb_extensions() "
            "WHERE extension_name IN ('iceberg', 'avro', 'httpfs') AND loaded"
        ).fetchall()
    )
    probe.close()
    # a table of an attached REST catalog (setup holds the ATTACH), or the metadata file
    scan = job.get("scan") or "iceberg_scan('" + job["metadata_location"].replace("'", "''") + "')"
    for name, q in job["queries"].items():
        where = f" WHERE {q['where']}" if q["where"] else ""
        out["iceberg"][name] = measure(
            lambda: connect(True, setup), f"{aggregate} FROM {scan}{where}", q["cold"], q["warm"]
        )
        if job.get("scan"):
            continue  # the setup needs the iceberg extension; read_parquet is measured elsewhere
        out["read_parquet"][name] = measure(
            lambda: connect(False, setup),
            f"{aggregate} FROM read_parquet({file_list(q['files'])}){where}",
            q["cold"],
            q["warm"],
        )
    json.dump(out, sys.stdout)


def once(job: dict[str, Any]) -> None:
    """One cold query, for a caller counting this process's requests (bench/lake_latency.py):
    a fresh connection (extensions loaded, the secret made), then ``ready`` on stdout; on a
    line from stdin the query ``sql`` runs once, timed, and its time and row are printed."""
    con = connect(job["iceberg"], job.get("setup") or None)
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.perf_counter()
    row = con.execute(job["sql"]).fetchone()
    elapsed = time.perf_counter() - start
    con.close()
    print(json.dumps({"ms": elapsed * 1000, "row": list(row) if row else None}), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--once"]:
        once(json.loads(sys.argv[2]))
    else:
        main()
