"""``iceduck serve`` SIGKILLed while writers commit: after a restart on the same warehouse,
every acknowledged batch is in its table once, every unacknowledged one wholly once or not
at all, and the history (the catalog's and the metadata file's) has no snapshot twice; then
writing goes on and the same holds. With the default SQLite ``catalog.db`` and with a
PostgreSQL catalog."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import iceduck
from iceduck.errors import CommitStateUnknownError
from tests.support.commit_ledger import (
    ACKED,
    ROWS,
    UNKNOWN,
    Attempt,
    Ledger,
    Writers,
    check_table,
    create_tables,
)
from tests.support.lost_answers import AnswerLosingProxy
from tests.support.served_process import ServedProcess

TABLES = ["a", "b", "c"]
WRITERS_PER_TABLE = 2
#: the server is killed once this many commits were acknowledged (more are in flight)
KILL_AFTER = 12
#: acknowledged after the restart before the second check
AFTER_RESTART = 9


def _catalog_options(kind: str, request: pytest.FixtureRequest) -> list[str]:
    if kind == "sqlite":
        return []
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]'")
    server = request.getfixturevalue("postgres_server")
    name = request.node.name.replace("[", "_").replace("]", "").replace("-", "_")[:40]
    return ["--catalog", server.create_database(name)]


def _check_all(url: str, tables: list[str], ledger: Ledger) -> Counter[str]:
    counts: Counter[str] = Counter()
    for table in tables:
        counts.update(check_table(url, table, ledger))
    return counts


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_server_killed_during_commits_loses_nothing(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    warehouse = tmp_path / "wh"
    options = _catalog_options(kind, request)
    served = ServedProcess(warehouse, *options)
    try:
        tables = create_tables(served.url, "f", TABLES)
        ledger = Ledger()
        writers = Writers(served.url, tables, WRITERS_PER_TABLE, ledger)
        ledger.wait_for_acked(KILL_AFTER)
        writers.give_up.set()
        served.kill()
        writers.finish()
    finally:
        served.kill()
    told = ledger.outcomes()
    served = ServedProcess(warehouse, *options)
    try:
        before = _check_all(served.url, tables, ledger)
        assert before[ACKED] == told[ACKED] >= KILL_AFTER
        writers = Writers(served.url, tables, WRITERS_PER_TABLE, ledger)
        ledger.wait_for_acked(told[ACKED] + AFTER_RESTART)
        writers.finish()
        after = _check_all(served.url, tables, ledger)
        assert after[ACKED] >= before[ACKED] + AFTER_RESTART
        assert not served.logged_errors(), served.lines
    finally:
        served.stop()
    print(f"{kind}: killed with {dict(before)}; after the restart {dict(after)}")


def test_a_commit_landed_but_unanswered_when_the_server_died(tmp_path: Path) -> None:
    """The one case a random kill rarely hits, made certain: the commit landed, its answer
    never reached the client, and the server is SIGKILLed before the client asks again.
    The writer is told the state is unknown (nothing deleted); after the restart the batch is
    there once, readable, and writing goes on."""
    warehouse = tmp_path / "wh"
    served = ServedProcess(warehouse)
    try:
        (table,) = create_tables(served.url, "f", ["t"])
        host, port = served.url.removeprefix("http://").split(":")
        with AnswerLosingProxy(host, int(port)) as proxy:
            ledger = Ledger()
            proxy.lose_answer_to(b"POST /v1/namespaces/f/tables/t HTTP", then_refuse=True)
            con = iceduck.connect(catalog_uri=proxy.url)
            try:
                with pytest.raises(CommitStateUnknownError):
                    con.execute(f"INSERT INTO {table} SELECT 'unanswered', range FROM range({ROWS})")
            finally:
                con.close()
            ledger.record(Attempt(table, "unanswered", UNKNOWN))
            served.kill()
    finally:
        served.kill()
    served = ServedProcess(warehouse)
    try:
        assert check_table(served.url, table, ledger) == Counter({"unknown-landed": 1})
        writers = Writers(served.url, [table], WRITERS_PER_TABLE, ledger)
        ledger.wait_for_acked(AFTER_RESTART)
        writers.finish()
        assert check_table(served.url, table, ledger)[ACKED] >= AFTER_RESTART
    finally:
        served.stop()
