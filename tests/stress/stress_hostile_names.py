"""Stress: random hostile names and locations never put a file outside the warehouse.

Not collected by pytest (the bounded version runs in CI: tests/ops/test_hostile_names.py). Run::

    python3 tests/stress/stress_hostile_names.py [--trials N] [--seed S]

Each trial is one random statement through ``iceduck.connect`` (quoted identifiers), on
the SQLite or the Hadoop catalog: CREATE NAMESPACE, CREATE TABLE, CTAS, CREATE OR REPLACE,
CREATE TABLE ... LOCATION, CREATE TABLE with ``write.data.path``, or (SQLite) RENAME TO,
with namespace levels, table names and locations drawn from random Unicode, path
separators, dots, control characters, quotes, ``%`` escapes, glob characters and long
names. The warehouse lies eight folders below a sandbox root and every generated absolute
path points into the sandbox, so any escape lands where it can be seen. A trial survives when:

* nothing new exists outside the warehouse and the explicit locations of statements
  that succeeded, and a refused statement wrote nothing at all;
* a refusal is an iceduck error that is also a DB-API error (never a raw OSError,
  ValueError, ...), and it is a refusal exactly when this script's own rules (written
  from the issue, independent of iceduck's code) say the name or location is unusable;
* an accepted table round-trips: it is listed under its name, takes an INSERT, reads
  it back, and its files are in ``<warehouse>/<levels>/<name>`` (or its LOCATION).

Prints the number of trials run and survived, the outcomes seen, and the first failures.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote as url_quote

import iceduck
from iceduck.errors import AlreadyExistsError, IceduckError, ValidationError

#: a fresh warehouse every this many trials, so listing the sandbox stays cheap
TRIALS_PER_WAREHOUSE = 20
#: how deep the warehouse lies below the sandbox root (more than any generated '..' run)
DEPTH = 8
MAX_DOT_DOTS = 6

FRAGMENTS = [
    "/",
    "\\",
    ".",
    "..",
    "../",
    "..\\",
    "./",
    "\x00",
    " ",
    '"',
    "'",
    "`",
    "%",
    "%2F",
    "%5C",
    "%00",
    "%2e%2e",
    "*",
    "?",
    "[",
    "]",
    "{",
    "}",
    "~",
    "$HOME",
    ":",
    ";",
    "#",
    "\t",
    "\n",
    "\r",
    "\x1b",
    "\x7f",
    "é",
    "ß",
    "表",
    "🧊",
    "🦆",
    "\u200b",
    "\u202e",
    "\ufeff",
    "file:",
    "s3://",
    "-",
    "=",
]


def random_character(rng: random.Random) -> str:
    """Any code point, now and then a lone surrogate (not valid text)."""
    while True:
        code = rng.choice(
            [
                rng.randrange(0x20, 0x7F),
                rng.randrange(0, 0x20),
                rng.randrange(0x80, 0x3000),
                rng.randrange(0x1F300, 0x1FAFF),
                rng.randrange(0xD800, 0xE000),
            ]
        )
        if 0xD800 <= code < 0xE000 and rng.random() > 0.05:
            continue
        return chr(code)


def random_name(rng: random.Random, root: Path) -> str:
    """A hostile name: fragments, random characters, sometimes long or a bare '.'/'..'."""
    kind = rng.random()
    if kind < 0.06:
        return rng.choice([".", "..", "", "../" * rng.randint(1, MAX_DOT_DOTS) + "escaped"])
    if kind < 0.10:
        return f"{root}/abs{rng.randrange(1000)}"  # an absolute path, inside the sandbox
    if kind < 0.20:  # around the 255-byte limit, in 1- to 4-byte characters
        unit = rng.choice(["x", "é", "表", "🧊"])
        target = rng.randint(240, 270)
        return unit * (target // len(unit.encode()))
    parts = []
    for _ in range(rng.randint(1, 6)):
        parts.append(rng.choice(FRAGMENTS) if rng.random() < 0.5 else random_character(rng))
    if rng.random() < 0.5:
        parts.append(f"n{rng.randrange(10_000)}")
    return "".join(parts)[:300]


def name_problem(name: str) -> bool:
    """Whether a name must be refused: the issue's rules, written here independently."""
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return True
    return name in ("", ".", "..") or any(c in name for c in "/\\\x00") or size > 255


def level_problem(level: str) -> bool:
    """A namespace level is also refused with a dot (namespaces are stored dotted)."""
    return name_problem(level) or "." in level


def local_path(location: str) -> str:
    """The local path of a plain path or ``file:`` location, taken literally (as Hadoop's
    ``Path``, DuckDB and PyIceberg do: Java's partition folders are named ``s=a%2Fb``)."""
    if location.startswith("file://"):
        return location[len("file://") :]
    return location[len("file:") :] if location.startswith("file:") else location


def location_problem(location: str) -> bool:
    """Whether a LOCATION must be refused: a backslash or NUL, text that is not valid
    Unicode, or a folder name over 255 bytes (a storage error)."""
    if any(c in location for c in "\\\x00"):
        return True
    if location.startswith("file:") and any(c in location for c in "\t\r\n?#"):
        return True  # URI parsers drop them, or end the path there: the files would go elsewhere
    try:
        return any(len(part.encode("utf-8")) > 255 for part in local_path(location).split("/"))
    except UnicodeEncodeError:
        return True


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Trial:
    #: which kind of statement (for the outcome counts)
    op: str
    sql: str
    #: whether the script's rules say it must be refused
    must_refuse: bool
    #: what a success creates: (namespace levels, table name, folder its files go to) or None
    creates: tuple[tuple[str, ...], str, Path] | None = None
    #: where a success may write outside the warehouse
    allowed: list[Path] = field(default_factory=list)
    #: errors a usable statement may still meet for other reasons (the name exists already...)
    may_fail: tuple[type[Exception], ...] = ()


def tree(root: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        for entry in (*dirs, *files):
            found.add(os.path.join(folder, entry))
    return found


def inside(path: str, folder: Path) -> bool:
    f = str(folder)
    return path == f or path.startswith(f + os.sep) or f.startswith(path + os.sep)


class Sandbox:
    def __init__(self, rng: random.Random, base: Path, index: int) -> None:
        self.rng = rng
        self.root = base / f"round{index}"
        self.warehouse = self.root.joinpath(*[f"d{i}" for i in range(DEPTH)], "wh")
        self.warehouse.mkdir(parents=True)
        self.catalog_type = rng.choice(["sql", "hadoop"])
        self.con = iceduck.connect(self.warehouse, catalog_type=self.catalog_type)
        self.allowed: list[Path] = [self.warehouse]
        self.namespaces: list[tuple[str, ...]] = []
        self.tables: list[tuple[tuple[str, ...], str]] = []
        self.counter = 0
        self.run_sql("CREATE NAMESPACE base")
        self.namespaces.append(("base",))

    def run_sql(self, sql: str) -> list[tuple[object, ...]]:
        cur = self.con.cursor()
        cur.execute(sql)
        return cur.fetchall() if cur.description else []

    def fresh(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def location(self) -> str:
        """A random explicit location inside the sandbox, sometimes with hostile characters."""
        name = random_name(self.rng, self.root) if self.rng.random() < 0.5 else self.fresh()
        name = name.replace("/", "_") if self.rng.random() < 0.7 else name
        name = name.replace("..", "__")  # '..' runs could leave the sandbox: the user's choice, not ours
        path = f"{self.root}/locations/{name}"
        if self.rng.random() < 0.15:
            return "file:" + url_quote(path, safe="/", errors="surrogatepass")
        if self.rng.random() < 0.15:
            return "file:" + path
        return path

    def make_trial(self) -> Trial:
        rng = self.rng
        ops = ["namespace", "table", "ctas", "replace", "location", "data_path"]
        if self.catalog_type == "sql" and self.tables:
            ops.append("rename")
        op = rng.choice(ops)
        ns = rng.choice(self.namespaces)
        q_ns = ".".join(quote(level) for level in ns)
        name = random_name(rng, self.root)
        if op == "namespace":
            levels = (*ns, name) if rng.random() < 0.3 else (name,)
            sql = f"CREATE NAMESPACE {'.'.join(quote(level) for level in levels)}"
            refuse = any(level_problem(level) for level in levels)
            return Trial(op, sql, refuse, (levels, "", self.warehouse), may_fail=(AlreadyExistsError,))
        folder = self.warehouse.joinpath(*ns, name) if not name_problem(name) else self.warehouse
        if op in ("table", "ctas", "replace"):
            body = {
                "table": f"CREATE TABLE {q_ns}.{quote(name)} (a int, b string)",
                "ctas": f"CREATE TABLE {q_ns}.{quote(name)} AS SELECT 1 AS a, 'x' AS b",
                "replace": f"CREATE OR REPLACE TABLE {q_ns}.{quote(name)} (a int, b string)",
            }[op]
            # an existing table (same name drawn twice) is not refused for its name
            return Trial(op, body, name_problem(name), (ns, name, folder), may_fail=(AlreadyExistsError,))
        if op == "rename":
            source_ns, source = rng.choice(self.tables)
            source_sql = ".".join(quote(p) for p in (*source_ns, source))
            sql = f"ALTER TABLE {source_sql} RENAME TO {q_ns}.{quote(name)}"
            return Trial(op, sql, name_problem(name), (ns, name, folder), may_fail=(AlreadyExistsError,))
        table = self.fresh()
        location = self.location()
        local = Path(local_path(location)) if not location_problem(location) else self.root
        refuse = location_problem(location)
        if op == "location":
            sql = f"CREATE TABLE {q_ns}.{table} (a int, b string) LOCATION {sql_string(location)}"
            # a Hadoop table lives in its folder, always: another LOCATION is refused
            hadoop = (ValidationError,) if self.catalog_type == "hadoop" else ()
            return Trial(op, sql, refuse, (ns, table, local), [local], may_fail=hadoop)
        sql = (
            f"CREATE TABLE {q_ns}.{table} (a int, b string) "
            f"TBLPROPERTIES ('write.data.path' = {sql_string(location)})"
        )
        return Trial(op, sql, refuse, (ns, table, local), [local])

    def check(self, trial: Trial) -> str | None:
        """Run ``trial``; None if it survived, else what went wrong."""
        before = tree(self.root)
        error: Exception | None = None
        try:
            self.run_sql(trial.sql)
        except Exception as e:  # every failure is classified below
            error = e
        new = tree(self.root) - before
        if error is not None:
            if not (isinstance(error, IceduckError) and isinstance(error, iceduck.Error)):
                return f"raw {type(error).__name__}: {error!s:.200} <- {trial.sql!r:.200}"
            if not trial.must_refuse and not isinstance(error, trial.may_fail):
                return f"refused a usable name: {type(error).__name__}: {error!s:.200} <- {trial.sql!r:.200}"
            journal = [p for p in new if not p.endswith("-journal")]
            if journal:
                return f"a failed statement left files: {sorted(journal)[:3]} <- {trial.sql!r:.200}"
            return None
        allowed = [*self.allowed, *([] if trial.must_refuse else trial.allowed)]
        escaped = [p for p in new if not any(inside(p, folder) for folder in allowed)]
        if escaped:
            return f"escaped the warehouse: {sorted(escaped)[:3]} <- {trial.sql!r:.200}"
        if trial.must_refuse:
            return f"accepted: {trial.sql!r:.300}"
        self.allowed = allowed
        return self.round_trip(trial)

    def round_trip(self, trial: Trial) -> str | None:
        assert trial.creates is not None
        levels, name, folder = trial.creates
        if not name:  # a namespace
            self.namespaces.append(levels)
            if self.catalog_type == "hadoop" and not self.warehouse.joinpath(*levels).is_dir():
                return f"namespace {levels!r} has no folder"
            shown = self.run_sql(
                "SHOW NAMESPACES"
                + (f" IN {'.'.join(quote(x) for x in levels[:-1])}" if len(levels) > 1 else "")
            )
            if (".".join(levels),) not in shown:  # listed dotted, in full
                return f"namespace {levels!r} not listed: {shown[:5]}"
            return None
        if "RENAME" in trial.sql:
            self.tables = [t for t in self.tables if t != self._rename_source(trial.sql)]
        full = ".".join(quote(p) for p in (*levels, name))
        if (levels, name) not in self.tables:
            self.tables.append((levels, name))
        before = self.run_sql(f"SELECT count(*) FROM {full}")[0][0]
        self.run_sql(f"INSERT INTO {full} VALUES (7, 'seven')")
        after = self.run_sql(f"SELECT count(*) FROM {full} WHERE a = 7 AND b = 'seven'")[0][0]
        listed = [row[-1] for row in self.run_sql(f"SHOW TABLES IN {'.'.join(quote(x) for x in levels)}")]
        if name not in listed:
            return f"table {name!r} not listed in {levels!r}"
        if after < 1 or self.run_sql(f"SELECT count(*) FROM {full}")[0][0] != before + 1:
            return f"table {full!r} did not take its INSERT"
        data = [p for p in self.run_sql(f"SELECT file_path FROM {full}.files")]
        under = os.path.normpath(folder) + os.sep
        if "RENAME" not in trial.sql and not any(
            os.path.normpath(local_path(str(p[0]))).startswith(under) for p in data
        ):
            return f"table {full!r}: no data file under {folder} ({data[:2]})"
        return None

    def _rename_source(self, sql: str) -> tuple[tuple[str, ...], str] | None:
        for levels, name in self.tables:
            if sql.startswith(f"ALTER TABLE {'.'.join(quote(p) for p in (*levels, name))} RENAME"):
                return (levels, name)
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="hostile-names-") as base:
        box: Sandbox | None = None
        for i in range(args.trials):
            if i % TRIALS_PER_WAREHOUSE == 0:
                if box is not None:
                    box.con.close()
                box = Sandbox(rng, Path(base), i // TRIALS_PER_WAREHOUSE)
            assert box is not None
            trial = box.make_trial()
            try:
                failure = box.check(trial)
            except (IceduckError, sqlite3.Error) as e:
                failure = f"round trip failed: {type(e).__name__}: {e!s:.200} <- {trial.sql!r:.200}"
            outcomes[f"{trial.op} {'refused' if trial.must_refuse else 'usable'}"] += 1
            if failure is not None:
                failures.append(failure)
        if box is not None:
            box.con.close()
    survived = args.trials - len(failures)
    print(f"hostile names (seed {seed}): {survived}/{args.trials} trials survived; outcomes {dict(outcomes)}")
    for failure in failures[:20]:
        print("  FAILED", failure)
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
