"""Equality deletes applied as the positions they delete: the rows kept are exactly those
plain DuckDB keeps with an anti-join, in scope (sequence numbers decide which data files a
delete file applies to), together with deletion vectors, and cached per data file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iceduck.engine import bitmaps
from iceduck.engine.deletes import PositionCache
from iceduck.engine.read import scan_sql
from iceduck.scan.tasks import ScanPlan
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField, StringType
from tests.engine.helpers import data_task, deletion_vectors, equality_delete_file, read_rows, write_parquet

SCHEMA = Schema((NestedField(1, "id", LongType()), NestedField(2, "name", StringType())))
IDS = {"id": 1, "name": 2}
SIZE = 600


def data_file(con: Any, path: Path, base: int) -> Path:
    """SIZE rows, id = base + position."""
    select = f"SELECT {base} + i::BIGINT AS id, 'n' || i AS name FROM range({SIZE}) t(i) ORDER BY i"
    return write_parquet(con, path, select, IDS)


def victims(shape: str, share: float) -> list[int]:
    """Offsets (0..SIZE-1) the delete names, in every file's id range."""
    count = int(SIZE * share)
    if shape == "clustered":
        return list(range(100, 100 + count))
    if shape == "scattered":
        return list(range(0, SIZE, round(1 / share)))
    return sorted(np.random.default_rng(3).choice(SIZE, count, replace=False).tolist())


@pytest.mark.parametrize("segment_rows", [bitmaps.SEGMENT_ROWS, 128])
@pytest.mark.parametrize("share", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("shape", ["clustered", "scattered", "random"])
def test_rows_match_plain_duckdb(
    con: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: float, shape: str, segment_rows: int
) -> None:
    monkeypatch.setattr(bitmaps, "SEGMENT_ROWS", segment_rows)
    bases = [0, 10000, 20000, 30000]
    paths = [data_file(con, tmp_path / f"d{n}.parquet", b) for n, b in enumerate(bases)]
    offsets = victims(shape, share)
    keys = ", ".join(f"({b + o})" for b in bases for o in offsets)
    select = f"SELECT id::BIGINT AS id FROM (VALUES {keys}) t(id)"
    eq = equality_delete_file(con, tmp_path / "eq.parquet", select, {"id": 1}, [1], sequence_number=3)
    dv = deletion_vectors(tmp_path / "dv.puffin", {str(paths[3]): [1, 2, 3, 599]}, sequence_number=3)
    tasks = [
        data_task(con, paths[0], sequence_number=1, equality_deletes=[eq]),
        data_task(con, paths[1], sequence_number=2, equality_deletes=[eq]),
        # same sequence number as the delete: "strictly less than" fails, the planner left it out
        data_task(con, paths[2], sequence_number=3),
        data_task(con, paths[3], sequence_number=1, equality_deletes=[eq], deletion_vector=dv[str(paths[3])]),
    ]
    listed = ", ".join(f"'{p}'" for p in paths)
    rows = con.execute(
        f"SELECT id FROM read_parquet([{listed}], file_row_number = true, filename = true) AS d "
        f"WHERE NOT (filename <> '{paths[2]}' AND id IN (SELECT id FROM read_parquet('{eq.path}'))) "
        f"AND NOT (filename = '{paths[3]}' AND file_row_number IN (1, 2, 3, 599)) ORDER BY id"
    ).fetchall()
    actual = sorted(r["id"] for r in read_rows(con, SCHEMA, tasks))
    assert actual == [r[0] for r in rows]


def test_positions_are_cached_per_data_file_and_delete_set(con: Any, tmp_path: Path) -> None:
    a = data_file(con, tmp_path / "a.parquet", 0)
    eq1 = equality_delete_file(con, tmp_path / "e1.parquet", "SELECT 5::BIGINT AS id", {"id": 1}, [1])
    eq2 = equality_delete_file(con, tmp_path / "e2.parquet", "SELECT 7::BIGINT AS id", {"id": 1}, [1])
    cache = PositionCache()

    def read(*deletes: Any) -> list[int]:
        plan = ScanPlan(SCHEMA, 1, (data_task(con, a, equality_deletes=list(deletes)),))
        sql = scan_sql(con, plan, "v", positions=cache)
        for name, value in sql.variables.items():
            con.execute(f'SET VARIABLE "{name}" = ?', [value])
        return [r[0] for r in con.execute(f"SELECT id FROM ({sql.sql}) ORDER BY id").fetchall()]

    assert read(eq1) == [i for i in range(SIZE) if i != 5]
    assert (len(cache), cache.hits) == (1, 0)  # the join ran and its positions were kept
    assert read(eq1) == [i for i in range(SIZE) if i != 5]
    assert (len(cache), cache.hits) == (1, 1)  # the second read found them cached
    assert read(eq1, eq2) == [i for i in range(SIZE) if i not in (5, 7)]  # another scope: new key
    assert (len(cache), cache.hits) == (2, 1)


def test_two_delete_column_sets_matching_one_row(con: Any, tmp_path: Path) -> None:
    a = data_file(con, tmp_path / "a.parquet", 0)
    by_id = equality_delete_file(con, tmp_path / "e1.parquet", "SELECT 5::BIGINT AS id", {"id": 1}, [1])
    by_name = equality_delete_file(
        con, tmp_path / "e2.parquet", "SELECT * FROM (VALUES ('n5'), ('n9')) t(name)", {"name": 2}, [2]
    )
    task = data_task(con, a, equality_deletes=[by_id, by_name])
    kept = sorted(r["id"] for r in read_rows(con, SCHEMA, [task]))
    assert kept == [i for i in range(SIZE) if i not in (5, 9)]
