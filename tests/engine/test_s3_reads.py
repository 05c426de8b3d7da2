"""DuckDB reading table files in S3 exactly as local ones: equality deletes, deletion
vectors and position deletes read by a fresh connection, broken and missing files named
by their ``s3://`` location, and how DuckDB is given the store (``iceduck.duckdb-io``).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.engine import object_stores
from iceduck.errors import CorruptDataError, IceduckError, UnsupportedError, UserError
from iceduck.io import object_store
from iceduck.io.fileio import MissingFileError
from iceduck.io.scoped_filesystem import ScopedHandler
from tests.support.faults import add_equality_deletes
from tests.support.s3 import S3Server, client


@pytest.fixture
def con(s3_connection: Connection) -> Connection:
    return s3_connection


def rows(con: Connection, sql: str) -> list[tuple[Any, ...]]:
    return sorted(con.execute(sql).fetchall())


def make(con: Connection, bucket: str, name: str, properties: str, partitioned: bool = True) -> str:
    location = f"s3://{bucket}/{name}-{uuid.uuid4().hex[:8]}"
    partitioning = "PARTITIONED BY (bucket(2, id))" if partitioned else ""
    con.execute(
        f"CREATE TABLE db.{name} (id bigint, s string) USING iceberg {partitioning} "
        f"LOCATION '{location}' TBLPROPERTIES ({properties})"
    )
    con.execute(f"INSERT INTO db.{name} SELECT i, 's' || i FROM range(50) r(i)")
    return location


def test_equality_deletes_in_a_bucket(con: Connection, s3_bucket: str) -> None:
    make(con, s3_bucket, "eq", "'format-version'='2'", partitioned=False)
    path = add_equality_deletes(con, "db", "eq", "id", [1, 2, 3, 40])
    assert path.startswith(f"s3://{s3_bucket}/")
    expected = [(i, f"s{i}") for i in range(50) if i not in (1, 2, 3, 40)]
    assert rows(con, "SELECT id, s FROM db.eq") == expected
    assert rows(con, "SELECT count(*) FROM db.eq WHERE id < 10") == [(7,)]


@pytest.mark.parametrize("version", [2, 3])
def test_deletes_read_by_a_fresh_connection(
    con: Connection, s3_bucket: str, tmp_path: Path, version: int
) -> None:
    make(con, s3_bucket, "mor", f"'format-version'='{version}', 'write.delete.mode'='merge-on-read'")
    con.execute("DELETE FROM db.mor WHERE id % 7 = 0")
    con.execute("DELETE FROM db.mor WHERE id = 13")  # a second delete file merges (DVs) or adds
    other = iceduck.connect(tmp_path / "wh")  # no cache: every file is read from the bucket
    try:
        expected = [(i,) for i in range(50) if i % 7 and i != 13]
        assert rows(other, "SELECT id FROM db.mor") == expected
        assert rows(other, "SELECT id FROM db.mor WHERE _pos < 3 AND id < 0") == []
        files = rows(other, "SELECT DISTINCT _file FROM db.mor")
        assert all(f.startswith(f"s3://{s3_bucket}/") for (f,) in files)
    finally:
        other.close()


@pytest.mark.parametrize(("fault", "kind"), [("missing", MissingFileError), ("damaged", CorruptDataError)])
def test_a_missing_or_damaged_data_file_is_named_by_its_location(
    con: Connection, s3_configured: S3Server, s3_bucket: str, tmp_path: Path, fault: str, kind: type
) -> None:
    make(con, s3_bucket, fault, "'format-version'='2'")
    (path,) = con.execute(f"SELECT file_path FROM db.{fault}.files LIMIT 1").fetchone()
    s3, key = client(s3_configured.endpoint_url), path.split("/", 3)[3]
    if fault == "missing":
        s3.delete_object(Bucket=s3_bucket, Key=key)
    else:
        s3.put_object(Bucket=s3_bucket, Key=key, Body=b"not a parquet file at all, not even close")
    other = iceduck.connect(tmp_path / "wh")  # no cached footers
    try:
        with pytest.raises(IceduckError) as caught:
            other.execute(f"SELECT * FROM db.{fault}").fetchall()
        assert isinstance(caught.value.__cause__, kind), repr(caught.value.__cause__)
        assert path in str(caught.value)
    finally:
        other.close()


def test_duckdb_io_setting(con: Connection, s3_bucket: str) -> None:
    make(con, s3_bucket, "io", "'format-version'='2'")
    object_store.configure({object_stores.DUCKDB_IO: "fsspec"})
    assert rows(con, "SELECT count(*) FROM db.io") == [(50,)]
    object_store.configure({object_stores.DUCKDB_IO: "sometimes"})
    with pytest.raises(UserError, match=r"iceduck\.duckdb-io must be one of auto, httpfs, fsspec"):
        object_stores.mode()


def test_httpfs_required_but_missing_is_one_clear_error(
    tmp_path: Path, s3_configured: S3Server, s3_bucket: str
) -> None:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    make(con, s3_bucket, "h", "'format-version'='2'")
    con.close()
    object_store.configure({object_stores.DUCKDB_IO: "httpfs"})
    fresh = iceduck.connect(tmp_path / "wh")  # a new database: nothing registered yet
    try:
        try:
            got = rows(fresh, "SELECT count(*) FROM db.h")
        except IceduckError as e:  # this DuckDB has no httpfs (no wheel, no network)
            assert isinstance(e.__cause__, UnsupportedError) or isinstance(e, UnsupportedError)
            assert "httpfs extension cannot be loaded" in str(e)
        else:  # httpfs loaded: the SECRET made of the same properties reads the bucket
            assert got == [(50,)]
    finally:
        fresh.close()


def test_the_s3_secret_is_made_of_the_iceberg_properties() -> None:
    sql = object_stores.s3_secret_sql(
        {
            "s3.endpoint": "http://127.0.0.1:9000",
            "s3.access-key-id": "AK",
            "s3.secret-access-key": "S'K",
            "s3.session-token": "ST",
            "client.region": "eu-west-1",
            "s3.path-style-access": "true",
        }
    )
    assert sql == (
        "CREATE OR REPLACE SECRET iceduck_s3 (TYPE s3, KEY_ID 'AK', SECRET 'S''K', SESSION_TOKEN 'ST', "
        "REGION 'eu-west-1', ENDPOINT '127.0.0.1:9000', USE_SSL false, URL_STYLE 'path')"
    )
    chain = object_stores.s3_secret_sql({"client.region": "us-east-1"})
    assert (
        chain
        == "CREATE OR REPLACE SECRET iceduck_s3 (TYPE s3, PROVIDER credential_chain, REGION 'us-east-1')"
    )


def test_a_refused_read_inside_duckdb_is_one_storage_error(s3_server: S3Server) -> None:
    """DuckDB reading through the fsspec filesystem quotes pyarrow's traceback: the error
    names the object and the cause, not the traceback."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from iceduck.engine.connection import open_cursor, open_database
    from iceduck.engine.file_errors import reading_files
    from iceduck.errors import StorageError
    from iceduck.io import fileio
    from tests.support.s3 import AUTH_BUCKET, auth_server

    before = object_store.properties()
    try:
        with auth_server() as server:
            object_store.configure(
                {**server.properties, "s3.retry.num-retries": "0", object_stores.DUCKDB_IO: "fsspec"},
                replace=True,
            )
            buffer = io.BytesIO()
            pq.write_table(pa.table({"a": [1]}), buffer)
            location = f"s3://{AUTH_BUCKET}/refused/f.parquet"
            fileio.write_new(location, buffer.getvalue())
            database = open_database()
            cursor = open_cursor(database)
            paths = object_stores.duck_paths(cursor, [location])
            assert cursor.execute("SELECT a FROM read_parquet(?)", [paths]).fetchall() == [(1,)]
            object_store.configure({"s3.secret-access-key": "wrong"})
            cursor = open_cursor(database)
            with pytest.raises(StorageError) as caught, reading_files(cursor, paths):
                cursor.execute("SELECT a FROM read_parquet(?)", [paths]).fetchall()
            assert str(caught.value).startswith(f"{location}: access denied: check the credentials")
            assert "Traceback" not in str(caught.value)
            database.close()
    finally:
        object_store.configure(before, replace=True)


def test_paths_handed_to_pyarrow_drop_the_scheme_and_the_adls_account() -> None:
    from iceduck.engine.store_filesystem import ABFS, S3

    assert S3._strip_protocol("s3://b/t/data/f.parquet") == "b/t/data/f.parquet"
    assert ABFS._strip_protocol("abfss://box@acct.dfs.core.windows.net/t/f") == "box/t/f"
    assert object_stores.duck_location("s3a://b/t/f") == "s3://b/t/f"


def test_duckdb_asks_the_store_about_a_file_once(
    con: Connection, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB asks the fsspec path about each file it reads several times per scan (glob,
    exists, info, size, modified); files are immutable, so after the first scan a second
    one describes no file again: no HEAD request per file and scan."""
    object_store.configure({object_stores.DUCKDB_IO: "fsspec"})
    make(con, s3_bucket, "heads", "'format-version'='2'")
    asked: list[str] = []
    original = ScopedHandler.get_file_info

    def counting(self: ScopedHandler, paths: list[str]) -> Any:
        asked.extend(paths)
        return original(self, paths)

    monkeypatch.setattr(ScopedHandler, "get_file_info", counting)
    expected = [(i,) for i in range(50)]
    assert rows(con, "SELECT id FROM db.heads") == expected
    first = len(asked)
    assert first > 0  # the first scan describes every file it reads
    asked.clear()
    assert rows(con, "SELECT id FROM db.heads") == expected
    assert asked == []


def test_a_file_deleted_after_it_was_read_is_still_named(
    con: Connection, s3_configured: S3Server, s3_bucket: str
) -> None:
    """What the store said of a file is kept (above); a file removed behind iceduck's back
    afterwards is still one clear error naming it, never stale rows."""
    object_store.configure({object_stores.DUCKDB_IO: "fsspec"})
    make(con, s3_bucket, "gone", "'format-version'='2'", partitioned=False)
    assert len(rows(con, "SELECT id FROM db.gone")) == 50
    (path,) = con.execute("SELECT file_path FROM db.gone.files").fetchone()
    client(s3_configured.endpoint_url).delete_object(Bucket=s3_bucket, Key=path.split("/", 3)[3])
    with pytest.raises(IceduckError) as caught:
        con.execute("SELECT id FROM db.gone WHERE s <> 'x'").fetchall()
    assert path in str(caught.value)
