"""Config and the namespace lifecycle over HTTP, errors in the spec's model."""

from __future__ import annotations

from tests.serve.conftest import RestClient


def test_config_lists_the_served_endpoints(client: RestClient) -> None:
    reply = client.get("/v1/config")
    assert reply.status == 200
    assert reply.body["defaults"] == {} and reply.body["overrides"] == {}
    endpoints = set(reply.body["endpoints"])
    assert "GET /v1/{prefix}/namespaces" in endpoints
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables" in endpoints
    assert "POST /v1/{prefix}/tables/rename" in endpoints


def test_namespace_lifecycle(client: RestClient) -> None:
    created = client.post("/v1/namespaces", {"namespace": ["shop"], "properties": {"owner": "ana"}})
    assert created.status == 200
    assert created.body["namespace"] == ["shop"]
    assert created.body["properties"]["owner"] == "ana"
    assert client.post("/v1/namespaces", {"namespace": ["shop", "eu"]}).status == 200

    assert client.get("/v1/namespaces").body == {"namespaces": [["shop"]]}
    assert client.get("/v1/namespaces?parent=shop").body == {"namespaces": [["shop", "eu"]]}
    loaded = client.get("/v1/namespaces/shop%1Feu")
    assert loaded.status == 200 and loaded.body["namespace"] == ["shop", "eu"]
    assert client.call("HEAD", "/v1/namespaces/shop%1Feu").status == 204
    assert client.call("HEAD", "/v1/namespaces/nope").status == 404

    not_empty = client.call("DELETE", "/v1/namespaces/shop")
    assert not_empty.status == 409
    assert not_empty.body["error"]["type"] == "NamespaceNotEmptyException"
    assert client.call("DELETE", "/v1/namespaces/shop%1Feu").status == 204
    assert client.call("DELETE", "/v1/namespaces/shop").status == 204
    assert client.get("/v1/namespaces").body == {"namespaces": []}


def test_errors_follow_the_spec_model(client: RestClient) -> None:
    missing = client.get("/v1/namespaces/nope")
    assert missing.status == 404
    assert missing.body["error"]["type"] == "NoSuchNamespaceException"
    assert missing.body["error"]["code"] == 404
    assert "nope" in missing.body["error"]["message"]

    client.post("/v1/namespaces", {"namespace": ["a"]})
    again = client.post("/v1/namespaces", {"namespace": ["a"]})
    assert again.status == 409 and again.body["error"]["type"] == "AlreadyExistsException"

    unknown = client.get("/v1/nothing/here/at/all/really")
    assert unknown.status == 404
    wrong_method = client.call("PUT", "/v1/namespaces")
    assert wrong_method.status == 405


def test_namespace_paging(client: RestClient) -> None:
    for name in ("n3", "n1", "n4", "n2", "n5"):
        assert client.post("/v1/namespaces", {"namespace": [name]}).status == 200
    seen: list[list[str]] = []
    path = "/v1/namespaces?pageSize=2"
    pages = 0
    while True:
        body = client.get(path).body
        seen += body["namespaces"]
        pages += 1
        token = body.get("next-page-token")
        if token is None:
            break
        path = f"/v1/namespaces?pageSize=2&pageToken={token}"
    assert pages == 3
    assert seen == [["n1"], ["n2"], ["n3"], ["n4"], ["n5"]]
    bad = client.get("/v1/namespaces?pageSize=0")
    assert bad.status == 400 and bad.body["error"]["type"] == "BadRequestException"


def test_update_namespace_properties(client: RestClient) -> None:
    client.post("/v1/namespaces", {"namespace": ["p"], "properties": {"a": "1", "b": "2"}})
    reply = client.post(
        "/v1/namespaces/p/properties", {"updates": {"a": "10", "c": "3"}, "removals": ["b", "zz"]}
    )
    assert reply.status == 200, reply.body
    assert reply.body == {"updated": ["a", "c"], "removed": ["b"], "missing": ["zz"]}
    properties = client.get("/v1/namespaces/p").body["properties"]
    assert {k: v for k, v in properties.items() if k != "location"} == {"a": "10", "c": "3"}
    both = client.post("/v1/namespaces/p/properties", {"updates": {"a": "1"}, "removals": ["a"]})
    assert both.status == 422 and both.body["error"]["type"] == "UnprocessableEntityException"
    reserved = client.post("/v1/namespaces/p/properties", {"updates": {"exists": "false"}})
    assert reserved.status == 400
    missing = client.post("/v1/namespaces/nope/properties", {"updates": {"a": "1"}})
    assert missing.status == 404 and missing.body["error"]["type"] == "NoSuchNamespaceException"
