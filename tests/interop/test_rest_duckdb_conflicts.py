"""Conflicting commits on one table from DuckDB (through ``iceduck serve``), iceduck and PyIceberg.

DuckDB 1.5.5 commits with ``POST /v1/transactions/commit`` asserting the table's uuid and
``assert-ref-snapshot-id`` of ``main``; a commit built on a snapshot that is no longer
current gets the spec's 409 ``CommitFailedException`` and DuckDB reports it as an error
(it does not retry by itself), so the test retries the statement. iceduck (on the served
warehouse's catalog, and through its own REST client) and PyIceberg (through the server)
retry on their own and raise a conflict error only when their retries run out; the tests
retry those too.

What must hold: every batch lands exactly once (a failed attempt leaves nothing), the
snapshot log is one linear chain whose every snapshot adds one batch, and the writers'
commits interleave: none is lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import iceduck
from iceduck.errors import CommitConflictError
from iceduck.serve.server import CatalogServer
from tests.interop.test_rest_duckdb import iceduck_values, table_metadata
from tests.support.rest_duckdb import (
    CONFLICT,
    DuckRest,
    Step,
    duckdb_rest_unavailable,
    fresh_warehouse,
    served,
)

UNAVAILABLE = duckdb_rest_unavailable()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")

ROWS_PER_BATCH = 3
DUCK_ROUNDS = 20
#: DuckDB's tries of one batch: the other writers commit every few milliseconds
DUCK_ATTEMPTS = 50
#: DuckDB's pause between batches: it retries at once where iceduck and PyIceberg back off
#: (100 ms, then doubling), so unpaced it would win every race until it is done
DUCK_PAUSE_MS = 100
#: iceduck's and PyIceberg's pause between batches (a shared machine: a few hundred
#: snapshots would only slow the checks)
WRITER_PAUSE_S = 0.03


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    folder = fresh_warehouse(tmp_path)
    with iceduck.connect(folder) as con:
        con.execute("CREATE NAMESPACE c")
        con.execute("CREATE TABLE c.t (writer STRING, batch INT, k INT) USING iceberg")
    return folder


@pytest.fixture
def server(warehouse: Path) -> Iterator[CatalogServer]:
    with served(warehouse) as server:
        yield server


def batch_sql(table: str, writer: str, batch: int) -> str:
    return f"INSERT INTO {table} SELECT '{writer}', {batch}, k::INTEGER FROM range({ROWS_PER_BATCH}) r(k)"


def test_a_stale_duckdb_commit_fails_with_a_conflict_and_its_retry_lands(
    server: CatalogServer, warehouse: Path, tmp_path: Path
) -> None:
    """DuckDB inserts in a transaction; iceduck commits before DuckDB's COMMIT, which the
    server refuses with 409: nothing of DuckDB's batch is in the table until its retry."""
    gate = str(tmp_path / "gate")
    running = DuckRest(server.url).start(
        [
            Step("BEGIN"),
            Step(batch_sql("r.c.t", "duck", 0)),
            Step("COMMIT", wait_file=gate),
            Step("SELECT count(*) FROM r.c.t WHERE writer = 'duck'"),
            Step(batch_sql("r.c.t", "duck", 0)),
        ]
    )
    deadline = time.monotonic() + 120
    while not Path(gate + ".ready").exists():
        assert not running.done() and time.monotonic() < deadline, "DuckDB never reached its COMMIT"
        time.sleep(0.01)
    with iceduck.connect(warehouse) as con:
        con.execute(batch_sql("c.t", "iceduck", 0))
    Path(gate).touch()
    _, insert, commit, count, retry = running.wait()
    assert insert.rowcount == ROWS_PER_BATCH
    assert commit.error is not None and CONFLICT in commit.error and "409" in commit.error
    assert count.check("count").rowcount == 0  # the failed commit left nothing
    assert retry.check("retry").rowcount == ROWS_PER_BATCH
    assert iceduck_values(warehouse, "SELECT writer, count(*) FROM c.t GROUP BY 1 ORDER BY 1") == [
        ("duck", ROWS_PER_BATCH),
        ("iceduck", ROWS_PER_BATCH),
    ]
    assert len(table_metadata(warehouse, "c.t").snapshots) == 2


class Writer(threading.Thread):
    """Appends batches ``0, 1, ...`` until ``stop`` is set (and at least ``least`` of them);
    a batch whose commit fails with a conflict is retried with the same number."""

    def __init__(
        self, name: str, append: Callable[[int], None], conflict: type[Exception], stop: threading.Event
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.append = append
        self.conflict = conflict
        self.stop = stop
        self.landed: list[int] = []
        self.conflicts = 0
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            batch = 0
            while not self.stop.is_set() or batch < 3:
                try:
                    self.append(batch)
                except self.conflict:
                    self.conflicts += 1
                    continue
                self.landed.append(batch)
                batch += 1
                time.sleep(WRITER_PAUSE_S)
        except BaseException as e:  # reported by the test
            self.failure = e


def test_duckdb_iceduck_and_pyiceberg_append_at_once_and_no_commit_is_lost(
    server: CatalogServer, warehouse: Path
) -> None:
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import CommitFailedException

    stop = threading.Event()
    con = iceduck.connect(warehouse)
    rest_con = iceduck.connect(catalog_uri=server.url)
    py_table = RestCatalog("py", uri=server.url).load_table("c.t")

    def iceduck_append(batch: int) -> None:
        con.execute(batch_sql("c.t", "iceduck", batch))

    def iceduck_rest_append(batch: int) -> None:
        rest_con.execute(batch_sql("c.t", "rest", batch))

    def pyiceberg_append(batch: int) -> None:
        py_table.append(
            pa.table(
                {
                    "writer": pa.array(["pyiceberg"] * ROWS_PER_BATCH, pa.string()),
                    "batch": pa.array([batch] * ROWS_PER_BATCH, pa.int32()),
                    "k": pa.array(range(ROWS_PER_BATCH), pa.int32()),
                }
            )
        )

    writers = [
        Writer("iceduck", iceduck_append, CommitConflictError, stop),
        Writer("rest", iceduck_rest_append, CommitConflictError, stop),
        Writer("pyiceberg", pyiceberg_append, CommitFailedException, stop),
    ]
    for w in writers:
        w.start()
    deadline = time.monotonic() + 120
    while not all(w.landed or w.failure for w in writers):  # warmed up: they commit as DuckDB does
        assert time.monotonic() < deadline, "the writers landed nothing in 120 s"
        time.sleep(0.01)
    duck = DuckRest(server.url).start(
        [
            Step(
                batch_sql("r.c.t", "duck", b),
                attempts=DUCK_ATTEMPTS,
                retry_on=CONFLICT,
                pause_ms=DUCK_PAUSE_MS,
            )
            for b in range(DUCK_ROUNDS)
        ]
    )
    try:
        outcomes = duck.wait()
        # one more batch each after DuckDB's last: the log must show them on both sides
        after = [len(w.landed) for w in writers]
        while any(len(w.landed) == n and w.failure is None for w, n in zip(writers, after, strict=True)):
            assert time.monotonic() < deadline + 300, "the writers stopped landing batches"
            time.sleep(0.01)
    finally:
        stop.set()
        for w in writers:
            w.join(timeout=120)
        con.close()
        rest_con.close()
    for w in writers:
        assert w.failure is None, f"{w.name} failed: {w.failure!r}"

    for b, outcome in enumerate(outcomes):
        assert outcome.check(f"duck batch {b}").rowcount == ROWS_PER_BATCH
        assert all(CONFLICT in e for e in outcome.errors), outcome.errors
    landed: dict[str, list[int]] = {"duck": list(range(DUCK_ROUNDS))}
    landed.update({w.name: w.landed for w in writers})

    # every batch exactly once, nothing else
    expected = sorted((writer, b, ROWS_PER_BATCH) for writer, batches in landed.items() for b in batches)
    got = iceduck_values(warehouse, "SELECT writer, batch, count(*) FROM c.t GROUP BY 1, 2 ORDER BY 1, 2")
    assert got == expected

    # one linear chain, one batch per snapshot, the writers interleaved
    order = snapshot_writers(warehouse)
    assert len(order) == len(expected)
    duck_at = [i for i, writer in enumerate(order) if writer == "duck"]
    others = {w.name for w in writers}
    assert others <= set(order[: duck_at[0]]), order
    assert others <= set(order[duck_at[-1] :]), order
    assert set(order[duck_at[0] : duck_at[-1]]) != {"duck"}, order
    retried = sum(len(o.errors) for o in outcomes) + sum(w.conflicts for w in writers)
    print(f"commits in order: {''.join(w[0] for w in order)}; failed attempts retried: {retried}")


def snapshot_writers(warehouse: Path) -> list[str]:
    """The writer of each snapshot, oldest first, checking the chain: every snapshot's parent
    is the one before it, its sequence number one more, and it adds exactly one batch."""
    metadata = table_metadata(warehouse, "c.t")
    snapshots = sorted(metadata.snapshots, key=lambda s: s.sequence_number)
    seen: set[tuple[Any, ...]] = set()
    writers = []
    with iceduck.connect(warehouse) as con:
        for i, snapshot in enumerate(snapshots):
            assert snapshot.sequence_number == i + 1
            assert snapshot.parent_snapshot_id == (snapshots[i - 1].snapshot_id if i else None)
            assert snapshot.summary.get("added-records") == str(ROWS_PER_BATCH)
            batches = set(
                con.execute(
                    f"SELECT DISTINCT writer, batch FROM c.t VERSION AS OF {snapshot.snapshot_id}"
                ).fetchall()
            )
            (added,) = batches - seen
            seen = batches
            writers.append(added[0])
    assert metadata.current_snapshot_id == snapshots[-1].snapshot_id
    return writers
