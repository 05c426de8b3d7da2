"""Table commits over HTTP: requirements checked (409 on a failed one), updates applied,
staged creates completed by ``assert-create``, bad changes refused, concurrent commits
never lost."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.open import open_catalog
from iceduck.errors import CommitConflictError
from iceduck.spec.snapshot import StatisticsFile
from tests.serve.conftest import RestClient, creation_updates

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
}
TABLE = "/v1/namespaces/shop/tables/t"


def _table(client: RestClient) -> dict[str, Any]:
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    created = client.post("/v1/namespaces/shop/tables", {"name": "t", "schema": SCHEMA})
    assert created.status == 200
    return dict(created.body["metadata"])


def test_requirements_then_updates(client: RestClient) -> None:
    metadata = _table(client)
    commit = {
        "requirements": [
            {"type": "assert-table-uuid", "uuid": metadata["table-uuid"]},
            {"type": "assert-current-schema-id", "current-schema-id": 0},
        ],
        "updates": [{"action": "set-properties", "updates": {"owner": "ana"}}],
    }
    done = client.post(TABLE, commit)
    assert done.status == 200, done.body
    assert done.body["metadata"]["properties"]["owner"] == "ana"
    assert Path(done.body["metadata-location"]).is_file()
    assert client.get(TABLE).body["metadata-location"] == done.body["metadata-location"]

    stale = client.post(
        TABLE,
        {
            "requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
            "updates": [{"action": "set-properties", "updates": {"owner": "bob"}}],
        },
    )
    assert stale.status == 409 and stale.body["error"]["type"] == "CommitFailedException"
    assert client.get(TABLE).body["metadata"]["properties"]["owner"] == "ana"


def test_bad_changes_are_400(client: RestClient, warehouse: Path) -> None:
    _table(client)
    unknown = client.post(TABLE, {"updates": [{"action": "make-it-fast"}]})
    assert unknown.status == 400 and "make-it-fast" in unknown.body["error"]["message"]
    missing_field = client.post(TABLE, {"updates": [{"action": "set-current-schema"}]})
    assert missing_field.status == 400
    outside = client.post(TABLE, {"updates": [{"action": "set-location", "location": str(warehouse.parent)}]})
    assert outside.status == 400 and "outside the warehouse" in outside.body["error"]["message"]
    not_a_list = client.post(TABLE, {"updates": {"action": "set-properties"}})
    assert not_a_list.status == 400
    missing = client.post("/v1/namespaces/shop/tables/none", {"updates": []})
    assert missing.status == 404 and missing.body["error"]["type"] == "NoSuchTableException"


def test_staged_create_completed_by_assert_create(client: RestClient) -> None:
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    staged = client.post("/v1/namespaces/shop/tables", {"name": "t", "schema": SCHEMA, "stage-create": True})
    md = staged.body["metadata"]
    updates = creation_updates(md)
    created = client.post(TABLE, {"requirements": [{"type": "assert-create"}], "updates": updates})
    assert created.status == 200, created.body
    assert created.body["metadata"]["table-uuid"] == md["table-uuid"]
    again = client.post(TABLE, {"requirements": [{"type": "assert-create"}], "updates": updates})
    assert again.status == 409 and again.body["error"]["type"] == "CommitFailedException"


def test_concurrent_commits_are_never_lost(client: RestClient) -> None:
    _table(client)
    outcomes: dict[str, int] = {}
    lock = threading.Lock()

    def commit(i: int) -> None:
        reply = client.post(TABLE, {"updates": [{"action": "set-properties", "updates": {f"k{i}": "v"}}]})
        with lock:
            outcomes[f"k{i}"] = reply.status

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(outcomes.values()) <= {200, 409}
    properties = client.get(TABLE).body["metadata"]["properties"]
    landed = {k for k, status in outcomes.items() if status == 200}
    assert landed and landed == {k for k in properties if k.startswith("k")}


def test_purge_refuses_files_outside_the_warehouse(client: RestClient, warehouse: Path) -> None:
    """A client can commit a snapshot whose data files lie anywhere; purging must not delete
    them, so a purge of such a table is refused and the table stays."""
    metadata = _table(client)
    outside = warehouse.parent / "precious.parquet"
    outside.write_bytes(b"PAR1")

    with iceduck.connect(warehouse) as con:
        con.execute("INSERT INTO shop.t VALUES (1)")
    # committed behind the server's back: its metadata names a file outside as a statistics file
    catalog = open_catalog(warehouse, "iceduck")
    loaded = catalog.load_table(TableIdentifier(("shop",), "t"))
    assert loaded.metadata.current_snapshot_id is not None
    stats = StatisticsFile(loaded.metadata.current_snapshot_id, str(outside), 4, 0)
    catalog.commit_table(loaded, dataclasses.replace(loaded.metadata, statistics=(stats,)))
    refused = client.call("DELETE", f"{TABLE}?purgeRequested=true")
    assert refused.status == 400 and "outside the warehouse" in refused.body["error"]["message"]
    assert outside.exists() and client.call("HEAD", TABLE).status == 204
    assert metadata["table-uuid"] == client.get(TABLE).body["metadata"]["table-uuid"]


def _props(name: str, key: str) -> dict[str, Any]:
    return {
        "identifier": {"namespace": ["shop"], "name": name},
        "requirements": [],
        "updates": [{"action": "set-properties", "updates": {key: "v"}}],
    }


def test_transaction_commits_all_tables_or_none(client: RestClient) -> None:
    _table(client)
    client.post("/v1/namespaces/shop/tables", {"name": "u", "schema": SCHEMA})
    done = client.post("/v1/transactions/commit", {"table-changes": [_props("t", "x"), _props("u", "x")]})
    assert done.status == 204
    for name in ("t", "u"):
        assert client.get(f"/v1/namespaces/shop/tables/{name}").body["metadata"]["properties"]["x"] == "v"

    before = {n: client.get(f"/v1/namespaces/shop/tables/{n}").body["metadata-location"] for n in ("t", "u")}
    failing = _props("u", "y")
    failing["requirements"] = [{"type": "assert-current-schema-id", "current-schema-id": 7}]
    refused = client.post("/v1/transactions/commit", {"table-changes": [_props("t", "y"), failing]})
    assert refused.status == 409 and refused.body["error"]["type"] == "CommitFailedException"
    after = {n: client.get(f"/v1/namespaces/shop/tables/{n}").body["metadata-location"] for n in ("t", "u")}
    assert after == before
    twice = client.post("/v1/transactions/commit", {"table-changes": [_props("t", "z"), _props("t", "w")]})
    assert twice.status == 400
    missing = client.post("/v1/transactions/commit", {"table-changes": [_props("nope", "z")]})
    assert missing.status == 404


def test_transaction_lost_race_rolls_back_every_table(client: RestClient, warehouse: Path) -> None:
    """The catalog's atomic swap itself: the second table moved after its base was loaded,
    so the first table's swap, already done in the same transaction, is rolled back."""
    _table(client)
    client.post("/v1/namespaces/shop/tables", {"name": "u", "schema": SCHEMA})
    catalog = open_catalog(warehouse, "iceduck")
    t, u = (catalog.load_table(TableIdentifier(("shop",), n)) for n in ("t", "u"))
    assert client.post("/v1/namespaces/shop/tables/u", {"updates": _props("u", "k")["updates"]}).status == 200
    changed = [(t, dataclasses.replace(t.metadata, properties={"a": "1"})), (u, u.metadata)]
    with pytest.raises(CommitConflictError):
        catalog.commit_tables(changed)
    assert catalog.load_table(t.identifier).metadata_location == t.metadata_location
    assert sorted(p.name for p in (warehouse / "shop" / "t" / "metadata").iterdir()) == [
        Path(t.metadata_location).name
    ]
