"""Load held: concurrent clients against one ``iceduck serve`` on loopback, then a check that
every acknowledged commit is in its table exactly once and that no request got a 5xx.

The server is a real ``iceduck serve WAREHOUSE --port 0`` in its own process, with its access
log (logger ``iceduck.rest``, one line per request with its status) sent to stderr and read
line by line: every status the server returned to any client, iceduck's REST client
included, is counted from it. The catalog behind it is the warehouse's SQLite
``catalog.db`` (``--catalog sqlite``, the default) or a PostgreSQL database on loopback
(``--catalog postgres``, started by ``tests/support/postgres.py``).

Each of ``--clients`` threads (16) has its own iceduck connection through the server
(``iceduck.connect(catalog_uri=url)``) and its own raw HTTP connection (``http.client``), and
picks operations at random by ``--mix`` weights until ``--seconds`` pass (or, for a run that
must not depend on time, ``--ops`` operations each):

* ``load``: ``GET /v1/namespaces/load/tables/{t}`` (raw HTTP), any of the tables;
* ``list``: ``GET /v1/namespaces`` or ``GET /v1/namespaces/load/tables`` (raw HTTP);
* ``exists``: ``HEAD /v1/namespaces/load/tables/{t}`` (raw HTTP), a table that exists or not;
* ``query``: ``SELECT count(*)`` of the client's table through iceduck (load, plan, read);
* ``commit``: ``INSERT INTO load.<t> VALUES (<client>, <seq>)`` through iceduck: a real
  writer's data file, manifest and manifest list, then ``POST .../tables/{t}``. The first
  ``--hot-clients`` clients all append to ``load.hot`` (conflicting commits: the server
  answers 409 and iceduck's commit loop reloads and retries, ``commit.retry.*``); the others
  each append to their own ``load.c<NN>``.

The raw requests measure the server's request rate, not only the Python-side cost of SQL.

Checks at the end (exit 1 if any fails): no 5xx (server log and raw clients); in each table
every acknowledged ``(client, seq)`` row exactly once, no row that was never inserted, no
unacknowledged row twice (an unacknowledged row present once "errored but landed": counted
and listed, and it must be explained); every row's data file added by a snapshot of the
table's history, each snapshot exactly once in the history, every snapshot an ``append`` of
exactly one row, and the number of snapshots = acknowledged INSERTs + those that landed.

    python3 bench/serve_load.py [--clients 16] [--seconds 30 | --ops N] [--catalog sqlite|postgres]
        [--hot-clients 6] [--mix load=4,list=2,exists=2,query=1,commit=3] [--retries N] [--json FILE]
"""

from __future__ import annotations

import checkout  # first: this checkout's iceduck, not an installed one (its ROOT for the server)

# isort: split
import argparse
import http.client
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import BENCH_DIR, Section, load_average, machine, table_lines

NAMESPACE = "load"
HOT = "hot"
KINDS = ("load", "list", "exists", "query", "commit")
DEFAULT_MIX = "load=4,list=2,exists=2,query=1,commit=3"
#: the server in its own process with its access log on stderr: ``iceduck serve``'s own main,
#: after a handler for the ``iceduck.rest`` logger (the command configures no logging)
SERVER_CODE = """
import logging, sys
log = logging.getLogger("iceduck.rest")
handler = logging.StreamHandler(sys.stderr)
handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
log.addHandler(handler)
log.setLevel(logging.INFO)
from iceduck.cli import main
sys.exit(main(sys.argv[1:]))
"""
ACCESS_LINE = re.compile(r'^INFO \S+ "([A-Z]+) (\S+) HTTP/[\d.]+" (\d{3})')


# -- the server --------------------------------------------------------------------------------


@dataclass
class ServerLog:
    """What the server wrote on stderr: every request's (method, path, status) and any other
    line (a traceback of a failed request)."""

    requests: list[tuple[str, str, int]] = field(default_factory=list)
    other: list[str] = field(default_factory=list)

    def read(self, stream: Any) -> None:
        for line in stream:
            found = ACCESS_LINE.match(line)
            if found:
                self.requests.append((found.group(1), found.group(2), int(found.group(3))))
            elif line.strip():
                self.other.append(line.rstrip())


@contextmanager
def served(warehouse: Path, catalog_uri: str | None) -> Iterator[tuple[str, ServerLog]]:
    """``iceduck serve WAREHOUSE --port 0 [--catalog URI]`` in its own process, its stderr
    read by a thread (a full pipe would stall the server); yields its URL and the log."""
    options = ["--catalog", catalog_uri] if catalog_uri else []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [checkout.ROOT, os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_CODE, "serve", str(warehouse), "--port", "0", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    log = ServerLog()
    reader: threading.Thread | None = None
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # "Serving ... at http://127.0.0.1:PORT"
        found = re.search(r"http://[0-9.]+:[0-9]+", line)
        if found is None:
            raise RuntimeError(f"iceduck serve did not start: {line.strip()} {proc.stderr.read()[-2000:]}")
        reader = threading.Thread(target=log.read, args=(proc.stderr,), daemon=True)
        reader.start()
        yield found.group(0), log
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if reader is not None:
            reader.join(timeout=30)


@contextmanager
def postgres_catalog() -> Iterator[str]:
    """A PostgreSQL cluster on loopback (tests/support/postgres.py); yields a new database's URI."""
    root = str(BENCH_DIR.parent)
    if root not in sys.path:
        sys.path.append(root)
    from tests.support.postgres import start_postgres

    server = start_postgres()
    try:
        yield server.create_database("serve_load")
    finally:
        server.stop()


# -- the clients -------------------------------------------------------------------------------


@dataclass
class Op:
    kind: str
    ms: float
    #: the HTTP status (raw requests), or None for iceduck's statements
    status: int | None = None
    error: str | None = None


@dataclass
class Insert:
    """One ``INSERT`` of ``(client, seq)`` into ``table``: acknowledged when it returned."""

    client: int
    seq: int
    table: str
    acknowledged: bool
    error: str | None = None


@dataclass
class ClientResult:
    ops: list[Op] = field(default_factory=list)
    inserts: list[Insert] = field(default_factory=list)
    #: commit attempts the server refused as conflicts (iceduck's commit loop retried them)
    conflicts: int = 0
    #: an error that ended the client early (none expected)
    crashed: str | None = None


def table_of(client: int, hot_clients: int) -> str:
    return HOT if client < hot_clients else f"c{client:02d}"


def parse_mix(text: str) -> dict[str, int]:
    mix: dict[str, int] = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name.strip() not in KINDS or not weight.strip().isdigit():
            raise argparse.ArgumentTypeError(f"--mix is KIND=WEIGHT,... with KIND one of {', '.join(KINDS)}")
        mix[name.strip()] = int(weight)
    if not any(mix.values()):
        raise argparse.ArgumentTypeError("--mix needs a positive weight")
    return mix


class Client:
    """One client thread's connections and loop."""

    def __init__(
        self, number: int, url: str, tables: list[str], hot_clients: int, mix: dict[str, int]
    ) -> None:
        import iceduck
        from iceduck.errors import CommitConflictError

        self.number = number
        self.table = table_of(number, hot_clients)
        self.tables = tables
        self.rng = random.Random(number)
        self.kinds = list(mix)
        self.weights = [mix[k] for k in self.kinds]
        self.result = ClientResult()
        self.con = iceduck.connect(catalog_uri=url)
        host, port = url.removeprefix("http://").split(":")
        self.http = http.client.HTTPConnection(host, int(port), timeout=60)
        catalog = self.con.session.base_catalog
        commit_table = catalog.commit_table

        def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                return commit_table(*args, **kwargs)
            except CommitConflictError:
                self.result.conflicts += 1
                raise

        catalog.commit_table = counted
        self.seq = 0

    def run(self, stop_at: list[float | None], ops: int | None, start: threading.Barrier) -> None:
        try:
            start.wait()
            deadline = stop_at[0]
            done = 0
            while (ops is None or done < ops) and (deadline is None or time.monotonic() < deadline):
                self.step(self.rng.choices(self.kinds, self.weights)[0])
                done += 1
        except Exception as e:  # the harness failing is a finding, not a crash of the run
            self.result.crashed = f"{type(e).__name__}: {e}"
        finally:
            self.con.close()
            self.http.close()

    def step(self, kind: str) -> None:
        started = time.perf_counter()
        status: int | None = None
        error: str | None = None
        if kind == "load":
            status = self.raw("GET", f"/v1/namespaces/{NAMESPACE}/tables/{self.rng.choice(self.tables)}")
        elif kind == "list":
            path = "/v1/namespaces" if self.rng.random() < 0.5 else f"/v1/namespaces/{NAMESPACE}/tables"
            status = self.raw("GET", path)
        elif kind == "exists":
            name = self.rng.choice([*self.tables, "missing"])
            status = self.raw("HEAD", f"/v1/namespaces/{NAMESPACE}/tables/{name}")
        elif kind == "query":
            try:
                self.con.execute(f"SELECT count(*) FROM {NAMESPACE}.{self.table}").fetchall()
            except Exception as e:
                error = f"{type(e).__name__}: {e}"
        else:
            error = self.insert()
        self.result.ops.append(Op(kind, (time.perf_counter() - started) * 1000, status, error))

    def insert(self) -> str | None:
        seq = self.seq
        self.seq += 1
        try:
            self.con.execute(f"INSERT INTO {NAMESPACE}.{self.table} VALUES ({self.number}, {seq})")
        except Exception as e:
            error = f"{type(e).__name__}: {e}"
            self.result.inserts.append(Insert(self.number, seq, self.table, False, error))
            return error
        self.result.inserts.append(Insert(self.number, seq, self.table, True))
        return None

    def raw(self, method: str, path: str) -> int:
        """One request on the kept connection (``http.client`` reconnects when the server
        closed it); its status. The body is read in full, as a client must."""
        try:
            self.http.request(method, path)
            response = self.http.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.http.close()  # a kept connection closed by the server meanwhile: once more
            self.http.request(method, path)
            response = self.http.getresponse()
        response.read()
        if response.getheader("Connection", "").lower() == "close" or response.version == 10:
            self.http.close()
        return response.status


# -- the run -----------------------------------------------------------------------------------


@dataclass
class Settings:
    clients: int = 16
    seconds: float | None = 30.0
    ops: int | None = None
    hot_clients: int = 6
    mix: dict[str, int] = field(default_factory=lambda: parse_mix(DEFAULT_MIX))
    catalog: str = "sqlite"
    #: the tables' ``commit.retry.num-retries`` (None: the default, 4 retries)
    retries: int | None = None


def setup(url: str, settings: Settings) -> list[str]:
    """The namespace and the tables: ``hot`` and one per client that does not append to it."""
    import iceduck

    tables = sorted({table_of(c, settings.hot_clients) for c in range(settings.clients)})
    with iceduck.connect(catalog_uri=url) as con:
        con.execute(f"CREATE NAMESPACE IF NOT EXISTS {NAMESPACE}")
        for name in tables:
            props = ""
            if settings.retries is not None:
                props = f" TBLPROPERTIES ('commit.retry.num-retries' = '{settings.retries}')"
            con.execute(f"CREATE TABLE {NAMESPACE}.{name} (client int, seq bigint) USING iceberg{props}")
    return tables


def run_clients(url: str, tables: list[str], settings: Settings) -> tuple[list[ClientResult], float]:
    """Every client in its own thread, released together; their results and the wall seconds."""
    clients = [Client(n, url, tables, settings.hot_clients, settings.mix) for n in range(settings.clients)]
    start = threading.Barrier(len(clients) + 1)
    stop_at: list[float | None] = [None]
    threads = [
        threading.Thread(target=c.run, args=(stop_at, settings.ops, start), name=f"client-{c.number}")
        for c in clients
    ]
    for t in threads:
        t.start()
    started = time.monotonic()
    if settings.ops is None and settings.seconds is not None:
        stop_at[0] = started + settings.seconds
    start.wait()  # the clients read stop_at once released
    for t in threads:
        t.join()
    return [c.result for c in clients], time.monotonic() - started


# -- the checks --------------------------------------------------------------------------------


def verify_table(con: Any, table: str, inserts: list[Insert]) -> tuple[list[str], dict[str, Any]]:
    """The failures found in one table (empty when it holds exactly what was acknowledged),
    and its counts."""
    name = f"{NAMESPACE}.{table}"
    rows = con.execute(f"SELECT client, seq, _file FROM {name}").fetchall()
    entries = con.execute(
        f"SELECT snapshot_id, data_file.file_path FROM {name}.entries WHERE status <> 2"
    ).fetchall()
    snapshots = con.execute(f"SELECT snapshot_id, operation, summary FROM {name}.snapshots").fetchall()
    history = con.execute(f"SELECT snapshot_id, is_current_ancestor FROM {name}.history").fetchall()
    failures: list[str] = []
    present = Counter((c, s) for c, s, _ in rows)
    by_key = {(i.client, i.seq): i for i in inserts}
    acked = [i for i in inserts if i.acknowledged]
    failures += [f"{name}: row {k} present {n} times" for k, n in present.items() if n > 1]
    failures += [f"{name}: row {k} was never inserted" for k in present if k not in by_key]
    failures += [
        f"{name}: acknowledged row {(i.client, i.seq)} is missing"
        for i in acked
        if (i.client, i.seq) not in present
    ]
    landed = [i for i in inserts if not i.acknowledged and (i.client, i.seq) in present]
    failures += [
        f"{name}: row {(i.client, i.seq)} landed although its INSERT failed: {i.error}"
        for i in landed
        if not (i.error or "").startswith("CommitStateUnknownError")  # the only failure that may have landed
    ]
    in_history = Counter(s for s, _ in history)
    failures += [f"{name}: snapshot {s} is {n} times in the history" for s, n in in_history.items() if n > 1]
    failures += [f"{name}: snapshot {s} is not a current ancestor" for s, ancestor in history if not ancestor]
    if set(in_history) != {s for s, _, _ in snapshots}:
        failures.append(f"{name}: the history and the snapshots differ")
    for s, operation, summary in snapshots:
        if operation != "append" or dict(summary).get("added-records") != "1":
            failures.append(f"{name}: snapshot {s} is not a one-row append ({operation}, {summary})")
    if len(snapshots) != len(acked) + len(landed):
        failures.append(
            f"{name}: {len(snapshots)} snapshots for {len(acked)} acknowledged INSERTs + {len(landed)} landed"
        )
    added_by = {path: s for s, path in entries}
    row_snapshots = Counter(added_by.get(path) for _, _, path in rows)
    failures += [
        f"{name}: {n} rows in snapshot {s}" for s, n in row_snapshots.items() if n > 1 and s is not None
    ]
    failures += [
        f"{name}: row {(c, s)} is in a file no snapshot of the history added"
        for c, s, path in rows
        if added_by.get(path) not in in_history
    ]
    counts = {
        "rows": len(rows),
        "acknowledged": len(acked),
        "landed_unacknowledged": len(landed),
        "snapshots": len(snapshots),
    }
    return failures, counts


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile ``q`` (0-100)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summarise(
    results: list[ClientResult], log: ServerLog, seconds: float, checks: dict[str, Any], settings: Settings
) -> dict[str, Any]:
    ops = [op for r in results for op in r.ops]
    inserts = [i for r in results for i in r.inserts]
    raw = [op for op in ops if op.status is not None]
    kinds = {}
    for kind in KINDS:
        mine = [op for op in ops if op.kind == kind]
        if not mine:
            continue
        ms = [op.ms for op in mine]
        kinds[kind] = {
            "count": len(mine),
            "per_second": len(mine) / seconds,
            "p50_ms": percentile(ms, 50),
            "p99_ms": percentile(ms, 99),
            "errors": sum(op.error is not None for op in mine),
        }
    server_status = Counter(f"{m} {status}" for m, _, status in log.requests)
    gave_up = [i for i in inserts if not i.acknowledged and (i.error or "").startswith("CommitConflictError")]
    return {
        "settings": {**settings.__dict__},
        "machine": machine(),
        "load_average_after": load_average(),
        "seconds": seconds,
        "server_requests": len(log.requests),
        "server_requests_per_second": len(log.requests) / seconds,
        "raw_requests_per_second": len(raw) / seconds,
        "commits_acknowledged": sum(i.acknowledged for i in inserts),
        "commits_per_second": sum(i.acknowledged for i in inserts) / seconds,
        "commits_on_hot_table": sum(i.acknowledged for i in inserts if i.table == HOT),
        "conflicts_retried": sum(r.conflicts for r in results),
        "server_409": sum(1 for _, _, s in log.requests if s == 409),
        "commits_given_up": len(gave_up),
        "server_5xx": sum(1 for _, _, s in log.requests if s >= 500),
        "raw_5xx": sum(1 for op in raw if op.status is not None and op.status >= 500),
        "server_status": dict(sorted(server_status.items())),
        "raw_status": dict(sorted(Counter(f"{op.kind} {op.status}" for op in raw).items())),
        "kinds": kinds,
        "unacknowledged": [
            {"client": i.client, "seq": i.seq, "table": i.table, "error": (i.error or "")[:300]}
            for i in inserts
            if not i.acknowledged
        ],
        "checks": checks,
    }


def verify(url: str, tables: list[str], results: list[ClientResult]) -> dict[str, Any]:
    """The checks of the clients' errors and of the tables; ``failures`` lists what did not
    hold (the server's log is checked by :func:`log_failures` once the server has stopped)."""
    import iceduck

    inserts = [i for r in results for i in r.inserts]
    failures = [f"client {n} stopped: {r.crashed}" for n, r in enumerate(results) if r.crashed]
    errors = [op for r in results for op in r.ops if op.error is not None]
    failures += [
        f"{op.kind} failed: {op.error}"
        for op in errors
        if not (op.kind == "commit" and op.error.startswith("CommitConflictError"))
    ][:20]
    tables_out = {}
    with iceduck.connect(catalog_uri=url) as con:
        for table in tables:
            found, counts = verify_table(con, table, [i for i in inserts if i.table == table])
            failures += found
            tables_out[table] = counts
    return {"failures": failures, "tables": tables_out}


def log_failures(log: ServerLog) -> list[str]:
    """Every 5xx the server answered anyone (set-up and checks included) and anything else it
    wrote on stderr (the traceback of a failed request)."""
    failures = [f"server answered {m} {p} with {s}" for m, p, s in log.requests if s >= 500][:20]
    return failures + [f"server wrote: {line}" for line in log.other][:20]


def mark(url: str, what: str) -> None:
    """A request the access log shows (``GET /v1/config?serve_load=<what>``): where the run
    starts and ends among the server's lines."""
    with urllib.request.urlopen(f"{url}/v1/config?serve_load={what}", timeout=60) as response:
        response.read()


def between_marks(log: ServerLog) -> ServerLog:
    """The requests between the start and end marks: the clients' alone."""
    paths = [path for _, path, _ in log.requests]
    first = paths.index("/v1/config?serve_load=start") + 1
    return ServerLog(log.requests[first : paths.index("/v1/config?serve_load=end")], log.other)


def run(settings: Settings, root: Path) -> dict[str, Any]:
    """Start the catalog and the server under ``root``, run the clients, check; the summary.
    The server's log is read once it has stopped, so that its last lines are in."""
    with ExitStack() as stack:
        catalog_uri = stack.enter_context(postgres_catalog()) if settings.catalog == "postgres" else None
        url, log = stack.enter_context(served(root / "wh", catalog_uri))
        tables = setup(url, settings)
        mark(url, "start")
        results, seconds = run_clients(url, tables, settings)
        mark(url, "end")
        checks = verify(url, tables, results)
    checks["failures"] = log_failures(log) + checks["failures"]
    return summarise(results, between_marks(log), seconds, checks, settings)


# -- the report --------------------------------------------------------------------------------


def report_lines(out: dict[str, Any]) -> list[str]:
    s = out["settings"]
    length = f"{s['ops']} operations per client" if s["ops"] is not None else f"{s['seconds']:g} s"
    lines = [
        f"== serve_load: {s['clients']} clients ({min(s['hot_clients'], s['clients'])} appending to one "
        f"hot table) against "
        f"iceduck serve ({s['catalog']} catalog) on loopback, {length}; mix {s['mix']}; "
        f"commit.retry.num-retries {s['retries'] if s['retries'] is not None else 'default (4)'}",
        f"{out['machine']}; load average after {out['load_average_after']}",
    ]
    rows = []
    for kind, k in out["kinds"].items():
        rows.append(
            [
                kind,
                k["count"],
                f"{k['per_second']:.1f}",
                f"{k['p50_ms']:.1f}",
                f"{k['p99_ms']:.1f}",
                k["errors"],
            ]
        )
    lines += table_lines(["operation", "count", "per s", "p50 ms", "p99 ms", "errors"], rows)
    lines += [
        f"server: {out['server_requests']} requests in {out['seconds']:.1f} s = "
        f"{out['server_requests_per_second']:.1f}/s "
        f"(raw HTTP clients {out['raw_requests_per_second']:.1f}/s); statuses {out['server_status']}",
        f"commits acknowledged: {out['commits_acknowledged']} ({out['commits_per_second']:.1f}/s; "
        f"{out['commits_on_hot_table']} on the hot table); conflicts retried: {out['conflicts_retried']} "
        f"(server 409s: {out['server_409']}); given up after commit.retry.num-retries: "
        f"{out['commits_given_up']}",
        f"5xx: server {out['server_5xx']}, raw clients {out['raw_5xx']}",
    ]
    for table, c in out["checks"]["tables"].items():
        if c["landed_unacknowledged"]:
            lines.append(f"{table}: {c['landed_unacknowledged']} unacknowledged INSERTs landed")
    failures = out["checks"]["failures"]
    lines.append(
        "checks: every acknowledged row once, every snapshot once in the history, no 5xx: "
        + ("passed" if not failures else f"FAILED ({len(failures)})")
    )
    lines += [f"  FAILED: {f}" for f in failures[:50]]
    return lines


def run_section(settings: Settings, root: Path) -> Section:
    """The benchmark as a section of ``run.py`` (``--only serve_load``): its lines, and every
    failed check as a mismatch. The warehouse is made afresh under ``root`` (it measures writing)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    out = run(settings, root)
    sec = Section("serve_load", lines=report_lines(out), data=out)
    sec.mismatches += [f"serve_load: {f}" for f in out["checks"]["failures"]]
    return sec


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=30.0, help="how long the clients run (default 30)")
    p.add_argument("--ops", type=int, help="operations per client instead of --seconds")
    p.add_argument(
        "--hot-clients", type=int, default=6, help="clients appending to the one hot table (default 6)"
    )
    p.add_argument(
        "--mix", type=parse_mix, default=parse_mix(DEFAULT_MIX), help=f"weights (default {DEFAULT_MIX})"
    )
    p.add_argument("--catalog", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--retries", type=int, help="the tables' commit.retry.num-retries (default: Iceberg's, 4)")
    p.add_argument("--root", type=Path, help="where the warehouse goes (default: a fresh temporary folder)")
    p.add_argument("--json", type=Path, help="also write the results as JSON here")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings(
        args.clients, args.seconds, args.ops, args.hot_clients, args.mix, args.catalog, args.retries
    )
    root = args.root or Path(tempfile.mkdtemp(prefix="serve-load-"))
    try:
        out = run(settings, root)
    finally:
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)
    print("\n".join(report_lines(out)))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 1 if out["checks"]["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
