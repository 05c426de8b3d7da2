"""Catalogs that keep no views (the NoViews mixin), as Java's HadoopCatalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.errors import NotFoundError, UnsupportedError
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField
from iceduck.spec.view_metadata import ViewRepresentation, new_view


def test_the_hadoop_catalog_lists_no_views_and_refuses_writing_one(tmp_path: Path) -> None:
    catalog = HadoopCatalog(tmp_path, "hcat")
    catalog.create_namespace(("ns",))
    ident = TableIdentifier(("ns",), "v")
    assert catalog.list_views(("ns",)) == []
    assert not catalog.view_exists(ident)
    with pytest.raises(NotFoundError, match=r"View does not exist: ns\.v"):
        catalog.load_view(ident)
    with pytest.raises(NotFoundError, match="Namespace does not exist: nope"):
        catalog.list_views(("nope",))
    md = new_view(
        str(tmp_path / "ns" / "v"),
        Schema((NestedField(1, "id", LongType()),)),
        [ViewRepresentation("SELECT 1 AS id", "spark")],
        ("ns",),
    )
    with pytest.raises(UnsupportedError, match=r"file-system \(Hadoop\) catalog 'hcat' keeps no views"):
        catalog.create_view(ident, md)
    with pytest.raises(UnsupportedError, match="keeps no views"):
        catalog.rename_view(ident, TableIdentifier(("ns",), "w"))
    assert not (tmp_path / "ns" / "v").exists()
