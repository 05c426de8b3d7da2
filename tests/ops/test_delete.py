"""DELETE on iceduck tables equals DELETE on plain DuckDB tables (v2/v3, CoW/MoR,
partitioned or not), with whole-file deletes decided from metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck
from iceduck.errors import CommitConflictError, ValidationError
from iceduck.ops.row_delete import delete
from iceduck.session.name_resolution import resolve_target
from iceduck.sql.condition import Condition
from iceduck.sql.statements import Delete
from tests.ops.conftest import LAYOUTS, create_events
from tests.ops.harness import Pair


@pytest.mark.parametrize(("version", "mode", "partitioned"), LAYOUTS)
def test_deletes_match_duckdb(pair: Pair, version: int, mode: str, partitioned: bool) -> None:
    t = create_events(pair, version, mode, partitioned)
    pair.run(f"DELETE FROM {t} WHERE id % 7 = 0")
    pair.check(t)
    pair.run(f"DELETE FROM {t} WHERE id % 7 = 1 AND cat = 'a'")  # same files again: DVs merge
    pair.check(t)
    pair.run(f"DELETE FROM {t} WHERE cat = 'c'")  # a whole partition / file
    pair.check(t)
    pair.run(f"DELETE FROM {t} WHERE data IS NULL OR v > 50")
    pair.check(t)
    pair.run(f"DELETE FROM {t} AS x WHERE x.id IN (SELECT id + 1 FROM {t} WHERE id < 10)")
    pair.check(t)
    pair.run(f"DELETE FROM {t} WHERE id = -1")  # nothing
    pair.check(t)
    pair.run(f"DELETE FROM {t}")
    pair.check(t)
    pair.run(f"INSERT INTO {t} VALUES (1, 'again', 'a', 1.0)")
    pair.check(t)


def test_delete_whole_files_without_reading(pair: Pair) -> None:
    """The third insert holds ids 200..209: its metrics prove ``id >= 200`` for every row, so
    the file is removed without a delete file, even in merge-on-read."""
    t = create_events(pair, 2, "merge-on-read", False)
    before = {r[0] for r in pair.ice.fetch(f"SELECT file_path FROM {t}.data_files")}
    assert len(before) == 3
    assert pair.run(f"DELETE FROM {t} WHERE id >= 200") == 10
    after = {r[0] for r in pair.ice.fetch(f"SELECT file_path FROM {t}.data_files")}
    assert len(before - after) == 1 and after < before
    assert pair.ice.scalar(f"SELECT count(*) FROM {t}.delete_files") == 0
    pair.check(t)


def test_delete_by_partition_drops_files(pair: Pair) -> None:
    t = create_events(pair, 3, "merge-on-read", True)
    pair.run(f"DELETE FROM {t} WHERE cat = 'b'")
    assert pair.ice.scalar(f"SELECT count(*) FROM {t}.delete_files") == 0
    pair.check(t)


def test_merge_on_read_writes_one_dv_per_file(pair: Pair) -> None:
    t = create_events(pair, 3, "merge-on-read", False)
    pair.run(f"DELETE FROM {t} WHERE id = 1")
    pair.run(f"DELETE FROM {t} WHERE id = 2")
    pair.run(f"DELETE FROM {t} WHERE id IN (3, 101)")
    pair.check(t)
    rows = pair.ice.fetch(f"SELECT referenced_data_file, record_count FROM {t}.delete_files")
    assert sorted(r[1] for r in rows) == [1, 3]  # merged: ids 1, 2, 3 share a file
    assert len({r[0] for r in rows}) == len(rows)


def test_v2_merge_on_read_writes_position_deletes(pair: Pair) -> None:
    t = create_events(pair, 2, "merge-on-read", False)
    pair.run(f"DELETE FROM {t} WHERE id IN (1, 2, 101)")
    formats = pair.ice.fetch(f"SELECT content, file_format FROM {t}.delete_files")
    assert formats and all(r == (1, "PARQUET") for r in formats)
    pair.check(t)


def test_v1_refuses_merge_on_read(pair: Pair) -> None:
    pair.run(
        "CREATE TABLE ns.v1 (id INT) USING iceberg TBLPROPERTIES "
        "('format-version'='1', 'write.delete.mode'='merge-on-read')",
        reference="CREATE TABLE ns.v1 (id INT)",
    )
    pair.run("INSERT INTO ns.v1 VALUES (1), (2)")
    with pytest.raises(ValidationError, match="format-version 1"):
        pair.ice.execute("DELETE FROM ns.v1 WHERE id = 1")
    pair.check("ns.v1")
    pair.run("DELETE FROM ns.v1 WHERE id >= 1")  # whole files go without delete files
    pair.check("ns.v1")


def test_delete_with_parameters(pair: Pair) -> None:
    t = create_events(pair, 2, "copy-on-write", True)
    assert pair.ice.execute(f"DELETE FROM {t} WHERE id < $1 AND cat = $2", [10, "a"]) == 4
    pair.ref.execute(f"DELETE FROM {t} WHERE id < 10 AND cat = 'a'")
    pair.check(t)


def test_writes_to_a_branch_leave_main_alone(pair: Pair) -> None:
    t = create_events(pair, 3, "merge-on-read", True)
    main_rows = pair.ice.fetch(f"SELECT * FROM {t} ORDER BY id")
    pair.ice.execute(f"ALTER TABLE {t} CREATE BRANCH dev")
    pair.ice.execute(f"DELETE FROM {t}.branch_dev WHERE id < 10")
    pair.ice.execute(f"UPDATE {t}.branch_dev SET data = 'dev' WHERE id = 100")
    pair.ice.execute(f"INSERT INTO {t}.branch_dev VALUES (7777, 'b', 'a', 1.0)")
    assert pair.ice.fetch(f"SELECT * FROM {t} ORDER BY id") == main_rows
    dev = pair.ice.fetch(
        f"SELECT id, data FROM {t}.branch_dev WHERE id < 10 OR id IN (100, 7777) ORDER BY id"
    )
    assert dev == [(100, "dev"), (7777, "b")]


def test_v1_copy_on_write(pair: Pair) -> None:
    pair.run(
        "CREATE TABLE ns.v1 (id INT, s STRING) USING iceberg TBLPROPERTIES ('format-version'='1')",
        reference="CREATE TABLE ns.v1 (id INT, s VARCHAR)",
    )
    pair.run("INSERT INTO ns.v1 SELECT i, 's' || i FROM range(10) AS r(i)")
    pair.run("DELETE FROM ns.v1 WHERE id % 3 = 0")
    pair.run("UPDATE ns.v1 SET s = 'u' WHERE id > 5")
    pair.run("MERGE INTO ns.v1 t USING (SELECT 1 AS id, 'm' AS s) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    pair.check("ns.v1")


@pytest.mark.parametrize("version", [2, 3])
def test_conflicting_delete_fails_and_cleans_up(pair: Pair, tmp_path: Path, version: int) -> None:
    """Two sessions race: the second commits an overwrite removing the files the first is
    deleting rows from. The first one's retry re-validates, fails, and deletes the delete
    file it wrote; the table keeps the winner's rows."""
    t = create_events(pair, version, "merge-on-read", False)
    data = tmp_path / "wh" / "ns" / "t" / "data"
    loser = pair.ice.con.session
    stale = resolve_target(loser.catalog, ("ns", "t"))
    winner = iceduck.connect(tmp_path / "wh")
    winner.execute(f"INSERT OVERWRITE {t} VALUES (1, 'only', 'a', 1.0)")
    winner.close()
    before = set(data.rglob("*"))
    duck = loser.database.cursor()
    ctx = pair.ice.context(duck, resolve_target=lambda parts: stale)
    with pytest.raises((CommitConflictError, ValidationError), match="no longer in branch main"):
        delete(ctx, Delete(("ns", "t"), where=Condition("id IN (1, 2)")))
    duck.close()
    assert set(data.rglob("*")) == before
    assert pair.ice.fetch(f"SELECT * FROM {t}") == [(1, "only", "a", 1.0)]


def test_partition_and_metrics_together_prove_whole_files(pair: Pair) -> None:
    """``cat = 'b'`` is decided by the partition, ``id >= 200`` by the metrics of what is
    left: the file of the third insert goes whole, nothing else is touched."""
    t = create_events(pair, 3, "merge-on-read", True)
    before = {r[0] for r in pair.ice.fetch(f"SELECT file_path FROM {t}.data_files")}
    assert pair.run(f"DELETE FROM {t} WHERE cat = 'b' AND id >= 200") == 10
    after = {r[0] for r in pair.ice.fetch(f"SELECT file_path FROM {t}.data_files")}
    assert len(before - after) == 1 and after < before
    assert pair.ice.scalar(f"SELECT count(*) FROM {t}.delete_files") == 0
    pair.check(t)
