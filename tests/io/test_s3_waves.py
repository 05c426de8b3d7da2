"""How many round trips to S3 a cold query makes one after another, counted by a proxy
that delays every request (tests/support/latency_proxy.py).

In a cloud region each request costs 10-30 ms, so what a cold query waits for is its
number of *sequential* round trips (waves: the longest chain of requests each sent after
the previous one was answered), not its number of requests. The proxy's delay only makes
overlap observable; the tests assert counts of waves, which depend on the order in which
requests start and end, never on how long anything took.

A cold point query on a table of several manifests reads the metadata file and the
manifest list (a HEAD and a GET each: pyarrow asks an object's size before reading it),
then every manifest the partition summaries keep at once, then the data file (its two
HEADs together, then its bytes, prefetched before DuckDB runs): 8 waves. Before the
manifests and data files were fetched concurrently it was 22 on this table.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.engine.object_stores import DUCKDB_IO
from iceduck.io import object_store
from tests.support.latency_proxy import LatencyProxy, Span, latency_proxy, waves
from tests.support.s3 import S3Server

#: the proxy's delay: far above the client's own work between two requests on a busy
#: machine, so that requests sent together always overlap (an ordering, not a timing)
LATENCY_S = 0.1
INSERTS = 6


def span(start: float, end: float) -> Span:
    return Span(start, end, "GET", "/b/k")


def test_waves_count_the_longest_chain_of_requests_that_did_not_overlap() -> None:
    assert waves([]) == 0
    assert waves([span(0, 1)]) == 1
    assert waves([span(0, 1), span(0.5, 1.5), span(0.2, 0.9)]) == 1  # all in flight together
    assert waves([span(0, 1), span(1, 2), span(2, 3)]) == 3  # each sent when the last was answered
    # two sequential pairs side by side, then one request after both: 3, not 5
    assert waves([span(0, 1), span(0, 1), span(1.1, 2), span(1.2, 2.5), span(3, 4)]) == 3
    # a long request overlapping a chain of three short ones: the chain decides
    assert waves([span(0, 10), span(0, 1), span(2, 3), span(4, 5)]) == 3


@pytest.fixture
def proxy(s3_server: S3Server, object_store_restored: None) -> Iterator[LatencyProxy]:
    with latency_proxy(s3_server.endpoint_url, LATENCY_S) as found:
        yield found


@pytest.fixture
def table(s3_server: S3Server, s3_bucket: str, object_store_restored: None, tmp_path: Path) -> str:
    """``db.t`` in the bucket, written straight to moto: one manifest per INSERT, each with
    a data file in every one of the 4 buckets; the warehouse."""
    object_store.configure({**s3_server.properties, DUCKDB_IO: "fsspec"}, replace=True)
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE db")
        con.execute(
            "CREATE TABLE db.t (id bigint, s string) USING iceberg PARTITIONED BY (bucket(4, id)) "
            f"LOCATION 's3://{s3_bucket}/waves-{uuid.uuid4().hex[:8]}'"
        )
        for n in range(INSERTS):
            con.execute(f"INSERT INTO db.t SELECT i, 's' || i FROM range({n * 100}, {n * 100 + 100}) r(i)")
    return str(tmp_path / "wh")


def cold(proxy: LatencyProxy, s3_server: S3Server, warehouse: str, sql: str) -> list[tuple[object, ...]]:
    """``sql`` on a new connection through the proxy, with the process's object-store
    caches cold (a new configuration: what a fresh process would hold)."""
    object_store.configure(
        {**s3_server.properties, "s3.endpoint": proxy.endpoint, DUCKDB_IO: "fsspec"}, replace=True
    )
    with iceduck.connect(warehouse) as con:
        proxy.log.clear()
        return con.execute(sql).fetchall()


def test_a_cold_point_query_makes_eight_sequential_round_trips(
    proxy: LatencyProxy, s3_server: S3Server, table: str
) -> None:
    assert cold(proxy, s3_server, table, "SELECT s FROM db.t WHERE id = 150") == [("s150",)]
    manifests = {s.path for s in proxy.log.snapshot() if s.path.endswith("-m0.avro")}
    assert len(manifests) == INSERTS  # every manifest holds the partition
    assert proxy.log.waves() <= 8, proxy.log.chain()


def test_a_cold_full_scan_reads_its_files_together(
    proxy: LatencyProxy, s3_server: S3Server, table: str
) -> None:
    assert cold(proxy, s3_server, table, "SELECT count(*), sum(id) FROM db.t") == [(600, sum(range(600)))]
    data = {s.path for s in proxy.log.snapshot() if s.path.endswith(".parquet")}
    assert len(data) == 4 * INSERTS
    # 4 before the manifests, 2 for them, then 72 requests for the 24 data files (two HEADs and
    # a GET each) 25 at a time (the connections of pyarrow's S3 client): at least 3 waves;
    # DuckDB's own reads are served from what was fetched ahead. One file after another, it
    # was over 60 waves.
    assert proxy.log.waves() <= 12, proxy.log.chain()


def test_an_explain_fetches_no_file_ahead(proxy: LatencyProxy, s3_server: S3Server, table: str) -> None:
    """EXPLAIN reads no rows: the scan's files are not fetched ahead (an EXPLAIN ANALYZE's are)."""
    from iceduck.engine.store_filesystem import PREFETCHED

    plan = cold(proxy, s3_server, table, "EXPLAIN SELECT s FROM db.t WHERE id = 150")
    assert plan
    generation = object_store.generation()
    with iceduck.connect(table) as con:
        files = [row[0] for row in con.execute("SELECT file_path FROM db.t.files").fetchall()]
    assert object_store.generation() == generation
    kept = [f for f in files if PREFETCHED.get((generation, "s3", object_store.parse(f).path)) is not None]
    assert kept == []
    cold(proxy, s3_server, table, "EXPLAIN ANALYZE SELECT s FROM db.t WHERE id = 150")
    generation = object_store.generation()
    kept = [f for f in files if PREFETCHED.get((generation, "s3", object_store.parse(f).path)) is not None]
    assert len(kept) == 1
