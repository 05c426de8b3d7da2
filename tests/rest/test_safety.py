"""Bad input gets the spec's error response and changes nothing: names with ``/``, ``..``,
NUL or control characters, malformed JSON, huge bodies; and bearer-token auth."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.rest.server import MAX_BODY_BYTES, CatalogServer
from tests.rest.conftest import RestClient, start_server


@pytest.mark.parametrize("name", ["a/b", "..", ".", "a\x00b", "a\nb", "x\x7f"])
def test_bad_names_are_refused(client: RestClient, warehouse: Path, name: str) -> None:
    reply = client.post("/v1/namespaces", {"namespace": [name]})
    assert reply.status == 400 and reply.body["error"]["type"] == "BadRequestException"
    client.post("/v1/namespaces", {"namespace": ["ok"]})
    table = client.post(
        "/v1/namespaces/ok/tables", {"name": name, "schema": {"type": "struct", "fields": []}}
    )
    assert table.status == 400
    assert sorted(p.name for p in warehouse.iterdir()) == ["catalog.db"]


def test_encoded_slashes_and_dots_in_paths_are_names_not_paths(client: RestClient) -> None:
    for path in (
        "/v1/namespaces/a%2Fb",
        "/v1/namespaces/%2E%2E",
        "/v1/namespaces/ok%1F..",
        "/v1/namespaces/a%00",
    ):
        reply = client.get(path)
        assert reply.status == 400, path
        assert reply.body["error"]["type"] == "BadRequestException"


def test_malformed_json(client: RestClient) -> None:
    for raw in (b"{not json", b"[1, 2]", b"\xff\xfe", b""):
        reply = client.call("POST", "/v1/namespaces", raw=raw)
        assert reply.status == 400, raw
        assert reply.body["error"]["code"] == 400


def test_huge_body_is_refused_before_reading(server: CatalogServer) -> None:
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), port, timeout=30)
    connection.putrequest("POST", "/v1/namespaces")
    connection.putheader("Content-Length", str(MAX_BODY_BYTES + 1))
    connection.putheader("Content-Type", "application/json")
    connection.endheaders()
    connection.send(b"{" * 1024)  # the rest never comes: the answer must not wait for it
    response = connection.getresponse()
    assert response.status == 413
    assert json.loads(response.read())["error"]["type"] == "RequestTooLargeException"
    connection.close()


def test_unexpected_errors_are_500_without_a_traceback(client: RestClient, server: CatalogServer) -> None:
    class Broken:
        def list_namespaces(self, parent: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
            raise RuntimeError("secret /internal/path")

    server.context = type(server.context)(Broken(), server.context.warehouse)  # type: ignore[arg-type]
    reply = client.get("/v1/namespaces")
    assert reply.status == 500
    assert reply.body["error"]["type"] == "InternalServerError"
    assert "secret" not in reply.body["error"]["message"]


@pytest.fixture
def token_server(warehouse: Path) -> Iterator[CatalogServer]:
    served = start_server(warehouse, token="s3cret")
    yield served
    served.stop()


def test_token_auth(token_server: CatalogServer) -> None:
    anonymous = RestClient(token_server.url).get("/v1/config")
    assert anonymous.status == 401 and anonymous.body["error"]["type"] == "NotAuthorizedException"
    wrong = RestClient(token_server.url, token="guess").post("/v1/namespaces", {"namespace": ["x"]})
    assert wrong.status == 401
    good = RestClient(token_server.url, token="s3cret")
    assert good.post("/v1/namespaces", {"namespace": ["x"]}).status == 200
    assert good.get("/v1/namespaces").body == {"namespaces": [["x"]]}


def test_prefix(warehouse: Path) -> None:
    served = start_server(warehouse, prefix="wh")
    try:
        client = RestClient(served.url)
        assert client.get("/v1/config").body["overrides"] == {"prefix": "wh"}
        assert client.post("/v1/wh/namespaces", {"namespace": ["p"]}).status == 200
        assert client.get("/v1/wh/namespaces").body == {"namespaces": [["p"]]}
        assert client.get("/v1/namespaces").status == 404
    finally:
        served.stop()


def test_concurrent_creates_lose_nothing(client: RestClient) -> None:
    client.post("/v1/namespaces", {"namespace": ["c"]})
    statuses: list[int] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        body = {"name": f"t{i % 4}", "schema": {"type": "struct", "fields": []}}
        status = client.post("/v1/namespaces/c/tables", body).status
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200] * 4 + [409] * 8
    names = [t["name"] for t in client.get("/v1/namespaces/c/tables").body["identifiers"]]
    assert names == ["t0", "t1", "t2", "t3"]
