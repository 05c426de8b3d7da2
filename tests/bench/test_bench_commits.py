"""Smoke run of the commits section (``run.py --only commits``) at a tiny size on the two
catalogs that need no server, so the section cannot rot. No timing is asserted: every
catalog must have committed every row, and each timed commit must have gone through the
catalog's commit call (the share the section reports is measured, not assumed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench"
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH.parent), os.environ.get("PYTHONPATH")])),
}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=ENV)


def test_commits_section_times_each_catalog_against_the_duckdb_baseline(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = _run(
        str(BENCH / "run.py"),
        *("--only", "commits", "--commits", "2", "--commit-warmups", "1"),
        *("--commit-catalogs", "sqlite,hadoop", "--cache-dir", str(tmp_path), "--no-setup"),
        *("--markdown", "--json", str(out)),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    section: dict[str, Any] = json.loads(out.read_text())["sections"]["commits"]
    assert section["mismatches"] == []
    catalogs = section["data"]["catalogs"]
    assert set(catalogs) == {"sqlite", "hadoop", "pyiceberg"}
    for name, c in catalogs.items():
        assert c["skipped"] is None, (name, c["skipped"])
        assert len(c["ms"]) == len(c["baseline_ms"]) == 2, name
        assert c["rows"] == c["expected_rows"] == 3, name
    for name in ("sqlite", "hadoop"):
        assert len(catalogs[name]["calls_ms"]["commit"]) == 2
        assert all(ms > 0 for ms in catalogs[name]["calls_ms"]["commit"]), name
    assert [m["name"] for m in section["measures"]] == [
        "one-row commit, sqlite catalog (limit: DuckDB INSERT)",
        "one-row commit, hadoop catalog (limit: DuckDB INSERT)",
    ]
    assert "| one-row commit, sqlite catalog (limit: DuckDB INSERT) |" in proc.stdout


def test_an_unknown_catalog_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    proc = _run(str(BENCH / "commits.py"), "--catalogs", "sqlite,oracle", "--root", str(tmp_path))
    assert proc.returncode != 0
    assert "unknown catalogs ['oracle']; choose from sqlite, hadoop, postgres, rest" in proc.stderr


def test_the_commits_section_alone_does_not_set_up_the_duckdb_peer_venv() -> None:
    """``run.py --only commits`` runs no DuckDB 1.5.5, so it must not create bench/.venv (a pip
    install) when it is missing; a section that does run it still asks for it."""
    sys.path.insert(0, str(BENCH))
    try:
        import run
    finally:
        sys.path.remove(str(BENCH))
    peers = list(run.PEERS)
    assert not run.needs_peer_venv(["commits"], peers)
    assert not run.needs_peer_venv(["writes", "commits"], peers)
    assert run.needs_peer_venv(["commits", "mor"], peers)
    assert run.needs_peer_venv(["tpch"], ["iceduck"])
