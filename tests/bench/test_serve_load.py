"""bench/serve_load.py at a tiny size, so the harness cannot rot: 4 clients, 10 operations
each (a count, not a time), through ``run.py --only serve_load``; its checks must pass and
the server must have answered no 5xx. No timing is asserted. And the checker itself: a table
holding a row twice, missing an acknowledged one, is reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import iceduck

BENCH = Path(__file__).resolve().parents[2] / "bench"
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH.parent), os.environ.get("PYTHONPATH")])),
}


def _serve_load() -> Any:
    sys.path.insert(0, str(BENCH))
    try:
        import serve_load
    finally:
        sys.path.remove(str(BENCH))
    return serve_load


def test_the_section_commits_through_the_server_and_its_checks_pass(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            *("--only", "serve_load", "--load-clients", "4", "--load-ops", "10"),
            *("--cache-dir", str(tmp_path), "--no-setup", "--json", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    section: dict[str, Any] = json.loads(out.read_text())["sections"]["serve_load"]
    assert section["mismatches"] == []
    data = section["data"]
    assert data["checks"]["failures"] == []
    assert data["server_5xx"] == 0 and data["raw_5xx"] == 0
    assert sum(k["count"] for k in data["kinds"].values()) == 40
    assert data["server_requests"] > 0
    tables = data["checks"]["tables"]
    assert set(tables) == {"hot"}  # 4 clients, all among the 6 hot ones
    assert tables["hot"]["rows"] == tables["hot"]["snapshots"] == data["commits_acknowledged"]
    assert "checks: every acknowledged row once" in proc.stdout and "passed" in proc.stdout


def test_the_checker_reports_a_duplicated_and_a_missing_row(tmp_path: Path) -> None:
    serve_load = _serve_load()
    insert = serve_load.Insert
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE load")
        con.execute("CREATE TABLE load.hot (client int, seq bigint)")
        con.execute("INSERT INTO load.hot VALUES (0, 0)")
        con.execute("INSERT INTO load.hot VALUES (0, 0)")
        con.execute("INSERT INTO load.hot VALUES (3, 9)")
        landed = insert(3, 9, "hot", False, "UserError: x")
        failures, counts = serve_load.verify_table(con, "hot", [insert(0, 0, "hot", True), landed])
        missing, _ = serve_load.verify_table(
            con, "hot", [insert(0, 0, "hot", True), insert(0, 1, "hot", True), landed]
        )
    assert "load.hot: row (0, 0) present 2 times" in failures
    assert "load.hot: row (3, 9) landed although its INSERT failed: UserError: x" in failures
    assert "load.hot: 3 snapshots for 1 acknowledged INSERTs + 1 landed" in failures
    assert counts == {"rows": 3, "acknowledged": 1, "landed_unacknowledged": 1, "snapshots": 3}
    assert "load.hot: acknowledged row (0, 1) is missing" in missing


def test_the_server_log_yields_every_status_and_keeps_other_lines() -> None:
    """A 5xx is counted from the access log however the client that got it reported it, and a
    traceback the server wrote is kept (the run fails on it)."""
    serve_load = _serve_load()
    log = serve_load.ServerLog()
    log.read(
        [
            'INFO 127.0.0.1 "GET /v1/namespaces/load/tables/hot HTTP/1.1" 200 -\n',
            'INFO 127.0.0.1 "POST /v1/namespaces/load/tables/hot HTTP/1.1" 409 -\n',
            "ERROR POST /v1/namespaces/load/tables/hot failed\n",
            "Traceback (most recent call last):\n",
            'INFO 127.0.0.1 "POST /v1/namespaces/load/tables/hot HTTP/1.1" 500 -\n',
        ]
    )
    assert [status for _, _, status in log.requests] == [200, 409, 500]
    assert log.other == [
        "ERROR POST /v1/namespaces/load/tables/hot failed",
        "Traceback (most recent call last):",
    ]
    out = serve_load.summarise([], log, 1.0, {"failures": [], "tables": {}}, serve_load.Settings())
    assert out["server_5xx"] == 1 and out["server_409"] == 1
