"""The shell on a REST catalog: ``iceduck --catalog http://...`` (no warehouse needed), the
environment's ``ICEDUCK_CATALOG_URI`` and ``ICEDUCK_PROPERTY__TOKEN``, ``~/.iceduck/config.toml``,
and one error line (no traceback, no secret) for a server that is down, a wrong token, a bad
URI; spark_conf refuses REST catalogs by name."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.errors import UnsupportedError
from tests.catalog.rest_client.conftest import TOKEN, Served, serve
from tests.support.cli import one_error_line, run_iceduck


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Served]:
    running = serve(tmp_path, token=TOKEN)
    yield running
    running.server.stop()


def test_shell_reads_and_writes_through_the_catalog(guarded: Served, tmp_path: Path) -> None:
    run = run_iceduck(
        "--catalog",
        guarded.url,
        "-p",
        f"token={TOKEN}",
        "--csv",
        "-c",
        "CREATE NAMESPACE a; CREATE TABLE a.t (id bigint); INSERT INTO a.t VALUES (7)",
        "-c",
        "SELECT * FROM a.t",
        home=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-2:] == ["id", "7"]
    assert (guarded.warehouse / "a" / "t").is_dir()  # the server chose the location
    assert not (tmp_path / "warehouse").exists()  # no local warehouse was created
    env = {"ICEDUCK_CATALOG_URI": guarded.url, "ICEDUCK_PROPERTY__TOKEN": TOKEN}
    run = run_iceduck("--csv", "-c", "SELECT count(*) AS n FROM a.t", home=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["n", "1"]
    config = tmp_path / ".iceduck" / "config.toml"  # the user's file: no warehouse in it
    config.parent.mkdir()
    config.write_text(f'[catalog]\nuri = "{guarded.url}"\n\n[properties]\ntoken = "{TOKEN}"\n')
    run = run_iceduck("--csv", "-c", "SELECT id FROM a.t", home=tmp_path)
    assert (run.returncode, run.stdout.split()) == (0, ["id", "7"]), run.stderr


def test_wrong_token_is_one_line_without_the_token(guarded: Served, tmp_path: Path) -> None:
    run = run_iceduck("--catalog", guarded.url, "-p", "token=wrong-secret", "-c", "SELECT 1", home=tmp_path)
    line = one_error_line(run, guarded.url, "refused the credentials")
    assert "wrong-secret" not in run.stderr + run.stdout and TOKEN not in line


def test_server_down_and_bad_uri_are_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = f"http://127.0.0.1:{port}"
    run = run_iceduck("--catalog", uri, "-c", "SELECT 1", home=tmp_path)
    one_error_line(run, uri, "cannot reach the REST catalog", "connection refused")
    run = run_iceduck("--catalog", "http://me:hunter2@127.0.0.1:1", "-c", "SELECT 1", home=tmp_path)
    one_error_line(run, "holds credentials")
    assert "hunter2" not in run.stderr


def test_spark_conf_of_the_rest_catalog_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    import iceduck

    monkeypatch.setenv("ICEDUCK_CATALOG_URI", "http://127.0.0.1:1")
    monkeypatch.setenv("ICEDUCK_PROPERTY__TOKEN", "tok")
    conf = iceduck.spark_conf()
    assert conf["spark.sql.catalog.iceduck.type"] == "rest"
    assert conf["spark.sql.catalog.iceduck.uri"] == "http://127.0.0.1:1"
    assert conf["spark.sql.catalog.iceduck.token"] == "tok"
    with pytest.raises(UnsupportedError, match="complete runtime"):
        iceduck.spark_conf(jars=True)
