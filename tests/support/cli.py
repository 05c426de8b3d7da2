"""The ``iceduck`` command in a subprocess, isolated from the user's configuration.

Each run gets ``home`` as ``$HOME`` (so no ``~/.iceduck/config.toml`` of the machine is read) and
no ``ICEDUCK_*`` variable but those the test passes: what a lake test sees is what it set up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

TIMEOUT_S = 120


def run_iceduck(
    *args: str, home: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m iceduck.cli ARGS`` with an empty stdin; its output and exit status."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ICEDUCK_")}
    clean.update(NO_COLOR="1", HOME=str(home), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "iceduck.cli", *args],
        input="",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=clean,
    )


def property_flags(properties: Mapping[str, str]) -> list[str]:
    """``-p KEY=VALUE`` for each property."""
    return [arg for key, value in properties.items() for arg in ("-p", f"{key}={value}")]


def one_error_line(run: subprocess.CompletedProcess[str], *parts: str) -> str:
    """The run failed with exactly one ``Error:`` line on stderr, no traceback, containing
    each of ``parts``; that line."""
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), run.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]
