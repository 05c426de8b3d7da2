"""How many requests a commit and a cold query send to S3, counted by a server in front of
moto (tests/support/s3_requests.py): at 10-30 ms a request in a real store, the count is
what a one-row commit or a first query costs.

A one-row INSERT writes four new objects (data file, manifest, manifest list, metadata
JSON): each goes as one PutObject (``allow_delayed_open``, never a multipart upload of
three requests), after one HEAD that checks the name is free (never HEAD plus a listing).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.engine.object_stores import DUCKDB_IO
from iceduck.io import object_store
from tests.support.s3 import S3Server, create_bucket, moto_missing
from tests.support.s3_requests import RequestLog, counting_server

MULTIPART = ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")
LISTINGS = ("ListObjects", "ListObjectsV2")


@pytest.fixture(scope="module")
def counted() -> Iterator[tuple[S3Server, RequestLog]]:
    reason = moto_missing()
    if reason is not None:
        pytest.skip(reason)
    with counting_server() as found:
        yield found


@pytest.fixture
def log(counted: tuple[S3Server, RequestLog], object_store_restored: None) -> RequestLog:
    server, requests = counted
    # DuckDB reads the data files through pyarrow (fsspec), whose requests iceduck decides;
    # httpfs (where it loads) sends its own
    object_store.configure({**server.properties, DUCKDB_IO: "fsspec"}, replace=True)
    return requests


@pytest.fixture
def table(counted: tuple[S3Server, RequestLog], log: RequestLog, tmp_path: Path) -> Iterator[str]:
    """``db.t`` (id, s) in a bucket of the counting server, one row in it; the warehouse."""
    bucket = create_bucket(counted[0])
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute(
        f"CREATE TABLE db.t (id bigint, s string) USING iceberg "
        f"LOCATION 's3://{bucket}/t-{uuid.uuid4().hex[:8]}'"
    )
    con.execute("INSERT INTO db.t VALUES (1, 'a')")
    con.close()
    yield str(tmp_path / "wh")


def test_a_one_row_commit_puts_each_new_file_once(log: RequestLog, table: str) -> None:
    con = iceduck.connect(table)
    con.execute("SELECT count(*) FROM db.t").fetchall()  # the table loaded: only the commit counts
    log.clear()
    con.execute("INSERT INTO db.t VALUES (2, 'b')")
    counts = log.counts()
    con.close()
    assert {name: counts[name] for name in (*MULTIPART, *LISTINGS) if counts[name]} == {}
    assert counts["PutObject"] == 4  # data file, manifest, manifest list, metadata JSON
    # one HEAD per free name of the three metadata files; reading the current metadata
    # and manifest list (HEAD + GET each); nothing else
    assert log.total() <= 11, log.operations


def test_a_cold_point_query_asks_each_size_once(log: RequestLog, table: str) -> None:
    log.clear()
    con = iceduck.connect(table)
    assert con.execute("SELECT s FROM db.t WHERE id = 1").fetchall() == [("a",)]
    con.close()
    metadata = [name for name, path in log.operations if path.endswith(".metadata.json")]
    assert sorted(metadata) == ["GetObject", "HeadObject"]  # not a HEAD before the read's own
    data = [name for name, path in log.operations if path.endswith(".parquet")]
    # DuckDB asks about the file (one HEAD, kept) and opens it for its footer and its rows:
    # the object is opened once (one HEAD), each open reads ranges of it
    assert data.count("HeadObject") == 2, data
    assert not any(log.counts()[name] for name in LISTINGS)
    # metadata, manifest list, two manifests: a HEAD and a GET each; the data file's GETs
    assert log.total() <= 14, log.operations
