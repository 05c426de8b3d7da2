"""``iceduck serve`` as a command: it opens the warehouse's catalog.db and answers HTTP;
``iceduck [WAREHOUSE]`` still opens the shell."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.rest.conftest import RestClient

ROOT = Path(__file__).resolve().parents[2]


def test_iceduck_serve_command(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "iceduck", "serve", str(warehouse), "--port", "0", "--token", "t0k"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        assert found, line
        client = RestClient(found.group(1), token="t0k")
        assert client.post("/v1/namespaces", {"namespace": ["served"]}).status == 200
        assert RestClient(found.group(1)).get("/v1/namespaces").status == 401
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert (warehouse / "catalog.db").is_file()
    shell = subprocess.run(
        [sys.executable, "-m", "iceduck", str(warehouse), "-c", "SHOW NAMESPACES"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert shell.returncode == 0, shell.stderr
    assert "served" in shell.stdout
