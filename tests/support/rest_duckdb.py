"""DuckDB's own Iceberg REST client (DuckDB 1.5.5's ``iceberg`` extension) against a server.

The extension only loads into DuckDB 1.5.5, which lives in ``bench/.venv``; each
:meth:`DuckRest.run` is one subprocess there (:mod:`tests.support.duckdb_rest_peer`) that
attaches the catalog and runs the steps in order on one connection, as a user's session
would. Query results come back as Parquet files read with pyarrow, so values keep their
types (decimals, timestamps with their zone) for :func:`~tests.support.scenario_rows.arrow_rows`.

The ATTACH is the one the extension documents for a REST catalog:
``ATTACH '<warehouse>' AS r (TYPE iceberg, ENDPOINT '<url>', AUTHORIZATION_TYPE 'none')``,
or with a ``CREATE SECRET (TYPE iceberg, ...)`` and ``SECRET`` in place of
``AUTHORIZATION_TYPE 'none'``.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from iceduck.serve.server import CatalogServer
from tests.serve.conftest import start_server
from tests.support.lake_peers import duckdb_httpfs_unavailable
from tests.support.scenario_peers import PEER_PYTHON, PeerError
from tests.support.scenario_rows import Rows, arrow_rows

PEER_SCRIPT = Path(__file__).with_name("duckdb_rest_peer.py")
#: DuckDB's message when the server answers a commit with 409 (the spec's CommitFailedException)
CONFLICT = "CommitFailedException"
TIMEOUT_S = 300


def duckdb_rest_unavailable() -> str | None:
    """Why DuckDB's REST client cannot run here (bench/.venv, iceberg, avro or httpfs
    missing: the REST client speaks HTTP through httpfs), or None."""
    return duckdb_httpfs_unavailable()


def fresh_warehouse(tmp_path: Path) -> Path:
    folder = tmp_path / "warehouse"
    folder.mkdir()
    return folder


@contextmanager
def served(
    warehouse: Path, token: str | None = None, prefix: str | None = None, **options: Any
) -> Iterator[CatalogServer]:
    """``iceduck serve`` of ``warehouse`` in a thread on a free loopback port while in use;
    ``options`` are further :class:`~iceduck.serve.context.ServeContext` fields (``auth``)."""
    server = start_server(warehouse, token=token, prefix=prefix, **options)
    try:
        yield server
    finally:
        server.stop()


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Step:
    sql: str
    #: copy the query's rows to a Parquet file and return them
    query: bool = False
    #: tries of a statement failing with a message containing ``retry_on``
    attempts: int = 1
    retry_on: str | None = None
    #: extra timed runs (milliseconds in :attr:`Outcome.ms`)
    repeat: int = 0
    #: before the step, create ``<wait_file>.ready`` and wait until ``wait_file`` exists
    wait_file: str | None = None
    #: sleep before the step (milliseconds)
    pause_ms: int = 0

    def job(self, out: str | None) -> dict[str, Any]:
        return {
            "sql": self.sql,
            "out": out,
            "attempts": self.attempts,
            "retry_on": self.retry_on,
            "repeat": self.repeat,
            "wait_file": self.wait_file,
            "pause_ms": self.pause_ms,
        }


@dataclass
class Outcome:
    rowcount: int | None
    error: str | None
    errors: list[str]
    ms: list[float] = field(default_factory=list)
    rows: Any = None  # a pyarrow.Table for a query

    def check(self, sql: str) -> Outcome:
        if self.error is not None:
            raise PeerError(f"DuckDB failed on {sql!r}: {self.error}")
        return self


@dataclass
class DuckRest:
    """DuckDB attached as ``r`` to the REST catalog at ``endpoint``."""

    endpoint: str
    warehouse: str = ""
    #: statements run before the ATTACH (a ``CREATE SECRET (TYPE iceberg, ...)``)
    setup: Sequence[str] = ()
    #: the ATTACH options after TYPE and ENDPOINT
    options: str = "AUTHORIZATION_TYPE 'none'"

    def attach_sql(self) -> str:
        return (
            f"ATTACH {quote(self.warehouse)} AS r "
            f"(TYPE iceberg, ENDPOINT {quote(self.endpoint)}, {self.options})"
        )

    def run(self, steps: Sequence[Step]) -> list[Outcome]:
        """Run ``steps`` in one DuckDB session; a failed ATTACH raises :class:`PeerError`."""
        return self.start(steps).wait()

    def start(self, steps: Sequence[Step]) -> Running:
        """Start ``steps`` in a DuckDB session and return at once (a concurrent writer)."""
        tmp = tempfile.TemporaryDirectory(prefix="iceduck-duckrest-")
        outs = [str(Path(tmp.name) / f"q{i}.parquet") if s.query else None for i, s in enumerate(steps)]
        job = {
            "setup": list(self.setup),
            "attach": self.attach_sql(),
            "steps": [s.job(o) for s, o in zip(steps, outs, strict=True)],
        }
        job_file = Path(tmp.name) / "job.json"
        job_file.write_text(json.dumps(job))
        process = subprocess.Popen(
            [str(PEER_PYTHON), str(PEER_SCRIPT), str(job_file)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return Running(self.endpoint, process, tmp, outs)

    def execute(self, *sqls: str) -> list[int | None]:
        """Run statements in one session, each must succeed; their row counts."""
        outcomes = self.run([Step(s) for s in sqls])
        return [o.check(s).rowcount for o, s in zip(outcomes, sqls, strict=True)]

    def rows(self, sql: str) -> Rows:
        """The normalised rows of one query (:func:`arrow_rows`)."""
        (outcome,) = self.run([Step(sql, query=True)])
        return arrow_rows(outcome.check(sql).rows)

    def queries(self, *sqls: str) -> list[Rows]:
        """Several queries in one session."""
        outcomes = self.run([Step(s, query=True) for s in sqls])
        return [arrow_rows(o.check(s).rows) for o, s in zip(outcomes, sqls, strict=True)]


@dataclass
class Running:
    """A DuckDB session started by :meth:`DuckRest.start`."""

    endpoint: str
    process: subprocess.Popen[str]
    tmp: tempfile.TemporaryDirectory[str]
    outs: list[str | None]

    def done(self) -> bool:
        return self.process.poll() is not None

    def wait(self) -> list[Outcome]:
        """The outcome of every step once the session ends (:class:`PeerError` if it crashed)."""
        try:
            stdout, stderr = self.process.communicate(timeout=TIMEOUT_S)
            if self.process.returncode != 0:
                tail = stderr.strip().splitlines()[-1:] or [str(self.process.returncode)]
                raise PeerError(f"DuckDB's REST session crashed: {tail[0]}")
            answer = json.loads(stdout)
            if "error" in answer:
                raise PeerError(f"DuckDB could not attach {self.endpoint}: {answer['error']}")
            outcomes = []
            for raw, out in zip(answer["steps"], self.outs, strict=True):
                outcome = Outcome(raw["rowcount"], raw["error"], raw["errors"], raw["ms"])
                if out is not None and outcome.error is None:
                    outcome.rows = pq.read_table(out)
                outcomes.append(outcome)
            return outcomes
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.tmp.cleanup()
