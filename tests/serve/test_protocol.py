"""The protocol around the tables: ``GET /v1/config`` (warehouse, overrides, endpoints),
the view routes of a catalog without views (answered, not listed), ETags with
``If-None-Match``, and register with ``overwrite``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import iceduck
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.serve.context import ServeContext
from iceduck.serve.server import CatalogServer
from tests.serve.conftest import RestClient, start_server

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
}
TABLE = "/v1/namespaces/shop/tables/t"


def _table(client: RestClient, name: str = "t") -> dict[str, Any]:
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    reply = client.post("/v1/namespaces/shop/tables", {"name": name, "schema": SCHEMA})
    assert reply.status == 200, reply.body
    return dict(reply.body)


def _set_property(client: RestClient, path: str, key: str, value: str) -> Any:
    update = {"action": "set-properties", "updates": {key: value}}
    return client.post(path, {"requirements": [], "updates": [update]})


# -- GET /v1/config ------------------------------------------------------------------------------


def test_config_warehouse_parameter(warehouse: Path) -> None:
    served = start_server(warehouse, catalog_name="lake")
    try:
        client = RestClient(served.url)
        for accepted in ("", "lake", str(warehouse), str(warehouse) + "/", f"file:{warehouse}"):
            reply = client.get(f"/v1/config?warehouse={quote(accepted)}")
            assert reply.status == 200, (accepted, reply.body)
        assert client.get("/v1/config").status == 200
        for refused in ("other", "s3://bucket/wh", str(warehouse / "sub")):
            reply = client.get(f"/v1/config?warehouse={quote(refused)}")
            assert reply.status == 400, refused
            message = reply.body["error"]["message"]
            assert refused in message and str(warehouse) in message and "'lake'" in message
    finally:
        served.stop()


def test_config_endpoints_are_the_served_routes(client: RestClient) -> None:
    body = client.get("/v1/config").body
    assert body["defaults"] == {} and body["overrides"] == {}
    endpoints = set(body["endpoints"])
    assert "POST /v1/oauth/tokens" in endpoints
    assert "GET /v1/config" in endpoints
    for expected in (
        "GET /v1/{prefix}/namespaces",
        "HEAD /v1/{prefix}/namespaces/{namespace}",
        "POST /v1/{prefix}/namespaces/{namespace}/register",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/transactions/commit",
    ):
        assert expected in endpoints
    for view_route in (
        "GET /v1/{prefix}/namespaces/{namespace}/views",
        "POST /v1/{prefix}/namespaces/{namespace}/views",
        "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/views/rename",
        "POST /v1/{prefix}/namespaces/{namespace}/register-view",
    ):
        assert view_route in endpoints  # the JDBC catalog.db keeps views
    assert len(endpoints) == len(body["endpoints"])


def test_config_lists_no_view_routes_for_a_catalog_without_views(no_views: RestClient) -> None:
    endpoints = no_views.get("/v1/config").body["endpoints"]
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables" in endpoints
    assert not [e for e in endpoints if "view" in e]
    # a server serving that server's catalog through iceduck's REST client lists none either
    proxy = CatalogServer(("127.0.0.1", 0), ServeContext(RestCatalog(no_views.base, "up"), ""))
    proxy.start()
    try:
        proxied = RestClient(proxy.url).get("/v1/config").body["endpoints"]
    finally:
        proxy.stop()
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables" in proxied
    assert not [e for e in proxied if "view" in e]


# -- views ---------------------------------------------------------------------------------------


@pytest.fixture
def no_views(warehouse: Path) -> Iterator[RestClient]:
    """A server over a file-system (Hadoop) warehouse: a catalog that keeps no views."""
    served = start_server(warehouse, kind="hadoop")
    yield RestClient(served.url)
    served.stop()


def test_view_routes_of_a_catalog_without_views_answer_as_clients_expect(
    no_views: RestClient, warehouse: Path
) -> None:
    client = no_views
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    assert client.get("/v1/namespaces/shop/views").body == {"identifiers": []}
    missing_ns = client.get("/v1/namespaces/nope/views")
    assert missing_ns.status == 404 and missing_ns.body["error"]["type"] == "NoSuchNamespaceException"
    load = client.get("/v1/namespaces/shop/views/v")
    assert load.status == 404 and load.body["error"]["type"] == "NoSuchViewException"
    assert "keeps no views" in load.body["error"]["message"]
    assert client.call("HEAD", "/v1/namespaces/shop/views/v").status == 404
    assert client.call("DELETE", "/v1/namespaces/shop/views/v").status == 404
    version = {
        "version-id": 1,
        "timestamp-ms": 1,
        "schema-id": 0,
        "summary": {},
        "default-namespace": ["shop"],
        "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
    }
    view = {"name": "v", "schema": SCHEMA, "view-version": version, "properties": {}}
    rename = {
        "source": {"namespace": ["shop"], "name": "v"},
        "destination": {"namespace": ["shop"], "name": "w"},
    }
    for path, body in (("/v1/namespaces/shop/views", view), ("/v1/views/rename", rename)):
        reply = client.post(path, body)
        assert reply.status == 406, path
        assert reply.body["error"]["type"] == "UnsupportedOperationException"
        assert "keeps no views" in reply.body["error"]["message"]
    commit = client.post("/v1/namespaces/shop/views/v", {"requirements": [], "updates": []})
    assert commit.status == 404 and commit.body["error"]["type"] == "NoSuchViewException"
    register = {"name": "v", "metadata-location": str(warehouse / "shop" / "x.metadata.json")}
    assert client.post("/v1/namespaces/shop/register-view", register).status == 406
    bad = client.get("/v1/namespaces/shop/views/a%2Fb")
    assert bad.status == 400


# -- ETag ----------------------------------------------------------------------------------------


def test_etag_and_if_none_match(client: RestClient) -> None:
    created = client.post("/v1/namespaces", {"namespace": ["shop"]})
    created = client.post("/v1/namespaces/shop/tables", {"name": "t", "schema": SCHEMA})
    tag = created.headers["ETag"]
    assert tag.startswith('"') and tag.endswith('"')
    loaded = client.get(TABLE)
    assert loaded.headers["ETag"] == tag
    refs = client.get(TABLE + "?snapshots=refs")
    assert refs.headers["ETag"] != tag  # another representation of the same version

    same = client.call("GET", TABLE, headers={"If-None-Match": tag})
    assert same.status == 304 and same.body is None and same.headers["ETag"] == tag
    assert client.call("GET", TABLE, headers={"If-None-Match": f'"other", W/{tag}'}).status == 304
    assert client.call("GET", TABLE, headers={"If-None-Match": "*"}).status == 304
    assert client.call("GET", TABLE + "?snapshots=refs", headers={"If-None-Match": tag}).status == 200

    committed = _set_property(client, TABLE, "k", "v")
    new_tag = committed.headers["ETag"]
    assert new_tag != tag
    changed = client.call("GET", TABLE, headers={"If-None-Match": tag})
    assert changed.status == 200 and changed.headers["ETag"] == new_tag
    assert changed.body["metadata"]["properties"]["k"] == "v"
    assert client.call("GET", TABLE, headers={"If-None-Match": new_tag}).status == 304
    missing = client.call("GET", "/v1/namespaces/shop/tables/nope", headers={"If-None-Match": "*"})
    assert missing.status == 404
    staged = client.post("/v1/namespaces/shop/tables", {"name": "s", "schema": SCHEMA, "stage-create": True})
    assert "ETag" not in staged.headers


# -- register with overwrite ---------------------------------------------------------------------


def test_register_overwrite_replaces_the_entry(client: RestClient, warehouse: Path) -> None:
    first = _table(client, "t")
    _set_property(client, TABLE, "version", "old")
    other = client.post("/v1/namespaces/shop/tables", {"name": "other", "schema": SCHEMA})
    _set_property(client, "/v1/namespaces/shop/tables/other", "version", "other")
    other_location = client.get("/v1/namespaces/shop/tables/other").body["metadata-location"]
    before = client.get(TABLE).body["metadata-location"]

    taken = client.post("/v1/namespaces/shop/register", {"name": "t", "metadata-location": other_location})
    assert taken.status == 409 and taken.body["error"]["type"] == "AlreadyExistsException"
    wrong = {"name": "t", "metadata-location": other_location, "overwrite": "yes"}
    assert client.post("/v1/namespaces/shop/register", wrong).status == 400

    body = {"name": "t", "metadata-location": other_location, "overwrite": True}
    replaced = client.post("/v1/namespaces/shop/register", body)
    assert replaced.status == 200, replaced.body
    new_location = replaced.body["metadata-location"]
    assert new_location not in (before, other_location)
    assert new_location.startswith(str(warehouse / "shop" / "other" / "metadata"))
    metadata = replaced.body["metadata"]
    assert metadata["properties"]["version"] == "other"
    assert metadata["table-uuid"] == other.body["metadata"]["table-uuid"] != first["metadata"]["table-uuid"]
    assert metadata["metadata-log"][-1]["metadata-file"] == before
    assert json.loads(Path(new_location).read_text())["properties"]["version"] == "other"
    assert client.get(TABLE).body["metadata-location"] == new_location
    with iceduck.connect(warehouse) as con:
        props = dict(con.execute("SHOW TBLPROPERTIES shop.t").fetchall())
    assert props["version"] == "other"

    # overwrite of a table that does not exist registers it
    fresh = client.post("/v1/namespaces/shop/register", {**body, "name": "fresh"})
    assert fresh.status == 200 and fresh.body["metadata-location"] == other_location


def test_register_overwrite_stays_in_the_warehouse(client: RestClient, tmp_path: Path) -> None:
    _table(client, "t")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    # a metadata file inside the warehouse whose table location lies outside it
    metadata = client.get(TABLE).body["metadata"]
    inside = Path(client.get(TABLE).body["metadata-location"]).with_name("crafted.metadata.json")
    inside.write_text(json.dumps({**metadata, "location": str(outside)}))
    body = {"name": "t", "metadata-location": str(inside), "overwrite": True}
    reply = client.post("/v1/namespaces/shop/register", body)
    assert reply.status == 400 and "outside the warehouse" in reply.body["error"]["message"]
    assert list(outside.iterdir()) == []
    far = {"name": "t", "metadata-location": "/etc/passwd", "overwrite": True}
    assert client.post("/v1/namespaces/shop/register", far).status == 400


def test_register_overwrite_with_a_token_server(warehouse: Path) -> None:
    served: CatalogServer = start_server(warehouse, token="t")
    try:
        client = RestClient(served.url, token="t")
        _table(client, "t")
        location = client.get(TABLE).body["metadata-location"]
        body = {"name": "t", "metadata-location": location, "overwrite": True}
        assert client.post("/v1/namespaces/shop/register", body).status == 200
        assert RestClient(served.url).post("/v1/namespaces/shop/register", body).status == 401
    finally:
        served.stop()


# -- HEAD -----------------------------------------------------------------------------------------


def test_head_not_found_has_the_headers_of_the_error_model_and_no_body(server: CatalogServer) -> None:
    """The spec's HEAD 404s (namespace, table, view) declare an ``IcebergErrorResponse`` in
    ``application/json``; HTTP sends a HEAD answer's headers as for GET, never its body."""
    import http.client

    host, port = server.server_address[:2]
    RestClient(server.url).post("/v1/namespaces", {"namespace": ["shop"]})
    for path, error in [
        ("/v1/namespaces/nope", "NoSuchNamespaceException"),
        ("/v1/namespaces/shop/tables/t", "NoSuchTableException"),
        ("/v1/namespaces/shop/views/v", "NoSuchViewException"),
    ]:
        conn = http.client.HTTPConnection(str(host), int(port))
        conn.request("GET", path)
        got = conn.getresponse()
        body = got.read()
        conn.close()
        assert json.loads(body)["error"]["type"] == error
        conn = http.client.HTTPConnection(str(host), int(port))
        conn.request("HEAD", path)
        head = conn.getresponse()
        assert head.status == got.status == 404, path
        assert head.getheader("Content-Type") == "application/json", path
        assert head.getheader("Content-Length") == str(len(body)), path
        assert head.read() == b"", path
        conn.close()


# -- what Java's clients and the OpenAPI document read -------------------------------------------


def test_missing_and_existing_tables_and_namespaces_in_javas_words(client: RestClient) -> None:
    """Java's ``CatalogHandlers`` words, which its clients show and Iceberg's catalog tests
    check (tests/interop/test_rest_compatibility_kit.py runs them with Maven)."""
    assert client.get("/v1/namespaces/nope").body["error"]["message"] == "Namespace does not exist: nope"
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    again = client.post("/v1/namespaces", {"namespace": ["shop"]})
    assert again.body["error"]["message"] == "Namespace already exists: shop"
    missing = client.get("/v1/namespaces/shop/tables/t").body["error"]
    assert (missing["type"], missing["message"]) == ("NoSuchTableException", "Table does not exist: shop.t")
    _table(client)
    exists = client.post("/v1/namespaces/shop/tables", {"name": "t", "schema": SCHEMA}).body["error"]
    assert exists["message"] == "Table already exists: shop.t"


def test_view_route_errors_read_under_both_schemas_of_the_document(
    client: RestClient, no_views: RestClient
) -> None:
    """The document gives the view routes' 404/406 a bare ``ErrorModel``; its examples and
    every other route wrap it: the body carries both, other statuses only the wrapper."""
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    missing = client.get("/v1/namespaces/shop/views/v").body
    assert missing["error"]["code"] == missing["code"] == 404
    assert missing["type"] == missing["error"]["type"] == "NoSuchViewException"
    no_views.post("/v1/namespaces", {"namespace": ["shop"]})
    rename = {
        "source": {"namespace": ["shop"], "name": "v"},
        "destination": {"namespace": ["shop"], "name": "w"},
    }
    refused = no_views.post("/v1/views/rename", rename).body
    assert refused["code"] == refused["error"]["code"] == 406
    bad = client.get("/v1/namespaces/shop/views/a%2Fb").body
    assert set(bad) == {"error"}  # a 400 is IcebergErrorResponse: nothing beside "error"


def test_a_method_not_served_under_a_prefix_is_a_405(warehouse: Path) -> None:
    served = start_server(warehouse, prefix="p")
    try:
        reply = RestClient(served.url).call("PUT", "/v1/config")
        assert reply.status == 405 and reply.headers["Allow"] == "GET"
    finally:
        served.stop()
