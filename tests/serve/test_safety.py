"""Bad input gets the spec's error response and changes nothing: names with ``/``, ``..``,
NUL or control characters, malformed JSON, huge bodies; and bearer-token auth."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.serve.server import MAX_BODY_BYTES, CatalogServer
from tests.serve.conftest import RestClient, start_server


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


def test_wrong_content_types(client: RestClient) -> None:
    form = client.call(
        "POST",
        "/v1/namespaces",
        raw=b"namespace=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status == 415 and form.body["error"]["type"] == "UnsupportedMediaTypeException"
    assert "application/json" in form.body["error"]["message"]
    multipart = client.call(
        "POST",
        "/v1/namespaces",
        raw=b'{"namespace": ["x"]}',
        headers={"Content-Type": "multipart/form-data; b=1"},
    )
    assert multipart.status == 415
    # JSON under its own name, with a charset, or without a type is read
    for content_type in ("application/json; charset=utf-8", "text/plain"):
        body = json.dumps({"namespace": [content_type[:4]]}).encode()
        assert (
            client.call("POST", "/v1/namespaces", raw=body, headers={"Content-Type": content_type}).status
            == 200
        )
    assert client.get("/v1/namespaces").body == {"namespaces": [["appl"], ["text"]]}


def test_unknown_requirements_and_malformed_changes(client: RestClient) -> None:
    client.post("/v1/namespaces", {"namespace": ["s"]})
    schema = {"type": "struct", "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    client.post("/v1/namespaces/s/tables", {"name": "t", "schema": schema})
    table = "/v1/namespaces/s/tables/t"
    before = client.get(table).body["metadata-location"]
    for body in (
        {"requirements": [{"type": "assert-it-is-fast"}], "updates": []},
        {"requirements": [{"uuid": "x"}], "updates": []},
        {"requirements": "assert-create", "updates": []},
        {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": 1}}]},
        {"requirements": [], "updates": [{"action": "remove-snapshots", "snapshot-ids": ["a"]}]},
        {"requirements": [], "updates": [None]},
    ):
        reply = client.post(table, body)
        assert reply.status == 400, body
        assert reply.body["error"]["type"] == "BadRequestException"
    transaction = client.post("/v1/transactions/commit", {"table-changes": [{"updates": []}]})
    assert transaction.status == 400
    assert client.get(table).body["metadata-location"] == before


def test_bad_queries_headers_and_methods(client: RestClient, server: CatalogServer) -> None:
    client.post("/v1/namespaces", {"namespace": ["s"]})
    assert client.get("/v1/namespaces/s/tables/t?snapshots=some").status == 400
    assert client.call("DELETE", "/v1/namespaces/s/tables/t?purgeRequested=maybe").status == 400
    assert client.get("/v1/namespaces?pageToken=%%%").status == 400
    assert client.get("/v1/namespaces?pageSize=-1").status == 400
    assert client.call("PUT", "/v1/namespaces").status == 405
    assert client.get("/v1/nothing/here/at/all").status == 404
    assert client.get("/v2/config").status == 404
    host, port = server.server_address[:2]
    for headers in ({"Content-Length": "many"}, {"Transfer-Encoding": "chunked"}):
        connection = http.client.HTTPConnection(str(host), port, timeout=30)
        connection.putrequest("POST", "/v1/namespaces")
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        assert response.status in (400, 411), headers
        assert json.loads(response.read())["error"]["code"] == response.status
        connection.close()
    # not HTTP at all: the standard library's parser answers, the server lives on
    with socket.create_connection((str(host), port), timeout=30) as raw:
        raw.sendall(b"\x00\x01garbage\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.")
    assert client.get("/v1/namespaces").body == {"namespaces": [["s"]]}


def test_authorization_headers_that_are_not_bearer_tokens(token_server: CatalogServer) -> None:
    for value in ("Bearer", "Bearer ", "Basic czNjcmV0", "s3cret", "Bearer  s3cret  extra", "bearer \u00e9"):
        reply = RestClient(token_server.url).call("GET", "/v1/namespaces", headers={"Authorization": value})
        assert reply.status == 401, value
        assert reply.body["error"]["type"] == "NotAuthorizedException"
    assert (
        RestClient(token_server.url)
        .call("GET", "/v1/namespaces", headers={"Authorization": "bearer s3cret"})
        .status
        == 200
    )


def test_bad_requests_write_nothing_anywhere(client: RestClient, warehouse: Path, tmp_path: Path) -> None:
    """A barrage of refused requests leaves the warehouse and its surroundings as they were."""
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    bad_location = {
        "name": "t",
        "schema": {"type": "struct", "fields": []},
        "location": str(tmp_path / "out"),
    }
    for method, path, body in (
        ("POST", "/v1/namespaces", {"namespace": ["..", "x"]}),
        ("POST", "/v1/namespaces", {"namespace": ["a/b"]}),
        ("POST", "/v1/namespaces/%2E%2E/tables", bad_location),
        ("POST", "/v1/namespaces/nope/tables", bad_location),
        ("POST", "/v1/namespaces/nope/register", {"name": "t", "metadata-location": "/etc/hostname"}),
        (
            "POST",
            "/v1/tables/rename",
            {"source": {"namespace": ["a"], "name": "b"}, "destination": {"namespace": [".."], "name": "x"}},
        ),
        ("DELETE", "/v1/namespaces/..%1Fetc", None),
    ):
        assert client.call(method, path, body).status in (400, 404), path
    client.post("/v1/namespaces", {"namespace": ["ok"]})
    assert client.post("/v1/namespaces/ok/tables", bad_location).status == 400
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_unknown_methods_and_oversized_headers(server: CatalogServer, client: RestClient) -> None:
    patched = client.call("PATCH", "/v1/namespaces")
    assert patched.status == 405 and patched.headers["Allow"] == "GET, POST"
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), port, timeout=30)
    connection.request("BREW", "/v1/namespaces")
    response = connection.getresponse()
    assert response.status == 405 and json.loads(response.read())["error"]["code"] == 405
    assert response.getheader("Allow") == "GET, POST"
    connection.close()
    for method in ("TRACE", "OPTIONS"):  # methods no route serves: 405 with Allow
        connection = http.client.HTTPConnection(str(host), port, timeout=30)
        connection.request(method, "/v1/config")
        response = connection.getresponse()
        error = json.loads(response.read())["error"]
        assert (response.status, error["code"], error["type"]) == (405, 405, "MethodNotAllowedException")
        assert response.getheader("Allow") == "GET"
        connection.close()
    connection = http.client.HTTPConnection(str(host), port, timeout=30)
    connection.request("GET", "/v1/namespaces", headers={f"X-H{i}": "v" for i in range(150)})
    response = connection.getresponse()
    assert response.status == 431 and json.loads(response.read())["error"]["code"] == 431
    connection.close()
    assert client.get("/v1/namespaces").status == 200
