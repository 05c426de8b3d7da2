"""Stress: every failure is an iceduck error and a DB-API exception.

Not collected by pytest (the bounded version runs in CI: tests/test_error_kinds.py). Run::

    python3 tests/stress/stress_error_kinds.py [--trials N] [--seed S] [--only sql|files|storage]

Three experiments, each ``--trials`` trials, on real tables and real faults (no mocks):

* ``sql``: hostile statements through the DB-API cursor -- random bytes (lone surrogates,
  NULs, control characters), token soup, nesting 1 to 20,000 deep (parentheses,
  subqueries, function calls, CASE, arrays), huge literals, hostile filter values and
  time travel on bigint, decimal(38,x), timestamp and partitioned tables, hostile
  parameters. Survived: the statement succeeded, or failed with an error that is both an
  ``iceduck.errors.IceduckError`` and an ``iceduck.Error``; the connection still answers
  ``SELECT 1``; every 25 trials, the tables still hold their rows.
* ``files``: one file of a table (data, position deletes, equality deletes, deletion
  vector, manifest, manifest list, metadata.json) is damaged -- truncated at a random
  offset, emptied, overwritten or XORed with garbage at a random place, cut short, grown
  with junk -- and a random read runs on a fresh connection. Survived: success (the damage
  missed every byte read: Parquet pages carry no checksum) or an iceduck error + DB-API
  error, a CorruptDataError naming a file (``.path``) of that table; a table not damaged
  still reads meanwhile; once the file is put back the table reads as before.
* ``storage``: a random write statement (INSERT, DELETE, UPDATE, MERGE, ALTER, CREATE
  TABLE, CTAS) runs under a real fault: a tmpfs filled but for a random number of bytes,
  a read-only bind mount or ``chattr +i`` on a random folder of the table, a random file
  size limit. Survived: success, or an iceduck error + DB-API error (a StorageError naming
  a file, for the faults that refuse writes); once the fault is gone the table reads, holds
  either the rows before or the rows after, and takes another write.

Prints one line per experiment: trials run, survived, and the outcomes seen; the exit code
is 1 when a trial did not survive (each failure is printed with its statement).
"""

from __future__ import annotations

import argparse
import contextlib
import decimal
import math
import random
import shutil
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import iceduck
from iceduck import errors
from tests.support import faults

# -- bookkeeping -----------------------------------------------------------------------------------


@dataclass
class Tally:
    """Trials of one experiment: how many survived, what happened, what went wrong."""

    name: str
    trials: int = 0
    survived: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def record(self, outcome: str, problem: str | None, what: str) -> None:
        self.trials += 1
        self.outcomes[outcome] += 1
        if problem is None:
            self.survived += 1
        else:
            self.failures.append(f"{problem}\n    statement: {what[:300]!r}")

    def line(self) -> str:
        seen = ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common(12))
        return f"{self.name}: {self.trials} trials, {self.survived} survived ({seen})"


def outcome_of(run: Callable[..., Any], *args: Any) -> tuple[str, Exception | None, str | None]:
    """(outcome label, the error, what is wrong with it or None) of ``run(*args)``. A failure
    survives when it is an iceduck error that is also a DB-API error; anything else is a problem."""
    try:
        run(*args)
    except Exception as e:
        label = type(e).__name__
        if not isinstance(e, iceduck.Error):
            return label, e, f"raw {type(e).__module__}.{label} escaped: {e!r:.300}\n{_trace(e)}"
        if not isinstance(e, errors.IceduckError):
            return label, e, f"a DB-API error that is no iceduck kind: {label}: {e!s:.300}"
        return label, e, None
    return "ok", None, None


def fetch(con: Any, sql: str, params: Any = None) -> list[Any]:
    """Run ``sql`` on a fresh cursor and fetch every row (errors may come at either step)."""
    cursor = con.cursor().execute(sql, params)
    return cursor.fetchall() if cursor.description is not None else []


def expect_row(con: Any, sql: str, expected: Any) -> None:
    got = con.execute(sql).fetchone()
    if got != expected:
        raise AssertionError(f"{sql}: got {got!r}, expected {expected!r}")


def _trace(e: BaseException) -> str:
    return "".join(traceback.format_exception(e)[-6:])


# -- tables ----------------------------------------------------------------------------------------

SETUP = [
    "CREATE NAMESPACE db",
    "CREATE TABLE db.t (k bigint, v string) TBLPROPERTIES ('format-version'='2', "
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
    "INSERT INTO db.t SELECT i, 'v' || i FROM range(2000) r(i)",
    "DELETE FROM db.t WHERE k % 7 = 0",
    "CREATE TABLE db.d (id bigint, amount decimal(38,0), price decimal(10,2), small decimal(5,4)) "
    "PARTITIONED BY (truncate(10, price)) TBLPROPERTIES ('format-version'='3', "
    "'write.delete.mode'='merge-on-read')",
    "INSERT INTO db.d SELECT i, i * 100000000000000000000000000000::DECIMAL(38,0), i / 7, (i % 9) / 10 "
    "FROM range(500) r(i)",
    "DELETE FROM db.d WHERE id % 11 = 0",
    "CREATE TABLE db.ts (id bigint, ts timestamp, tz timestamptz, day date, name string) "
    "PARTITIONED BY (days(ts), bucket(4, name))",
    "INSERT INTO db.ts SELECT i, TIMESTAMP '2024-01-01' + to_hours(i), TIMESTAMPTZ '2024-01-01 00:00:00+00' "
    "+ to_minutes(i), DATE '2024-01-01' + (i % 30)::INT, 'n' || (i % 13) FROM range(800) r(i)",
    "CREATE TABLE db.p (id bigint, s string, b binary, f double) "
    "PARTITIONED BY (identity(s), truncate(3, b))",
    "INSERT INTO db.p SELECT i, 's' || (i % 5), ('b' || i)::BLOB, i / 3.0 FROM range(300) r(i)",
    # scratch tables the hostile writes go to (their contents are not checked)
    "CREATE TABLE db.w_dec (a decimal(38,0), b decimal(38,37)) PARTITIONED BY (identity(a), truncate(3, b))",
    "CREATE TABLE db.w_str (s string, b binary) PARTITIONED BY (identity(s), bucket(3, b))",
    "CREATE TABLE db.w_ts (ts timestamp, tz timestamptz, d date) PARTITIONED BY (hours(ts), months(d))",
]
SCRATCH = {"db.w_dec": ["a", "b"], "db.w_str": ["s", "b"], "db.w_ts": ["ts", "tz", "d"]}
COUNTS = {"db.t": "SELECT count(*), sum(k) FROM db.t", "db.d": "SELECT count(*), sum(amount) FROM db.d"}


def build_warehouse(path: Path) -> dict[str, tuple[Any, ...]]:
    """The tables the ``sql`` experiment reads; their fingerprints (count and sums)."""
    con = iceduck.connect(path)
    for statement in SETUP:
        con.execute(statement)
    fingerprints = {t: con.execute(q).fetchone() for t, q in COUNTS.items()}
    con.close()
    return fingerprints


# -- the sql experiment ----------------------------------------------------------------------------

VOCABULARY = [
    "SELECT",
    "FROM",
    "db.t",
    "db.d",
    "db.ts",
    "db.p",
    "db.t.files",
    "db.t.snapshots",
    "db.d.entries",
    "WHERE",
    "k",
    "v",
    "amount",
    "ts",
    "=",
    "<",
    ">=",
    "(",
    ")",
    ",",
    "'",
    '"',
    ";",
    "?",
    "$1",
    "$name",
    "VERSION AS OF",
    "TIMESTAMP AS OF",
    "FOR SYSTEM_TIME AS OF",
    "1",
    "-1",
    "1e308",
    "'x'",
    "NULL",
    "*",
    "JOIN",
    "ON",
    "GROUP BY",
    "ORDER BY",
    "LIMIT",
    "UNION ALL",
    "EXPLAIN",
    "iceduck_scan('/nonexistent')",
    "CASE WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST(",
    "AS",
    "DECIMAL(38,10)",
    "::",
    "[",
    "]",
    "{",
    "}",
    "--",
    "/*",
    "*/",
    "\x00",
    "\ud800",
    "\\",
    "\n",
    "..",
    "`",
    "branch_main",
    "tag_x",
    "DESCRIBE",
    "SHOW TABLES",
    "IN",
    "NOT",
    "BETWEEN",
    "AND",
    "OR",
    "IS NULL",
    "LIKE",
    "'%'",
    "9" * 40,
    "-" + "9" * 40,
    "0.0000001",
]
HOSTILE_VALUES = [
    "9" * 30,
    "-" + "9" * 40,
    "1" + "0" * 400,
    "1e999",
    "-1e-999",
    "'NaN'",
    "'inf'",
    "'-0.0'",
    "0.5",
    "99999999999999999999999999999999999999",
    "999999999999999999999999999999999999999",
    "12345678901234567890.123456789012345678901234567890",
    "'1e40'::DECIMAL(38,0)",
    "NULL",
    "'\ud800'",
    "'a\x00b'",
    "'\udcff'",
    "TIMESTAMP '294247-01-10 04:00:54.775807'",
    "TIMESTAMP '-infinity'",
    "DATE '5881580-07-11'",
    "DATE 'infinity'",
    "TIMESTAMP '1677-09-21 00:12:43'",
    "'2024-13-45'",
    "X'00ff'",
    "[1, 2]",
    "{'a': 1}",
    "'" + "x" * 70000 + "'",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "0x7fffffffffffffff",
    "1::HUGEINT << 100",
    "'😀'",
    "'\U0010ffff'",
]
COLUMNS = {
    "db.t": ["k", "v"],
    "db.d": ["id", "amount", "price", "small"],
    "db.ts": ["id", "ts", "tz", "day", "name"],
    "db.p": ["id", "s", "b", "f"],
}
OPERATORS = ["=", "<", "<=", ">", ">=", "<>", "IN", "NOT IN", "BETWEEN", "IS NOT DISTINCT FROM", "LIKE", "^@"]


def hostile_parameter(rng: random.Random) -> Any:
    choices: list[Callable[[], Any]] = [
        lambda: 10 ** rng.randint(18, 400),
        lambda: -(10 ** rng.randint(18, 60)),
        lambda: decimal.Decimal(f"1e{rng.randint(30, 5000)}"),
        lambda: decimal.Decimal("NaN"),
        lambda: decimal.Decimal("-Infinity"),
        lambda: decimal.Decimal("0." + "1" * rng.randint(30, 100)),
        lambda: float("nan"),
        lambda: float("-inf"),
        lambda: "\ud800" * rng.randint(1, 3),
        lambda: "a\x00b",
        lambda: "x" * rng.randint(0, 100000),
        lambda: bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))),
        lambda: [1, "two", None],
        lambda: {"a": "\udc80"},
        lambda: rng.randint(-(2**63), 2**63 - 1),
        lambda: None,
        lambda: True,
        lambda: object(),
    ]
    return rng.choice(choices)()


def nested(rng: random.Random, depth: int) -> str:
    kind = rng.randrange(7)
    if kind == 0:
        return "SELECT " + "(" * depth + "1" + ")" * depth
    if kind == 1:
        return "SELECT * FROM " + "(SELECT * FROM " * depth + "db.t" + ")" * depth
    if kind == 2:
        return "SELECT " + "abs(" * depth + "k" + ")" * depth + " FROM db.t"
    if kind == 3:
        return "SELECT " + "CASE WHEN k > 0 THEN " * depth + "1" + " END" * depth + " FROM db.t"
    if kind == 4:
        return "SELECT " + "[" * depth + "1" + "]" * depth
    if kind == 5:
        return "SELECT * FROM db.t WHERE " + "NOT " * depth + "k = 1"
    return "SELECT * FROM db.t WHERE " + " OR ".join(f"k = {i}" for i in range(depth))


def hostile_statement(rng: random.Random) -> tuple[str, Any]:
    """One hostile statement and its parameters."""
    kind = rng.randrange(10)
    if kind == 0:  # random bytes, decoded so lone surrogates survive
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
        return raw.decode("utf-8", "surrogateescape"), None
    if kind == 1:  # random bytes after a valid prefix
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 60)))
        return "SELECT * FROM db.t WHERE v = '" + raw.decode("latin-1") + "'", None
    if kind == 2:
        return " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 30))), None
    if kind == 3:
        depth = int(math.exp(rng.uniform(0, math.log(20000))))
        return nested(rng, depth), None
    if kind == 4:
        n = rng.choice([100, 1000, 20000, 200000])
        return rng.choice(
            [
                "SELECT " + "9" * n,
                f"SELECT '{'x' * n}'",
                "SELECT 1." + "1" * n + "::DECIMAL(38,10)",
                "SELECT * FROM db.t WHERE k = " + "9" * min(n, 5000),
                "SELECT * FROM db.d WHERE amount = " + "9" * min(n, 5000),
                "SELECT * FROM db.t WHERE k IN (" + ", ".join(str(i) for i in range(min(n, 20000))) + ")",
            ]
        ), None
    if kind == 5:  # a hostile value in a filter that the planner pushes down
        table = rng.choice(list(COLUMNS))
        column = rng.choice(COLUMNS[table])
        op = rng.choice(OPERATORS)
        value = rng.choice(HOSTILE_VALUES)
        if op in ("IN", "NOT IN"):
            value = f"({value}, {rng.choice(HOSTILE_VALUES)})"
        elif op == "BETWEEN":
            value = f"{value} AND {rng.choice(HOSTILE_VALUES)}"
        return f"SELECT * FROM {table} WHERE {column} {op} {value}", None
    if kind == 6:  # hostile time travel
        table = rng.choice(list(COLUMNS))
        clause = rng.choice(["VERSION AS OF", "TIMESTAMP AS OF", "FOR SYSTEM_VERSION AS OF"])
        return f"SELECT count(*) FROM {table} {clause} {rng.choice(HOSTILE_VALUES)}", None
    if kind == 7:  # hostile parameters
        table = rng.choice(list(COLUMNS))
        column = rng.choice(COLUMNS[table])
        sql = rng.choice(
            [
                f"SELECT * FROM {table} WHERE {column} = ?",
                f"SELECT * FROM {table} WHERE {column} > ? AND {column} < ?",
                "SELECT ?",
                "SELECT * FROM iceduck_scan(?)",
                f"SELECT count(*) FROM {table} VERSION AS OF ?",
            ]
        )
        return sql, [hostile_parameter(rng) for _ in range(sql.count("?"))]
    if kind == 8:  # hostile values written to partitioned scratch tables
        table = rng.choice(list(SCRATCH))
        columns = SCRATCH[table]
        if rng.random() < 0.5:
            values = ", ".join(rng.choice(HOSTILE_VALUES) for _ in columns)
            return f"INSERT INTO {table} VALUES ({values})", None
        return f"INSERT INTO {table} VALUES ({', '.join('?' for _ in columns)})", [
            hostile_parameter(rng) for _ in columns
        ]
    # a statement with NULs, surrogates and control characters spliced into valid SQL
    base = rng.choice(["SELECT * FROM db.t", 'SELECT * FROM db."t"', "SELECT k FROM db.t WHERE v = 'x'"])
    at = rng.randint(0, len(base))
    return base[:at] + rng.choice(["\x00", "\ud800", "\udcff", "\x1b[2J", "\r", "\u2028", "\ufeff"]) + base[
        at:
    ], None


def run_sql(trials: int, rng: random.Random, root: Path) -> Tally:
    tally = Tally("sql")
    fingerprints = build_warehouse(root / "sql")
    con = iceduck.connect(root / "sql")
    for trial in range(trials):
        sql, params = hostile_statement(rng)
        label, error, problem = outcome_of(fetch, con, sql, params)
        if problem is None and error is not None:
            _, _, still = outcome_of(expect_row, con, "SELECT 1", (1,))
            if still is not None:
                problem = f"the connection stopped answering after {label}: {still}"
        if problem is None and trial % 25 == 24:
            for table, query in COUNTS.items():
                if con.execute(query).fetchone() != fingerprints[table]:
                    problem = f"{table} changed under read-only statements"
        tally.record(label, problem, f"{sql} {params!r:.200}")
    con.close()
    return tally


# -- the files experiment --------------------------------------------------------------------------

READS = [
    "SELECT * FROM {t}",
    "SELECT count(*) FROM {t}",
    "SELECT k, v FROM {t} WHERE k BETWEEN 100 AND 900",
    "SELECT sum(k) FROM {t} WHERE v LIKE 'v1%'",
    "EXPLAIN SELECT * FROM {t} WHERE k = 5",
    "SELECT * FROM {t}.files",
    "SELECT * FROM {t}.entries",
    "SELECT * FROM {t}.manifests",
    "SELECT * FROM {t}.snapshots",
    "CREATE TABLE db.copy_{n} AS SELECT * FROM {t}",
    "INSERT INTO db.sink SELECT * FROM {t}",
    "DELETE FROM {t} WHERE k + 0 = -5",  # reads every file (no pushdown), deletes nothing
]
DAMAGED_TABLES = {
    "db.pos": "v2 position deletes",
    "db.dv": "v3 deletion vectors",
    "db.eq": "v2 equality deletes",
    "db.plain": "v2 without deletes",
}


def build_damage_warehouse(path: Path) -> None:
    con = iceduck.connect(path)
    con.execute("CREATE NAMESPACE db")
    for table, version in (("db.pos", 2), ("db.dv", 3), ("db.eq", 2), ("db.plain", 2), ("db.sink", 2)):
        con.execute(
            f"CREATE TABLE {table} (k bigint, v string) TBLPROPERTIES ('format-version'='{version}', "
            "'write.delete.mode'='merge-on-read')"
        )
    for table in DAMAGED_TABLES:
        con.execute(f"INSERT INTO {table} SELECT i, 'v' || i FROM range(1000) r(i)")
    con.execute("DELETE FROM db.pos WHERE k % 10 = 0")
    con.execute("DELETE FROM db.dv WHERE k % 10 = 0")
    faults.add_equality_deletes(con, "db", "eq", "k", list(range(0, 1000, 10)))
    con.close()


def random_damage(path: str, rng: random.Random) -> bytes:
    """Break the file at ``path`` one random way; its original bytes."""
    p = Path(path)
    data = p.read_bytes()
    n = len(data)
    how = rng.randrange(7)
    if how == 0:
        bad = data[: rng.randrange(n)] if n else b""
    elif how == 1:
        bad = b""
    elif how == 2:  # garbage overwrite
        at, size = rng.randrange(max(n, 1)), rng.randint(1, 256)
        bad = data[:at] + bytes(rng.randrange(256) for _ in range(size)) + data[at + size :]
        bad = bad[:n] if rng.random() < 0.5 else bad
    elif how == 3:  # bit flips
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 16)):
            if n:
                flipped[rng.randrange(n)] ^= 1 << rng.randrange(8)
        bad = bytes(flipped)
    elif how == 4:  # a zeroed range (a lost block)
        at = rng.randrange(max(n, 1))
        size = rng.choice([8, 512, 4096])
        bad = data[:at] + b"\0" * min(size, n - at) + data[at + size :]
    elif how == 5:  # junk appended
        bad = data + bytes(rng.randrange(256) for _ in range(rng.randint(1, 100)))
    else:
        return faults.damage(path, rng.choice(faults.DAMAGES))
    p.write_bytes(bad)
    return data


def run_files(trials: int, rng: random.Random, root: Path) -> Tally:
    tally = Tally("files")
    warehouse = root / "files"
    build_damage_warehouse(warehouse)
    con = iceduck.connect(warehouse)
    files = {t: faults.table_files(con, t) for t in DAMAGED_TABLES}
    expected = {t: con.execute(f"SELECT count(*), sum(k) FROM {t}").fetchone() for t in DAMAGED_TABLES}
    con.close()
    for trial in range(trials):
        table = rng.choice(list(DAMAGED_TABLES))
        kind = rng.choice(list(files[table]))
        path = files[table][kind]
        read = rng.choice(READS).format(t=table, n=trial)
        original = random_damage(path, rng)
        con = iceduck.connect(warehouse)
        label, error, problem = outcome_of(fetch, con, read)
        if problem is None and isinstance(error, errors.CorruptDataError):
            named = getattr(error, "path", None)
            if not named:
                problem = f"a CorruptDataError without the file's name: {error}"
            elif Path(faults.local(named)).resolve() == Path(path).resolve():
                label += " (names the damaged file)"
            elif table.split(".")[1] not in named:
                problem = f"names {named}, not a file of {table} (damaged: {path})"
        if problem is None:
            other = rng.choice([t for t in DAMAGED_TABLES if t != table])
            _, _, bad = outcome_of(expect_row, con, f"SELECT count(*), sum(k) FROM {other}", expected[other])
            if bad is not None:
                problem = f"{other}, not damaged, did not read: {bad}"
        con.close()
        faults.restore(path, original)
        problem = problem or _undo_writes(warehouse, table, expected)
        tally.record(f"{kind}: {label}", problem, f"{read} with {kind} {path} damaged")
    return tally


def _undo_writes(warehouse: Path, table: str, expected: dict[str, Any]) -> str | None:
    """Once the file is back, the table reads as before (the reads change no damaged table;
    the tables CREATE TABLE AS made are dropped)."""
    con = iceduck.connect(warehouse)
    try:
        got = con.execute(f"SELECT count(*), sum(k) FROM {table}").fetchone()
        if got != expected[table]:
            return f"{table} reads {got} once the file is back, expected {expected[table]}"
        return None
    except Exception as e:
        return f"{table} does not read once the file is back: {e!r:.300}"
    finally:
        for _, name in con.execute("SHOW TABLES IN db").fetchall():
            if name.startswith("copy_"):
                con.execute(f"DROP TABLE db.{name}")
        con.close()


# -- the storage experiment ------------------------------------------------------------------------

WRITES = [
    "INSERT INTO db.t SELECT i, repeat('x', 40) FROM range({n}) r(i)",
    "DELETE FROM db.t WHERE k % {m} = 0",
    "UPDATE db.t SET v = 'u' WHERE k % {m} = 1",
    "MERGE INTO db.t USING (SELECT i AS k FROM range({n}) r(i)) s ON t.k = s.k "
    "WHEN MATCHED THEN UPDATE SET v = 'm' WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, 'new')",
    "ALTER TABLE db.t ADD COLUMN c{n} int",
    "CREATE TABLE db.c{n} AS SELECT * FROM db.t",
    "CREATE TABLE db.e{n} (a int, b string)",
    "INSERT OVERWRITE db.t SELECT * FROM db.t WHERE k < {n}",
]


@contextlib.contextmanager
def storage_fault(rng: random.Random, mnt: Path, table_dir: Path) -> Iterator[str]:
    """One random real fault on the table's storage, for the block; its name."""
    kind = rng.randrange(4)
    if kind == 0:
        leave = rng.choice([0, 512, 4096, 20000, 100000, 400000])
        with faults.disk_full(mnt, leave):
            yield f"disk full (leaving {leave} bytes)"
    elif kind == 1:
        folder = rng.choice([table_dir, table_dir / "data", table_dir / "metadata"])
        with faults.read_only(folder):
            yield f"read-only {folder.name}"
    elif kind == 2:
        folder = rng.choice([table_dir / "data", table_dir / "metadata", table_dir.parent])
        with faults.immutable(folder):
            yield f"immutable {folder.name}"
    else:
        limit = rng.choice([1024, 8192, 65536, 400000])
        with faults.file_size_limit(limit):
            yield f"file size limit {limit}"


def run_storage(trials: int, rng: random.Random, root: Path) -> Tally:
    tally = Tally("storage")
    try:
        mount = faults.tmpfs(root / "mnt", "24m")
        mnt = mount.__enter__()
    except faults.FaultUnavailable as e:
        print(f"storage: skipped, the machine cannot make the faults: {e}")
        return tally
    try:
        for trial in range(trials):
            warehouse = mnt / f"wh{trial % 4}"
            shutil.rmtree(warehouse, ignore_errors=True)
            con = iceduck.connect(warehouse)
            con.execute("CREATE NAMESPACE db")
            mode = rng.choice(["merge-on-read", "copy-on-write"])
            con.execute(
                "CREATE TABLE db.t (k bigint, v string) TBLPROPERTIES ("
                f"'format-version'='{rng.choice([2, 3])}', "
                f"'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
            )
            con.execute("INSERT INTO db.t SELECT i, 'v' || i FROM range(3000) r(i)")
            before = con.execute("SELECT count(*), sum(k) FROM db.t").fetchone()
            statement = rng.choice(WRITES).format(n=rng.choice([10, 1000, 50000]), m=rng.choice([2, 7]))
            fault = "no fault"
            try:
                with storage_fault(rng, mnt, warehouse / "db" / "t") as fault:
                    label, error, problem = outcome_of(con.execute, statement)
            except faults.FaultUnavailable as e:
                label, error, problem = "fault unavailable", None, None
                fault = str(e)
            if (
                problem is None
                and error is not None
                and "disk full" in fault
                and not isinstance(error, errors.StorageError)
            ):
                problem = f"disk full reported as {type(error).__name__}: {error!s:.300}"
            if (
                problem is None
                and isinstance(error, errors.StorageError)
                and not getattr(error, "path", None)
            ):
                problem = f"a StorageError without the file's name: {error}"
            problem = problem or _whole(con, statement, before, error is None)
            con.close()
            tally.record(f"{fault.split(' (')[0]}: {label}", problem, f"{statement} under {fault}")
    finally:
        mount.__exit__(None, None, None)
    return tally


def _whole(con: Any, statement: str, before: Any, succeeded: bool) -> str | None:
    """After the fault: the table reads, holds the rows before (or after, if the statement
    succeeded), every file it references exists, and it takes another write."""
    try:
        now = con.execute("SELECT count(*), sum(k) FROM db.t").fetchone()
        if not succeeded and now != before and not statement.startswith(("CREATE", "ALTER")):
            return f"the failed statement changed the table: {before} -> {now}"
        for (path,) in con.execute("SELECT file_path FROM db.t.all_files").fetchall():
            if not Path(faults.local(path)).exists():
                return f"the table references a missing file: {path}"
        con.execute("INSERT INTO db.t (k, v) VALUES (-1, 'after')")
        return None
    except Exception as e:
        return f"the table is not whole after the fault: {e!r:.300}"


# -- main ------------------------------------------------------------------------------------------

EXPERIMENTS = {"sql": run_sql, "files": run_files, "storage": run_storage}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="trials per experiment (default 200)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--only", choices=sorted(EXPERIMENTS), action="append")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}")
    tallies = []
    with tempfile.TemporaryDirectory(prefix="iceduck-stress-errors-") as tmp:
        for name in args.only or list(EXPERIMENTS):
            tally = EXPERIMENTS[name](args.trials, random.Random(f"{seed}-{name}"), Path(tmp))
            print(tally.line(), flush=True)
            for failure in tally.failures[:20]:
                print("  FAILED:", failure)
            tallies.append(tally)
    trials, survived = sum(t.trials for t in tallies), sum(t.survived for t in tallies)
    print(f"total: {trials} trials, {survived} survived")
    return 0 if trials == survived else 1


if __name__ == "__main__":
    sys.exit(main())
