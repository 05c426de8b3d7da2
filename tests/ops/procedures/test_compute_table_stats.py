"""``CALL system.compute_table_stats``: theta sketches of column values in a Puffin file
registered in the table metadata's ``statistics``.

Below 4096 distinct values a theta sketch is exact, so every ``ndv`` is compared with
DuckDB's ``count(DISTINCT ...)`` of the same snapshot (deletes applied: position deletes on
v2, deletion vectors on v3, equality deletes on both); above, the estimate is within theta
error. The Puffin file is read back with the project's reader, and the table's rows never
change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UnsupportedError, ValidationError
from iceduck.formats.puffin import read_blob, read_puffin_footer
from iceduck.formats.theta_sketch import THETA_BLOB_TYPE, ThetaSketch, sketch_estimate
from iceduck.io.fileio import to_local_path
from iceduck.spec.snapshot import StatisticsFile
from iceduck.spec.table_metadata import TableMetadata
from tests.ops.procedures.expire_support import disk_files, referenced_files, snapshot_ids, table_dir
from tests.support.faults import add_equality_deletes

COLUMNS = ["id", "n", "s", "d", "dt", "ts", "tz", "f", "b", "bin", "u", "fx"]


def make_table(con: Connection, version: int) -> None:
    """Several small files of many types, with row-level deletes of the table's version."""
    con.execute(
        "CREATE TABLE db.t (id bigint, n int, s string, d decimal(12, 3), dt date, ts timestamp_ntz, "
        "tz timestamp, f double, b boolean, bin binary, u uuid, fx fixed(3)) "
        f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
    )
    for part in range(4):
        con.execute(
            "INSERT INTO db.t SELECT i, (i % 17)::INT, 's' || (i % 23), (i / 7)::DECIMAL(12, 3), "
            "DATE '2024-01-01' + (i % 40)::INT, TIMESTAMP '2024-01-01' + to_seconds(i % 50), "
            "TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_minutes(i % 60), (i % 9) / 4.0, i % 2 = 0, "
            "('b' || (i % 31))::BLOB, md5(((i % 45))::VARCHAR)::UUID, ('x' || (i % 10 + 10))::BLOB "
            f"FROM range({part * 150}, {part * 150 + 150}) t(i)"
        )
    con.execute("INSERT INTO db.t (id) VALUES (9999)")  # nulls are not values
    con.execute("DELETE FROM db.t WHERE id % 10 = 3")


def metadata(con: Connection) -> TableMetadata:
    return con.session.catalog.load_table(TableIdentifier(("db",), "t")).metadata


def call(con: Connection, args: str = "'db.t'") -> list[tuple[Any, ...]]:
    return con.execute(f"CALL system.compute_table_stats({args})").fetchall()


def ndv(entry: StatisticsFile, schema_of: TableMetadata) -> dict[str, int]:
    schema = schema_of.schema()
    found = {}
    for blob in entry.blob_metadata:
        name = schema.column_name(blob.fields[0])
        assert name is not None and blob.properties is not None
        found[name] = int(blob.properties["ndv"])
    return found


def distinct_counts(con: Connection, columns: list[str], as_of: str = "") -> dict[str, int]:
    select = ", ".join(f"count(DISTINCT {c})" for c in columns)
    row = con.execute(f"SELECT {select} FROM db.t{as_of}").fetchone()
    assert row is not None
    return dict(zip(columns, (int(v) for v in row), strict=True))


@pytest.mark.parametrize("version", [2, 3])
def test_ndv_of_every_column_is_the_exact_distinct_count(con: Connection, version: int) -> None:
    make_table(con, version)
    add_equality_deletes(con, "db", "t", "id", [0, 1, 2, 150, 151, 1000000])
    rows_before = sorted(con.execute("SELECT * FROM db.t").fetchall(), key=repr)

    [(location,)] = call(con)

    md = metadata(con)
    [entry] = md.statistics
    assert entry.snapshot_id == md.current_snapshot_id
    assert entry.statistics_path == location
    assert location.startswith(md.location.rstrip("/") + "/metadata/")
    assert os.path.basename(location).startswith(f"{md.current_snapshot_id}-") and location.endswith(".stats")
    assert ndv(entry, md) == distinct_counts(con, COLUMNS)
    snapshot = md.current_snapshot()
    assert snapshot is not None
    for blob in entry.blob_metadata:
        assert blob.type == THETA_BLOB_TYPE and len(blob.fields) == 1
        assert (blob.snapshot_id, blob.sequence_number) == (snapshot.snapshot_id, snapshot.sequence_number)
    assert sorted(con.execute("SELECT * FROM db.t").fetchall(), key=repr) == rows_before
    assert md.current_snapshot_id == snapshot_ids(con, "db.t")[-1]  # no snapshot was added


def test_the_puffin_file_round_trips_through_the_reader(con: Connection) -> None:
    make_table(con, 3)
    call(con, "table => 'db.t', columns => array('s', 'n')")
    [entry] = metadata(con).statistics
    path = to_local_path(entry.statistics_path)
    footer = read_puffin_footer(path)
    assert footer.file_size == entry.file_size_in_bytes == os.path.getsize(path)
    assert footer.footer_size == entry.file_footer_size_in_bytes
    assert footer.properties["created-by"].startswith("iceduck ")
    assert [b.fields for b in footer.blobs] == [b.fields for b in entry.blob_metadata] == [(3,), (2,)]
    for blob, registered in zip(footer.blobs, entry.blob_metadata, strict=True):
        assert blob.type == THETA_BLOB_TYPE and blob.compression_codec == "zstd"
        assert dict(blob.properties) == registered.properties
        sketch = read_blob(path, blob)
        assert int(sketch_estimate(sketch)) == int(blob.properties["ndv"])
    assert ndv(entry, metadata(con)) == distinct_counts(con, ["s", "n"])


def test_an_older_snapshot_with_its_schema_and_a_replaced_entry(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, s string)")
    con.execute("INSERT INTO db.t SELECT i, 'a' || (i % 5) FROM range(100) t(i)")
    old = snapshot_ids(con, "db.t")[-1]
    con.execute("ALTER TABLE db.t ADD COLUMN extra int")
    con.execute("ALTER TABLE db.t RENAME COLUMN s TO label")
    con.execute("INSERT INTO db.t SELECT i, 'b' || (i % 7), i % 3 FROM range(100, 300) t(i)")

    call(con, f"table => 'db.t', snapshot_id => {old}")
    md = metadata(con)
    [entry] = md.statistics
    assert entry.snapshot_id == old
    assert {b.fields[0]: int(b.properties["ndv"]) for b in entry.blob_metadata if b.properties} == {
        1: 100,
        2: 5,
    }

    [(first,)] = call(con)
    [(second,)] = call(con, "'db.t', NULL, array('label', 'extra', 'label')")
    md = metadata(con)
    assert sorted(s.snapshot_id for s in md.statistics) == sorted([old, md.current_snapshot_id])
    current = next(s for s in md.statistics if s.snapshot_id == md.current_snapshot_id)
    assert current.statistics_path == second != first
    assert ndv(current, md) == {"label": 12, "extra": 3}
    assert os.path.exists(to_local_path(first))  # replaced, left for remove_orphan_files (as Java)


def test_more_values_than_the_sketch_keeps_are_estimated_within_theta_error(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, k int)")
    con.execute("INSERT INTO db.t SELECT i, (i % 20000)::INT FROM range(60000) t(i)")
    call(con)
    found = ndv(metadata(con).statistics[0], metadata(con))
    # relative standard error of a k = 4096 sketch is about 1/sqrt(4096) = 1.6%: allow 5%
    assert abs(found["id"] - 60000) < 0.05 * 60000
    assert abs(found["k"] - 20000) < 0.05 * 20000


def test_sketches_read_as_the_librarys_and_are_exact_below_k() -> None:
    datasketches = pytest.importorskip("datasketches")
    for n in (0, 1, 2, 4096):
        mine = ThetaSketch()
        mine.update_all(i.to_bytes(8, "little", signed=True) for i in range(n))
        reference = datasketches.update_theta_sketch()
        for i in range(n):
            reference.update(i)  # the library hashes an int as its 8 little-endian bytes
        ours = datasketches.compact_theta_sketch.deserialize(mine.compact_bytes())
        theirs = reference.compact()
        assert list(ours) == list(theirs) == mine.hashes()  # the same hashes: the same sketch
        assert ours.get_estimate() == theirs.get_estimate() == mine.estimate() == n
    big = ThetaSketch()
    big.update_all(i.to_bytes(8, "little", signed=True) for i in range(50000))
    union = datasketches.theta_union()
    union.update(datasketches.compact_theta_sketch.deserialize(big.compact_bytes()))
    assert abs(union.get_result().get_estimate() - 50000) < 2500


def test_expire_snapshots_removes_the_statistics_of_expired_snapshots(con: Connection) -> None:
    make_table(con, 2)
    first = snapshot_ids(con, "db.t")[0]
    call(con, f"'db.t', {first}")
    [(kept,)] = call(con)
    con.execute("CALL system.expire_snapshots('db.t', TIMESTAMP '2999-01-01', 1)")
    md = metadata(con)
    assert [s.statistics_path for s in md.statistics] == [kept]
    referenced = referenced_files(con, "db.t") | {os.path.normpath(to_local_path(kept))}
    assert disk_files(table_dir(con, "db", "t")) == referenced


@pytest.mark.parametrize(
    ("args", "error", "says"),
    [
        ("'db.t', 12345", NotFoundError, "Snapshot not found: 12345"),
        ("table => 'db.t', columns => array('nope')", NotFoundError, "Can't find column nope"),
        ("table => 'db.t', columns => array('st')", ValidationError, "non-primitive type column: st"),
        (
            "table => 'db.t', columns => array('v')",
            ValidationError,
            "column v: variant values have no sketch",
        ),
        ("table => 'db.t', columns => array('l.element')", ValidationError, "inside a list or map"),
        ("table => 'db.t', columns => array()", ValidationError, "Columns cannot be null/empty"),
        ("'db.nope'", NotFoundError, "nope"),
    ],
)
def test_errors_name_the_problem(con: Connection, args: str, error: type[Exception], says: str) -> None:
    con.execute(
        "CREATE TABLE db.t (id bigint, st struct<a: int>, v variant, l array<int>) "
        "TBLPROPERTIES ('format-version'='3')"
    )
    con.execute("INSERT INTO db.t VALUES (1, {'a': 1}, NULL, [1, 2])")
    with pytest.raises(error, match=says.replace("(", r"\(")):
        call(con, args)
    assert metadata(con).statistics == ()


def test_nested_struct_fields_and_an_empty_table(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, st struct<a: int, b: string>)")
    assert call(con) == []  # no snapshot: nothing to compute, nothing committed
    assert metadata(con).statistics == ()
    con.execute("INSERT INTO db.t SELECT i, {'a': (i % 4)::INT, 'b': 'x' || (i % 6)} FROM range(50) t(i)")
    call(con, "table => 'db.t', columns => array('st.a', 'st.b', 'id')")
    assert ndv(metadata(con).statistics[0], metadata(con)) == {"st.a": 4, "st.b": 6, "id": 50}


def test_a_missing_datasketches_package_is_named(con: Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    con.execute("CREATE TABLE db.t (id bigint)")
    con.execute("INSERT INTO db.t VALUES (1)")

    monkeypatch.setitem(sys.modules, "datasketches", None)  # "import datasketches" fails
    with pytest.raises(UnsupportedError, match="the 'datasketches' package"):
        call(con)
    assert metadata(con).statistics == ()
    assert not [p for p in disk_files(table_dir(con, "db", "t")) if p.endswith(".stats")]


def test_describe_and_explain_show_the_ndv_of_the_snapshot_read(con: Connection) -> None:
    con.execute("CREATE TABLE db.t (id bigint, s string, x int)")
    con.execute("INSERT INTO db.t SELECT i, 'a' || (i % 4), NULL FROM range(30) t(i)")
    old = snapshot_ids(con, "db.t")[-1]
    assert [r[5] for r in con.execute("DESCRIBE db.t").fetchall()] == [None, None, None]
    call(con, "table => 'db.t', columns => array('id', 's')")
    con.execute("INSERT INTO db.t VALUES (100, 'z', 1)")

    def extra(sql: str) -> list[Any]:
        return [(r[0], r[5]) for r in con.execute(sql).fetchall()]

    def explained(sql: str) -> list[str]:
        lines = [line for (line,) in con.execute(f"EXPLAIN {sql}").fetchall()]
        return [line.strip() for line in lines if line.strip().startswith("ndv:")]

    # the current snapshot has no statistics file: nothing shown
    assert extra("DESCRIBE db.t") == [("id", None), ("s", None), ("x", None)]
    assert explained("SELECT * FROM db.t") == []
    # the snapshot the statistics are of: shown for it
    assert extra(f"DESCRIBE db.t VERSION AS OF {old}") == [("id", "ndv=30"), ("s", "ndv=4"), ("x", None)]
    assert explained(f"SELECT * FROM db.t VERSION AS OF {old}") == ["ndv: id=30, s=4"]
    call(con)
    assert extra("DESCRIBE db.t") == [("id", "ndv=31"), ("s", "ndv=5"), ("x", "ndv=1")]
    assert explained("SELECT count(*) FROM db.t WHERE id > 3") == ["ndv: id=31, s=5, x=1"]


def test_a_snapshot_expired_during_the_computation_commits_nothing_and_leaves_no_file(
    con: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from iceduck.ops.procedures import table_stats

    con.execute("CREATE TABLE db.t (id bigint)")
    con.execute("INSERT INTO db.t VALUES (1), (2)")
    first = snapshot_ids(con, "db.t")[0]
    con.execute("INSERT INTO db.t VALUES (3)")
    computed = table_stats._sketches

    def then_expired(*args: Any) -> Any:
        sketches = computed(*args)
        other = iceduck.connect(tmp_path / "wh")  # another writer expires the snapshot meanwhile
        other.execute(f"CALL system.expire_snapshots(table => 'db.t', snapshot_ids => array({first}))")
        other.close()
        return sketches

    monkeypatch.setattr(table_stats, "_sketches", then_expired)
    with pytest.raises(ValidationError, match=f"Snapshot not found: {first}"):
        call(con, f"'db.t', {first}")
    assert metadata(con).statistics == ()
    assert first not in snapshot_ids(con, "db.t")
    assert disk_files(table_dir(con, "db", "t")) == referenced_files(con, "db.t")
