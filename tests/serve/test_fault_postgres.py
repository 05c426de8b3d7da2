"""``iceduck serve`` on a PostgreSQL catalog while the database is restarted (``pg_ctl
restart -m fast``) or its sessions are terminated (``pg_terminate_backend``) under
committing writers: nothing acknowledged is lost, nothing unacknowledged half-lands, no
snapshot is in the history twice, and the server recovers by itself -- new commits land
once the database is back, without restarting ``iceduck serve``.

The restart needs a server of its own (the run's shared one serves other modules)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.commit_ledger import ACKED, REFUSED, Ledger, Writers, check_table, create_tables
from tests.support.postgres import PostgresServer, running_postgres
from tests.support.served_process import ServedProcess

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]'")

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
