"""iceduck's own S3 client meeting a failing store: a fault proxy (tests/support/s3_faults.py)
between iceduck and moto answers chosen requests with a 500, a bare 503 or S3's 503
SlowDown, holds an answer past the request timeout, or cuts an answer mid-body.

The lake is ``iceduck.connect(warehouse="s3://...")`` over a local SQLite catalog, every
table file in the bucket, read through pyarrow's S3 client (``iceduck.duckdb-io=fsspec``:
httpfs is not installed here). Each test injects its fault on the PUTs of one kind of file
(data, manifest, manifest list, metadata JSON) or on the GETs of a read, then checks:

* a fault met fewer times than the client's attempts (3: ``s3.retry.num-retries`` unset)
  is retried: the statement succeeds, and a fresh connection reads exactly the rows
  written -- a cut answer is never taken for a short file;
* a fault on every attempt (two with ``s3.retry.num-retries=1``) fails the statement with a
  :class:`StorageError` naming the object and what the store did, and the table is as
  before: the same snapshot, the same rows, no snapshot half committed; the next
  statement, once the store is well, commits as usual.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.errors import StorageError
from tests.support.s3 import S3Server
from tests.support.s3_faults import Faults, fault_proxy

#: a regular expression of the path of each kind of file a commit writes
FILES = {
    "data": r"/data/.*\.parquet$",
    "manifest": r"/metadata/[^/]*-m[0-9]+\.avro$",
    "manifest-list": r"/metadata/snap-[^/]*\.avro$",
    "metadata": r"/metadata/[^/]*\.metadata\.json$",
}
ERRORS = ("500", "503", "slowdown")


@pytest.fixture
def faults(s3_server: S3Server, object_store_restored: None) -> Iterator[tuple[str, Faults]]:
    """The proxy's endpoint and its faults."""
    with fault_proxy(s3_server.endpoint_url) as (proxy, found):
        yield proxy.endpoint, found


@pytest.fixture
def lake(
    faults: tuple[str, Faults], s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> Iterator[dict[str, Any]]:
    """The connect() arguments of a lake in the bucket, through the proxy, with ``db.t``
    holding rows 0..9 (one snapshot)."""
    endpoint, _ = faults
    arguments: dict[str, Any] = {
        "warehouse": f"s3://{s3_bucket}/faults-{uuid.uuid4().hex[:8]}",
        "catalog_uri": f"sqlite:///{tmp_path}/catalog.db",
        "properties": {
            **s3_server.properties,
            "s3.endpoint": endpoint,
            "s3.request-timeout": "1",  # a held answer times out after a second (curl's floor)
            "iceduck.duckdb-io": "fsspec",
        },
    }
    with iceduck.connect(**arguments) as con:
        con.execute("CREATE NAMESPACE db")
        con.execute("CREATE TABLE db.t (id bigint, s string) USING iceberg")
        con.execute("INSERT INTO db.t SELECT i, 's' || i FROM range(10) r(i)")
    yield arguments


def state(lake: dict[str, Any]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(the snapshots, the rows) of ``db.t`` as a fresh connection reads them: new
    filesystems, no cached file of an earlier connection."""
    with iceduck.connect(**lake) as con:
        snapshots = con.execute(
            "SELECT snapshot_id, parent_id FROM db.t.snapshots ORDER BY committed_at"
        ).fetchall()
        rows = con.execute("SELECT id, s FROM db.t ORDER BY id").fetchall()
    return snapshots, rows


def expected(n: int) -> list[tuple[Any, ...]]:
    return [(i, f"s{i}") for i in range(n)]


def one_retry(lake: dict[str, Any]) -> dict[str, Any]:
    """The lake with ``s3.retry.num-retries=1``: two attempts per request (a lasting fault
    fails sooner, and the property is seen to be honoured)."""
    return {**lake, "properties": {**lake["properties"], "s3.retry.num-retries": "1"}}


def insert_more(lake: dict[str, Any]) -> None:
    with iceduck.connect(**lake) as con:
        con.execute("INSERT INTO db.t SELECT i, 's' || i FROM range(10, 20) r(i)")


@pytest.mark.parametrize(("target", "kind"), [(t, ERRORS[n % 3]) for n, t in enumerate(FILES)])
def test_a_passing_write_fault_is_retried(
    lake: dict[str, Any], faults: tuple[str, Faults], target: str, kind: str
) -> None:
    _, found = faults
    found.add(kind, "PUT", FILES[target], times=2)
    insert_more(lake)
    assert len(found.met()) == 2
    snapshots, rows = state(lake)
    assert len(snapshots) == 2 and rows == expected(20)


def test_a_held_metadata_write_is_retried(lake: dict[str, Any], faults: tuple[str, Faults]) -> None:
    """The PUT reached the store, its answer never came: the client times out and puts the
    same bytes again; the commit lands once."""
    _, found = faults
    found.add("hang", "PUT", FILES["metadata"], times=1)
    insert_more(lake)
    assert found.met("hang")
    snapshots, rows = state(lake)
    assert len(snapshots) == 2 and rows == expected(20)


@pytest.mark.parametrize("target", list(FILES))
def test_a_lasting_write_fault_fails_the_statement_and_changes_nothing(
    lake: dict[str, Any], faults: tuple[str, Faults], target: str
) -> None:
    _, found = faults
    before = state(lake)
    found.add("500", "PUT", FILES[target], times=None)
    with pytest.raises(StorageError) as caught:
        insert_more(one_retry(lake))
    message = str(caught.value)
    assert message.startswith(f"{lake['warehouse']}/db/t/"), message  # the object it could not write
    assert "server error on every attempt" in message and "INTERNAL_FAILURE" in message, message
    assert len(found.met()) == 2  # the first attempt and one retry
    found.clear()
    assert state(lake) == before  # nothing half-committed
    insert_more(lake)
    snapshots, rows = state(lake)
    assert len(snapshots) == 2 and rows == expected(20)


@pytest.mark.parametrize(
    ("target", "kind"),
    [(t, "cut") for t in FILES] + [("metadata", "500"), ("data", "slowdown")],
)
def test_a_passing_read_fault_is_retried(
    lake: dict[str, Any], faults: tuple[str, Faults], target: str, kind: str
) -> None:
    """Every file a query reads, failing twice: the query answers all the rows (a cut
    answer is read again, never taken for a short file)."""
    _, found = faults
    found.add(kind, "GET", FILES[target], times=2)
    snapshots, rows = state(lake)
    assert found.met(), "the query read no such file"
    assert len(snapshots) == 1 and rows == expected(10)


def test_a_held_read_is_retried(lake: dict[str, Any], faults: tuple[str, Faults]) -> None:
    _, found = faults
    found.add("hang", "GET", FILES["data"], times=1)
    snapshots, rows = state(lake)
    assert found.met("hang")
    assert len(snapshots) == 1 and rows == expected(10)


@pytest.mark.parametrize(
    ("target", "kind", "says"),
    [
        ("metadata", "500", "server error on every attempt"),
        ("data", "slowdown", "server error on every attempt"),
        ("metadata", "cut", "answer was cut off"),
        ("data", "cut", "answer was cut off"),
        ("data", "hang", "did not answer within s3.request-timeout"),
    ],
)
def test_a_lasting_read_fault_fails_the_query_naming_the_object(
    lake: dict[str, Any], faults: tuple[str, Faults], target: str, kind: str, says: str
) -> None:
    _, found = faults
    found.add(kind, "GET", FILES[target], times=None)
    with pytest.raises(StorageError) as caught:
        state(one_retry(lake))
    message = str(caught.value)
    assert message.startswith(f"{lake['warehouse']}/db/t/"), message
    assert says in message, message
    found.clear()
    snapshots, rows = state(lake)
    assert len(snapshots) == 1 and rows == expected(10)
