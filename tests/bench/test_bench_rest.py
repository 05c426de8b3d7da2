"""Smoke run of bench/rest.py (DuckDB 1.5.5 reading the events table through ``iceduck serve``)
at a tiny scale, so the section cannot rot. No timing is asserted; every engine's answers
must agree with the limit's (the section exits 1 on a mismatch)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.rest_duckdb import duckdb_rest_unavailable

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_rest_section_runs_every_engine_with_equal_answers(tmp_path: Path) -> None:
    why = duckdb_rest_unavailable()
    if why is not None:
        pytest.skip(why)
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "rest.py"),
            "--days",
            "2",
            "--runs",
            "1,1,1,1",
            "--warehouse",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "attached through iceduck serve (REST)" in proc.stdout
    assert "iceduck / DuckDB 1.5.5 via REST (same run): point cold" in proc.stdout
    assert "iceduck via REST / DuckDB 1.5.5 via REST (same run): point cold" in proc.stdout
    assert "MISMATCH" not in proc.stdout
