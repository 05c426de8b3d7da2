"""Transactions end to end, with real processes, on each catalog that commits several
tables atomically: SQLite (one SQLite transaction), PostgreSQL (one PostgreSQL
transaction) and a REST catalog (``iceduck serve``, ``/v1/transactions/commit``).

* a reader in another process polling both tables never sees one changed without the
  other: it counts the rows of one table, then of the other, and since every transaction
  adds one row to each, the table counted second can never have fewer rows;
* a writer process SIGKILLed at random moments of its multi-table COMMITs leaves every
  table entirely before or entirely after each transaction.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from tests.support.rest import start_server

REPO = Path(__file__).resolve().parents[1]

READER = """
import json, os, sys
import iceduck
con = iceduck.connect(**json.loads(sys.argv[1]))
polls = bad = 0
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):
    first, second = ("a", "b") if polls % 2 == 0 else ("b", "a")
    n1 = con.execute(f"SELECT count(*) FROM db.{first}").fetchone()[0]
    n2 = con.execute(f"SELECT count(*) FROM db.{second}").fetchone()[0]
    bad += n1 > n2  # counted first, yet more rows: a commit of one table without the other
    polls += 1
print(json.dumps({"polls": polls, "bad": bad}), flush=True)
"""

WRITER = """
import json, sys
import iceduck
con = iceduck.connect(**json.loads(sys.argv[1]))
i = int(sys.argv[2])
print("ready", flush=True)
while True:
    con.execute("BEGIN")
    con.execute(f"INSERT INTO db.a VALUES ({i})")
    con.execute(f"INSERT INTO db.b VALUES ({i})")
    print("commit", flush=True)
    con.execute("COMMIT")
    i += 1
"""


def _env() -> dict[str, str]:
    paths = [str(REPO), os.environ.get("PYTHONPATH")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


@pytest.fixture(params=["sqlite", "postgres", "rest"])
def lake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """``iceduck.connect`` arguments of a fresh lake with tables ``db.a`` and ``db.b``."""
    warehouse = tmp_path / "wh"
    server = None
    if request.param == "sqlite":
        args: dict[str, Any] = {"warehouse": str(warehouse)}
    elif request.param == "postgres":
        uri = request.getfixturevalue("postgres_database")
        args = {"warehouse": str(warehouse), "catalog": f"c_{uuid.uuid4().hex[:12]}", "catalog_uri": uri}
    else:
        warehouse.mkdir()
        server = start_server(warehouse)
        args = {"catalog_uri": server.url}
    with iceduck.connect(**args) as con:
        con.execute("CREATE NAMESPACE db")
        for table in ("a", "b"):
            con.execute(f"CREATE TABLE db.{table} (id BIGINT)")
    yield args
    if server is not None:
        server.stop()


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env=_env(), cwd=REPO
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if line.strip() != "ready":
        child.kill()
        pytest.fail(f"the child process did not start: {line!r}")
    return child


def _ids(con: iceduck.Connection, table: str) -> list[int]:
    return [r[0] for r in con.execute(f"SELECT id FROM db.{table} ORDER BY id").fetchall()]


def test_a_reader_in_another_process_never_sees_half_a_transaction(
    lake: dict[str, Any], tmp_path: Path
) -> None:
    stop = tmp_path / "stop"
    reader = _spawn(READER, json.dumps(lake), str(stop))
    rounds = 25
    try:
        with iceduck.connect(**lake) as con:
            for i in range(rounds):
                con.execute("BEGIN")
                con.execute(f"INSERT INTO db.a VALUES ({i})")
                con.execute(f"INSERT INTO db.b VALUES ({i})")
                con.execute("COMMIT")
            stop.touch()
            out, _ = reader.communicate(timeout=120)
            assert _ids(con, "a") == _ids(con, "b") == list(range(rounds))
    finally:
        if reader.poll() is None:
            reader.kill()
    report = json.loads(out.strip().splitlines()[-1])
    assert report["polls"] > 0 and report["bad"] == 0, report


def test_sigkill_during_commit_leaves_each_transaction_whole(lake: dict[str, Any]) -> None:
    rng = random.Random(os.environ.get("ICEDUCK_TEST_SEED", "transactions"))
    trials = 8 if "catalog_uri" not in lake else 4
    start = 0
    for _ in range(trials):
        writer = _spawn(WRITER, json.dumps(lake), str(start))
        assert writer.stdout is not None
        for _ in range(rng.randrange(1, 4)):  # kill inside the 1st, 2nd or 3rd COMMIT
            assert writer.stdout.readline().strip() == "commit"
        if rng.random() < 0.8:
            time.sleep(rng.uniform(0, 0.05))
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        with iceduck.connect(**lake) as con:
            a, b = _ids(con, "a"), _ids(con, "b")
            assert a == b, (a, b)
            con.execute(f"INSERT INTO db.a VALUES ({10_000 + start})")  # the tables take writes
            con.execute(f"DELETE FROM db.a WHERE id = {10_000 + start}")
        start = (max(a) + 1) if a else start + 100
