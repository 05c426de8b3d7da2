"""A real PostgreSQL server for the tests: started once per run on a loopback port, stopped at the end.

``initdb`` makes a cluster in a fresh ``mkdtemp`` folder and ``pg_ctl`` runs it. The
server refuses to run as root, so when the tests run as root both run as the ``postgres``
user (Debian's package creates it) on a folder chowned to it -- pytest's ``tmp_path`` is
root's and private, hence ``mkdtemp`` under ``/tmp``. TCP connections use password
authentication (``scram-sha-256``), so the tests exercise the password a URI carries and
a wrong one is refused; the superuser's password is random per run. Durability is off
(``fsync``, ``synchronous_commit``, ``full_page_writes``): the cluster is thrown away.

:func:`find_bin_dir` says why the server cannot start (no binaries, no psycopg), which the
fixtures turn into a skip naming the reason.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

SUPERUSER = "postgres"
#: the system user the server runs as when the tests run as root
SERVER_OS_USER = "postgres"
HOST = "127.0.0.1"


class PostgresUnavailable(RuntimeError):
    """PostgreSQL cannot be started here; the message says why (tests skip with it)."""


def find_bin_dir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``: ``$PATH``, else Debian's newest
    ``/usr/lib/postgresql/<version>/bin``."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise PostgresUnavailable("PostgreSQL is not installed (apt-get install -y postgresql)")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresServer:
    """A running cluster: where it listens and the superuser's password."""

    bin_dir: Path
    root: Path
    port: int
    password: str
    as_user: Sequence[str]

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def uri(self, database: str = "postgres", *, user: str = SUPERUSER, password: str | None = None) -> str:
        """``postgresql://user:password@127.0.0.1:port/database`` (the superuser's password by default)."""
        secret = self.password if password is None else password
        return f"postgresql://{quote(user, safe='')}:{quote(secret, safe='')}@{HOST}:{self.port}/{database}"

    def jdbc_uri(self, database: str) -> str:
        """The same database as Spark's JDBC catalog names it (credentials go in ``jdbc.*``)."""
        return f"jdbc:postgresql://{HOST}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database ``name``; its URI."""
        import psycopg

        with psycopg.connect(self.uri(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.uri(name)

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is ended, the server stops and starts
        again with the options it ran with (``postmaster.opts``); returns once it accepts
        connections."""
        _run([
            *self.as_user, str(self.bin_dir / "pg_ctl"), "restart", "-D", str(self.data_dir),
            "-m", "fast", "-w", "-t", "60", "-l", str(self.root / "server.log"),
        ])  # fmt: skip

    def terminate_sessions(self, database: str) -> int:
        """End every session connected to ``database`` (``pg_terminate_backend``, what an
        administrator or a network failure does to a client); how many there were."""
        import psycopg

        with psycopg.connect(self.uri(), autocommit=True) as conn:
            ended = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            ).fetchall()
        return len(ended)

    def stop(self) -> None:
        _run(
            [
                *self.as_user,
                str(self.bin_dir / "pg_ctl"),
                "stop",
                "-D",
                str(self.data_dir),
                "-m",
                "immediate",
                "-w",
            ]
        )
        shutil.rmtree(self.root, ignore_errors=True)


def _run(command: Sequence[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise PostgresUnavailable(f"{' '.join(command)} failed: {done.stderr.strip() or done.stdout.strip()}")


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A server of :func:`start_postgres` for the block, stopped after; the test skips,
    naming the reason, where it cannot start."""
    import pytest

    try:
        server = start_postgres()
    except PostgresUnavailable as e:
        pytest.skip(str(e))
    try:
        yield server
    finally:
        server.stop()


def start_postgres() -> PostgresServer:
    """initdb + pg_ctl start on a free loopback port; PostgresUnavailable naming the cause."""
    try:
        import psycopg  # noqa: F401 - the tests' client; without it the server is of no use
    except ImportError as e:
        raise PostgresUnavailable(f"psycopg is not installed ({e}): pip install 'psycopg[binary]'") from e
    bin_dir = find_bin_dir()
    root = Path(tempfile.mkdtemp(prefix="iceduck-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(SERVER_OS_USER)
        except KeyError:
            raise PostgresUnavailable(f"running as root and there is no '{SERVER_OS_USER}' user") from None
        os.chown(root, entry.pw_uid, entry.pw_gid)
        as_user = ["runuser", "-u", SERVER_OS_USER, "--"]
    password = secrets.token_urlsafe(12)
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n")
    if as_user:
        os.chown(pwfile, entry.pw_uid, entry.pw_gid)
    server = PostgresServer(bin_dir, root, _free_port(), password, as_user)
    try:
        _run([
            *as_user, str(bin_dir / "initdb"), "-D", str(server.data_dir), "-U", SUPERUSER,
            "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8",
            "--no-locale", "--no-sync",
        ])  # fmt: skip
        options = (
            f"-p {server.port} -k {root} -c listen_addresses={HOST} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        _run([
            *as_user, str(bin_dir / "pg_ctl"), "start", "-D", str(server.data_dir), "-w", "-t", "60",
            "-o", options, "-l", str(root / "server.log"),
        ])  # fmt: skip
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return server


class LosesConnection:
    """A catalog's real psycopg connection which, once armed, has the server terminate it
    just before or just after the first statement matching ``prefix``; the statement (or the
    next one) then meets the real lost-connection error. ``before_cut``, when set, runs just
    before the session is terminated (e.g. to refuse new connections, so that the catalog
    cannot look at what happened)."""

    def __init__(self, conn: Any, uri: str) -> None:
        self.conn, self.uri = conn, uri
        self.armed: tuple[str, bool] | None = None
        self.before_cut: Callable[[], None] | None = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if self.armed and sql.startswith(self.armed[0]):
            _, after = self.armed
            self.armed = None
            if after:
                self.conn.execute(sql, params)
            if self.before_cut is not None:
                self.before_cut()
            _terminate(self.uri, self.conn.info.backend_pid)
            return self.conn.execute(sql if not after else "SELECT 1", params if not after else ())
        return self.conn.execute(sql, params)

    def rollback(self) -> None:
        self.conn.rollback()

    def close(self) -> None:
        self.conn.close()


def _terminate(uri: str, pid: int) -> None:
    import psycopg

    with psycopg.connect(uri) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchall() == [(True,)]
