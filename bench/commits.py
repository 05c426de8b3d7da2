"""One-row commits per catalog: the latency of ``INSERT INTO t VALUES (...)`` through
``iceduck.connect(...)`` (autocommit, a warm connection), on every catalog that can be started
on loopback in the same run.

A streaming or interactive writer commits small batches, so the fixed cost of a commit is what
it pays: write one data file, a manifest, a manifest list, the table metadata, and swap the
catalog's pointer. Which catalog holds the pointer decides part of that cost, so each catalog
of :data:`CATALOGS` gets a fresh table, ``--warmups`` untimed commits, then ``--commits`` timed
ones (median and p90).

* **baseline**: DuckDB appending the same row to a table of a file-backed DuckDB database
  (``INSERT INTO t VALUES (...)``, autocommit): the floor of a durable one-row write. Its
  inserts are interleaved with the catalog's, one each in turn, so a change in the machine's
  load hits both; each catalog's ratio is against its own interleaved baseline.
* **catalog call**: the time inside the catalog's ``commit_table``/``commit_tables`` (the
  next metadata file and the pointer swap; for REST the request, the server doing both) and
  ``load_table`` (the refresh before a write), timed by wrapping the connection's catalog
  object's methods; the rest of a commit is parsing, planning, the data file, the manifest
  and the manifest list.
* **PyIceberg**: ``table.append`` of a one-row Arrow table on an embedded SQLite catalog, the
  peer; and DuckDB ``COPY`` of the row to a Parquet file, the data file a commit cannot skip.

A catalog that cannot start here (no ``initdb``, no moto, a module not written yet) is a row
saying why, not a failure. The registry is a list of :class:`Entry`: a name and a factory
that starts what the catalog needs under a folder and returns ``iceduck.connect``'s keyword
arguments and the cleanup.

    python3 bench/commits.py [--commits 50] [--warmups 5] [--catalogs sqlite,hadoop,...]
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import importlib
import math
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from statistics import median
from typing import Any

import duckdb
from common import (
    BENCH_DIR,
    WAREHOUSE_ROOT,
    Measure,
    Section,
    fmt_ms,
    fmt_ratio,
    print_section,
    ratio,
    table_lines,
)

COMMITS = 50
WARMUPS = 5
COLUMNS = "(id bigint, v double, s string)"

Cleanup = Callable[[], None]
#: starts a catalog under the folder; returns ``iceduck.connect`` keyword arguments and the cleanup
Factory = Callable[[Path], tuple[dict[str, Any], Cleanup]]


class Unavailable(Exception):
    """The catalog cannot be started here; the message says why (the row shows it)."""


@dataclass(frozen=True)
class Entry:
    name: str
    #: what the row measures, for the printed legend
    describe: str
    factory: Factory


# -- what the factories need ------------------------------------------------------------------------


def _repo_on_path() -> None:
    """tests/support (PostgreSQL, the Hive metastore) is imported as ``tests.support``."""
    root = str(BENCH_DIR.parent)
    if root not in sys.path:
        sys.path.append(root)


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Unavailable(f"{module} cannot be imported ({e})") from None


@contextmanager
def _moto_bucket() -> Iterator[tuple[str, str, dict[str, str]]]:
    """moto's server in its own process (its work does not take this process's GIL), one
    bucket; yields (endpoint, bucket, the Iceberg properties reaching it)."""
    try:
        import boto3  # type: ignore[import-untyped]
        import moto.server  # noqa: F401
    except ImportError as e:
        raise Unavailable(f"moto[server] is not installed ({e})") from None
    import lake

    with lake.moto_server() as endpoint:
        props = lake.properties(endpoint)
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=lake.ACCESS_KEY,
            aws_secret_access_key=lake.SECRET_KEY,
            region_name=lake.REGION,
        ).create_bucket(Bucket="commits")
        yield endpoint, "commits", props


def _served(stack: ExitStack, warehouse: str, *args: str) -> str:
    """``iceduck serve`` in its own process (as it runs in practice); its URL."""
    import rest

    return str(stack.enter_context(rest.served(warehouse, *args)))


def _with_stack(build: Callable[[ExitStack, Path], dict[str, Any]]) -> Factory:
    """A factory from a function entering what it starts into an ExitStack."""

    def factory(root: Path) -> tuple[dict[str, Any], Cleanup]:
        stack = ExitStack()
        try:
            kwargs = build(stack, root)
        except BaseException:
            stack.close()
            raise
        return kwargs, stack.close

    return factory


# -- the catalogs ------------------------------------------------------------------------------------


def _sqlite(stack: ExitStack, root: Path) -> dict[str, Any]:
    return {"warehouse": root / "wh"}


def _hadoop(stack: ExitStack, root: Path) -> dict[str, Any]:
    return {"warehouse": root / "wh", "catalog_type": "hadoop"}


def _postgres(stack: ExitStack, root: Path) -> dict[str, Any]:
    _repo_on_path()
    pg = _import("tests.support.postgres")
    try:
        server = pg.start_postgres()
    except pg.PostgresUnavailable as e:
        raise Unavailable(str(e)) from None
    stack.callback(server.stop)
    return {"warehouse": root / "wh", "catalog_uri": server.create_database("commits")}


def _rest(stack: ExitStack, root: Path) -> dict[str, Any]:
    (root / "wh").mkdir(parents=True)
    return {"catalog_uri": _served(stack, str(root / "wh"))}


def _sqlite_s3(stack: ExitStack, root: Path) -> dict[str, Any]:
    _, bucket, props = stack.enter_context(_moto_bucket())
    root.mkdir(parents=True, exist_ok=True)
    return {
        "warehouse": f"s3://{bucket}/wh",
        "catalog_uri": f"sqlite:///{root}/catalog.db",
        "properties": props,
    }


def _rest_s3(stack: ExitStack, root: Path) -> dict[str, Any]:
    _, bucket, props = stack.enter_context(_moto_bucket())
    root.mkdir(parents=True, exist_ok=True)
    flags = [f"--property={k}={v}" for k, v in props.items()]
    url = _served(stack, f"s3://{bucket}/wh", f"--catalog=sqlite:///{root}/catalog.db", *flags)
    return {"catalog_uri": url, "properties": props}


def _glue(stack: ExitStack, root: Path) -> dict[str, Any]:
    """Glue on moto (the same server answers S3 and Glue); ``glue.endpoint`` as Iceberg's
    AwsProperties names it."""
    _import("iceduck.catalog.glue")
    endpoint, bucket, props = stack.enter_context(_moto_bucket())
    return {
        "warehouse": f"s3://{bucket}/wh",
        "catalog_uri": "glue://",
        "properties": {**props, "glue.endpoint": endpoint},
    }


def _hive(stack: ExitStack, root: Path) -> dict[str, Any]:
    """A Hive Metastore on loopback from tests/support/hive_metastore.py: its
    ``start_metastore()`` gives an object with ``uri`` (``thrift://host:port``) and ``stop()``."""
    _import("iceduck.catalog.hive")
    _repo_on_path()
    hms = _import("tests.support.hive_metastore")
    try:
        server = hms.start_metastore()
    except Exception as e:  # no Java, no jars, no port: the row says which
        raise Unavailable(f"the metastore did not start: {type(e).__name__}: {e}") from None
    stack.callback(server.stop)
    return {"warehouse": root / "wh", "catalog_uri": server.uri}


CATALOGS: list[Entry] = [
    Entry(
        "sqlite", "embedded SQLite catalog (<warehouse>/catalog.db), local warehouse", _with_stack(_sqlite)
    ),
    Entry("hadoop", "Hadoop catalog (version-hint.text), local warehouse", _with_stack(_hadoop)),
    Entry("postgres", "JDBC catalog in PostgreSQL on loopback, local warehouse", _with_stack(_postgres)),
    Entry("rest", "iceduck serve (its own process, SQLite), local warehouse", _with_stack(_rest)),
    Entry(
        "sqlite-s3", "embedded SQLite catalog, warehouse in S3 (moto, own process)", _with_stack(_sqlite_s3)
    ),
    Entry("rest-s3", "iceduck serve over SQLite, warehouse in S3 (moto)", _with_stack(_rest_s3)),
    Entry("glue", "Glue on moto, warehouse in S3 (moto)", _with_stack(_glue)),
    Entry("hive", "Hive Metastore on loopback (thrift), local warehouse", _with_stack(_hive)),
]


# -- timing --------------------------------------------------------------------------------------------


class CallTimer:
    """Time spent in some methods of one object, per statement: each method is replaced on
    the instance by one that calls it and adds its duration."""

    def __init__(self, target: Any, groups: dict[str, tuple[str, ...]]) -> None:
        self.ms = dict.fromkeys(groups, 0.0)
        for group, names in groups.items():
            for name in names:
                setattr(target, name, self._timed(group, getattr(target, name)))

    def _timed(self, group: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.ms[group] += (time.perf_counter() - started) * 1000

        return timed

    def take(self) -> dict[str, float]:
        """The times since the last take, and start again from zero."""
        out = dict(self.ms)
        self.ms = dict.fromkeys(self.ms, 0.0)
        return out


@dataclass
class Row:
    """One catalog's (or peer's) commits: ms per timed commit, and its interleaved baseline."""

    name: str
    describe: str
    ms: list[float] = field(default_factory=list)
    baseline_ms: list[float] = field(default_factory=list)
    #: ms per timed commit inside the catalog's calls, per group (commit, load)
    calls_ms: dict[str, list[float]] = field(default_factory=dict)
    rows: int | None = None
    expected: int | None = None
    skipped: str | None = None

    @property
    def median(self) -> float | None:
        return median(self.ms) if self.ms else None

    @property
    def baseline(self) -> float | None:
        return median(self.baseline_ms) if self.baseline_ms else None

    def share(self, group: str) -> float | None:
        """The group's part of the commits' total time."""
        spent = self.calls_ms.get(group)
        return sum(spent) / sum(self.ms) if spent and sum(self.ms) > 0 else None


def p90(values: list[float]) -> float | None:
    """The nearest-rank 90th percentile (of 50 values, the 45th smallest)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(0.9 * len(ordered)) - 1]


def row_sql(i: int) -> str:
    return f"({i}, {i / 2}, 's{i}')"


class Baseline:
    """DuckDB appending one row to a table of a file-backed database, autocommit."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(str(path))
        self.con.execute("CREATE TABLE t (id BIGINT, v DOUBLE, s VARCHAR)")
        self.i = 0

    def insert(self) -> float:
        self.i += 1
        started = time.perf_counter()
        self.con.execute(f"INSERT INTO t VALUES {row_sql(self.i)}")
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        self.con.close()


def interleaved(
    row: Row,
    commit: Callable[[int], object],
    baseline: Baseline,
    commits: int,
    warmups: int,
    timer: CallTimer | None,
) -> None:
    """``warmups`` untimed commits, then ``commits`` timed ones, each after a baseline insert."""
    for i in range(warmups):
        baseline.insert()
        commit(i)
    if timer is not None:
        timer.take()
    for i in range(warmups, warmups + commits):
        row.baseline_ms.append(baseline.insert())
        started = time.perf_counter()
        commit(i)
        row.ms.append((time.perf_counter() - started) * 1000)
        if timer is not None:
            for group, ms in timer.take().items():
                row.calls_ms.setdefault(group, []).append(ms)
    row.expected = warmups + commits


def measure_catalog(entry: Entry, root: Path, commits: int, warmups: int) -> Row:
    import iceduck

    row = Row(entry.name, entry.describe)
    try:
        kwargs, cleanup = entry.factory(root / entry.name)
    except Unavailable as e:
        row.skipped = f"skipped: {e}"
        return row
    baseline = Baseline(root / f"{entry.name}-baseline.duckdb")
    try:
        with iceduck.connect(**kwargs) as con:
            con.execute("CREATE NAMESPACE c")
            con.execute(f"CREATE TABLE c.t {COLUMNS}")
            timer = CallTimer(
                con.session.base_catalog,
                {"commit": ("commit_table", "commit_tables"), "load": ("load_table",)},
            )
            cur = con.cursor()
            interleaved(
                row,
                lambda i: cur.execute(f"INSERT INTO c.t VALUES {row_sql(i)}"),
                baseline,
                commits,
                warmups,
                timer,
            )
            found = cur.execute("SELECT count(*) FROM c.t").fetchone()
            row.rows = None if found is None else int(found[0])
    finally:
        baseline.close()
        cleanup()
    return row


def measure_pyiceberg(root: Path, commits: int, warmups: int) -> Row:
    """PyIceberg's ``append`` of a one-row Arrow table on an embedded SQLite catalog."""
    row = Row("pyiceberg", "PyIceberg table.append of a one-row Arrow table, SQLite catalog (peer)")
    try:
        import pyarrow as pa
        from pyiceberg.catalog.sql import SqlCatalog
    except ImportError as e:
        row.skipped = f"skipped: PyIceberg is not installed ({e})"
        return row
    import iceduck

    warehouse = root / "pyiceberg"
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE c")
        con.execute(f"CREATE TABLE c.t {COLUMNS}")
    catalog = SqlCatalog("iceduck", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    table = catalog.load_table("c.t")
    schema = table.schema().as_arrow()

    def commit(i: int) -> None:
        table.append(pa.Table.from_pylist([{"id": i, "v": i / 2, "s": f"s{i}"}], schema=schema))

    baseline = Baseline(root / "pyiceberg-baseline.duckdb")
    try:
        interleaved(row, commit, baseline, commits, warmups, None)
    finally:
        baseline.close()
        catalog.engine.dispose()
    with iceduck.connect(warehouse) as con:
        found = con.execute("SELECT count(*) FROM c.t").fetchone()
        row.rows = None if found is None else int(found[0])
    return row


def parquet_copy_ms(root: Path, commits: int, warmups: int) -> float:
    """DuckDB ``COPY`` of one row to a new Parquet file: the data file every commit writes."""
    files = root / "plain"
    files.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    times = []
    for i in range(warmups + commits):
        started = time.perf_counter()
        con.execute(
            f"COPY (SELECT * FROM (VALUES {row_sql(i)}) r(id, v, s)) "
            f"TO '{files}/{i}.parquet' (FORMAT parquet)"
        )
        times.append((time.perf_counter() - started) * 1000)
    con.close()
    return median(times[warmups:])


# -- the section ------------------------------------------------------------------------------------------


def chosen_entries(names: list[str] | None) -> list[Entry]:
    if not names:
        return list(CATALOGS)
    known = {e.name: e for e in CATALOGS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown catalogs {unknown}; choose from {', '.join(known)}")
    return [known[n] for n in names]


def _guarded(name: str, describe: str, run: Callable[[], Row]) -> Row:
    """A catalog that fails mid-run becomes a row saying how, not the end of the section."""
    try:
        return run()
    except Exception as e:
        return Row(name, describe, skipped=f"failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}")


def table(rows: list[Row]) -> list[str]:
    """The measured rows as a table, then a line per catalog that did not run, saying why."""
    measured = [r for r in rows if r.skipped is None]
    lines = table_lines(HEADER, table_rows(measured))
    width = max(len(HEADER[0]), *(len(r.name) for r in measured)) if measured else len(HEADER[0])
    return lines + [f"{r.name.ljust(width)} | {r.skipped}" for r in rows if r.skipped is not None]


def table_rows(rows: list[Row]) -> list[list[str]]:
    out = []
    for r in rows:
        shares = [r.share(g) for g in ("commit", "load")]
        out.append(
            [
                r.name,
                fmt_ms(r.median),
                fmt_ms(p90(r.ms)),
                fmt_ms(r.baseline),
                fmt_ratio(ratio(r.median, r.baseline)),
                *("-" if s is None else f"{s:.0%}" for s in shares),
                f"{r.rows}" + ("" if r.rows == r.expected else f" (expected {r.expected})"),
            ]
        )
    return out


HEADER = ["catalog", "median ms", "p90 ms", "baseline ms", "ratio", "commit call", "load call", "rows"]


def run_section(
    commits: int = COMMITS,
    root: Path | None = None,
    warmups: int = WARMUPS,
    catalogs: list[str] | None = None,
    pyiceberg: bool = True,
) -> Section:
    chosen = chosen_entries(catalogs)
    root = root or WAREHOUSE_ROOT / "commits"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    rows = [_guarded(e.name, e.describe, partial(measure_catalog, e, root, commits, warmups)) for e in chosen]
    if pyiceberg:
        appends = partial(measure_pyiceberg, root, commits, warmups)
        rows.append(_guarded("pyiceberg", "PyIceberg append (peer)", appends))
    copy_ms = parquet_copy_ms(root, commits, warmups)

    sec = Section("commits")
    sec.lines.append(
        f"== one-row commits: INSERT INTO t VALUES (...) through iceduck.connect (autocommit, warm "
        f"connection), {warmups} untimed then {commits} timed per catalog; median and p90 in ms"
    )
    sec.lines.append(
        "   baseline: DuckDB INSERT of the same row into a file-backed DuckDB table, interleaved "
        "one-for-one with the catalog's commits; ratio = median / baseline median"
    )
    sec.lines.append(
        "   commit call / load call: share of the commits' time inside the catalog's commit_table "
        "(metadata file + pointer swap) / load_table"
    )
    sec.lines += ["   " + line for line in table(rows)]
    for r in rows:
        sec.lines.append(f"   {r.name}: {r.describe}")
    sec.lines.append(
        f"   DuckDB COPY of the row to a Parquet file (the data file alone): {fmt_ms(copy_ms)} ms"
    )
    for r in rows:
        if r.skipped is None and r.rows != r.expected:
            sec.mismatches.append(f"commits: {r.name} table holds {r.rows} rows, expected {r.expected}")
    pyi = next((r for r in rows if r.name == "pyiceberg"), None)
    for r in rows:
        if r.name == "pyiceberg" or r.skipped is not None:
            continue
        peer: float | str | None = None
        if r.name == "sqlite" and pyi is not None:
            peer = pyi.skipped if pyi.skipped is not None else pyi.median
        sec.measures.append(
            Measure(
                f"one-row commit, {r.name} catalog (limit: DuckDB INSERT)", r.median, r.baseline, "n/a", peer
            )
        )
    sec.data = {
        "commits": commits,
        "warmups": warmups,
        "parquet_copy_ms": copy_ms,
        "catalogs": {
            r.name: {
                "describe": r.describe,
                "skipped": r.skipped,
                "ms": r.ms,
                "baseline_ms": r.baseline_ms,
                "calls_ms": r.calls_ms,
                "median_ms": r.median,
                "p90_ms": p90(r.ms),
                "baseline_median_ms": r.baseline,
                "ratio": ratio(r.median, r.baseline),
                "commit_share": r.share("commit"),
                "load_share": r.share("load"),
                "rows": r.rows,
                "expected_rows": r.expected,
            }
            for r in rows
        },
    }
    return sec


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--commits", type=int, default=COMMITS, help="timed commits per catalog")
    p.add_argument("--warmups", type=int, default=WARMUPS, help="untimed commits first")
    p.add_argument("--catalogs", help="comma-separated subset of " + ",".join(e.name for e in CATALOGS))
    p.add_argument("--no-pyiceberg", action="store_true", help="skip the PyIceberg peer")
    p.add_argument("--root", type=Path, help="scratch folder (default bench/.warehouse/commits)")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.catalogs.split(",") if n.strip()] if args.catalogs else None
    return print_section(run_section(args.commits, args.root, args.warmups, names, not args.no_pyiceberg))


if __name__ == "__main__":
    sys.exit(main())
