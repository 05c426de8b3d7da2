"""Spark (through ``iceduck serve``) and iceduck (on the served ``catalog.db``) committing
to one table at the same time, many rounds: no commit is ever lost.

* Appends race: every batch lands exactly once. Spark's ``RESTCatalog`` retries when the
  server answers 409 (a failed ``assert-ref-snapshot-id``); iceduck retries when its
  compare-and-swap on the catalog row fails; both re-apply their append on fresh metadata
  (``commit.retry.num-retries`` is raised so neither runs out). The snapshot log must show
  the writers really interleaved.
* A serializable DELETE against INSERTs into the partition it deletes from, in both
  directions: every round ends in a state some serial order of the successful commits
  explains, a write that fails does so cleanly (Iceberg's validation error, iceduck's
  :class:`~iceduck.errors.CommitConflictError`), and each successful write is in the log.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import CommitConflictError
from tests.support.rest_race import held_groups, held_udf, together, wait_for
from tests.support.rest_spark import REST, Served, iceduck_rows, served, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "cc"
RETRIES = "'commit.retry.num-retries' = '30', 'commit.retry.min-wait-ms' = '20'"


@pytest.fixture(scope="module")
def lake(spark: SparkSession) -> Iterator[tuple[SparkSession, Served, Connection]]:
    rest = served(spark)
    spark.sql(f"CREATE NAMESPACE {REST}.{NS}")
    con = rest.connect()
    yield spark, rest, con
    con.close()
    assert rest.log.server_errors() == []


def _writers(rest: Served, table: str) -> list[str]:
    """Who committed each snapshot, in commit (sequence number) order."""
    catalog = rest.catalog()
    metadata = catalog.load_table(TableIdentifier((NS,), table)).metadata
    catalog.close()
    ordered = sorted(metadata.snapshots, key=lambda s: s.sequence_number)
    return ["spark" if "spark.app.id" in s.summary else "iceduck" for s in ordered]


def test_concurrent_appends_each_land_exactly_once(lake: tuple[SparkSession, Served, Connection]) -> None:
    spark, rest, con = lake
    spark.sql(
        f"CREATE TABLE {REST}.{NS}.appends (id bigint, writer string) USING iceberg "
        f"TBLPROPERTIES ('format-version' = '2', {RETRIES})"
    )
    spark_batches, spark_done, done_batches = 8, threading.Event(), [0]

    def spark_job() -> None:
        try:
            for b in range(spark_batches):
                spark.sql(f"INSERT INTO {REST}.{NS}.appends SELECT 1000 * {b} + id, 'spark' FROM range(3)")
        finally:
            spark_done.set()

    def iceduck_job() -> None:  # as long as Spark writes, so that the two overlap
        b = 0
        while not spark_done.is_set() or b < 8:
            con.execute(f"INSERT INTO {NS}.appends SELECT -(1000 * {b} + i), 'iceduck' FROM range(2) r(i)")
            b += 1
            time.sleep(random.uniform(0.02, 0.2))
        done_batches[0] = b

    assert together(spark_job, iceduck_job) == [None, None]
    iceduck_batches = done_batches[0]
    expected = sorted(
        [(1000 * b + i, "spark") for b in range(spark_batches) for i in range(3)]
        + [(-(1000 * b + i), "iceduck") for b in range(iceduck_batches) for i in range(2)]
    )
    assert sorted(con.execute(f"SELECT id, writer FROM {NS}.appends").fetchall()) == expected
    assert iceduck_rows(con, f"SELECT * FROM {NS}.appends") == spark_rows(
        spark, f"SELECT * FROM {REST}.{NS}.appends"
    )
    writers = _writers(rest, "appends")
    assert writers.count("spark") == spark_batches and writers.count("iceduck") == iceduck_batches
    switches = sum(1 for a, b in itertools.pairwise(writers) if a != b)
    assert switches >= 2, f"the commits did not interleave: {writers}"


def _history(con: Connection, table: str) -> list[set[tuple[Any, ...]]]:
    """The table's rows at each snapshot, in commit order (time travel by iceduck)."""
    ids = [
        r[0]
        for r in con.execute(
            f"SELECT snapshot_id FROM {NS}.{table}.history ORDER BY made_current_at, snapshot_id"
        ).fetchall()
    ]
    return [set(con.execute(f"SELECT grp, src FROM {NS}.{table} VERSION AS OF {s}").fetchall()) for s in ids]


def _check_serial(
    con: Connection, table: str, rounds: int, deleted: list[bool], inserted: list[bool], inserter: str
) -> None:
    """Every round's outcome is explained by a serial order of the commits that succeeded."""
    history = _history(con, table)
    final = history[-1]
    for r in range(rounds):
        seed, new = (r, "seed"), (r, inserter)
        first_new = next((i for i, rows in enumerate(history) if new in rows), None)
        gone = next((i for i, rows in enumerate(history) if i > 0 and seed not in rows), None)
        assert (seed not in final) == deleted[r], f"round {r}: the DELETE's outcome is not in the table"
        if inserted[r]:
            assert first_new is not None, f"round {r}: a successful INSERT is not in the log (lost)"
        if deleted[r] and inserted[r]:
            assert first_new is not None and gone is not None
            # insert before the delete: the delete saw and removed it; after: it stays
            assert (new in final) == (first_new > gone), f"round {r}: no serial order explains {history}"
        elif inserted[r]:
            assert new in final


@pytest.mark.parametrize("deleter", ["spark", "iceduck"])
def test_serializable_delete_against_insert(
    lake: tuple[SparkSession, Served, Connection], deleter: str, tmp_path: Path
) -> None:
    spark, _, con = lake
    table = f"del_by_{deleter}"
    inserter = "iceduck" if deleter == "spark" else "spark"
    rounds = 6
    spark.sql(
        f"CREATE TABLE {REST}.{NS}.{table} (grp int, src string) USING iceberg PARTITIONED BY (grp) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', "
        f"'write.delete.isolation-level' = 'serializable', {RETRIES})"
    )
    spark.sql(f"INSERT INTO {REST}.{NS}.{table} SELECT id, 'seed' FROM range({rounds})")
    # round 0 is a sure conflict: the DELETE is held while it reads its rows (Spark's by a
    # UDF in its condition, iceduck's by a subquery on an Arrow stream) until the other
    # engine's INSERT into the same partition has committed; the other rounds race freely
    gate = tmp_path / "gate"
    gate.mkdir()
    spark.udf.register("held", held_udf(str(gate)), "boolean")
    deleted, inserted, failures = [False] * rounds, [False] * rounds, []
    for r in range(rounds):
        delay = random.Random(r).uniform(0, 0.8)

        def delete(r: int = r) -> None:
            if deleter == "spark":
                held = " AND held(grp)" if r == 0 else ""
                spark.sql(f"DELETE FROM {REST}.{NS}.{table} WHERE grp = {r}{held}")
            elif r == 0:
                con.register("held_groups", held_groups(gate, r))
                con.execute(
                    f"DELETE FROM {NS}.{table} WHERE grp = {r} AND grp IN (SELECT g FROM held_groups)"
                )
            else:
                con.execute(f"DELETE FROM {NS}.{table} WHERE grp = {r}")

        def insert(r: int = r, delay: float = delay) -> None:
            if r == 0:
                assert wait_for(gate / "reading"), "the DELETE never started reading"
            elif inserter == "iceduck":
                time.sleep(delay)
            if inserter == "iceduck":
                con.execute(f"INSERT INTO {NS}.{table} VALUES ({r}, 'iceduck')")
            else:
                spark.sql(f"INSERT INTO {REST}.{NS}.{table} VALUES ({r}, 'spark')")
            if r == 0:
                (gate / "inserted").touch()

        delete_error, insert_error = together(delete, insert)
        assert insert_error is None, f"round {r}: an append needs no validation: {insert_error!r}"
        inserted[r] = True
        if delete_error is None:
            deleted[r] = True
        else:
            failures.append(delete_error)
            text = str(delete_error)
            if deleter == "spark":
                assert "Found conflicting files" in text or "conflicting" in text.lower(), text
            else:
                assert isinstance(delete_error, CommitConflictError), repr(delete_error)
    print(f"{deleter} DELETE vs {inserter} INSERT: {len(failures)} of {rounds} DELETEs failed validation")
    assert not deleted[0], "the INSERT committed while the DELETE read: the DELETE must fail validation"
    _check_serial(con, table, rounds, deleted, inserted, inserter)
    assert iceduck_rows(con, f"SELECT * FROM {NS}.{table}") == spark_rows(
        spark, f"SELECT * FROM {REST}.{NS}.{table}"
    )
