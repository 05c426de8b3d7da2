"""``CALL system.add_files``: Parquet files written elsewhere (pyarrow, DuckDB; with and
without field ids) become data files of the table as they are, and the table reads
exactly their rows -- compared with DuckDB's own ``read_parquet`` of the files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import UnsupportedError, UserError, ValidationError
from iceduck.ops.procedures import add_files as add_files_module
from tests.support.faults import FaultUnavailable, add_equality_deletes, read_only

VERSIONS = [2, 3]


def write(path: Path, rows: dict[str, list[Any]], ids: dict[str, int] | None = None) -> Path:
    """A Parquet file of ``rows`` written by pyarrow (field ids only when ``ids``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(rows)
    if ids is not None:
        fields = [f.with_metadata({b"PARQUET:field_id": str(ids[f.name]).encode()}) for f in table.schema]
        table = table.cast(pa.schema(fields))
    pq.write_table(table, path)
    return path


def files_rows(pattern: str, columns: str) -> list[tuple[Any, ...]]:
    """The files' rows as DuckDB reads them itself, sorted."""
    rows = duckdb.sql(f"SELECT {columns} FROM read_parquet('{pattern}', hive_partitioning = false)")
    return sorted(rows.fetchall())


def table_rows(con: Connection, table: str, columns: str = "*") -> list[tuple[Any, ...]]:
    return sorted(con.execute(f"SELECT {columns} FROM {table}").fetchall())


def call(con: Connection, table: str, src: str | Path, extra: str = "") -> tuple[Any, ...]:
    row = con.execute(
        f"CALL system.add_files(table => '{table}', source_table => '`parquet`.`{src}`'{extra})"
    )
    return tuple(row.fetchone() or ())


def properties(con: Connection, name: str) -> dict[str, str]:
    return dict(con.session.catalog.load_table(TableIdentifier(("db",), name)).metadata.properties)


def data_files(con: Connection, table: str) -> dict[str, tuple[Any, ...]]:
    rows = con.execute(f"SELECT file_path, record_count, sort_order_id FROM {table}.files").fetchall()
    return {os.path.normpath(r[0].removeprefix("file:")): r[1:] for r in rows}


@pytest.mark.parametrize("version", VERSIONS)
def test_files_without_field_ids_are_read_by_name(con: Connection, tmp_path: Path, version: int) -> None:
    con.execute(f"CREATE TABLE db.t (id bigint, name string) TBLPROPERTIES ('format-version' = '{version}')")
    con.execute("INSERT INTO db.t VALUES (1, 'one'), (2, 'two')")
    src = tmp_path / "src"
    # columns in another order than the table's, and one the table does not have
    write(src / "a.parquet", {"name": ["x", None, "z"], "extra": [1, 2, 3], "id": [10, 11, 12]})
    write(src / "b.parquet", {"id": [13], "name": ["w"]})
    (src / "_SUCCESS").write_text("")
    (src / ".a.parquet.crc").write_text("")
    assert call(con, "db.t", src) == (2, 1)
    assert table_rows(con, "db.t") == sorted(
        [(1, "one"), (2, "two"), *files_rows(f"{src}/*.parquet", "id, name")]
    )
    assert set(data_files(con, "db.t")) >= {str(src / "a.parquet"), str(src / "b.parquet")}
    assert data_files(con, "db.t")[str(src / "a.parquet")] == (3, 0)
    mapping = json.loads(properties(con, "t")["schema.name-mapping.default"])
    assert mapping == [{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["name"]}]
    # metrics from the footer by the mapped ids: the planner prunes with them
    assert table_rows(con, "db.t WHERE id > 12") == [(13, "w")]
    bounds = con.execute(
        "SELECT readable_metrics.id.lower_bound, readable_metrics.id.upper_bound, "
        "readable_metrics.name.null_value_count FROM db.t.files WHERE record_count = 3"
    ).fetchall()
    assert bounds == [(10, 12, 1)]
    snap = con.execute("SELECT operation FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1").fetchone()
    assert snap == ("append",)


@pytest.mark.parametrize("version", VERSIONS)
def test_later_writes_deletes_and_renames_work_on_imported_files(
    con: Connection, tmp_path: Path, version: int
) -> None:
    con.execute(
        f"CREATE TABLE db.t (id bigint, name string) TBLPROPERTIES ('format-version' = '{version}', "
        "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"
    )
    write(tmp_path / "src" / "a.parquet", {"id": list(range(10)), "name": [f"n{i}" for i in range(10)]})
    assert call(con, "db.t", tmp_path / "src" / "a.parquet") == (1, 1)
    con.execute("DELETE FROM db.t WHERE id % 3 = 0")
    con.execute("UPDATE db.t SET name = 'upd' WHERE id = 4")
    con.execute("INSERT INTO db.t VALUES (100, 'new')")
    expected = sorted([(i, "upd" if i == 4 else f"n{i}") for i in range(10) if i % 3] + [(100, "new")])
    assert table_rows(con, "db.t") == expected
    deletes = con.execute("SELECT count(*) FROM db.t.delete_files").fetchone()
    assert deletes is not None and deletes[0] >= 1
    # a rename keeps reading by id: the mapping still names the old column
    con.execute("ALTER TABLE db.t RENAME COLUMN name TO label")
    con.execute("ALTER TABLE db.t ADD COLUMN score int")
    assert table_rows(con, "db.t", "id, label, score") == [(i, n, None) for i, n in expected]
    if version >= 3:  # row lineage: the imported file's rows got ids like any appended file
        ids = con.execute("SELECT _row_id FROM db.t WHERE id < 10 ORDER BY id").fetchall()
        assert len({r[0] for r in ids}) == len(ids) and all(r[0] is not None for r in ids)
        first = con.execute(
            "SELECT first_row_id FROM db.t.files WHERE file_path LIKE '%src/a.parquet'"
        ).fetchone()
        assert first is not None and first[0] is not None


def test_files_with_field_ids_are_read_by_id(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id bigint, name string)")
    con.execute("ALTER TABLE db.t RENAME COLUMN name TO label")
    # the file's names are stale, its ids are the table's: read by id, not by name
    write(tmp_path / "ids.parquet", {"id": [1, 2], "name": ["a", "b"]}, ids={"id": 1, "name": 2})
    assert call(con, "db.t", tmp_path / "ids.parquet") == (1, 1)
    assert table_rows(con, "db.t") == [(1, "a"), (2, "b")]


def test_a_file_with_ids_the_table_does_not_have_is_refused(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id bigint, name string)")
    write(tmp_path / "ids.parquet", {"id": [1], "name": ["a"]}, ids={"id": 1, "name": 7})
    with pytest.raises(ValidationError, match="field id 7"):
        call(con, "db.t", tmp_path / "ids.parquet")
    assert con.execute("SELECT count(*) FROM db.t.snapshots").fetchone() == (0,)


def test_duckdb_written_files_and_a_glob(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id int, d date, amount decimal(10, 2))")
    folder = tmp_path / "duck"
    folder.mkdir()
    for i in range(3):
        duckdb.sql(
            f"COPY (SELECT range::int + {i * 100} AS id, DATE '2024-01-01' + range::int AS d, "
            f"(range * 1.25)::decimal(10, 2) AS amount FROM range(50)) TO '{folder}/part-{i}.parquet'"
        )
    write(folder / "other.parquet", {"id": [1]})  # not matched by the glob
    assert call(con, "db.t", f"{folder}/part-*.parquet") == (3, 1)
    assert table_rows(con, "db.t") == files_rows(f"{folder}/part-*.parquet", "id, d, amount")
    assert table_rows(con, "db.t WHERE d = DATE '2024-01-03'", "id") == [(2,), (102,), (202,)]


@pytest.mark.parametrize("version", VERSIONS)
def test_hive_partition_folders_and_a_partition_filter(con: Connection, tmp_path: Path, version: int) -> None:
    con.execute(
        "CREATE TABLE db.p (id bigint, v string, cat string, n int) PARTITIONED BY (cat, n) "
        f"TBLPROPERTIES ('format-version' = '{version}')"
    )
    src = tmp_path / "hive"
    write(src / "cat=x" / "n=1" / "f1.parquet", {"id": [1, 2], "v": ["a", "b"]})
    write(src / "cat=x" / "n=2" / "f2.parquet", {"id": [3], "v": ["c"]})
    write(src / "cat=a%2Fb" / "n=1" / "f3.parquet", {"id": [4], "v": ["d"]})
    write(src / "cat=__HIVE_DEFAULT_PARTITION__" / "n=3" / "f4.parquet", {"id": [5], "v": ["e"]})
    assert call(con, "db.p", src, ", partition_filter => map('cat', 'x')") == (2, 2)
    assert table_rows(con, "db.p") == [(1, "a", "x", 1), (2, "b", "x", 1), (3, "c", "x", 2)]
    assert call(con, "db.p", src, ", partition_filter => map('cat', 'a/b')") == (1, 1)
    assert call(con, "db.p", src, ", partition_filter => map('n', '3')") == (1, 1)
    assert table_rows(con, "db.p WHERE cat IS NULL") == [(5, "e", None, 3)]
    assert table_rows(con, "db.p WHERE cat = 'a/b'") == [(4, "d", "a/b", 1)]
    partitions = con.execute("SELECT partition.cat, partition.n FROM db.p.partitions").fetchall()
    assert sorted(partitions, key=str) == sorted([("x", 1), ("x", 2), ("a/b", 1), (None, 3)], key=str)
    with pytest.raises(ValidationError, match="already exist within the target table"):
        call(con, "db.p", src)


def test_duplicates_are_refused_unless_asked(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id bigint)")
    f = write(tmp_path / "a.parquet", {"id": [1, 2]})
    call(con, "db.t", f)
    with pytest.raises(ValidationError) as e:
        call(con, "db.t", tmp_path)
    assert str(f) in str(e.value) and "'check_duplicate_files' to false" in str(e.value)
    assert table_rows(con, "db.t") == [(1,), (2,)]
    assert call(con, "db.t", f, ", check_duplicate_files => false") == (1, 1)
    assert table_rows(con, "db.t") == [(1,), (1,), (2,), (2,)]


@pytest.mark.parametrize(
    ("setup", "source", "extra", "error", "says"),
    [
        ("", "`parquet`.`{tmp}/missing`", "", UserError, "does not exist"),
        ("", "db.src", "", UnsupportedError, "no Hive or Spark"),
        ("", "`orc`.`{tmp}/a.parquet`", "", UnsupportedError, "Parquet files only"),
        ("", "`parquet`.`{tmp}/a.parquet`", ", parallelism => 0", UserError, "Parallelism should be larger"),
        ("", "`parquet`.`{tmp}/a.parquet`", ", partition_filter => map('id', '1')", UserError,
         "Cannot use partition filter with an unpartitioned table"),
        ("", "`parquet`.`{tmp}/notparquet.txt`", "", Exception, "not a readable Parquet file"),
        ("PARTITIONED BY (bucket(4, id))", "`parquet`.`{tmp}`", "", UnsupportedError, "non-identity"),
        ("PARTITIONED BY (id)", "`parquet`.`{tmp}`", ", partition_filter => map('x', '1')", UserError,
         "not partitioned: \\['x'\\]"),
        ("PARTITIONED BY (id)", "`parquet`.`{tmp}/hive`", "", UserError, "Cannot find a partition spec"),
        ("PARTITIONED BY (id)", "`parquet`.`{tmp}/ok`", ", partition_filter => map('id', '9')", UserError,
         "Cannot find any matching partitions"),
        ("PARTITIONED BY (id)", "`parquet`.`{tmp}/bad`", "", UserError, "is not a long value"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_and_commits_nothing(
    con: Connection, tmp_path: Path, setup: str, source: str, extra: str, error: type[Exception], says: str
) -> None:
    con.execute(f"CREATE TABLE db.t (id bigint, v string) {setup}")
    write(tmp_path / "a.parquet", {"id": [1], "v": ["a"]})
    write(tmp_path / "hive" / "k=1" / "b.parquet", {"v": ["b"]})
    write(tmp_path / "ok" / "id=1" / "b.parquet", {"v": ["b"]})
    write(tmp_path / "bad" / "id=one" / "b.parquet", {"v": ["b"]})
    (tmp_path / "notparquet.txt").write_text("hello")
    src = source.replace("{tmp}", str(tmp_path))
    with pytest.raises(error, match=says):
        con.execute(f"CALL system.add_files(table => 'db.t', source_table => '{src}'{extra})")
    assert con.execute("SELECT count(*) FROM db.t.snapshots").fetchone() == (0,)
    assert os.path.exists(tmp_path / "a.parquet")


def test_a_partitioned_source_into_an_unpartitioned_table_is_refused(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id bigint)")
    write(tmp_path / "k=1" / "a.parquet", {"id": [1]})
    with pytest.raises(UserError, match="Cannot add partitioned files to an unpartitioned table"):
        call(con, "db.t", tmp_path)


def test_a_required_column_missing_from_a_file_is_refused(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id bigint NOT NULL, v string)")
    write(tmp_path / "a.parquet", {"v": ["a"]})
    with pytest.raises(ValidationError, match="required column 'id'"):
        call(con, "db.t", tmp_path / "a.parquet")
    write(tmp_path / "b.parquet", {"other": [1]})
    con.execute("CREATE TABLE db.u (id bigint)")
    with pytest.raises(ValidationError, match="no column of"):
        call(con, "db.u", tmp_path / "b.parquet")


def test_an_existing_name_mapping_is_kept_and_used(con: Connection, tmp_path: Path) -> None:
    mapping = json.dumps([{"field-id": 1, "names": ["id", "legacy_id"]}, {"field-id": 2, "names": ["v"]}])
    con.execute(
        f"CREATE TABLE db.t (id bigint, v string) TBLPROPERTIES ('schema.name-mapping.default' = '{mapping}')"
    )
    write(tmp_path / "a.parquet", {"legacy_id": [7, 8], "v": ["a", "b"]})
    assert call(con, "db.t", tmp_path / "a.parquet") == (1, 1)
    assert table_rows(con, "db.t") == [(7, "a"), (8, "b")]
    assert properties(con, "t")["schema.name-mapping.default"] == mapping


def test_nested_columns_map_by_name(con: Connection, tmp_path: Path) -> None:
    con.execute(
        "CREATE TABLE db.t (id bigint, s struct<a: int, b: string>, l array<int>, m map<string, int>)"
    )
    rows = {
        "id": [1, 2],
        "s": [{"b": "x", "a": 1}, None],
        "l": [[1, 2], []],
        "m": pa.array([[("k", 1)], None], type=pa.map_(pa.string(), pa.int64())),
    }
    write(tmp_path / "n.parquet", rows)
    call(con, "db.t", tmp_path / "n.parquet")
    got = con.execute("SELECT id, s.a, s.b, l, m['k'] FROM db.t ORDER BY id").fetchall()
    assert got == [(1, 1, "x", [1, 2], 1), (2, None, None, [], None)]


def test_older_equality_deletes_do_not_apply_to_imported_rows(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id bigint, v string) TBLPROPERTIES ('format-version' = '2')")
    con.execute("INSERT INTO db.t VALUES (1, 'old'), (2, 'old')")
    add_equality_deletes(con, "db", "t", "id", [1])
    assert table_rows(con, "db.t") == [(2, "old")]
    write(tmp_path / "a.parquet", {"id": [1, 3], "v": ["new", "new"]})
    call(con, "db.t", tmp_path / "a.parquet")
    # "applies to data files with a data sequence number strictly less than the delete's"
    assert table_rows(con, "db.t") == [(1, "new"), (2, "old"), (3, "new")]


def test_a_concurrent_import_of_the_same_file_lands_once(
    con: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer imports the file while this call reads footers: the commit retries
    on the new table state, finds the file there and refuses; the file stays, once."""
    con.execute("CREATE TABLE db.t (id bigint)")
    f = write(tmp_path / "src" / "a.parquet", {"id": [1, 2]})
    other = iceduck.connect(tmp_path / "wh")
    real = add_files_module.imported_file
    raced: list[bool] = []

    def racing(*args: Any) -> Any:
        if not raced:
            raced.append(True)
            other.execute(f"CALL system.add_files('db.t', '`parquet`.`{f}`')")
        return real(*args)

    monkeypatch.setattr(add_files_module, "imported_file", racing)
    with pytest.raises(ValidationError, match="already exist within the target table"):
        call(con, "db.t", f)
    other.close()
    assert raced and f.exists()
    assert table_rows(con, "db.t") == [(1,), (2,)]
    assert con.execute("SELECT count(*) FROM db.t.snapshots").fetchone() == (1,)


def test_a_failed_commit_keeps_the_source_files_and_the_table(con: Connection, tmp_path: Path) -> None:
    con.execute("CREATE TABLE db.t (id bigint)")
    con.execute("INSERT INTO db.t VALUES (0)")
    f = write(tmp_path / "src" / "a.parquet", {"id": [1]})
    metadata = tmp_path / "wh" / "db" / "t" / "metadata"
    if not metadata.is_dir():
        pytest.skip(f"unexpected table layout: {metadata}")
    try:
        with read_only(metadata):
            with pytest.raises(Exception, match=r"[Rr]ead-only"):
                call(con, "db.t", f)
    except FaultUnavailable as e:
        pytest.skip(str(e))
    assert f.exists()
    assert table_rows(con, "db.t") == [(0,)]
    assert call(con, "db.t", f) == (1, 1)
    assert table_rows(con, "db.t") == [(0,), (1,)]


@pytest.mark.parametrize("version", VERSIONS)
def test_evolved_schema_and_spec_use_the_current_ones(con: Connection, tmp_path: Path, version: int) -> None:
    con.execute(
        f"CREATE TABLE db.t (id bigint, v string, cat string) TBLPROPERTIES ('format-version' = '{version}')"
    )
    con.execute("INSERT INTO db.t VALUES (1, 'old', 'x')")
    # v is dropped and added again: a new id, which the name mapping (made now) gives to "v"
    con.execute("ALTER TABLE db.t DROP COLUMN v")
    con.execute("ALTER TABLE db.t ADD COLUMN v string")
    con.execute("ALTER TABLE db.t ADD PARTITION FIELD cat")
    write(tmp_path / "src" / "cat=y" / "a.parquet", {"id": [2, 3], "v": ["new", None]})
    cur = con.execute(f"CALL system.add_files('db.t', '`parquet`.`{tmp_path / 'src'}`')")
    assert [(d[0], d[1]) for d in cur.description] == [
        ("added_files_count", "BIGINT"),
        ("changed_partition_count", "BIGINT"),
    ]
    assert cur.fetchall() == [(1, 1)]
    assert table_rows(con, "db.t", "id, v, cat") == [(1, None, "x"), (2, "new", "y"), (3, None, "y")]
    specs = con.execute("SELECT spec_id FROM db.t.files WHERE file_path LIKE '%cat=y/a.parquet'").fetchall()
    assert specs == [(1,)]
