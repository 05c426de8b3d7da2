"""Smoke run of bench/lake.py at a tiny scale, so the S3 benchmark cannot rot.

It runs as its own process (``bench/lake.py`` starts its own moto server and configures the
process's object stores for it). No timing is asserted: what is asserted is that the table
went into the bucket, every engine ran (or said why not) and all answers agree.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.lake_peers import duckdb_httpfs_unavailable, object_store_missing
from tests.support.s3 import moto_missing

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_lake_section_runs_and_every_answer_agrees(tmp_path: Path) -> None:
    why = moto_missing() or object_store_missing()
    if why:
        pytest.skip(why)
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "lake.py"),
            "--days",
            "3",
            "--rows-per-day",
            "400",
            "--runs",
            "1,1,1,1",
            "--warehouse",
            str(tmp_path / "wh"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "3 manifests, 24 data files" in out, out
    assert "s3://bench-lake/bench/events/data/" in out  # EXPLAIN names the objects read
    rows = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    limit = next(v for k, v in rows.items() if k.endswith("(limit)"))
    iceduck = next(v for k, v in rows.items() if k.startswith("iceduck ") and "planning" not in k)
    answers = re.search(r"point (\d+); full 1200\b", limit)
    assert answers, limit
    assert f"point {answers.group(1)}; full 1200" in iceduck, iceduck
    if duckdb_httpfs_unavailable() is None:
        ext = next(v for k, v in rows.items() if "iceberg extension" in k)
        assert f"point {answers.group(1)}; full 1200" in ext, ext


def test_the_latency_mode_counts_round_trips_and_every_answer_agrees(tmp_path: Path) -> None:
    """``--latency-ms``: cold runs through the delaying proxy; no time asserted, only that
    iceduck's runs were counted and every engine that ran gave the same answers (a
    disagreement fails the run: exit status 1)."""
    why = moto_missing() or object_store_missing()
    if why:
        pytest.skip(why)
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "lake.py"),
            *("--days", "3", "--rows-per-day", "400", "--latency-ms", "5", "--latency-runs", "1"),
            *("--warehouse", str(tmp_path / "wh")),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith(("point ", "full "))]
    ours = [r for r in rows if r[1].strip().startswith("iceduck")]
    assert [r[0].strip() for r in ours] == ["point", "full"], done.stdout
    assert all(int(r[2]) >= 1 and int(r[3]) >= int(r[2]) for r in ours), ours  # waves <= requests
    assert "ANSWERS DIFFER" not in done.stdout
