"""Two writers at once, and a handshake that makes a conflict certain rather than likely.

:func:`together` starts jobs in threads at the same instant. A DELETE is *held* while it
reads the rows it deletes -- after it pinned its snapshot, before it commits -- until the
other writer's INSERT has committed (:func:`hold`): Spark's by a UDF in its condition
(:func:`held_udf`, run in a Python worker, so the gate is files), iceduck's by a subquery on
an Arrow stream (:func:`held_groups`). The INSERT waits for ``<gate>/reading`` and touches
``<gate>/inserted`` when it has committed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa


def together(*jobs: Callable[[], None]) -> list[BaseException | None]:
    """Run the jobs in threads started at once; each one's exception, or None."""
    errors: list[BaseException | None] = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))

    def run(i: int) -> None:
        barrier.wait()
        try:
            jobs[i]()
        except BaseException as e:  # reported to the test, which judges it
            errors[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    return errors


def wait_for(path: Path, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def hold(gate: Path) -> None:
    """The DELETE's side of the gate, called while it reads the rows to delete (after its
    snapshot is pinned): say so, then wait until the INSERT has committed."""
    (gate / "reading").touch()
    wait_for(gate / "inserted")


def held_udf(gate: str) -> Callable[[object], bool]:
    """A Spark UDF (run in a Python worker: the gate is files) that holds the DELETE."""

    def held(value: object) -> bool:
        hold(Path(gate))
        return True

    return held


def held_groups(gate: Path, group: int) -> pa.RecordBatchReader:
    """An Arrow stream for iceduck's DELETE subquery that holds the DELETE while read."""

    def batches() -> Iterator[pa.RecordBatch]:
        hold(gate)
        yield pa.record_batch([pa.array([group], pa.int32())], names=["g"])

    return pa.RecordBatchReader.from_batches(pa.schema([("g", pa.int32())]), batches())
