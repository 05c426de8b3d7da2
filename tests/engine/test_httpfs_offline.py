"""``iceduck.duckdb-io=auto`` without httpfs installed and without a network: the extension
repository is asked for an answer within a bound before ``INSTALL`` (DuckDB's download has
no timeout), the fallback to fsspec is said once, and nothing is retried per statement.

The repository is a loopback port (DuckDB's ``custom_extension_repository``): one that
refuses, and one that accepts the connection and never answers. No real network.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.engine import object_stores
from iceduck.engine.connection import Duck, open_database
from tests.support.s3 import S3Server


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections (the kernel's backlog) and never replies."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.fixture
def refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed: connecting is refused


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process as new: httpfs not tried yet (the failure is remembered per process)."""
    monkeypatch.setattr(object_stores, "_httpfs_failure", [])


def database(tmp_path: Path, port: int) -> Duck:
    """A database with no httpfs installed (an empty extension folder) whose extension
    repository is the loopback ``port``."""
    con = open_database()
    con.execute(f"SET extension_directory = '{tmp_path / 'extensions'}'")
    con.execute(f"SET custom_extension_repository = 'http://127.0.0.1:{port}'")
    return con


def test_a_repository_that_never_answers_is_unreachable_within_the_bound(silent_port: int) -> None:
    why = object_stores.repository_unreachable(f"http://127.0.0.1:{silent_port}", 0.2)
    assert why is not None and "timed out" in why


def test_a_refused_repository_is_unreachable(refused_port: int) -> None:
    why = object_stores.repository_unreachable(f"http://127.0.0.1:{refused_port}", 5)
    assert why is not None and "refused" in why.lower()


@pytest.mark.parametrize("port_fixture", ["silent_port", "refused_port"])
def test_auto_falls_back_to_fsspec_and_says_so_once(
    tmp_path: Path,
    s3_configured: S3Server,
    fresh_process: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest,
    port_fixture: str,
) -> None:
    port: int = request.getfixturevalue(port_fixture)
    monkeypatch.setattr(object_stores, "PROBE_SECONDS", 0.3, raising=False)
    first, second = database(tmp_path, port), database(tmp_path, port)
    with caplog.at_level(logging.INFO, logger="iceduck"):
        object_stores.prepare(first, "s3", "s3://bucket/t/data/a.parquet")
        object_stores.prepare(second, "s3", "s3://bucket/t/data/b.parquet")  # a new database
    said = [r.getMessage() for r in caplog.records if r.name.startswith("iceduck")]
    assert len(said) == 1, said
    assert "httpfs extension cannot be loaded" in said[0]
    assert f"127.0.0.1:{port}" in said[0] and "fsspec" in said[0]
    assert "installing" not in said[0]
    for con in (first, second):  # both read S3 through the registered pyarrow filesystem
        assert "s3" in con.list_filesystems()
