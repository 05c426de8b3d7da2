"""Row-level deletes applied in DuckDB: position delete files, deletion vectors,
equality deletes (null matching, several columns, scope per data file, dropped columns)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iceduck.engine.deletes import PositionCache, deleted_positions, derived, runs
from iceduck.engine.read import register_scan, scan_sql
from iceduck.errors import CorruptDataError
from iceduck.io.fileio import MissingFileError
from iceduck.scan.tasks import ScanPlan
from iceduck.spec.schema import POS_ID, Schema
from iceduck.spec.types import IntegerType, LongType, NestedField, StringType, StructType
from tests.engine.helpers import (
    data_task,
    deletion_vectors,
    equality_delete_file,
    position_delete_file,
    read_rows,
    write_parquet,
)

SCHEMA = Schema((NestedField(1, "id", LongType()), NestedField(2, "name", StringType())))
IDS = {"id": 1, "name": 2}


def numbers(con: Any, path: Path, lo: int, hi: int) -> Path:
    """Rows id lo..hi-1, name 'n<id>' (NULL for multiples of 5): position = id - lo."""
    select = (
        f"SELECT i::BIGINT AS id, CASE WHEN i % 5 = 0 THEN NULL ELSE 'n' || i END AS name "
        f"FROM range({lo}, {hi}) t(i) ORDER BY i"
    )
    return write_parquet(con, path, select, IDS)


def ids(rows: list[dict[str, Any]]) -> list[int]:
    return sorted(r["id"] for r in rows)


# -- position deletes ------------------------------------------------------------------------------


def test_position_delete_files(con: Any, tmp_path: Path) -> None:
    a, b, c = (numbers(con, tmp_path / f"{n}.parquet", n * 100, n * 100 + 50) for n in range(3))
    pd1 = position_delete_file(con, tmp_path / "pd1.parquet", [(str(a), 0), (str(a), 7), (str(b), 49)])
    pd2 = position_delete_file(con, tmp_path / "pd2.parquet", [(str(a), 7), (str(a), 8), (str(c), 1)])
    tasks = [
        data_task(con, a, position_deletes=[pd1, pd2]),
        data_task(con, b, position_deletes=[pd1]),
        data_task(con, c),  # pd2 names c, but the planner did not assign it (scope): c keeps row 1
    ]
    expected = sorted({*range(0, 50), *range(100, 150), *range(200, 250)} - {0, 7, 8, 149})
    assert ids(read_rows(con, SCHEMA, tasks)) == expected


def test_deletion_vectors(con: Any, tmp_path: Path) -> None:
    a = numbers(con, tmp_path / "a.parquet", 0, 5000)
    b = numbers(con, tmp_path / "b.parquet", 10000, 10070)
    dvs = deletion_vectors(
        tmp_path / "dv.puffin", {str(a): [0, 63, 64, 65, *range(1000, 3000), 4999], str(b): [69]}
    )
    tasks = [data_task(con, a, deletion_vector=dvs[str(a)]), data_task(con, b, deletion_vector=dvs[str(b)])]
    deleted = {0, 63, 64, 65, *range(1000, 3000), 4999, 10069}
    assert ids(read_rows(con, SCHEMA, tasks)) == sorted({*range(5000), *range(10000, 10070)} - deleted)


@pytest.mark.parametrize("runs_per_file", [1, 3, 40])
def test_bitmaps_and_ranges_agree(con: Any, tmp_path: Path, runs_per_file: int) -> None:
    """Few runs are filtered by ranges, many through bitmaps; the rows are the same."""
    files = [numbers(con, tmp_path / f"{n}.parquet", n * 1000, n * 1000 + 700) for n in range(3)]
    rng = np.random.default_rng(runs_per_file)
    vectors = {}
    for n, f in enumerate(files):
        starts = np.sort(rng.choice(np.arange(0, 700, 14), runs_per_file, replace=False))
        vectors[str(f)] = sorted({int(s) + k for s in starts for k in range(n + 1)})
    dvs = deletion_vectors(tmp_path / "dv.puffin", vectors)
    tasks = [data_task(con, f, deletion_vector=dvs[str(f)]) for f in files]
    scan = scan_sql(con, ScanPlan(SCHEMA, 1, tuple(tasks)), "v")
    assert ('get_bit' in scan.sql) == (3 * runs_per_file > 16)
    deleted = {n * 1000 + p for n, f in enumerate(files) for p in vectors[str(f)]}
    expected = [i for n in range(3) for i in range(n * 1000, n * 1000 + 700) if i not in deleted]
    assert ids(read_rows(con, SCHEMA, tasks)) == expected


def test_fully_deleted_files_are_not_read(con: Any, tmp_path: Path) -> None:
    a = numbers(con, tmp_path / "a.parquet", 0, 5)
    b = numbers(con, tmp_path / "b.parquet", 5, 10)
    dvs = deletion_vectors(tmp_path / "dv.puffin", {str(a): range(5), str(b): [0]})
    tasks = (data_task(con, a, deletion_vector=dvs[str(a)]), data_task(con, b, deletion_vector=dvs[str(b)]))
    scan = scan_sql(con, ScanPlan(SCHEMA, 1, tasks), "v")
    assert scan.files == [str(b)] and not scan.variables  # a's rows are all deleted: a is not read
    assert ids(read_rows(con, SCHEMA, tasks)) == [6, 7, 8, 9]
    only_a = ScanPlan(SCHEMA, 1, tasks[:1])
    assert "WHERE false" in scan_sql(con, only_a, "v").sql


def test_positions_past_the_end_do_not_count(con: Any, tmp_path: Path) -> None:
    """A position >= record_count names no row: the file is not "fully deleted"."""
    a = numbers(con, tmp_path / "a.parquet", 0, 5)
    dv = deletion_vectors(tmp_path / "dv.puffin", {str(a): [0, 1, 2, 3, 7]})[str(a)]
    assert ids(read_rows(con, SCHEMA, [data_task(con, a, deletion_vector=dv)])) == [4]


def test_deletion_vector_replaces_position_delete_files(con: Any, tmp_path: Path) -> None:
    """ "If a DV is written for a data file, it must replace all previously written position
    delete files so that when a DV is present, readers can safely ignore" them."""
    a = numbers(con, tmp_path / "a.parquet", 0, 10)
    pd = position_delete_file(con, tmp_path / "pd.parquet", [(str(a), 1), (str(a), 2)])
    dv = deletion_vectors(tmp_path / "dv.puffin", {str(a): [2, 3]})[str(a)]
    task = data_task(con, a, deletion_vector=dv, position_deletes=[pd])
    assert ids(read_rows(con, SCHEMA, [task])) == [0, 1, 4, 5, 6, 7, 8, 9]


def test_position_deletes_keep_positions_under_filters(con: Any, tmp_path: Path) -> None:
    """DuckDB pushes the query's filter into the scan; positions stay the file's own."""
    a = numbers(con, tmp_path / "a.parquet", 0, 300_000)
    dv = deletion_vectors(tmp_path / "dv.puffin", {str(a): range(0, 300_000, 3)})[str(a)]
    plan = ScanPlan(SCHEMA, 1, (data_task(con, a, deletion_vector=dv),))
    register_scan(con, plan, "t")
    assert con.execute("SELECT count(*), min(id) FROM t WHERE id >= 250000").fetchall() == [(33334, 250000)]
    assert con.execute("SELECT count(*) FROM t WHERE id % 3 = 0").fetchall() == [(0,)]


def test_pos_metadata_column_with_deletes(con: Any, tmp_path: Path) -> None:
    a = numbers(con, tmp_path / "a.parquet", 0, 6)
    dv = deletion_vectors(tmp_path / "dv.puffin", {str(a): [1, 4]})[str(a)]
    plan = ScanPlan(SCHEMA, 1, (data_task(con, a, deletion_vector=dv),))
    register_scan(con, plan, "t", field_ids=[1, POS_ID])
    assert con.execute("SELECT id, _pos FROM t ORDER BY id").fetchall() == [(0, 0), (2, 2), (3, 3), (5, 5)]


def test_missing_delete_files_are_named(con: Any, tmp_path: Path) -> None:
    a = numbers(con, tmp_path / "a.parquet", 0, 6)
    pd = position_delete_file(con, tmp_path / "pd.parquet", [(str(a), 1)])
    dv = deletion_vectors(tmp_path / "dv.puffin", {str(a): [1]})[str(a)]
    (tmp_path / "pd.parquet").unlink()
    (tmp_path / "dv.puffin").unlink()
    cache = PositionCache()
    with pytest.raises(MissingFileError, match=r"pd\.parquet"):
        deleted_positions(con, [data_task(con, a, position_deletes=[pd])], cache)
    with pytest.raises(MissingFileError, match=r"dv\.puffin"):
        deleted_positions(con, [data_task(con, a, deletion_vector=dv)], cache)


def test_corrupt_deletion_vector_is_named(con: Any, tmp_path: Path) -> None:
    a = numbers(con, tmp_path / "a.parquet", 0, 6)
    dv = deletion_vectors(tmp_path / "dv.puffin", {str(a): [1]})[str(a)]
    data = bytearray((tmp_path / "dv.puffin").read_bytes())
    data[dv.content_offset + 5] ^= 0xFF  # inside the blob's magic / bitmap
    (tmp_path / "dv.puffin").write_bytes(bytes(data))
    with pytest.raises(CorruptDataError, match=r"dv\.puffin"):
        deleted_positions(con, [data_task(con, a, deletion_vector=dv)], PositionCache())


def test_runs() -> None:
    assert runs([5, 1, 2, 3, 7, 8, 2]) == [(1, 3), (5, 5), (7, 8)]
    assert runs([]) == []


# -- equality deletes --------------------------------------------------------------------------


def test_equality_deletes_match_nulls_and_respect_scope(con: Any, tmp_path: Path) -> None:
    """The spec's example table; the delete applies to a and b, not to c (newer data)."""
    select = (
        "SELECT * FROM (VALUES (1, 'marsupial', 'Koala'), (2, 'toy', 'Teddy'), (3, NULL, 'Grizzly'), "
        "(4, NULL, 'Polar')) AS t(id, category, name)"
    )
    schema = Schema(
        (
            NestedField(1, "id", IntegerType()),
            NestedField(2, "category", StringType()),
            NestedField(3, "name", StringType()),
        )
    )
    file_ids = {"id": 1, "category": 2, "name": 3}
    a = write_parquet(con, tmp_path / "a.parquet", select, file_ids)
    c = write_parquet(con, tmp_path / "c.parquet", select, file_ids)
    # "The delete id = 4 AND category IS NULL": columns id, category
    by_pair = equality_delete_file(
        con, tmp_path / "eq1.parquet", "SELECT 4 AS id, NULL::VARCHAR AS category, 'Polar' AS name",
        file_ids, [1, 2],
    )  # fmt: skip
    # a NULL on its own matches rows whose value is null
    by_category = equality_delete_file(
        con,
        tmp_path / "eq2.parquet",
        "SELECT 'toy' AS category UNION ALL SELECT 'nothing'",
        {"category": 2},
        [2],
    )
    tasks = [
        data_task(con, a, equality_deletes=[by_pair, by_category]),
        data_task(con, c, sequence_number=3),
    ]
    rows = read_rows(con, schema, tasks)
    assert [
        (r["id"], r["name"]) for r in rows if r["name"] in ("Koala", "Teddy", "Grizzly", "Polar")
    ] == sorted([(1, "Koala"), (3, "Grizzly"), (1, "Koala"), (2, "Teddy"), (3, "Grizzly"), (4, "Polar")])


def test_equality_delete_with_null_key(con: Any, tmp_path: Path) -> None:
    a = numbers(con, tmp_path / "a.parquet", 0, 20)
    eq = equality_delete_file(
        con, tmp_path / "eq.parquet", "SELECT NULL::VARCHAR AS name UNION ALL SELECT 'n3'", {"name": 2}, [2]
    )
    rows = read_rows(con, SCHEMA, [data_task(con, a, equality_deletes=[eq])])
    assert ids(rows) == [i for i in range(20) if i % 5 and i != 3]


def test_each_equality_file_applies_only_to_the_tasks_listing_it(con: Any, tmp_path: Path) -> None:
    files = [numbers(con, tmp_path / f"d{n}.parquet", 0, 10) for n in range(6)]
    eq_a = equality_delete_file(con, tmp_path / "a.parquet", "SELECT 1::BIGINT AS id", {"id": 1}, [1])
    eq_b = equality_delete_file(con, tmp_path / "b.parquet", "SELECT 2::BIGINT AS id", {"id": 1}, [1])
    eq_n = equality_delete_file(con, tmp_path / "n.parquet", "SELECT 'n4' AS name", {"name": 2}, [2])
    lists = [[eq_a], [eq_a, eq_b], [], [eq_b, eq_n], [eq_a], [eq_n]]
    tasks = [
        data_task(con, f, partition=(n % 2,), sequence_number=n, equality_deletes=lst)
        for n, (f, lst) in enumerate(zip(files, lists, strict=True))
    ]
    rows = read_rows(con, SCHEMA, tasks)
    expected = []
    for lst in lists:
        gone = {1} if eq_a in lst else set()
        gone |= {2} if eq_b in lst else set()
        gone |= {4} if eq_n in lst else set()
        expected += [i for i in range(10) if i not in gone]
    assert ids(rows) == sorted(expected)


def test_equality_delete_on_a_dropped_column(con: Any, tmp_path: Path) -> None:
    """ "If a delete column in an equality delete file is later dropped from the table, it
    must still be used when applying the equality deletes"."""
    a = write_parquet(
        con,
        tmp_path / "a.parquet",
        "SELECT i::BIGINT AS id, (i % 3)::INT AS old FROM range(9) t(i)",
        {"id": 1, "old": 5},
    )
    eq = equality_delete_file(con, tmp_path / "eq.parquet", "SELECT 1::INT AS old", {"old": 5}, [5])
    schema = Schema((NestedField(1, "id", LongType()),))
    assert ids(read_rows(con, schema, [data_task(con, a, equality_deletes=[eq])])) == [0, 2, 3, 5, 6, 8]


def test_equality_delete_on_a_column_added_later(con: Any, tmp_path: Path) -> None:
    """ "the column value is read for older data files using normal projection rules
    (defaults to null)": a delete of NULL removes every row of older files."""
    old = write_parquet(con, tmp_path / "old.parquet", "SELECT 1::BIGINT AS id", {"id": 1})
    new = write_parquet(con, tmp_path / "new.parquet", "SELECT 2::BIGINT AS id, 'x' AS name", IDS)
    eq = equality_delete_file(con, tmp_path / "eq.parquet", "SELECT NULL::VARCHAR AS name", {"name": 2}, [2])
    tasks = [data_task(con, old, equality_deletes=[eq]), data_task(con, new, equality_deletes=[eq])]
    assert ids(read_rows(con, SCHEMA, tasks)) == [2]


def test_equality_delete_on_a_nested_field(con: Any, tmp_path: Path) -> None:
    """Identifier fields "may be nested in structs"; a null parent means a null key."""
    select = "SELECT i::BIGINT AS id, CASE WHEN i = 4 THEN NULL ELSE {'k': (i % 2)::INT} END AS s "
    select += "FROM range(6) t(i)"
    a = write_parquet(con, tmp_path / "a.parquet", select, {"id": 1, "s": {"__duckdb_field_id": 2, "k": 3}})
    eq = equality_delete_file(
        con,
        tmp_path / "eq.parquet",
        "SELECT {'k': 1::INT} AS s UNION ALL SELECT NULL",
        {"s": {"__duckdb_field_id": 2, "k": 3}},
        [3],
    )
    schema = Schema(
        (
            NestedField(1, "id", LongType()),
            NestedField(2, "s", StructType((NestedField(3, "k", IntegerType()),))),
        )
    )
    assert ids(read_rows(con, schema, [data_task(con, a, equality_deletes=[eq])])) == [0, 2]


def test_all_kinds_of_deletes_in_one_scan(con: Any, tmp_path: Path) -> None:
    plain = numbers(con, tmp_path / "plain.parquet", 0, 10)
    positional = numbers(con, tmp_path / "pos.parquet", 100, 110)
    both = numbers(con, tmp_path / "both.parquet", 200, 210)
    dvs = deletion_vectors(tmp_path / "dv.puffin", {str(positional): [0], str(both): [1]})
    eq = equality_delete_file(
        con, tmp_path / "eq.parquet", "SELECT 202::BIGINT AS id UNION ALL SELECT 5", {"id": 1}, [1]
    )
    tasks = [
        data_task(con, plain),
        data_task(con, positional, deletion_vector=dvs[str(positional)]),
        data_task(con, both, deletion_vector=dvs[str(both)], equality_deletes=[eq]),
    ]
    scan = scan_sql(con, ScanPlan(SCHEMA, 1, tuple(tasks)), "v")
    # the equality delete became position 2 of "both": one scan of the files with deleted
    # positions (three runs: a range filter), one of the plain file; no join
    assert scan.sql.count("read_parquet(") == 2 and "JOIN" not in scan.sql
    assert "get_bit" not in scan.sql
    expected = [*range(10), *range(101, 110), 200, *range(203, 210)]
    assert ids(read_rows(con, SCHEMA, tasks)) == expected


def test_derived_is_computed_once_per_array() -> None:
    """Warm reads get the cached arrays back: what scans derive from them is remembered, and
    forgotten with the array."""
    calls: list[int] = []

    def halves(p: np.ndarray) -> np.ndarray:
        calls.append(1)
        return p // 2

    a = np.array([1, 2, 3])
    first = derived(a, "halves", halves)
    assert derived(a, "halves", halves) is first and len(calls) == 1
    b = np.array([1, 2, 3])  # equal, but another array: computed again
    assert derived(b, "halves", halves).tolist() == [0, 1, 1] and len(calls) == 2
    remembered = weakref.ref(first)
    del a, first
    gc.collect()
    assert remembered() is None  # the value went with its array: nothing outlives the cache
