"""The table lifecycle over HTTP: create (staged too), load, list with paging, exists,
rename, register, metrics, drop; the metadata file the server writes is iceduck's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import iceduck
from tests.serve.conftest import RestClient

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamp"},
    ],
}
SPEC = {"spec-id": 0, "fields": [{"source-id": 2, "field-id": 1000, "name": "ts_day", "transform": "day"}]}


def _create(client: RestClient, name: str, **extra: Any) -> Any:
    body = {"name": name, "schema": SCHEMA, **extra}
    return client.post("/v1/namespaces/shop/tables", body)


def test_create_load_and_read_back_with_iceduck(client: RestClient, warehouse: Path) -> None:
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    created = _create(client, "orders", **{"partition-spec": SPEC, "properties": {"format-version": "2"}})
    assert created.status == 200, created.body
    location = created.body["metadata-location"]
    assert location.startswith(str(warehouse)) and Path(location).is_file()
    metadata = created.body["metadata"]
    assert metadata["format-version"] == 2
    assert metadata["location"] == str(warehouse / "shop" / "orders")
    assert [f["transform"] for f in metadata["partition-specs"][0]["fields"]] == ["day"]

    loaded = client.get("/v1/namespaces/shop/tables/orders")
    assert loaded.status == 200 and loaded.body["metadata-location"] == location
    assert loaded.body["metadata"]["table-uuid"] == metadata["table-uuid"]
    assert client.call("HEAD", "/v1/namespaces/shop/tables/orders").status == 204
    assert client.call("HEAD", "/v1/namespaces/shop/tables/other").status == 404

    # the same catalog.db, opened by iceduck itself, sees the table the server created
    with iceduck.connect(warehouse) as con:
        con.execute("INSERT INTO shop.orders VALUES (1, TIMESTAMP '2024-05-01 10:00')")
    after = client.get("/v1/namespaces/shop/tables/orders?snapshots=refs").body["metadata"]
    assert len(after["snapshots"]) == 1 and after["refs"]["main"]["type"] == "branch"


def test_staged_create_writes_nothing(client: RestClient, warehouse: Path) -> None:
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    staged = _create(client, "later", **{"stage-create": True})
    assert staged.status == 200
    assert "metadata-location" not in staged.body
    assert staged.body["metadata"]["location"] == str(warehouse / "shop" / "later")
    assert client.call("HEAD", "/v1/namespaces/shop/tables/later").status == 404
    # no file: only the empty metadata/ folder a client may write manifests into before its commit
    assert [p.name for p in (warehouse / "shop" / "later").rglob("*")] == ["metadata"]


def test_create_errors(client: RestClient, warehouse: Path) -> None:
    missing_ns = _create(client, "t")
    assert missing_ns.status == 404 and missing_ns.body["error"]["type"] == "NoSuchNamespaceException"
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    assert _create(client, "t").status == 200
    taken = _create(client, "t")
    assert taken.status == 409 and taken.body["error"]["type"] == "AlreadyExistsException"
    no_schema = client.post("/v1/namespaces/shop/tables", {"name": "u"})
    assert no_schema.status == 400 and "schema" in no_schema.body["error"]["message"]
    bad_type = _create(
        client, "u", schema={"type": "struct", "fields": [{"id": 1, "name": "x", "type": "lng"}]}
    )
    assert bad_type.status == 400 and bad_type.body["error"]["type"] == "BadRequestException"
    outside = _create(client, "u", location=str(warehouse.parent / "elsewhere"))
    assert outside.status == 400 and "outside the warehouse" in outside.body["error"]["message"]
    sneaky = _create(client, "u", location=str(warehouse / ".." / "elsewhere"))
    assert sneaky.status == 400
    assert not (warehouse.parent / "elsewhere").exists()
    load_missing = client.get("/v1/namespaces/shop/tables/nope")
    assert load_missing.status == 404 and load_missing.body["error"]["type"] == "NoSuchTableException"


def test_list_rename_register_metrics_drop(client: RestClient, warehouse: Path) -> None:
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    client.post("/v1/namespaces", {"namespace": ["archive"]})
    for name in ("c", "a", "b"):
        assert _create(client, name).status == 200
    first = client.get("/v1/namespaces/shop/tables?pageSize=2").body
    assert [t["name"] for t in first["identifiers"]] == ["a", "b"]
    rest = client.get(f"/v1/namespaces/shop/tables?pageSize=2&pageToken={first['next-page-token']}").body
    assert rest == {"identifiers": [{"namespace": ["shop"], "name": "c"}]}

    renamed = client.post(
        "/v1/tables/rename",
        {
            "source": {"namespace": ["shop"], "name": "c"},
            "destination": {"namespace": ["archive"], "name": "c2"},
        },
    )
    assert renamed.status == 204
    assert client.call("HEAD", "/v1/namespaces/archive/tables/c2").status == 204
    nowhere = client.post(
        "/v1/tables/rename",
        {"source": {"namespace": ["shop"], "name": "a"}, "destination": {"namespace": ["gone"], "name": "a"}},
    )
    assert nowhere.status == 404 and nowhere.body["error"]["type"] == "NoSuchNamespaceException"

    metrics = client.post("/v1/namespaces/shop/tables/a/metrics", {"report-type": "scan-report"})
    assert metrics.status == 204
    # a staged table's commit report arrives before the table exists (Java's CTAS): accepted
    staged = client.post("/v1/namespaces/shop/tables/zz/metrics", {"report-type": "commit-report"})
    assert staged.status == 204
    assert client.post("/v1/namespaces/nope/tables/zz/metrics", {"report-type": "scan-report"}).status == 404

    location = client.get("/v1/namespaces/shop/tables/b").body["metadata-location"]
    assert client.call("DELETE", "/v1/namespaces/shop/tables/b").status == 204
    assert Path(location).is_file()  # dropped without purge: files stay
    registered = client.post("/v1/namespaces/shop/register", {"name": "b", "metadata-location": location})
    assert registered.status == 200 and registered.body["metadata-location"] == location
    outside = client.post("/v1/namespaces/shop/register", {"name": "x", "metadata-location": "/etc/passwd"})
    assert outside.status == 400

    assert client.call("DELETE", "/v1/namespaces/shop/tables/b?purgeRequested=true").status == 204
    assert not Path(location).exists()
    gone = client.call("DELETE", "/v1/namespaces/shop/tables/b")
    assert gone.status == 404 and gone.body["error"]["type"] == "NoSuchTableException"


def test_a_symbolic_link_out_of_the_warehouse_is_outside(client: RestClient, warehouse: Path) -> None:
    elsewhere = warehouse.parent / "elsewhere"
    elsewhere.mkdir()
    (warehouse / "link").symlink_to(elsewhere)
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    reply = _create(client, "t", location=str(warehouse / "link" / "t"))
    assert reply.status == 400 and "outside the warehouse" in reply.body["error"]["message"]
    assert list(elsewhere.iterdir()) == []


def test_one_metadata_file_under_two_names_purged_through_one(client: RestClient) -> None:
    """Registering a file another table uses is allowed (as in Java); purging through one
    name leaves the other naming a missing file: a 404 naming the file, never a 500."""
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    assert _create(client, "a").status == 200
    location = client.get("/v1/namespaces/shop/tables/a").body["metadata-location"]
    twin = client.post("/v1/namespaces/shop/register", {"name": "twin", "metadata-location": location})
    assert twin.status == 200
    assert client.call("DELETE", "/v1/namespaces/shop/tables/a?purgeRequested=true").status == 204
    for reply in (
        client.get("/v1/namespaces/shop/tables/twin"),
        client.post("/v1/namespaces/shop/tables/twin", {"requirements": [], "updates": []}),
    ):
        assert reply.status == 404, reply.body
        assert reply.body["error"]["type"] == "NotFoundException"
        assert location in reply.body["error"]["message"]
