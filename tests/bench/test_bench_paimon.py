"""Smoke run of bench/paimon.py (pypaimon-written Paimon tables, iceduck against DuckDB reading
their files) at a tiny size, so the section cannot rot. No timing is asserted; iceduck's answers
must equal pypaimon's, and on the append-only table the baseline's (the section exits 1 on a
mismatch)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paimon import PaimonEnvError, ensure_venv

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_paimon_section_agrees_with_pypaimon(tmp_path: Path) -> None:
    try:
        ensure_venv()
    except PaimonEnvError as e:
        if os.environ.get("ICEDUCK_REQUIRE_PAIMON"):
            raise
        pytest.skip(f"no pypaimon venv: {e}")
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "paimon.py"),
            "--rows",
            "3000",
            "--runs",
            "1,1",
            "--warehouse",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "bench.pk (" in proc.stdout and "live keys after updates" in proc.stdout
    assert "pk baseline: DuckDB on the raw files: a lower bound" in proc.stdout
    assert "iceduck / baseline (same run): append/point cold" in proc.stdout
    assert "MISMATCH" not in proc.stdout
    assert "error" not in proc.stdout.split("baseline:")[0]  # every cell of the table was measured
