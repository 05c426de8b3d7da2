"""The REST client's views against a real ``iceduck serve``: the metadata the client builds
is the metadata the server writes, concurrent replaces both land (the server re-applies the
second), names are shared with tables, and a server offering no views is a catalog without
views."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import AlreadyExistsError, NotFoundError, UnsupportedError
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField, StringType
from iceduck.spec.view_metadata import (
    ViewMetadata,
    ViewRepresentation,
    add_view_version,
    new_view,
    set_view_properties,
)
from iceduck.txn.builder import new_table_metadata
from tests.catalog.rest_client.conftest import Served
from tests.support.rest import start_server

V = TableIdentifier(("ns",), "v")
ID = Schema((NestedField(0, "id", LongType()),))
NAME = Schema((NestedField(0, "name", StringType()),))


def _sql(sql: str) -> tuple[ViewRepresentation, ...]:
    return (ViewRepresentation(sql, "duckdb"), ViewRepresentation(sql, "spark"))


def _catalog(served: Served, **properties: str) -> RestCatalog:
    catalog = RestCatalog(served.url, "rest", {**served.properties, **properties})
    if not catalog.namespace_exists(("ns",)):
        catalog.create_namespace(("ns",))
    return catalog


def _metadata(catalog: RestCatalog, identifier: TableIdentifier = V) -> ViewMetadata:
    location = catalog.default_view_location(identifier)
    return new_view(location, ID, _sql("select 1 as id"), ("ns",), properties={"comment": "c"})


def test_created_replaced_and_altered_views_are_what_the_client_built(served: Served) -> None:
    catalog = _catalog(served)
    assert catalog.offers_views
    built = _metadata(catalog)
    assert built.location == str(served.warehouse / "ns" / "v")
    created = catalog.create_view(V, built)
    # a CreateViewRequest carries no UUID: the server's new view has its own
    assert created.metadata == replace(built, view_uuid=created.metadata.view_uuid)
    assert catalog.list_views(("ns",)) == [V] and catalog.view_exists(V)
    assert catalog.load_view(V) == created
    # the served JDBC catalog holds the same view (Spark on the catalog.db reads it)
    assert SqliteCatalog(served.warehouse).load_view(V) == created
    replaced = add_view_version(created.metadata, NAME, _sql("select 'a' as name"), ("ns",))
    committed = catalog.commit_view(created, replaced)
    assert committed.metadata == replaced
    assert committed.metadata_location != created.metadata_location
    altered = set_view_properties(committed.metadata, {"k": "v"}, ["comment"])
    assert catalog.commit_view(committed, altered).metadata == altered
    assert catalog.load_view(V).metadata == altered


def test_a_replace_on_an_old_base_is_re_applied_by_the_server(served: Served) -> None:
    one, two = _catalog(served), _catalog(served)
    base = one.create_view(V, _metadata(one))
    first = add_view_version(base.metadata, NAME, _sql("select 'a' as name"), ("ns",))
    second = add_view_version(base.metadata, ID, _sql("select 2 as id"), ("ns",))
    one.commit_view(base, first)
    landed = two.commit_view(base, second).metadata
    assert [(v.version_id, v.schema_id) for v in landed.versions] == [(1, 0), (2, 1), (3, 0)]
    assert landed.current_version.representations == _sql("select 2 as id")


def test_drop_rename_and_register(served: Served) -> None:
    catalog = _catalog(served)
    created = catalog.create_view(V, _metadata(catalog))
    again = TableIdentifier(("ns",), "again")
    assert catalog.register_view(again, created.metadata_location).metadata == created.metadata
    catalog.create_namespace(("other",))
    moved = TableIdentifier(("other",), "w")
    catalog.rename_view(V, moved)
    assert catalog.list_views(("ns",)) == [again] and catalog.list_views(("other",)) == [moved]
    with pytest.raises(NotFoundError, match="namespace 'nope'"):
        catalog.rename_view(moved, TableIdentifier(("nope",), "w"))
    catalog.drop_view(moved)
    assert not catalog.view_exists(moved)
    with pytest.raises(NotFoundError, match=r"View does not exist: other\.w"):
        catalog.load_view(moved)
    with pytest.raises(NotFoundError):
        catalog.drop_view(moved)


def test_tables_and_views_share_one_namespace_of_names(served: Served) -> None:
    catalog = _catalog(served)
    t = TableIdentifier(("ns",), "t")
    catalog.create_table(
        t, new_table_metadata(ID, UNPARTITIONED, UNSORTED, catalog.default_table_location(t), {})
    )
    at = new_view(str(served.warehouse / "ns" / "t"), ID, _sql("select 1 as id"), ("ns",))
    with pytest.raises(AlreadyExistsError, match=r"Table with same name already exists: ns\.t"):
        catalog.create_view(t, at)
    catalog.create_view(V, _metadata(catalog))
    table = new_table_metadata(ID, UNPARTITIONED, UNSORTED, catalog.default_table_location(V), {})
    with pytest.raises(AlreadyExistsError, match=r"View with same name already exists: ns\.v"):
        catalog.create_table(V, table)
    assert not catalog.table_exists(V) and not catalog.view_exists(t)


def test_views_are_listed_page_by_page(served: Served) -> None:
    catalog = _catalog(served, **{"rest-page-size": "1"})
    names = [TableIdentifier(("ns",), n) for n in ("c", "a", "b")]
    for identifier in names:
        catalog.create_view(identifier, _metadata(catalog, identifier))
    assert catalog.list_views(("ns",)) == sorted(names, key=lambda i: i.name)


def test_a_server_offering_no_views_is_a_catalog_without_views(tmp_path: Path) -> None:
    warehouse = tmp_path / "hadoop"
    warehouse.mkdir()
    server = start_server(warehouse, kind="hadoop")
    try:
        catalog = RestCatalog(server.url, "rest")
        catalog.create_namespace(("ns",))
        assert not catalog.offers_views
        assert catalog.list_views(("ns",)) == [] and not catalog.view_exists(V)
        with pytest.raises(NotFoundError, match="namespace 'nope'"):
            catalog.list_views(("nope",))
        with pytest.raises(NotFoundError, match="offers no views"):
            catalog.load_view(V)
        md = new_view(str(warehouse / "ns" / "v"), ID, _sql("select 1"), ("ns",))
        with pytest.raises(UnsupportedError, match="offers no views"):
            catalog.create_view(V, md)
        with pytest.raises(UnsupportedError, match="offers no views"):
            catalog.drop_view(V)
    finally:
        server.stop()
