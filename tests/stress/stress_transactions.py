"""Stress: writers SIGKILLed at random moments of multi-table transactions.

Not collected by pytest (a bounded version runs in CI:
tests/test_transactions.py::test_sigkill_during_commit_leaves_each_transaction_whole). Run::

    python3 tests/stress/stress_transactions.py [--trials N] [--seed S]

Each trial starts a writer process on a fresh embedded warehouse whose transactions each
insert one row into three tables, update a row of the first and delete one from the
second (``BEGIN`` ... ``COMMIT``), and SIGKILLs it at a random moment: while a statement
runs, between statements, or inside ``COMMIT``. Survived: the three tables hold the same
transactions (every table entirely before or entirely after each one), every file their
metadata references exists, and they take another transaction.

Prints the trials run, survived, and how many transactions had landed when killed.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import iceduck

REPO = Path(__file__).resolve().parents[2]
TABLES = ("a", "b", "c")

WRITER = """
import sys
import iceduck
con = iceduck.connect(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    con.execute("BEGIN")
    for t in ("a", "b", "c"):
        con.execute(f"INSERT INTO db.{t} VALUES ({i}, 'new')")
    con.execute(f"UPDATE db.a SET v = 'updated' WHERE id = {i}")
    con.execute(f"DELETE FROM db.b WHERE id = {i} AND v = 'never'")
    con.execute("COMMIT")
    i += 1
"""


def _state(con: iceduck.Connection) -> list[list[int]]:
    return [[r[0] for r in con.execute(f"SELECT id FROM db.{t} ORDER BY id").fetchall()] for t in TABLES]


def _files_exist(con: iceduck.Connection) -> bool:
    for t in TABLES:
        paths = [r[0] for r in con.execute(f"SELECT file_path FROM db.{t}.files").fetchall()]
        if not all(os.path.exists(p.removeprefix("file:")) for p in paths):
            return False
    return True


def trial(rng: random.Random, folder: Path) -> tuple[bool, int]:
    """One writer killed at a random moment; (survived, transactions landed)."""
    warehouse = folder / "wh"
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE db")
        for t in TABLES:
            con.execute(f"CREATE TABLE db.{t} (id BIGINT, v STRING)")
    paths = (str(REPO), os.environ.get("PYTHONPATH"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(warehouse)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.05, 1.5))
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    with iceduck.connect(warehouse) as con:
        state = _state(con)
        whole = state[0] == state[1] == state[2] == list(range(len(state[0])))
        updated = {r[0] for r in con.execute("SELECT id FROM db.a WHERE v = 'updated'").fetchall()}
        whole = whole and updated == set(state[0]) and _files_exist(con)
        con.execute("BEGIN")
        for t in TABLES:
            con.execute(f"INSERT INTO db.{t} VALUES (-1, 'after')")
        con.execute("COMMIT")
        whole = whole and all(ids.count(-1) == 1 for ids in _state(con))
    return whole, len(state[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    survived, landed = 0, Counter[int]()
    for _ in range(args.trials):
        with tempfile.TemporaryDirectory(prefix="iceduck-stress-txn-") as folder:
            ok, count = trial(rng, Path(folder))
        survived += ok
        landed[min(count, 10)] += 1
    shown = ", ".join(f"{k}{'+' if k == 10 else ''}: {v}" for k, v in sorted(landed.items()))
    print(f"transactions: {args.trials} trials, {survived} survived; landed when killed: {shown}")
    sys.exit(0 if survived == args.trials else 1)


if __name__ == "__main__":
    main()
