"""Spark and iceduck appending to one table at the same moment, for the tests that check a
catalog's compare-and-swap keeps every batch (PostgreSQL, S3, ...).

Spark appends ``spark_batches`` rows from a thread while iceduck keeps appending on this one
until both have done at least their share, so the two really overlap; the returned count of
iceduck's batches tells the test what the table must hold.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: the ids of Spark's rows in the race: above any iceduck writes
SPARK_IDS = 1_000_000


def race(
    spark_insert: Callable[[int], None],
    iceduck_insert: Callable[[int], None],
    spark_batches: int,
    iceduck_batches: int,
) -> int:
    """Run the race; the number of iceduck's batches (ids ``0..n-1``; Spark's are
    ``SPARK_IDS + 0..spark_batches-1``). Raises what the Spark thread raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def spark_writer() -> None:
        try:
            start.wait()
            for batch in range(spark_batches):
                spark_insert(SPARK_IDS + batch)
        except BaseException as e:  # re-raised below, on the test's thread
            errors.append(e)

    thread = threading.Thread(target=spark_writer)
    thread.start()
    start.wait()
    done = 0
    while done < iceduck_batches or thread.is_alive():
        iceduck_insert(done)
        done += 1
        time.sleep(0.05)  # a steady stream, not thousands of snapshots while Spark starts up
    thread.join(600)
    if errors:
        raise errors[0]
    return done
