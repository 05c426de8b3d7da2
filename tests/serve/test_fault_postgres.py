"""``iceduck serve`` on a PostgreSQL catalog while the database is restarted (``pg_ctl
restart -m fast``) or its sessions are terminated (``pg_terminate_backend``) under
committing writers: nothing acknowledged is lost, nothing unacknowledged half-lands, no
snapshot is in the history twice, and the server recovers by itself -- new commits land
once the database is back, without restarting ``iceduck serve``.

The restart needs a server of its own (the run's shared one serves other modules)."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.postgres import connect_postgres, connection_parameters, postgres_dialect
from iceduck.errors import CommitStateUnknownError
from tests.support.commit_ledger import (
    ACKED,
    REFUSED,
    ROWS,
    Ledger,
    Writers,
    check_history,
    check_table,
    create_tables,
)
from tests.support.postgres import LosesConnection, PostgresServer, running_postgres
from tests.support.rest import RestClient, start_server
from tests.support.served_process import ServedProcess

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]'")

TABLES = ["a", "b"]
WRITERS_PER_TABLE = 2
#: the fault comes each time this many more commits were acknowledged (more are in flight)
FAULT_AFTER = 6
ROUNDS = 3
#: acknowledged after the fault, through the same server process
AFTER_FAULT = 10
EXPECTED_ERRORS = {"iceduck.errors.StorageError", "iceduck.errors.CommitStateUnknownError"}


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


def _fault(server: PostgresServer, fault: str, database: str) -> None:
    if fault == "restart":
        server.restart()
    else:
        assert server.terminate_sessions(database) >= 1  # the catalog's own session at least


@pytest.mark.parametrize("fault", ["restart", "terminate"])
def test_the_catalog_database_fails_during_commits(
    fault: str, own_postgres: PostgresServer, tmp_path: Path
) -> None:
    database = f"fault_{fault}"
    served = ServedProcess(tmp_path / "wh", "--catalog", own_postgres.create_database(database))
    try:
        tables = create_tables(served.url, "f", TABLES)
        ledger = Ledger()
        writers = Writers(served.url, tables, WRITERS_PER_TABLE, ledger)
        for round in range(ROUNDS):
            ledger.wait_for_acked(FAULT_AFTER * (round + 1))
            _fault(own_postgres, fault, database)
        at_fault = ledger.acked()
        ledger.wait_for_acked(at_fault + AFTER_FAULT)  # the same server process, recovered
        writers.finish()
        counts: Counter[str] = Counter()
        for table in tables:
            counts.update(check_table(served.url, table, ledger))
        assert counts[ACKED] >= at_fault + AFTER_FAULT
        refused = [a.error for a in ledger.attempts if a.outcome == REFUSED]
        assert all("HTTP 503" in e for e in refused), refused  # "the catalog database is down"
        # every 5xx the server answered was the database being away (503), or a commit whose
        # outcome it could not learn (CommitStateUnknownException): no unexpected failure
        assert set(served.logged_errors()) <= EXPECTED_ERRORS, served.lines
        assert served.process.poll() is None
    finally:
        served.stop()
    print(f"{fault}: {dict(counts)}; refused {len(refused)} while the database was away")


UPDATE_SQL = "UPDATE iceberg_tables SET metadata_location"


@pytest.fixture
def cut_after_commit(
    own_postgres: PostgresServer, tmp_path: Path
) -> Iterator[tuple[str, Callable[[], None]]]:
    """A server on a PostgreSQL catalog whose connection is cut just after the commit's
    ``UPDATE`` ran, with the database refusing new connections at that moment (so the
    server cannot look at what happened); its URL, and the call that arms the cut once.
    The database lets connections in again when the server's next request needs one."""
    database = f"unknown_{uuid.uuid4().hex[:8]}"
    uri = own_postgres.create_database(database)
    params = connection_parameters(uri)
    opened: list[LosesConnection] = []
    refusing = threading.Event()

    def allow(allowed: bool) -> None:
        with psycopg.connect(own_postgres.uri(), autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS {str(allowed).lower()}')

    def connect() -> LosesConnection:
        if refusing.is_set():  # the server looks at what its commit did, and is refused...
            refusing.clear()
            try:
                return LosesConnection(connect_postgres(params, database, False), own_postgres.uri())
            finally:
                allow(True)  # ...and from its next request on the database is back
        opened.append(LosesConnection(connect_postgres(params, database, False), own_postgres.uri()))
        return opened[-1]

    def refuse() -> None:
        allow(False)
        refusing.set()

    def arm() -> None:
        opened[-1].armed = (UPDATE_SQL, True)
        opened[-1].before_cut = refuse

    catalog = JdbcCatalog("iceduck", tmp_path / "wh", connect, postgres_dialect(), database)
    server = start_server(tmp_path / "wh", catalog=catalog)
    try:
        yield server.url, arm
    finally:
        server.stop()
        allow(True)


def test_a_commit_the_server_cannot_check_is_answered_as_unknown(
    cut_after_commit: tuple[str, Callable[[], None]],
) -> None:
    """The spec's answer to a commit whose state is unknown: 500 ``CommitStateUnknownException``
    (Java's ``tableCommitHandler`` raises ``CommitStateUnknownException`` on it and deletes
    nothing), never a 409 or a 503 saying it failed. Here it landed; the next request finds
    the database back, on the same server."""
    url, arm = cut_after_commit
    create_tables(url, "f", ["t"])
    arm()
    commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
    reply = RestClient(url).post("/v1/namespaces/f/tables/t", commit)
    assert reply.status == 500 and reply.body["error"]["type"] == "CommitStateUnknownException"
    assert "may or may not have landed" in reply.body["error"]["message"]
    metadata = check_history(url, "f.t")
    assert metadata["properties"]["k"] == "v" and len(metadata["metadata-log"]) == 1


def test_iceduck_tells_its_user_the_state_is_unknown_and_keeps_the_batch_once(
    cut_after_commit: tuple[str, Callable[[], None]],
) -> None:
    url, arm = cut_after_commit
    (table,) = create_tables(url, "f", ["t"])
    con = iceduck.connect(catalog_uri=url)
    try:
        con.execute(f"SELECT count(*) FROM {table}").fetchall()  # the table loaded
        arm()
        with pytest.raises(CommitStateUnknownError, match="may or may not have landed"):
            con.execute(f"INSERT INTO {table} SELECT 'unknown', range FROM range({ROWS})")
        # the commit landed, and no file it references was deleted
        assert con.execute(f"SELECT batch, count(*) FROM {table} GROUP BY batch").fetchall() == [
            ("unknown", ROWS)
        ]
        con.execute(f"INSERT INTO {table} SELECT 'next', range FROM range({ROWS})")
    finally:
        con.close()
    assert len(check_history(url, table)["snapshots"]) == 2
