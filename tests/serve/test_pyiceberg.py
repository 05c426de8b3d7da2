"""PyIceberg's ``RestCatalog``, a client the project did not write, against the server:
it lists namespaces, creates a table, appends (a commit of requirements and updates) and
reads it back; iceduck then reads the same table through the SQLite catalog."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import iceduck
from iceduck.serve.server import CatalogServer
from tests.serve.conftest import start_server

rest = pytest.importorskip("pyiceberg.catalog.rest")
UnauthorizedError = pytest.importorskip("pyiceberg.exceptions").UnauthorizedError


def test_pyiceberg_creates_appends_and_iceduck_reads(server: CatalogServer, warehouse: Path) -> None:
    catalog = rest.RestCatalog("served", uri=server.url)
    assert catalog.list_namespaces() == []
    catalog.create_namespace("shop", {"owner": "py"})
    assert catalog.list_namespaces() == [("shop",)]
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", None], pa.string())})
    table = catalog.create_table("shop.items", schema=rows.schema)
    table.append(rows)
    table.append(rows.slice(0, 1))
    assert catalog.list_tables("shop") == [("shop", "items")]

    again = catalog.load_table("shop.items")
    assert len(again.metadata.snapshots) == 2
    read = again.scan().to_arrow().sort_by("id")
    assert read.column("id").to_pylist() == [1, 1, 2, 3]

    with iceduck.connect(warehouse) as con:
        result = con.execute("SELECT id, name FROM shop.items ORDER BY id, name").fetchall()
    assert result == [(1, "a"), (1, "a"), (2, "b"), (3, None)]


def test_pyiceberg_conflicting_commit_is_retried_not_lost(server: CatalogServer) -> None:
    first = rest.RestCatalog("one", uri=server.url)
    second = rest.RestCatalog("two", uri=server.url)
    first.create_namespace("c")
    rows = pa.table({"id": pa.array([1], pa.int64())})
    stale = first.create_table("c.t", schema=rows.schema)
    fresh = second.load_table("c.t")
    fresh.append(rows)  # lands first
    stale.append(rows)  # built on the old metadata: the server answers 409, PyIceberg refreshes and retries
    table = second.load_table("c.t")
    assert len(table.metadata.snapshots) == 2
    assert table.scan().to_arrow().column("id").to_pylist() == [1, 1]


def test_pyiceberg_with_a_bearer_token(warehouse: Path) -> None:
    served = start_server(warehouse, token="tok3n")
    try:
        catalog = rest.RestCatalog("tokened", uri=served.url, token="tok3n")
        catalog.create_namespace("t")
        assert catalog.list_namespaces() == [("t",)]
        with pytest.raises(UnauthorizedError, match="bearer token"):
            rest.RestCatalog("anonymous", uri=served.url).list_namespaces()
    finally:
        served.stop()


def test_pyiceberg_creates_lists_loads_and_drops_a_view(server: CatalogServer, warehouse: Path) -> None:
    """PyIceberg's view calls (``create_view`` sends a ``CreateViewRequest``, the others
    ``GET``/``HEAD``/``DELETE``) against the served views; iceduck's catalog holds the view."""
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

    from iceduck.catalog.base import TableIdentifier
    from iceduck.catalog.sqlite import SqliteCatalog

    catalog = rest.RestCatalog("served", uri=server.url)
    catalog.create_namespace("shop")
    version = ViewVersion(
        schema_id=0,
        summary={"engine-name": "pyiceberg"},
        representations=[SQLViewRepresentation(type="sql", sql="select 1 as id", dialect="spark")],
        default_namespace=("shop",),
    )
    schema = pa.schema([pa.field("id", pa.int64())])
    created = catalog.create_view("shop.v", schema, version, properties={"comment": "one"})
    assert created.metadata.properties == {"comment": "one"}
    assert catalog.list_views("shop") == [("shop", "v")]
    assert catalog.view_exists("shop.v") and not catalog.view_exists("shop.w")
    loaded = catalog.load_view("shop.v")
    assert loaded.metadata.view_uuid == created.metadata.view_uuid
    own = SqliteCatalog(warehouse).load_view(TableIdentifier(("shop",), "v")).metadata
    assert own.view_uuid == str(created.metadata.view_uuid)
    assert own.current_version.representations[0].sql == "select 1 as id"
    catalog.drop_view("shop.v")
    assert catalog.list_views("shop") == []
