"""What each writer was told about each commit, and the check that the table agrees.

The fault tests run writers that append small batches through ``iceduck serve`` while a
fault is injected. Every batch carries a unique id in its ``batch`` column and ``ROWS``
rows numbered in ``n``; the :class:`Ledger` records, for every batch, what its writer was
told:

* ``acked``: the INSERT returned -- the commit must be in the table, exactly once;
* ``unknown``: :class:`~iceduck.errors.CommitStateUnknownError` (no answer, or the server
  could not tell) -- the batch is wholly there once or wholly absent;
* ``refused``: any other error, which certifies the commit did not land
  (:func:`~iceduck.catalog.commit_outcome.certainly_not_committed`) -- the batch is absent.

:func:`check_table` then compares the table, read through a live server, with the ledger,
and the catalog's answer with the table's own metadata file (one history, no snapshot
twice).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import iceduck
from iceduck.errors import CommitStateUnknownError
from tests.support.rest import RestClient

ACKED, UNKNOWN, REFUSED = "acked", "unknown", "refused"
ROWS = 3
#: how long a test waits for writers to reach a count of acknowledged commits
WAIT_S = 60
SCHEMA = "(batch VARCHAR, n INTEGER)"


@dataclass(frozen=True)
class Attempt:
    table: str
    batch: str
    outcome: str
    error: str = ""


class Ledger:
    """Every attempted batch and what its writer was told; :meth:`wait_for_acked` lets a
    test act when a number of commits has been acknowledged."""

    def __init__(self) -> None:
        self.attempts: list[Attempt] = []
        self._changed = threading.Condition()

    def record(self, attempt: Attempt) -> None:
        with self._changed:
            self.attempts.append(attempt)
            self._changed.notify_all()

    def acked(self) -> int:
        with self._changed:
            return sum(a.outcome == ACKED for a in self.attempts)

    def wait_for_acked(self, count: int) -> None:
        """Block until ``count`` commits in all have been acknowledged (AssertionError after
        :data:`WAIT_S`, naming what the writers were told)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self.acked() >= count, WAIT_S):
                raise AssertionError(f"{count} commits were not acknowledged: {self.outcomes()}")

    def outcomes(self) -> Counter[str]:
        with self._changed:
            return Counter(a.outcome for a in self.attempts)


def write_batches(
    url: str, table: str, ledger: Ledger, stop: threading.Event, give_up: threading.Event
) -> None:
    """Append batches to ``table`` through the REST catalog at ``url`` until ``stop`` is set,
    recording each outcome; after ``give_up`` is set (the server was killed), the first
    error ends the writer too."""
    con = iceduck.connect(catalog_uri=url)
    try:
        while not stop.is_set():
            batch = uuid.uuid4().hex
            try:
                con.execute(f"INSERT INTO {table} SELECT '{batch}', range FROM range({ROWS})")
            except CommitStateUnknownError as e:
                ledger.record(Attempt(table, batch, UNKNOWN, str(e)))
            except Exception as e:  # any other error must mean: nothing landed
                ledger.record(Attempt(table, batch, REFUSED, f"{type(e).__name__}: {e}"))
            else:
                ledger.record(Attempt(table, batch, ACKED))
                continue
            if give_up.is_set():
                return
    finally:
        con.close()


class Writers:
    """Writer threads; :meth:`finish` stops them and re-raises what one of them raised."""

    def __init__(self, url: str, tables: list[str], per_table: int, ledger: Ledger) -> None:
        self.stop, self.give_up = threading.Event(), threading.Event()
        self.failures: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._run, args=(url, table, ledger), daemon=True)
            for table in tables
            for _ in range(per_table)
        ]
        for thread in self.threads:
            thread.start()

    def _run(self, url: str, table: str, ledger: Ledger) -> None:
        try:
            write_batches(url, table, ledger, self.stop, self.give_up)
        except BaseException as e:  # reported by finish(), not lost in a thread
            self.failures.append(e)

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(WAIT_S)
        assert not any(t.is_alive() for t in self.threads), "a writer did not end"
        if self.failures:
            raise self.failures[0]


def create_tables(url: str, namespace: str, names: list[str]) -> list[str]:
    """``namespace.name`` for each of ``names``, created through the server at ``url``."""
    con = iceduck.connect(catalog_uri=url)
    try:
        con.execute(f"CREATE NAMESPACE {namespace}")
        for name in names:
            con.execute(f"CREATE TABLE {namespace}.{name} {SCHEMA}")
    finally:
        con.close()
    return [f"{namespace}.{name}" for name in names]


def _local(location: str) -> Path:
    return Path(urlsplit(location).path if location.startswith("file:") else location)


def check_history(url: str, table: str) -> dict[str, Any]:
    """The table's metadata as the server at ``url`` loads it, after checking it against the
    metadata file the catalog points at: the same snapshots and log, no snapshot twice, and
    each snapshot's parent the one logged before it (appends on ``main`` only)."""
    namespace, name = table.split(".")
    reply = RestClient(url).get(f"/v1/namespaces/{namespace}/tables/{name}")
    assert reply.status == 200, reply.body
    metadata = reply.body["metadata"]
    on_disk = json.loads(_local(reply.body["metadata-location"]).read_text())
    for key in ("snapshots", "snapshot-log", "current-snapshot-id", "last-sequence-number"):
        assert on_disk.get(key) == metadata.get(key), key
    ids = [s["snapshot-id"] for s in metadata.get("snapshots", [])]
    logged = [entry["snapshot-id"] for entry in metadata.get("snapshot-log", [])]
    assert len(set(ids)) == len(ids) and len(set(logged)) == len(logged), "a snapshot twice"
    assert logged == ids, "the log and the snapshots disagree"
    parents = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in metadata.get("snapshots", [])}
    assert [parents[i] for i in ids] == [None, *ids][: len(ids)], "the history is not one line"
    return dict(metadata)


def check_table(url: str, table: str, ledger: Ledger) -> Counter[str]:
    """Compare ``table`` with what its writers were told (module docstring); the count of
    each kind of outcome, unknown ones split into ``unknown-landed`` and ``unknown-absent``."""
    metadata = check_history(url, table)
    con = iceduck.connect(catalog_uri=url)
    try:
        found = {
            batch: (rows, numbers)
            for batch, rows, numbers in con.execute(
                f"SELECT batch, count(*), count(DISTINCT n) FROM {table} GROUP BY batch"
            ).fetchall()
        }
        (snapshots,) = con.execute(f"SELECT count(*) FROM {table}.snapshots").fetchall()[0]
    finally:
        con.close()
    assert snapshots == len(metadata.get("snapshots", []))
    counts: Counter[str] = Counter()
    told = {a.batch: a for a in ledger.attempts if a.table == table}
    assert set(found) <= set(told), f"batches nobody wrote: {set(found) - set(told)}"
    for batch, attempt in told.items():
        rows, numbers = found.get(batch, (0, 0))
        assert rows in (0, ROWS) and numbers == rows, f"batch {batch} ({attempt}) has {rows} rows"
        if attempt.outcome == ACKED:
            assert rows == ROWS, f"acknowledged batch {batch} was lost"
            counts[ACKED] += 1
        elif attempt.outcome == REFUSED:
            assert rows == 0, f"batch {batch} landed although its writer was told: {attempt.error}"
            counts[REFUSED] += 1
        else:
            counts["unknown-landed" if rows else "unknown-absent"] += 1
    assert len(metadata.get("snapshots", [])) == sum(1 for rows, _ in found.values() if rows)
    return counts
