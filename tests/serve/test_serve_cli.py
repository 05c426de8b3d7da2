"""``iceduck serve`` as a command: it opens the warehouse's catalog.db and answers HTTP;
``iceduck [WAREHOUSE]`` still opens the shell."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.serve.conftest import RestClient

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


def _serve(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "iceduck", "serve", str(tmp_path / "wh"), "--port", "0", *options],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def _url(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
    assert found, line
    return found.group(1)


def test_serve_with_credentials_from_the_environment(tmp_path: Path) -> None:
    process = _serve(tmp_path, "--token-ttl", "60", env={"ICEDUCK_SERVE_CREDENTIAL": "etl:pw"})
    try:
        url = _url(process)
        form = b"grant_type=client_credentials&client_id=etl&client_secret=pw"
        reply = RestClient(url).call(
            "POST",
            "/v1/oauth/tokens",
            raw=form,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert reply.status == 200 and reply.body["expires_in"] == 60
        assert RestClient(url, token=reply.body["access_token"]).get("/v1/namespaces").status == 200
        assert RestClient(url).get("/v1/namespaces").status == 401
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_serve_options_are_checked(tmp_path: Path) -> None:
    from iceduck.serve.serve import build_server, parser

    for options, message in (
        (["--credential", "nosecret"], "CLIENT_ID:SECRET"),
        (["--credential", ":pw"], "CLIENT_ID:SECRET"),
        (["--token-ttl", "0"], "positive number of seconds"),
        (["--token-ttl", "soon"], "positive number of seconds"),
        (["-p", "novalue"], "KEY=VALUE"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "iceduck", "serve", str(tmp_path / "wh"), *options],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
        assert result.returncode == 2, options
        assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "wh").exists()

    args = parser().parse_args(
        [
            str(tmp_path / "wh"),
            "--port",
            "0",
            "--credential",
            "a:1",
            "--credential",
            "b:2",
            "-p",
            "s3.endpoint=http://x",
            "-p",
            "jdbc.user=u",
            "--vend-credentials",
            "--catalog-name",
            "lake",
        ]
    )
    server = build_server(args)
    try:
        context = server.context
        assert dict(context.auth.credentials) == {"a": "1", "b": "2"} and context.auth.ttl == 3600
        assert context.storage == {"s3.endpoint": "http://x", "jdbc.user": "u"}
        assert context.vend_credentials and context.catalog_name == "lake"
    finally:
        server.server_close()
