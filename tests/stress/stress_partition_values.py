"""Stress: random partition values of any length and precision.

Not collected by pytest (bounded versions run in CI: tests/engine/test_partition_values.py
and tests/interop/test_engine_partition_values_spark.py). Run from the repository root::

    python3 tests/stress/stress_partition_values.py [--trials N] [--seed S] [--dir PATH]

Each trial creates a table ``(id bigint, s string, b binary, d decimal(38, S))`` with a
random format version and one to three random partition fields (identity, truncate[W] and
bucket[N] of each column), inserts 1-40 random rows -- strings of 0-2,000 code points drawn
from ASCII (``/``, ``=``, ``%``, ``+``, ``~``, spaces, ``.``), Latin, CJK, combining marks and
emoji, bytes of 0-2,000, decimals of 1-38 digits either sign including the extremes, and
nulls -- then updates or deletes some of them, and checks after each statement:

* the rows equal plain DuckDB's after the same statements;
* every row of every data file has the file's partition tuple (computed in Python with
  :mod:`iceduck.spec.transforms`), so no two partitions ever share a file;
* every file's folders are Java's ``name=URLEncoder(value)`` names (re-implemented here
  byte by byte), or 253-255-byte names starting with as much of Java's name as fits;
* no temporary folder is left behind.

An INSERT whose truncate[W] of a decimal needs a 39th digit must fail with a
ValidationError and leave the table unchanged (Java refuses to write such a value too).
Prints how many trials survived and which checks failed.
"""

from __future__ import annotations

import argparse
import base64
import random
import shutil
import sys
import tempfile
import traceback
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

import iceduck
from iceduck.errors import ValidationError
from iceduck.spec.hashing import unscaled_at_scale
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import BinaryType, DecimalType, IcebergType, StringType

MAX_NAME_BYTES = 255
#: characters strings are drawn from: path and escape syntax, Latin, CJK, combining, emoji
ALPHABET = (
    [chr(c) for c in range(0x21, 0x7F)]
    + list(" /=%+~.\\?&#\t\n")
    + [chr(c) for c in range(0xC0, 0x180)]
    + [chr(c) for c in range(0x4E00, 0x4E40)]
    + ["\u0301", "\u0308", "\u200b", "\ufeff"]
    + [chr(c) for c in range(0x1F600, 0x1F650)]
)
#: lengths near the limits that mattered: inline keys (64 bytes), DuckDB's old hex folder
#: (120 bytes), a folder name (255 bytes)
EDGE_LENGTHS = [0, 1, 2, 63, 64, 65, 84, 85, 120, 121, 126, 127, 250, 253, 254, 255, 256, 1000, 2000]


def java_url_encode(text: str) -> str:
    """``java.net.URLEncoder.encode(text, "UTF-8")`` byte by byte."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char.isascii() and (char.isalnum() or char in ".-*_"):
            out.append(char)
        elif char == " ":
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def random_length(rng: random.Random) -> int:
    return rng.choice(EDGE_LENGTHS) if rng.random() < 0.4 else rng.randint(0, 2000)


def random_string(rng: random.Random) -> str | None:
    if rng.random() < 0.05:
        return None
    n = random_length(rng)
    if rng.random() < 0.3:  # few distinct characters: long shared prefixes
        return "".join(rng.choice("a/é😀") for _ in range(n))
    return "".join(rng.choice(ALPHABET) for _ in range(n))


def random_bytes(rng: random.Random) -> bytes | None:
    if rng.random() < 0.05:
        return None
    return rng.randbytes(random_length(rng))


def random_decimal(rng: random.Random, scale: int) -> Decimal | None:
    if rng.random() < 0.05:
        return None
    top = 10**38 - 1
    unscaled = rng.choice([top, -top, top - rng.randint(0, 20), -top + rng.randint(0, 20), 0, 1, -1])
    if rng.random() < 0.7:
        unscaled = rng.randint(-(10 ** rng.randint(1, 38)) + 1, 10 ** rng.randint(1, 38) - 1)
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


def random_spec(rng: random.Random) -> list[tuple[str, str, str]]:
    """(partition field name, column, transform) for 1-3 fields over s, b and d."""
    options = []
    for column in ("s", "b", "d"):
        options.append((column, column, "identity"))
        width = rng.choice([1, 3, 64, 65, 200, 1000]) if column != "d" else rng.choice([1, 3, 10, 2**31 - 1])
        options.append((f"{column}_trunc", column, f"truncate[{width}]"))
        options.append((f"{column}_bucket", column, f"bucket[{rng.choice([1, 7, 64])}]"))
    chosen = rng.sample(options, rng.randint(1, 3))
    names = set()
    out = []
    for name, column, transform in chosen:
        if name in names:  # two truncates of one column: one field each
            continue
        names.add(name)
        out.append((name, column, transform))
    return out


def spec_sql(fields: list[tuple[str, str, str]]) -> str:
    terms = []
    for _, column, transform in fields:
        if transform == "identity":
            terms.append(column)
        else:
            kind, arg = transform.rstrip("]").split("[")
            terms.append(f"{kind}({arg}, {column})")
    return ", ".join(terms)


def human(t: IcebergType, value: Any) -> str:
    """Java ``Transform.toHumanString`` of a partition value: base64 bytes,
    ``BigDecimal.toString`` (same rule as Python's), plain ints and strings."""
    if value is None:
        return "null"
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return str(value)


def check_folder(folder: str, java: str) -> str | None:
    if len(java) <= MAX_NAME_BYTES:
        return None if folder == java else f"folder not Java's name: {folder[:60]!r} vs {java[:60]!r}"
    head, tilde, digest = folder.rpartition("~")
    ok = tilde and len(digest) == 32 and java.startswith(head) and MAX_NAME_BYTES - 2 <= len(folder) <= 255
    return None if ok else f"long folder not a bounded Java name: {folder[:60]!r} vs {java[:60]!r}"


class Trial:
    """One table, the same statements in iceduck and in plain DuckDB, and the checks."""

    def __init__(self, con: iceduck.Connection, rng: random.Random, n: int, warehouse: Path) -> None:
        self.con, self.rng, self.warehouse = con, rng, warehouse
        self.table = f"ns.t{n}"
        self.scale = rng.choice([0, 2, 10, 37, 38])
        self.fields = random_spec(rng)
        self.types: dict[str, IcebergType] = {
            "s": StringType(),
            "b": BinaryType(),
            "d": DecimalType(38, self.scale),
        }
        self.duck = duckdb.connect()
        self.next_id = 0

    def run(self) -> list[str]:
        version = self.rng.choice([2, 3])
        mode = self.rng.choice(["copy-on-write", "merge-on-read"])
        cur = self.con.cursor()
        cur.execute(
            f"CREATE TABLE {self.table} (id bigint, s string, b binary, d decimal(38, {self.scale})) "
            f"USING iceberg PARTITIONED BY ({spec_sql(self.fields)}) "
            f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='{mode}', "
            f"'write.update.mode'='{mode}')"
        )
        self.duck.execute(f"CREATE TABLE ref (id BIGINT, s VARCHAR, b BLOB, d DECIMAL(38, {self.scale}))")
        problems = self.insert()
        for _ in range(self.rng.randint(0, 2)):
            statement = self.rng.choice(
                [
                    "UPDATE {t} SET s = s || 'x' WHERE id % 3 = 0",
                    "UPDATE {t} SET b = NULL WHERE id % 4 = 1",
                    "DELETE FROM {t} WHERE id % 5 = 2",
                    "UPDATE {t} SET id = id + 1000 WHERE id % 2 = 0",
                ]
            )
            cur.execute(statement.format(t=self.table))
            self.duck.execute(statement.format(t="ref"))
            problems += self.check()
        problems += self.insert()
        return problems

    def insert(self) -> list[str]:
        rows = []
        for _ in range(self.rng.randint(1, 40)):
            rows.append(
                (
                    self.next_id,
                    random_string(self.rng),
                    random_bytes(self.rng),
                    random_decimal(self.rng, self.scale),
                )
            )
            self.next_id += 1
        overflow = any(self.partition_of(row) is None for row in rows)
        # decimals as text, cast exactly by the column: DuckDB binds a Python Decimal whose
        # scale exceeds its digits (0.00012, 1E-38) as a DOUBLE, which loses digits
        params = [(i, s, b, None if d is None else format(d, "f")) for i, s, b, d in rows]
        try:
            self.con.cursor().executemany(f"INSERT INTO {self.table} VALUES (?, ?, ?, ?)", params)
        except ValidationError as e:
            if overflow and "needs more digits than decimal" in str(e):
                return self.check()  # refused, and the table is unchanged
            raise
        if overflow:
            return ["overflow accepted: an INSERT whose decimal truncate needs 39 digits"]
        self.duck.executemany("INSERT INTO ref VALUES (?, ?, ?, ?)", params)
        return self.check()

    def partition_of(self, row: tuple) -> tuple | None:
        """The row's partition tuple (Python transforms), None if a decimal truncate overflows."""
        by_column = dict(zip(("id", "s", "b", "d"), row, strict=True))
        out = []
        for _, column, transform in self.fields:
            t = self.types[column]
            value = parse_transform(transform).apply(t)(by_column[column])
            if isinstance(value, Decimal) and abs(unscaled_at_scale(value, self.scale)) >= 10**38:
                return None
            out.append(value)
        return tuple(out)

    def check(self) -> list[str]:
        problems = []
        cur = self.con.cursor()
        got = sorted(cur.execute(f"SELECT id, s, b, d FROM {self.table}").fetchall(), key=repr)
        expected = sorted(self.duck.execute("SELECT id, s, b, d FROM ref").fetchall(), key=repr)
        if got != expected:
            problems.append(f"rows differ from DuckDB's: {len(got)} vs {len(expected)} rows")
        names = [name for name, _, _ in self.fields]
        files = cur.execute(f"SELECT file_path, partition FROM {self.table}.data_files").fetchall()
        partitions = {path: tuple(p[name] for name in names) for path, p in files}
        for file, s, b, d in cur.execute(f"SELECT _file, s, b, d FROM {self.table}").fetchall():
            if self.partition_of((0, s, b, d)) != partitions.get(file):
                problems.append(f"row not of its file's partition: {file[-60:]}")
        for path, partition in partitions.items():
            segments = path.split("/data/", 1)[1].split("/")[:-1]
            for segment, (name, column, transform), value in zip(
                segments, self.fields, partition, strict=True
            ):
                result_type = parse_transform(transform).result_type(self.types[column])
                java = f"{java_url_encode(name)}={java_url_encode(human(result_type, value))}"
                problem = check_folder(segment, java)
                if problem:
                    problems.append(problem)
        data = self.warehouse / "ns" / self.table.split(".")[1] / "data"
        if data.is_dir() and any(p.name.startswith(".") for p in data.iterdir()):
            problems.append(f"temporary folder left behind: {data}")
        return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--dir", default=None, help="warehouse folder (default: a temporary one)")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="iceduck-stress-partitions-"))
    con = iceduck.connect(root)
    con.cursor().execute("CREATE NAMESPACE IF NOT EXISTS ns")
    survived = 0
    failures: Counter[str] = Counter()  # trials failing each kind of check
    examples: dict[str, str] = {}
    for n in range(args.trials):
        trial = Trial(con, rng, n, root)
        try:
            problems = trial.run()
        except Exception as e:  # any escape is a failed trial, reported by kind
            problems = [f"{type(e).__name__}: {str(e)[:300]}"]
            examples.setdefault(type(e).__name__, traceback.format_exc())
        if problems:
            kinds = {p.split(":", 1)[0] for p in problems}
            failures.update(kinds)
            for p in problems:
                examples.setdefault(p.split(":", 1)[0], p)
            print(f"trial {n} (spec {trial.fields}, scale {trial.scale}) FAILED: {sorted(kinds)}", flush=True)
        else:
            survived += 1
        con.cursor().execute(f"DROP TABLE {trial.table} PURGE")
    print(f"partition values: {survived}/{args.trials} trials survived (seed {seed}, warehouse {root})")
    for kind, count in failures.most_common():
        print(f"  {count} trial(s): {kind}; e.g. {examples[kind][:2000]}")
    if not args.dir:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if survived == args.trials else 1)


if __name__ == "__main__":
    main()
