"""Stress: commits racing a replaced table, and interrupts at random moments.

Not collected by pytest (bounded versions run in CI: tests/ops/test_replaced_table_race.py,
tests/catalog/test_commit_interrupts.py). Run::

    python3 tests/stress/stress_commit_races.py [--trials N] [--rows N] [--seed S]

Two experiments, each with real processes:

* ``replace``: process A inserts ``--rows`` rows into ``db.t(k bigint, v bigint)`` while
  process B, after a random delay, drops ``db.t`` (or renames it away) and creates
  ``db.t(name varchar, note varchar)``. Survived: the new table holds only B's row and its
  ``files`` table reads; A either failed with a commit conflict or landed before B.
* ``interrupt``: a process runs a random write statement (INSERT, DELETE, UPDATE, MERGE,
  ALTER, CTAS) and receives SIGINT, or SIGTERM with a handler calling ``sys.exit``, at a
  random moment. Survived: the table loads, every file its metadata references exists, its
  row count is the one before or the one after the statement, and it takes another write.

Prints one line per experiment: trials run, survived, and the outcomes seen.
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from iceduck.session.session import Session

RUNNER = """
import signal, sys
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.session.session import Session
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
s = Session(sys.argv[1])
load = SqliteCatalog.load_table
def announce(self, identifier):
    loaded = load(self, identifier)
    print("loaded", flush=True)  # the statement now holds its base: a later DROP is a race
    SqliteCatalog.load_table = load
    return loaded
SqliteCatalog.load_table = announce
try:
    s.run(sys.argv[2])
except Exception as e:
    print(type(e).__name__, e, flush=True)
    sys.exit(3)
"""

STATEMENTS = [
    ("INSERT INTO db.t SELECT i, i FROM range(100000, 400000) r(i)", 300000),
    ("DELETE FROM db.t WHERE k % 3 = 0", -33334),
    ("UPDATE db.t SET v = -v WHERE k % 5 = 0", 0),
    ("MERGE INTO db.t USING (SELECT i AS k FROM range(0, 200000) r(i)) s ON t.k = s.k "
     "WHEN MATCHED THEN UPDATE SET v = 0 WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, 1)", 100000),
    ("ALTER TABLE db.t ADD COLUMN extra int", 0),
    ("CREATE TABLE db.c USING iceberg AS SELECT * FROM db.t", 0),
]


def _spawn(warehouse: Path, sql: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(warehouse), sql],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # "loaded": the statement has loaded the table it writes
    return proc


def _referenced_files_exist(s: Session, table: str) -> bool:
    paths = [p for (p,) in s.run(f"SELECT file_path FROM {table}.all_files").fetchall()]
    paths += [p for (p,) in s.run(f"SELECT path FROM {table}.all_manifests").fetchall()]
    return all(Path(p.removeprefix("file:")).exists() for p in paths)


def replace_trial(root: Path, rng: random.Random, rows: int, trial: int) -> str:
    warehouse = root / f"replace{trial}"
    s = Session(warehouse)
    s.run("CREATE NAMESPACE db")
    s.run("CREATE TABLE db.t (k bigint, v bigint)")
    rename = rng.random() < 0.5
    a = _spawn(warehouse, f"INSERT INTO db.t SELECT i, i FROM range(0, {rows}) r(i)")
    time.sleep(rng.uniform(0.0, rows / 1_000_000))  # about as long as A takes to write
    s.run("ALTER TABLE db.t RENAME TO db.t_old" if rename else "DROP TABLE db.t")
    s.run("CREATE TABLE db.t (name varchar, note varchar)")
    s.run("INSERT INTO db.t VALUES ('x', 'y')")
    out, _ = a.communicate()
    check = Session(warehouse)
    assert check.run("SELECT * FROM db.t").fetchall() == [("x", "y")], "rows leaked into the new table"
    assert check.run("SELECT count(*) FROM db.t.files").fetchall() == [(1,)]
    if a.returncode != 0:
        assert "CommitConflictError" in out or "NotFoundError" in out, out  # between DROP and CREATE
        outcome = "refused"
    else:
        outcome = "landed before the drop"
    if rename:
        old = check.run("SELECT count(*) FROM db.t_old").fetchall()[0][0]
        assert old == (rows if a.returncode == 0 else 0), old
    check.close()
    s.close()
    return outcome


def interrupt_trial(root: Path, rng: random.Random, trial: int) -> str:
    warehouse = root / f"interrupt{trial}"
    s = Session(warehouse)
    s.run("CREATE NAMESPACE db")
    modes = ["copy-on-write", "merge-on-read"]
    s.run(
        f"CREATE TABLE db.t (k bigint, v bigint) TBLPROPERTIES ('format-version' = '{rng.choice([2, 3])}', "
        f"'write.delete.mode' = '{rng.choice(modes)}', 'write.update.mode' = '{rng.choice(modes)}')"
    )
    s.run("INSERT INTO db.t SELECT i, i FROM range(0, 100000) r(i)")
    sql, delta = rng.choice(STATEMENTS)
    signum = rng.choice([signal.SIGINT, signal.SIGTERM])
    proc = _spawn(warehouse, sql)
    time.sleep(rng.uniform(0.0, 0.4))
    proc.send_signal(signum)
    proc.communicate()
    check = Session(warehouse)
    count = check.run("SELECT count(*) FROM db.t").fetchall()[0][0]
    assert count in (100000, 100000 + delta), (sql, count)
    assert _referenced_files_exist(check, "db.t"), sql
    if "CREATE TABLE db.c" in sql and check.run("SHOW TABLES IN db").fetchall().count(("db", "c")):
        assert _referenced_files_exist(check, "db.c")
        assert check.run("SELECT count(*) FROM db.c").fetchall() == [(100000,)]
    check.run("INSERT INTO db.t (k, v) VALUES (-1, -1)")
    assert check.run("SELECT count(*) FROM db.t").fetchall() == [(count + 1,)]
    check.close()
    s.close()
    changed = "row count changed" if count != 100000 else "row count unchanged"
    return f"{signal.Signals(signum).name} {sql.split()[0]}: {changed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, run in (
            ("replace", lambda t: replace_trial(root, rng, args.rows, t)),
            ("interrupt", lambda t: interrupt_trial(root, rng, t)),
        ):
            survived, outcomes, failures = 0, Counter[str](), []
            for trial in range(args.trials):
                try:
                    outcomes[run(trial)] += 1
                    survived += 1
                except AssertionError as e:
                    failures.append(f"trial {trial}: {e}")
            print(f"{name}: {survived}/{args.trials} trials survived; outcomes {dict(outcomes)}")
            for failure in failures:
                print("  FAILED", failure)


if __name__ == "__main__":
    main()
