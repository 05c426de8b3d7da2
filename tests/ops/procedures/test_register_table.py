"""``CALL system.register_table``: an existing metadata file under a new name, the row
Spark's JDBC catalog writes, and clear refusals."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute(
        "CREATE TABLE db.t (id bigint, p int) USING iceberg PARTITIONED BY (p) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    con.execute("INSERT INTO db.t SELECT i, i % 3 FROM range(10) r(i)")
    con.execute("INSERT INTO db.t VALUES (100, 1)")
    con.execute("DELETE FROM db.t WHERE id = 4")
    yield con
    con.close()


def metadata_file(con: Connection, table: str = "db.t") -> str:
    return str(
        con.execute(f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC").fetchone()[0]
    )


def catalog_row(tmp_path: Path, name: str) -> tuple[object, ...]:
    with sqlite3.connect(tmp_path / "wh" / "catalog.db") as db:
        row = db.execute(
            "SELECT catalog_name, table_namespace, metadata_location, previous_metadata_location, "
            "iceberg_type FROM iceberg_tables WHERE table_name = ?",
            [name],
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_registers_the_current_file_under_a_new_name(con: Connection, tmp_path: Path) -> None:
    location = metadata_file(con)
    cur = con.execute("CALL system.register_table('db.copy', ?)", [location])
    assert [(d[0], d[1]) for d in cur.description] == [
        ("current_snapshot_id", "BIGINT"),
        ("total_records_count", "BIGINT"),
        ("total_data_files_count", "BIGINT"),
    ]
    snapshot_id, records, files = con.execute(
        "SELECT snapshot_id, summary['total-records'], summary['total-data-files'] FROM db.t.snapshots "
        "ORDER BY committed_at DESC LIMIT 1"
    ).fetchone()
    assert cur.fetchall() == [(snapshot_id, int(records), int(files))]
    assert records == "11"  # position deletes are not subtracted from total-records
    assert (
        con.execute("SELECT * FROM db.copy ORDER BY id").fetchall()
        == con.execute("SELECT * FROM db.t ORDER BY id").fetchall()
    )
    # the row is the one Spark's JdbcCatalog.registerTable inserts: the file as given, no previous
    assert catalog_row(tmp_path, "copy") == ("iceduck", "db", location, None, "TABLE")


def test_a_dropped_table_comes_back_and_takes_writes(con: Connection, tmp_path: Path) -> None:
    location = metadata_file(con)
    expected = con.execute("SELECT * FROM db.t ORDER BY id").fetchall()
    con.execute("DROP TABLE db.t")
    con.execute("CALL system.register_table(metadata_file => ?, table => 'iceduck.db.t')", [location])
    assert con.execute("SELECT * FROM db.t ORDER BY id").fetchall() == expected
    con.execute("INSERT INTO db.t VALUES (200, 2)")
    assert con.execute("SELECT count(*) FROM db.t").fetchone() == (len(expected) + 1,)
    assert catalog_row(tmp_path, "t")[3] == location  # the insert committed on top of the file


def test_an_older_file_and_a_relative_path(
    con: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [
        r[0] for r in con.execute("SELECT file FROM db.t.metadata_log_entries ORDER BY timestamp").fetchall()
    ]
    first_insert = Path(files[1])
    monkeypatch.chdir(first_insert.parent)
    rows = con.execute("CALL system.register_table('db.old', ?)", [first_insert.name]).fetchall()
    assert rows[0][1:] == (10, 3)
    assert con.execute("SELECT count(*) FROM db.old").fetchone() == (10,)
    assert catalog_row(tmp_path, "old")[2] == str(first_insert)


def test_a_table_without_snapshots(con: Connection) -> None:
    con.execute("CREATE TABLE db.empty (a int)")
    location = metadata_file(con, "db.empty")
    assert con.execute("CALL system.register_table('db.e2', ?)", [location]).fetchall() == [
        (None, None, None)
    ]


@pytest.mark.parametrize(
    ("name", "file", "says"),
    [
        ("db.t", "{current}", "table 'db.t' already exists"),
        ("nope.x", "{current}", "namespace 'nope' not found"),
        ("db.x", "{wh}/db/t/metadata/missing.metadata.json", "does not exist"),
        ("db.x", "{wh}/db/t/metadata", "metadata"),
        ("db.x", "{wh}/catalog.db", "catalog.db"),
        ("db.x", "", "metadata_file is empty"),
        ("spark_catalog.db.x", "{current}", "spark_catalog"),
    ],
)
def test_refusals_name_the_problem(con: Connection, tmp_path: Path, name: str, file: str, says: str) -> None:
    current = metadata_file(con)
    path = file.format(current=current, wh=tmp_path / "wh")
    with pytest.raises(iceduck.Error) as raised:
        con.execute("CALL system.register_table(?, ?)", [name, path])
    assert says in str(raised.value)
    assert con.execute("SHOW TABLES IN db").fetchall() == [("db", "t")]  # nothing registered


def test_the_hadoop_catalog_does_not_register(tmp_path: Path) -> None:
    con = iceduck.connect(tmp_path / "hwh", catalog_type="hadoop")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (a int)")
    location = metadata_file(con)
    with pytest.raises(iceduck.Error, match="does not register tables"):
        con.execute("CALL system.register_table('db.u', ?)", [location])
    con.close()
