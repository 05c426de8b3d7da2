"""``rewrite_data_files`` with the ``sort`` strategy: a sort order (the table's or given) or
a z-order decides which rows share a file, checked on the files' min/max metrics."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pyarrow.parquet as pq
import pytest

from iceduck.connection import Connection
from iceduck.io.fileio import to_local_path


def table_rows(con: Connection) -> list[tuple[Any, ...]]:
    return sorted(con.execute("SELECT * FROM db.t").fetchall(), key=repr)


def file_ranges(con: Connection, column: str) -> list[tuple[Any, Any, str, int | None]]:
    """(min, max, path, sort_order_id) of ``column`` per data file, by min."""
    got = con.execute(
        f"SELECT readable_metrics.{column}.lower_bound, readable_metrics.{column}.upper_bound, file_path, "
        "sort_order_id FROM db.t.data_files ORDER BY 1"
    ).fetchall()
    return [tuple(r) for r in got]


def target_for(con: Connection, files: int) -> int:
    """A target size cutting the table's data into about ``files`` files."""
    total = int(con.execute("SELECT sum(file_size_in_bytes) FROM db.t.data_files").fetchall()[0][0])
    return math.ceil(total / files)


@pytest.mark.parametrize("version", [2, 3])
def test_sort_order_argument_gives_disjoint_sorted_files(con: Connection, version: int) -> None:
    con.execute(
        "CREATE TABLE db.t (id bigint, name string) "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read')"
    )
    for i in range(8):  # interleaved ids: every input file spans the whole range
        con.execute(f"INSERT INTO db.t SELECT i * 8 + {i}, 'n' || i FROM range(0, 500) r(i)")
    con.execute("DELETE FROM db.t WHERE id % 13 = 0")
    before = table_rows(con)
    target = target_for(con, 4)
    options = f"map('target-file-size-bytes', '{target}', 'min-file-size-bytes', '0', 'rewrite-all', 'true')"

    result = con.execute(
        "CALL system.rewrite_data_files(table => 'db.t', sort_order => 'id DESC NULLS LAST', "
        f"options => {options})"
    ).fetchall()

    assert result[0][0] == 8 and result[0][1] >= 3
    assert table_rows(con) == before
    ranges = file_ranges(con, "id")
    for (_, high, _, order_id), (low, _, _, _) in itertools.pairwise(ranges):
        assert high < low  # no two files overlap
        assert order_id is None  # an order the table does not have: files record none
    for _, _, path, _ in ranges:  # each file is sorted descending
        ids = pq.read_table(to_local_path(path), columns=["id"]).column("id").to_pylist()
        assert ids == sorted(ids, reverse=True)
    assert int(con.execute("SELECT count(*) FROM db.t.delete_files").fetchall()[0][0]) == 0


def test_table_sort_order_is_the_default(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, name string) PARTITIONED BY (bucket(2, id))")
    con.execute("ALTER TABLE db.t WRITE ORDERED BY name")
    for i in range(5):
        con.execute(
            f"INSERT INTO db.t SELECT i, chr(65 + CAST((i * 7 + {i}) % 26 AS int)) FROM range(0, 400) r(i)"
        )
    before = table_rows(con)
    target = target_for(con, 2)
    options = f"map('target-file-size-bytes', '{target}', 'min-file-size-bytes', '0', 'rewrite-all', 'true')"
    con.execute(f"CALL system.rewrite_data_files(table => 'db.t', strategy => 'sort', options => {options})")
    assert table_rows(con) == before
    order_id = con.execute("SELECT sort_order_id FROM db.t.data_files").fetchall()
    assert {r[0] for r in order_id} == {1}
    # the same order given as sort_order is the table's: the files record its id
    con.execute("ALTER TABLE db.t WRITE ORDERED BY id")  # order 2; 'name' stays order 1
    con.execute(
        "CALL system.rewrite_data_files(table => 'db.t', sort_order => 'name ASC NULLS FIRST', "
        "options => map('rewrite-all', 'true'))"
    )
    assert table_rows(con) == before
    assert {r[0] for r in con.execute("SELECT sort_order_id FROM db.t.data_files").fetchall()} == {1}
    for bucket in (0, 1):  # within a partition, files hold disjoint name ranges
        got = con.execute(
            "SELECT readable_metrics.name.lower_bound, readable_metrics.name.upper_bound "
            f"FROM db.t.data_files WHERE partition.id_bucket = {bucket} ORDER BY 1"
        ).fetchall()
        for (_, high), (low, _) in itertools.pairwise(got):
            assert high <= low


def test_zorder_cuts_a_grid_into_quadrants(con: Connection) -> None:
    """32 x 32 points in four files: z-order puts each quadrant in one file, where a
    sort by ``a`` would give four stripes spanning all of ``b``."""
    con.execute("CREATE TABLE db.t (a int, b string, c bigint)")
    for i in range(4):  # four shuffled inserts
        con.execute(
            "INSERT INTO db.t SELECT x, lpad(CAST(y AS string), 2, '0'), x * 100 + y "
            "FROM range(32) r(x), range(32) s(y) "
            f"WHERE hash(x, y) % 4 = {i}"
        )
    before = table_rows(con)
    target = target_for(con, 4)
    options = f"map('target-file-size-bytes', '{target}', 'min-file-size-bytes', '0', 'rewrite-all', 'true')"
    result = con.execute(
        f"CALL system.rewrite_data_files(table => 'db.t', sort_order => 'zorder(a, b)', options => {options})"
    ).fetchall()
    assert result[0][:2] == (4, 4)
    assert table_rows(con) == before
    boxes = sorted(
        tuple(r)
        for r in con.execute(
            "SELECT readable_metrics.a.lower_bound, readable_metrics.a.upper_bound, "
            "readable_metrics.b.lower_bound, readable_metrics.b.upper_bound, record_count "
            "FROM db.t.data_files"
        ).fetchall()
    )
    assert boxes == [
        (0, 15, "00", "15", 256),
        (0, 15, "16", "31", 256),
        (16, 31, "00", "15", 256),
        (16, 31, "16", "31", 256),
    ]
