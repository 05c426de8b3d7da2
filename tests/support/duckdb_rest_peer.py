"""Runs inside ``bench/.venv``: DuckDB 1.5.5 attached to a REST catalog, running steps.

Not imported by the test process (that one has DuckDB 2.0.1, which cannot load the 1.5.5
extensions); :mod:`tests.support.rest_duckdb` starts it as a subprocess. It must not import
iceduck: the venv has only DuckDB and the extension wheels.

Protocol: a JSON job in the file named by the first argument, a JSON answer on stdout.

* job: ``setup`` (statements before the ATTACH: a ``CREATE SECRET``), ``attach`` (the
  ATTACH statement), ``steps``: ``{"sql", "out", "attempts", "retry_on", "repeat"}``.
  ``out``: a Parquet file the step's query is copied to (``COPY (sql) TO out``);
  ``attempts``: how many times a statement failing with a message containing ``retry_on``
  is tried (a commit that lost a race: DuckDB does not retry by itself); ``repeat``: run
  the query that many more times and report each run's milliseconds (a measurement);
  ``wait_file``: before the step, create ``<wait_file>.ready`` and wait for ``wait_file``;
  ``pause_ms``: sleep that long before the step (a writer paced among others).
* answer: ``{"steps": [{"rowcount", "error", "errors", "ms"}]}``: ``error`` is the last
  failure of a step that never succeeded, ``errors`` every failed attempt's message.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

from duckdb_iceberg_peer import connect, extension_path  # bench/, on the path above


def wait_for(path: str, timeout_s: float = 120.0) -> None:
    """Announce ``<path>.ready`` and wait until ``path`` exists: the test process acts in
    between (commits to the table this session is about to commit to)."""
    with open(path + ".ready", "w"):
        pass
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise SystemExit(f"nobody created {path} in {timeout_s} s")
        time.sleep(0.01)


def run_step(con: Any, step: dict[str, Any]) -> dict[str, Any]:
    if step.get("wait_file"):
        wait_for(step["wait_file"])
    time.sleep(float(step.get("pause_ms", 0)) / 1000)
    sql = step["sql"]
    if step.get("out"):
        sql = "COPY (" + sql + ") TO '" + step["out"].replace("'", "''") + "' (FORMAT parquet)"
    errors: list[str] = []
    for _ in range(max(1, int(step.get("attempts", 1)))):
        try:
            rows = con.execute(sql).fetchall()
        except Exception as e:  # reported to the test process, which decides
            errors.append(f"{type(e).__name__}: {e}")
            if not step.get("retry_on") or step["retry_on"] not in str(e):
                break
            continue
        rowcount = rows[0][0] if rows and len(rows[0]) == 1 and isinstance(rows[0][0], int) else None
        ms = []
        for _ in range(int(step.get("repeat", 0))):
            start = time.perf_counter()
            con.execute(sql).fetchall()
            ms.append((time.perf_counter() - start) * 1000)
        return {"rowcount": rowcount, "error": None, "errors": errors, "ms": ms}
    return {"rowcount": None, "error": errors[-1], "errors": errors, "ms": []}


def main() -> None:
    with open(sys.argv[1]) as f:
        job = json.load(f)
    con = connect(True)
    con.load_extension(extension_path("duckdb_extension_httpfs", "httpfs"))
    answer: dict[str, Any] = {"steps": []}
    try:
        for statement in job.get("setup", []):
            con.execute(statement)
        con.execute(job["attach"])
    except Exception as e:
        answer["error"] = f"{type(e).__name__}: {e}"
        json.dump(answer, sys.stdout)
        return
    for step in job["steps"]:
        answer["steps"].append(run_step(con, step))
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
