"""Many writers through one server at once: PyIceberg clients appending to one table and
raw HTTP clients committing multi-table transactions over it and a second table. Every
commit either lands or is a 409 (``CommitFailedException``), the server never answers
5xx, and after the clients' retries every batch is in the table exactly once."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import iceduck
from iceduck.serve.server import CatalogServer
from tests.serve.conftest import RestClient, creation_updates

rest = pytest.importorskip("pyiceberg.catalog.rest")
CommitFailedException = pytest.importorskip("pyiceberg.exceptions").CommitFailedException

APPENDERS, APPENDS_EACH = 4, 3
TRANSACTORS, TRANSACTIONS_EACH = 3, 4
MAX_ATTEMPTS = 50


def _run(workers: list[Callable[[], None]]) -> list[BaseException]:
    failures: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(len(workers))

    def wrapped(work: Callable[[], None]) -> None:
        try:
            start.wait(timeout=60)
            work()
        except BaseException as e:  # reported by the test, not lost in a thread
            with lock:
                failures.append(e)

    threads = [threading.Thread(target=wrapped, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return failures


def test_concurrent_appends_and_transactions(
    server: CatalogServer, warehouse: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="iceduck.rest")
    setup = rest.RestCatalog("setup", uri=server.url)
    setup.create_namespace("c")
    schema = pa.schema([pa.field("id", pa.int64())])
    setup.create_table("c.events", schema=schema)
    setup.create_table("c.audit", schema=schema)
    conflicts: list[str] = []
    statuses: list[int] = []
    lock = threading.Lock()

    def appender(worker: int) -> Callable[[], None]:
        def work() -> None:
            catalog = rest.RestCatalog(f"w{worker}", uri=server.url)
            for n in range(APPENDS_EACH):
                batch = pa.table({"id": pa.array([worker * 1000 + n], pa.int64())})
                for _ in range(MAX_ATTEMPTS):
                    table = catalog.load_table("c.events")
                    try:
                        table.append(batch)
                        break
                    except CommitFailedException as e:  # a 409 PyIceberg's own retries gave up on
                        with lock:
                            conflicts.append(str(e))
                else:
                    raise AssertionError(f"append {worker}/{n} never landed")

        return work

    def transactor(worker: int) -> Callable[[], None]:
        client = RestClient(server.url)

        def work() -> None:
            for n in range(TRANSACTIONS_EACH):
                key = f"txn-{worker}-{n}"
                for _ in range(MAX_ATTEMPTS):
                    changes: list[dict[str, Any]] = []
                    for name in ("events", "audit"):
                        uuid = client.get(f"/v1/namespaces/c/tables/{name}").body["metadata"]["table-uuid"]
                        changes.append(
                            {
                                "identifier": {"namespace": ["c"], "name": name},
                                "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                                "updates": [{"action": "set-properties", "updates": {key: str(n)}}],
                            }
                        )
                    reply = client.post("/v1/transactions/commit", {"table-changes": changes})
                    with lock:
                        statuses.append(reply.status)
                    if reply.status == 204:
                        break
                    assert reply.status == 409, reply.body
                    assert reply.body["error"]["type"] == "CommitFailedException"
                else:
                    raise AssertionError(f"transaction {key} never landed")

        return work

    workers = [appender(i) for i in range(APPENDERS)] + [transactor(i) for i in range(TRANSACTORS)]
    failures = _run(workers)
    assert not failures, failures
    assert set(statuses) <= {204, 409}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "the server logged a failure"

    events = setup.load_table("c.events")
    ids = sorted(events.scan().to_arrow().column("id").to_pylist())
    expected = sorted(w * 1000 + n for w in range(APPENDERS) for n in range(APPENDS_EACH))
    assert ids == expected  # every batch exactly once
    assert len(events.metadata.snapshots) == APPENDERS * APPENDS_EACH
    keys = {f"txn-{w}-{n}" for w in range(TRANSACTORS) for n in range(TRANSACTIONS_EACH)}
    for name in ("events", "audit"):
        properties = setup.load_table(f"c.{name}").properties
        assert keys <= set(properties), name
    with iceduck.connect(warehouse) as con:
        assert con.execute("SELECT count(*), count(DISTINCT id) FROM c.events").fetchone() == (
            len(expected),
            len(expected),
        )


def test_concurrent_raw_commits_to_one_table(client: RestClient, caplog: pytest.LogCaptureFixture) -> None:
    """Commits that assert the current schema and properties-only updates, many at once:
    each lands or is a 409 and none is lost after retries."""
    caplog.set_level(logging.ERROR, logger="iceduck.rest")
    client.post("/v1/namespaces", {"namespace": ["r"]})
    schema = {"type": "struct", "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    client.post("/v1/namespaces/r/tables", {"name": "t", "schema": schema})
    statuses: list[int] = []
    lock = threading.Lock()

    def worker(i: int) -> Callable[[], None]:
        def work() -> None:
            for n in range(5):
                for _ in range(MAX_ATTEMPTS):
                    body = {
                        "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0}],
                        "updates": [{"action": "set-properties", "updates": {f"k{i}-{n}": "v"}}],
                    }
                    reply = client.post("/v1/namespaces/r/tables/t", body)
                    with lock:
                        statuses.append(reply.status)
                    if reply.status == 200:
                        break
                    assert reply.status == 409, reply.body

        return work

    assert not _run([worker(i) for i in range(8)])
    assert set(statuses) <= {200, 409}
    properties = client.get("/v1/namespaces/r/tables/t").body["metadata"]["properties"]
    assert {f"k{i}-{n}" for i in range(8) for n in range(5)} <= set(properties)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_loads_racing_purges_are_404_not_500(client: RestClient) -> None:
    """A load that read the catalog row just before a purging drop deleted the metadata file
    is a table that no longer exists (404), not a corrupt one."""
    client.post("/v1/namespaces", {"namespace": ["p"]})
    schema = {"type": "struct", "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    statuses: list[int] = []
    done = threading.Event()

    def churn() -> None:
        try:
            for _ in range(40):
                assert client.post("/v1/namespaces/p/tables", {"name": "t", "schema": schema}).status == 200
                assert client.call("DELETE", "/v1/namespaces/p/tables/t?purgeRequested=true").status == 204
        finally:
            done.set()

    def load() -> None:
        while not done.is_set():
            statuses.append(client.get("/v1/namespaces/p/tables/t").status)

    assert not _run([churn, load, load])
    assert statuses and set(statuses) <= {200, 404}


def test_mixed_operations_never_fail_the_server(client: RestClient, warehouse: Path) -> None:
    """Creates, staged creates, commits, transactions, renames, registers and drops (with
    purge) of four names from twelve threads: every answer is a success or a 4xx."""
    client.post("/v1/namespaces", {"namespace": ["s"]})
    schema = {"type": "struct", "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    answers: list[tuple[str, int, Any]] = []
    lock = threading.Lock()

    def request(kind: str, name: str, n: int, rng: random.Random) -> Any:
        path = f"/v1/namespaces/s/tables/{name}"
        if kind == "create":
            return client.post("/v1/namespaces/s/tables", {"name": name, "schema": schema})
        if kind == "commit":
            update = {"action": "set-properties", "updates": {f"k{n}": "v"}}
            return client.post(path, {"requirements": [], "updates": [update]})
        if kind == "drop":
            return client.call("DELETE", f"{path}?purgeRequested={rng.choice(['true', 'false'])}")
        if kind == "rename":
            source = {"namespace": ["s"], "name": name}
            target = {"namespace": ["s"], "name": f"t{rng.randint(0, 3)}"}
            return client.post("/v1/tables/rename", {"source": source, "destination": target})
        if kind == "stage":
            staged = client.post(
                "/v1/namespaces/s/tables", {"name": name, "schema": schema, "stage-create": True}
            )
            if staged.status != 200:
                return staged
            return client.post(
                path,
                {
                    "requirements": [{"type": "assert-create"}],
                    "updates": creation_updates(staged.body["metadata"]),
                },
            )
        if kind == "register":
            loaded = client.get(path)
            if loaded.status != 200:
                return loaded
            location = loaded.body["metadata-location"]
            body = {"name": name, "metadata-location": location, "overwrite": rng.choice([True, False])}
            return client.post("/v1/namespaces/s/register", body)
        names = rng.sample(["t0", "t1", "t2", "t3"], 2)
        update = {"action": "set-properties", "updates": {"x": str(n)}}
        changes = [
            {"identifier": {"namespace": ["s"], "name": x}, "requirements": [], "updates": [update]}
            for x in names
        ]
        return client.post("/v1/transactions/commit", {"table-changes": changes})

    def worker(seed: int) -> Callable[[], None]:
        def work() -> None:
            rng = random.Random(seed)
            for n in range(15):
                kind = rng.choice(["create", "commit", "drop", "rename", "stage", "register", "txn"])
                reply = request(kind, f"t{rng.randint(0, 3)}", n, rng)
                with lock:
                    answers.append((kind, reply.status, reply.body))

        return work

    assert not _run([worker(seed) for seed in range(12)])
    failed = [a for a in answers if a[1] >= 500]
    assert not failed, failed
    assert {status for _, status, _ in answers} <= {200, 204, 400, 404, 409}
    assert {p.name for p in warehouse.iterdir()} <= {"catalog.db", "s"}  # nothing written elsewhere
