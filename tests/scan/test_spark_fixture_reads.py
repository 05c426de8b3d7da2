"""Spark-written tables (tests/fixtures/spark) read through iceduck, without Spark: every
row, and every snapshot's row count, equal what Spark itself read when it wrote them
(position deletes, a deletion vector, equality deletes, schema evolution, partitions)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from tests.fixtures.spark.tables import expected, jsonable, linked_root

TABLES = sorted(expected())


@pytest.fixture(scope="module")
def root() -> Path:
    """The generating warehouse's path, linked to the checked-in copy."""
    found = linked_root()
    if found is None:
        pytest.skip("/tmp/iceduck-spark-fixtures is taken by something other than these fixtures")
    return found


@pytest.fixture(scope="module")
def cursor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[iceduck.Cursor]:
    con = iceduck.connect(str(tmp_path_factory.mktemp("warehouse")))
    yield con.cursor()
    con.close()


def scan(root: Path, identifier: str) -> str:
    return f"iceduck_scan('{root / identifier.replace('.', '/')}')"


@pytest.mark.parametrize("identifier", TABLES)
def test_rows_equal_spark_s(root: Path, cursor: iceduck.Cursor, identifier: str) -> None:
    cursor.execute(f"SELECT * FROM {scan(root, identifier)}")
    names = [d[0] for d in cursor.description or ()]
    rows = [jsonable(dict(zip(names, row, strict=True))) for row in cursor.fetchall() or []]
    assert sorted(rows, key=repr) == expected()[identifier]["rows"]


@pytest.mark.parametrize("identifier", TABLES)
def test_every_snapshot_counts_as_in_spark(root: Path, cursor: iceduck.Cursor, identifier: str) -> None:
    counts = {}
    for snapshot in expected()[identifier]["snapshot_row_counts"]:
        cursor.execute(f"SELECT count(*) FROM {scan(root, identifier)} VERSION AS OF {snapshot}")
        (counts[snapshot],) = cursor.fetchone() or (None,)
    assert counts == expected()[identifier]["snapshot_row_counts"]


def test_pruned_read_of_spark_partitions(root: Path, cursor: iceduck.Cursor) -> None:
    """A filter on Spark's identity, bucket and day partitions reads one file of 26."""
    cursor.execute(
        f"EXPLAIN SELECT * FROM {scan(root, 'part.mixed_v2')} "
        "WHERE cat = 'a' AND id = 36 AND ts >= TIMESTAMPTZ '2023-11-17 00:00:00+00'"
    )
    lines = [row[0] for row in cursor.fetchall() or []]
    assert "  data files: 1 read, 25 skipped (25 by partition, 0 by column metrics)" in lines
    cursor.execute(f"SELECT data FROM {scan(root, 'part.mixed_v2')} WHERE cat = 'a' AND id = 36")
    assert cursor.fetchall() == [("row-36",)]
