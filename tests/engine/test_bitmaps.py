"""Position deletes and deletion vectors applied as segmented bitmap filters: the rows kept
are exactly those plain DuckDB keeps when it filters out the same positions, whatever the
share deleted (1/10/50%), its shape (clustered, scattered, random), the delete format (v2
position-delete files, v3 deletion vectors) and the number of segments and scans."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import iceduck
from iceduck.engine import bitmaps
from iceduck.engine.bitmaps import bitmap_scans, segment_bitmap
from iceduck.engine.read import scan_sql
from iceduck.scan.tasks import FileScanTask, ScanPlan
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField, StringType
from tests.engine.helpers import data_task, deletion_vectors, position_delete_file, read_rows, write_parquet

SCHEMA = Schema((NestedField(1, "id", LongType()), NestedField(2, "name", StringType())))
IDS = {"id": 1, "name": 2}
#: rows per file: files of different sizes, some not a multiple of a byte or a segment
SIZES = (1000, 777, 64, 1)


@pytest.fixture
def small_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Segments of 128 rows, at most 3 per scan: the CASE, several scans, a file alone."""
    monkeypatch.setattr(bitmaps, "SEGMENT_ROWS", 128)
    monkeypatch.setattr(bitmaps, "MAX_SEGMENTS", 3)


def files(con: Any, tmp_path: Path) -> list[Path]:
    """Files of ``SIZES`` rows; file n holds ids n*10000 + position."""
    out = []
    for n, size in enumerate(SIZES):
        path = tmp_path / f"d{n}.parquet"
        select = f"SELECT {n * 10000} + i::BIGINT AS id, 'n' || i AS name FROM range({size}) t(i) ORDER BY i"
        write_parquet(con, path, select, IDS)
        out.append(path)
    return out


def deleted(shape: str, share: float, size: int, seed: int) -> list[int]:
    count = int(size * share)
    if shape == "clustered":
        return list(range(size - count, size)) if seed % 2 else list(range(count))
    if shape == "scattered":
        return list(range(0, size, round(1 / share)))
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(size, count, replace=False).tolist())


def expected(con: Any, paths: list[Path], positions: dict[str, list[int]]) -> list[int]:
    """Plain DuckDB: every row of the files, less the deleted (file, position) pairs."""
    pairs = [(str(p), q) for p in paths for q in positions.get(str(p), [])]
    con.execute("CREATE OR REPLACE TEMP TABLE gone (f VARCHAR, p BIGINT)")
    if pairs:
        con.executemany("INSERT INTO gone VALUES (?, ?)", pairs)
    listed = ", ".join(f"'{p}'" for p in paths)
    rows = con.execute(
        f"SELECT id FROM read_parquet([{listed}], filename = true, file_row_number = true) "
        "WHERE (filename, file_row_number) NOT IN (SELECT (f, p) FROM gone) ORDER BY id"
    ).fetchall()
    return [r[0] for r in rows]


@pytest.mark.usefixtures("small_segments")
@pytest.mark.parametrize("share", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("shape", ["clustered", "scattered", "random"])
@pytest.mark.parametrize("kind", ["dv", "position-file"])
def test_rows_match_plain_duckdb(con: Any, tmp_path: Path, share: float, shape: str, kind: str) -> None:
    paths = files(con, tmp_path)
    positions = {}
    for n, (p, size) in enumerate(zip(paths, SIZES, strict=True)):
        if gone := deleted(shape, share, size, n):
            positions[str(p)] = gone
    if kind == "dv":
        dvs = deletion_vectors(tmp_path / "dv.puffin", positions)
        tasks = [data_task(con, p, deletion_vector=dvs.get(str(p))) for p in paths]
    else:  # one file for all, and the last data file (1 row) not assigned it (scope)
        rows = [(p, q) for p, qs in positions.items() for q in qs]
        pd = position_delete_file(con, tmp_path / "pd.parquet", rows)
        tasks = [data_task(con, p, position_deletes=[pd] if n < 3 else []) for n, p in enumerate(paths)]
        positions.pop(str(paths[3]), None)
    actual = sorted(r["id"] for r in read_rows(con, SCHEMA, tasks))
    assert actual == expected(con, paths, positions)


@pytest.mark.usefixtures("small_segments")
def test_many_segments_make_a_case_and_several_scans(con: Any, tmp_path: Path) -> None:
    paths = files(con, tmp_path)
    positions = {str(p): list(range(0, size, 7)) for p, size in zip(paths, SIZES, strict=True)}
    dvs = deletion_vectors(tmp_path / "dv.puffin", positions)
    tasks = [data_task(con, p, deletion_vector=dvs[str(p)]) for p in paths]
    sql = scan_sql(con, ScanPlan(SCHEMA, 1, tuple(tasks)), "v").sql
    assert "CASE" in sql and sql.count("read_parquet") >= 3
    assert sorted(r["id"] for r in read_rows(con, SCHEMA, tasks)) == expected(con, paths, positions)


def test_one_small_file_is_a_plain_filter(con: Any, tmp_path: Path) -> None:
    """One segment of one file: a filter over ``file_row_number`` alone (pushed into the scan)."""
    (path,) = files(con, tmp_path)[:1]
    positions = {str(path): list(range(0, 1000, 3))}
    dv = deletion_vectors(tmp_path / "dv.puffin", positions)[str(path)]
    task = data_task(con, path, deletion_vector=dv)
    sql = scan_sql(con, ScanPlan(SCHEMA, 1, (task,)), "v").sql
    assert "get_bit(" in sql and "CASE" not in sql
    assert sorted(r["id"] for r in read_rows(con, SCHEMA, [task])) == expected(con, [path], positions)


def test_segment_bitmap_is_duckdb_bit_order(con: Any) -> None:
    blob = segment_bitmap(np.array([0, 9, 12, 40]), 13)
    assert len(blob) == 2  # 13 rows round up to 16 bits; position 40 is past the end
    con.execute("SET VARIABLE b = ?", [blob])
    bit = "get_bit(getvariable('b')::BIT, i::INTEGER)"
    bits = con.execute(f"SELECT list({bit} ORDER BY i) FROM range(16) t(i)").fetchone()
    assert bits is not None and [i for i, b in enumerate(bits[0]) if b] == [0, 9, 12]


def test_packing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bitmaps, "SEGMENT_ROWS", 8)
    monkeypatch.setattr(bitmaps, "MAX_SEGMENTS", 2)

    def task(path: str, rows: int) -> FileScanTask:
        return FileScanTask(path, None, rows, 0, 0, (), 1)  # type: ignore[arg-type]

    tasks = [task("a", 20), task("b", 20), task("c", 40), task("d", 5)]
    positions = {
        "a": np.array([1, 2]),  # one segment
        "b": np.array([0, 17, 99]),  # two segments; 99 is past the end
        "c": np.array([0, 8, 16, 24]),  # four: a scan of its own
        "d": np.array([], dtype=np.int64),
    }
    scans = bitmap_scans(tasks, positions)
    assert [[t.path for t in s.tasks] for s in scans] == [["a"], ["b"], ["c", "d"]]
    assert [(i, k, blob) for i, k, blob in scans[1].segments] == [(0, 0, b"\x80"), (0, 2, b"\x40")]
    assert [k for _, k, _ in scans[2].segments] == [0, 1, 2, 3]


def test_large_files_get_scans_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows past ``MAX_SCAN_ROWS`` start a new scan even with segments to spare: each row of
    a scan goes through its CASE, so large files do not share one."""
    monkeypatch.setattr(bitmaps, "SEGMENT_ROWS", 8)
    monkeypatch.setattr(bitmaps, "MAX_SEGMENTS", 16)
    monkeypatch.setattr(bitmaps, "MAX_SCAN_ROWS", 30)

    def task(path: str, rows: int) -> FileScanTask:
        return FileScanTask(path, None, rows, 0, 0, (), 1)  # type: ignore[arg-type]

    tasks = [task("big1", 24), task("big2", 24), task("s1", 3), task("s2", 3), task("big3", 24)]
    positions = {p: np.array([1]) for p in ("big1", "big2", "s1", "s2", "big3")}
    scans = bitmap_scans(tasks, positions)
    assert [[t.path for t in s.tasks] for s in scans] == [["big1"], ["big2", "s1", "s2"], ["big3"]]


# -- through SQL: the planner's scope rules, then the bitmaps -------------------------------------


@pytest.mark.usefixtures("small_segments")
@pytest.mark.parametrize("share", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("shape", ["clustered", "scattered"])
@pytest.mark.parametrize("version", [2, 3])
def test_merge_on_read_deletes_through_sql(tmp_path: Path, version: int, shape: str, share: float) -> None:
    """Deletes written by iceduck (v2 position-delete files, v3 deletion vectors) apply only to
    the data files that existed when they were written ("data sequence number <= the
    delete's"): rows inserted later with the same ids survive."""
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE SCHEMA db")
    con.execute(
        "CREATE TABLE db.t (id bigint, s string) TBLPROPERTIES "
        f"('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
    )
    con.execute("INSERT INTO db.t SELECT i, 's' || i FROM range(2000) r(i)")
    cut = int(2000 * share)
    first = f"id < {cut}" if shape == "clustered" else f"id % {round(1 / share)} = 0"
    con.execute(f"DELETE FROM db.t WHERE {first}")
    con.execute("INSERT INTO db.t SELECT i, 'again' FROM range(1000) r(i)")  # newer: not deleted
    con.execute("DELETE FROM db.t WHERE id % 7 = 3 AND id >= 1500")  # touches the first file only
    kept = [i for i in range(2000) if not (i < cut if shape == "clustered" else i % round(1 / share) == 0)]
    kept = [i for i in kept if not (i % 7 == 3 and i >= 1500)]
    expected = sorted([(i, f"s{i}") for i in kept] + [(i, "again") for i in range(1000)])
    assert sorted(con.execute("SELECT id, s FROM db.t").fetchall()) == expected
    assert con.execute("SELECT count(*) FROM db.t WHERE s = 'again'").fetchall() == [(1000,)]
