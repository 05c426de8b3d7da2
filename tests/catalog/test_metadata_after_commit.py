"""A table loaded right after its commit is the metadata the commit wrote, not a second read
and parse of that file (metadata files are immutable, spec "Metastore Tables": "each
commit ... writes a new metadata file"), and never a stale answer: what a catalog remembers
is found only by the file's location, size and mtime, and the current location comes from the
catalog's pointer at every load."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from iceduck.catalog.base import Catalog, LoadedTable, TableIdentifier
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.catalog.metadata_files import read_metadata
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import CommitConflictError
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import LongType, NestedField
from iceduck.txn.builder import MetadataBuilder, new_table_metadata

T = TableIdentifier(("db",), "t")
SCHEMA = Schema((NestedField(1, "id", LongType(), True),))


@pytest.fixture(params=["sqlite", "hadoop"])
def make_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Catalog]:
    """Every call opens a new catalog object (another writer) on the same warehouse."""
    warehouse = tmp_path / "wh"
    if request.param == "sqlite":
        return lambda: SqliteCatalog(warehouse)
    return lambda: HadoopCatalog(warehouse)


def _create(catalog: Catalog) -> LoadedTable:
    catalog.create_namespace(T.namespace)
    location = catalog.default_table_location(T)
    return catalog.create_table(T, new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, location, {}))


def _with(base: LoadedTable, **properties: str) -> TableMetadata:
    builder = MetadataBuilder(base.metadata)
    builder.set_properties(dict(properties))
    return builder.build()


def test_a_load_after_a_commit_is_the_committed_metadata(make_catalog: Callable[[], Catalog]) -> None:
    catalog = make_catalog()
    created = _create(catalog)
    assert catalog.load_table(T).metadata is created.metadata
    committed = catalog.commit_table(created, _with(created, k="1"))
    loaded = catalog.load_table(T)
    assert loaded.metadata_location == committed.metadata_location
    assert loaded.metadata is committed.metadata  # not read and parsed again
    assert loaded.metadata == read_metadata(committed.metadata_location)  # what the file holds


def test_another_writers_commit_is_seen(make_catalog: Callable[[], Catalog]) -> None:
    ours, theirs = make_catalog(), make_catalog()
    base = ours.commit_table(_create(ours), _with(ours.load_table(T), k="ours"))
    moved = theirs.commit_table(theirs.load_table(T), _with(theirs.load_table(T), k="theirs"))
    loaded = ours.load_table(T)
    assert loaded.metadata_location == moved.metadata_location != base.metadata_location
    assert loaded.metadata.properties["k"] == "theirs"


def test_a_rejected_commit_is_never_loaded(make_catalog: Callable[[], Catalog]) -> None:
    ours, theirs = make_catalog(), make_catalog()
    base = _create(ours)
    moved = theirs.commit_table(theirs.load_table(T), _with(base, k="theirs"))
    with pytest.raises(CommitConflictError):
        ours.commit_table(base, _with(base, k="ours"))
    loaded = ours.load_table(T)
    assert loaded.metadata_location == moved.metadata_location
    assert loaded.metadata.properties["k"] == "theirs"
