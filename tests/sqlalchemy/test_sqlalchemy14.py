"""Superset 6.1.0 pins ``sqlalchemy>=1.4,<2`` (its wheel's METADATA), so the dialect must also
work on SQLAlchemy 1.4: Superset's inspector calls and the URL tests run again in
``tests/.venv-sqlalchemy14`` (git-ignored; ``.ci/run`` creates it: a venv over this Python's
packages with only SQLAlchemy 1.4 its own). pandas 3 and jupysql need SQLAlchemy 2, so the rest
of tests/sqlalchemy runs only on 2. ICEDUCK_REQUIRE_SQLALCHEMY14 makes a missing venv a failure."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "tests" / ".venv-sqlalchemy14" / "bin" / "python"


def test_superset_calls_and_urls_on_sqlalchemy_1_4() -> None:
    if not PYTHON.exists():
        if os.environ.get("ICEDUCK_REQUIRE_SQLALCHEMY14"):
            pytest.fail(f"{PYTHON} is missing: .ci/run creates it")
        pytest.skip(f"no SQLAlchemy 1.4 venv at {PYTHON} (.ci/run creates it)")
    version = subprocess.run(
        [str(PYTHON), "-c", "import sqlalchemy; print(sqlalchemy.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version.startswith("1.4."), version
    run = subprocess.run(
        [
            str(PYTHON),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/sqlalchemy/test_superset_calls.py",
            "tests/sqlalchemy/test_url.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
