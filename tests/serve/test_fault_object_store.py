"""``iceduck serve`` over a warehouse in S3 whose store fails: the server (a subprocess) reaches
moto through the fault proxy (tests/support/s3_faults.py); its clients -- iceduck's REST
client, and raw HTTP for the status codes -- reach moto directly. So every spoiled request
is one of the server's: its writes and reads of table metadata files.

What is checked, per fault:

* a commit whose metadata write meets a passing fault (fewer than the 3 attempts of the
  server's S3 client) succeeds, and is in the table history exactly once;
* a commit whose metadata write fails on every attempt is refused with a 503 in the spec's
  error model (iceduck's client: :class:`CommitStateUnknownError`, the spec's reading of a
  5xx on a commit), and leaves no trace: the same snapshots, the same rows; once the store
  is well, the same commit lands once;
* ``loadTable`` under read faults answers the table's current metadata after retries, or a
  503 in the error model -- never a 200 with other metadata, never a traceback.

At the end, every request the server answered with a 5xx failed on a
:class:`~iceduck.errors.StorageError` (the store's failure, answered 503), none on an
unexpected error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.errors import CommitStateUnknownError
from tests.support.cli import property_flags
from tests.support.rest import RestClient
from tests.support.s3 import S3Server
from tests.support.s3_faults import Faults, fault_proxy

ROOT = Path(__file__).resolve().parents[2]
METADATA = r"/metadata/[^/]*\.metadata\.json$"


class Served:
    """The server subprocess, its URL, the proxy's faults, and its stderr as it comes."""

    def __init__(self, process: subprocess.Popen[str], url: str, faults: Faults) -> None:
        self.process = process
        self.url = url
        self.faults = faults
        self.log: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)

    def stop(self) -> str:
        """Stop the server; everything it wrote to stderr."""
        self.process.terminate()
        self.process.wait(timeout=30)
        self._reader.join(10)
        return "".join(self.log)


@pytest.fixture(scope="module")
def served(s3_server: S3Server, s3_bucket: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("served")
    with fault_proxy(s3_server.endpoint_url) as (proxy, faults):
        properties = {**s3_server.properties, "s3.endpoint": proxy.endpoint, "s3.request-timeout": "1"}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "iceduck",
                "serve",
                f"s3://{s3_bucket}/served",
                "--catalog",
                f"sqlite:///{folder}/catalog.db",
                "--port",
                "0",
                *property_flags(properties),
            ],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(folder)},
        )
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        assert found, line
        server = Served(process, found.group(1), faults)
        try:
            yield server
        finally:
            faults.release()
            log = server.stop()
            assert _UNAVAILABLE.search(log), log[-3000:]  # the store's failures were met
            assert failed_requests(log) == [], log  # and none was an unexpected error


#: the server's record of a request it answered with an unexpected 500 (``log.exception``)
_FAILED = re.compile(r"^(?:GET|POST|HEAD|DELETE|PUT) \S+ failed$", re.MULTILINE)
#: its one-line record of an expected 503: the store (or database) failing
_UNAVAILABLE = re.compile(r"^(?:GET|POST|HEAD|DELETE|PUT) \S+ answered 503: ", re.MULTILINE)
#: the line of a traceback naming the exception raised
_RAISED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): ", re.MULTILINE)


def failed_requests(log: str) -> list[str]:
    """The exception (class) behind each 5xx answer in the server's log: the last one each
    record's traceback names."""
    return [found[-1] for record in _records(log) if (found := _RAISED.findall(record))]


def _records(log: str) -> list[str]:
    """The log cut at each record of a failed request."""
    starts = [m.start() for m in _FAILED.finditer(log)]
    if not starts:
        return []
    return [log[a:b] for a, b in zip(starts, [*starts[1:], len(log)], strict=True)]


@pytest.fixture
def table(served: Served, s3_server: S3Server, object_store_restored: None) -> Iterator[str]:
    """A new table ``ns.t_<hex>`` holding rows 0..9 (one snapshot), made without faults."""
    served.faults.reset()
    name = f"ns.t_{uuid.uuid4().hex[:8]}"
    with connect(served, s3_server) as con:
        con.execute("CREATE NAMESPACE IF NOT EXISTS ns")
        con.execute(f"CREATE TABLE {name} (id bigint, s string) USING iceberg")
        con.execute(f"INSERT INTO {name} SELECT i, 's' || i FROM range(10) r(i)")
    yield name
    served.faults.reset()


def connect(served: Served, s3_server: S3Server) -> Any:
    """iceduck's REST client of the server, reaching moto itself for the table's files."""
    return iceduck.connect(
        catalog_uri=served.url, properties={**s3_server.properties, "iceduck.duckdb-io": "fsspec"}
    )


def history(served: Served, s3_server: S3Server, table: str) -> tuple[list[Any], list[Any]]:
    """(the snapshots with their summaries' added records, the rows) of ``table``."""
    with connect(served, s3_server) as con:
        snapshots = con.execute(
            f"SELECT snapshot_id, parent_id, summary['added-records'] FROM {table}.snapshots "
            "ORDER BY committed_at"
        ).fetchall()
        rows = con.execute(f"SELECT id FROM {table} ORDER BY id").fetchall()
    return snapshots, rows


def insert(served: Served, s3_server: S3Server, table: str, start: int) -> None:
    with connect(served, s3_server) as con:
        con.execute(f"INSERT INTO {table} SELECT i, 's' || i FROM range({start}, {start + 5}) r(i)")


def ids(n: int) -> list[tuple[int]]:
    return [(i,) for i in range(n)]


def load(served: Served, table: str) -> tuple[int, Any]:
    namespace, name = table.split(".")
    reply = RestClient(served.url).get(f"/v1/namespaces/{namespace}/tables/{name}")
    return reply.status, reply.body


@pytest.mark.parametrize(
    ("method", "kind"),
    [("PUT", "500"), ("PUT", "503"), ("PUT", "slowdown"), ("PUT", "cut"), ("GET", "500"), ("GET", "cut")],
)
def test_a_commit_meeting_a_passing_fault_lands_once(
    served: Served, s3_server: S3Server, table: str, method: str, kind: str
) -> None:
    """Its metadata file written (PUT), or the table's current one read (GET) to load the
    table and apply the commit to."""
    served.faults.add(kind, method, METADATA, times=2)
    insert(served, s3_server, table, 10)
    assert len(served.faults.met()) == 2
    snapshots, rows = history(served, s3_server, table)
    assert [s[2] for s in snapshots] == ["10", "5"] and rows == ids(15)


def test_a_commit_whose_metadata_write_is_held_lands_once(
    served: Served, s3_server: S3Server, table: str
) -> None:
    """The store took the PUT but its answer never came: the server times out, puts the
    same file again, and commits once."""
    served.faults.add("hang", "PUT", METADATA, times=1)
    insert(served, s3_server, table, 10)
    assert served.faults.met("hang")
    snapshots, rows = history(served, s3_server, table)
    assert [s[2] for s in snapshots] == ["10", "5"] and rows == ids(15)


@pytest.mark.parametrize("kind", ["500", "slowdown"])
def test_a_commit_meeting_a_lasting_write_fault_is_refused_and_leaves_no_trace(
    served: Served, s3_server: S3Server, table: str, kind: str
) -> None:
    before = history(served, s3_server, table)
    served.faults.add(kind, "PUT", METADATA, times=None)
    with pytest.raises(CommitStateUnknownError) as caught:  # a 5xx on a commit, as the spec reads it
        insert(served, s3_server, table, 10)
    assert "503" in str(caught.value) or "server error" in str(caught.value), caught.value
    assert len(served.faults.met()) == 3  # the server's client tried three times
    served.faults.clear()
    assert history(served, s3_server, table) == before
    insert(served, s3_server, table, 10)
    snapshots, rows = history(served, s3_server, table)
    assert [s[2] for s in snapshots] == ["10", "5"] and rows == ids(15)


def test_a_lasting_write_fault_answers_503_in_the_error_model(served: Served, table: str) -> None:
    """The raw answer to a commit the store refuses: the spec's error model, a 5xx, the
    store's failure named; never a traceback."""
    namespace, name = table.split(".")
    served.faults.add("500", "PUT", METADATA, times=None)
    reply = RestClient(served.url).post(
        f"/v1/namespaces/{namespace}/tables/{name}",
        {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]},
    )
    served.faults.clear()
    assert reply.status == 503, reply.body
    error = reply.body["error"]
    assert error["code"] == 503 and error["type"] == "ServiceUnavailableException"
    assert "server error on every attempt" in error["message"]
    status, body = load(served, table)
    assert status == 200 and "k" not in body["metadata"].get("properties", {})


@pytest.mark.parametrize("kind", ["500", "503", "slowdown", "cut", "hang"])
def test_load_table_meeting_a_passing_read_fault_answers_the_current_metadata(
    served: Served, s3_server: S3Server, table: str, kind: str
) -> None:
    insert(served, s3_server, table, 10)  # a metadata file the server has not read yet
    served.faults.add(kind, "GET", METADATA, times=1 if kind == "hang" else 2)
    status, body = load(served, table)
    assert served.faults.met(), "the server read no metadata file"
    served.faults.clear()
    assert status == 200, body
    assert load(served, table) == (200, body)
    snapshots, _ = history(served, s3_server, table)
    assert body["metadata"]["current-snapshot-id"] == snapshots[-1][0]


@pytest.mark.parametrize("kind", ["500", "cut"])
def test_load_table_meeting_a_lasting_read_fault_answers_503(
    served: Served, s3_server: S3Server, table: str, kind: str
) -> None:
    insert(served, s3_server, table, 10)
    served.faults.add(kind, "GET", METADATA, times=None)
    status, body = load(served, table)
    served.faults.clear()
    assert status == 503, body
    assert body["error"]["type"] == "ServiceUnavailableException" and body["error"]["code"] == 503
    assert table.split(".")[1] in body["error"]["message"]  # the metadata file of the table
    status, body = load(served, table)
    assert status == 200
    snapshots, rows = history(served, s3_server, table)
    assert body["metadata"]["current-snapshot-id"] == snapshots[-1][0] and rows == ids(15)
