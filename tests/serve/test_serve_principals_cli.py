"""``iceduck serve --principals FILE --audit FILE``: refused at start when the file is wrong,
reloaded on ``SIGHUP``, audit lines on stdout with ``--audit -``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve.conftest import RestClient

ROOT = Path(__file__).resolve().parents[2]
TEAM = """\
[principals.admin]
token = "admin-token"
roles = ["admin"]

[roles.admin]
grants = [{ catalog = true, privileges = ["admin"] }]
"""


def _serve(tmp_path: Path, *options: str, stdout: int | None = subprocess.DEVNULL) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "iceduck", "serve", str(tmp_path / "wh"), "--port", "0", *options],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "ICEDUCK_SERVE_TOKEN": ""},
    )


def _refused(tmp_path: Path, *options: str) -> str:
    process = _serve(tmp_path, *options)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    return err


def test_a_wrong_file_stops_the_start_with_its_line(tmp_path: Path) -> None:
    team = tmp_path / "team.toml"
    team.write_text(TEAM.replace('["admin"] }', '["admin", "superuser"] }'))
    err = _refused(tmp_path, "--principals", str(team))
    assert f"Error: principals file {team}, line 6: role 'admin': unknown privilege 'superuser'" in err
    team.write_text(TEAM + '[roles.sales]\ngrants = [{ namespace = "sales", privileges = ["read"] }]\n')
    assert "line 8: role 'sales': grant on namespace sales, which does not exist" in _refused(
        tmp_path, "--principals", str(team)
    )
    assert "--principals names every principal" in _refused(
        tmp_path, "--principals", str(team), "--token", "t"
    )
    assert "No such file" in _refused(tmp_path, "--principals", str(tmp_path / "missing.toml"))


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_sighup_reloads_and_audit_goes_to_stdout(tmp_path: Path) -> None:
    team = tmp_path / "team.toml"
    team.write_text(TEAM)
    process = _serve(tmp_path, "--principals", str(team), "--audit", "-", stdout=subprocess.PIPE)
    try:
        assert process.stderr is not None and process.stdout is not None
        url = re.search(r"(https?://\S+)", process.stderr.readline())
        assert url, "the server did not start"
        admin = RestClient(url.group(1), "admin-token")
        assert admin.post("/v1/namespaces", {"namespace": ["sales"]}).status == 200
        line = json.loads(process.stdout.readline())
        assert line["principal"] == "admin" and line["namespace"] == ["sales"] and line["outcome"] == "ok"
        assert RestClient(url.group(1), "new-token").get("/v1/namespaces").status == 401
        team.write_text(TEAM + '[principals.new]\ntoken = "new-token"\nroles = []\n')
        process.send_signal(signal.SIGHUP)
        assert "Principals reloaded: 2 principals, 1 roles" in process.stderr.readline()
        assert RestClient(url.group(1), "new-token").get("/v1/namespaces").status == 200
        team.write_text("not toml at all [")
        process.send_signal(signal.SIGHUP)
        assert "Principals not reloaded, the previous grants still serve" in process.stderr.readline()
        assert RestClient(url.group(1), "new-token").get("/v1/namespaces").status == 200
    finally:
        process.terminate()
        process.wait(timeout=30)
