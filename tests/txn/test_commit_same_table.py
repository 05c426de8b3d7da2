"""A retried commit never lands in a different table.

Another writer drops the table and creates a new one of the same name (or renames it away
and creates one in its place) between our build and our swap. The swap fails; the retry
reloads the name and must refuse the new table, as Java refuses a refresh whose UUID
changed ("Table UUID does not match").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from iceduck.catalog.base import Catalog, LoadedTable, TableIdentifier
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import CommitConflictError
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField, StringType
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from iceduck.txn.commit import PendingCommit, commit

T = TableIdentifier(("db",), "t")
FAST = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}
OLD_SCHEMA = Schema((NestedField(1, "k", LongType()), NestedField(2, "v", LongType())))
NEW_SCHEMA = Schema((NestedField(1, "name", StringType()), NestedField(2, "note", StringType())))


def _create(catalog: Catalog, schema: Schema, properties: dict[str, str] | None = None) -> LoadedTable:
    location = catalog.default_table_location(T)
    metadata = new_table_metadata(schema, UNPARTITIONED, UNSORTED, location, {**FAST, **(properties or {})})
    return catalog.create_table(T, metadata)


@pytest.fixture(params=["sqlite", "hadoop"])
def catalogs(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Catalog, Catalog]:
    warehouse = tmp_path / "wh"
    kind = SqliteCatalog if request.param == "sqlite" else HadoopCatalog
    factory: Callable[[], Catalog] = lambda: kind(warehouse)  # noqa: E731
    ours = factory()
    ours.create_namespace(("db",))
    _create(ours, OLD_SCHEMA)
    return ours, factory()


def _marking_attempt(
    written_dir: Path, meanwhile: Callable[[], None]
) -> tuple[Callable[[LoadedTable], PendingCommit], list[str]]:
    """An attempt that marks the table with a property and writes a file (as a snapshot
    producer writes manifests); ``meanwhile`` runs once, between our build and our swap."""
    seen: list[str] = []

    def attempt(base: LoadedTable) -> PendingCommit:
        seen.append(str(base.metadata.table_uuid))
        builder = MetadataBuilder(base.metadata)
        builder.set_properties({"written-by": "statement-a"})
        path = written_dir / f"manifest-{len(seen)}.avro"
        path.write_bytes(b"manifest")
        if len(seen) == 1:
            meanwhile()
        return PendingCommit(builder.build(), [str(path)])

    return attempt, seen


def test_drop_and_recreate_between_build_and_swap_is_refused(
    catalogs: tuple[Catalog, Catalog], tmp_path: Path
) -> None:
    ours, theirs = catalogs
    base = ours.load_table(T)

    def drop_and_recreate() -> None:
        theirs.drop_table(T)
        _create(theirs, NEW_SCHEMA)

    attempt, _ = _marking_attempt(tmp_path, drop_and_recreate)
    with pytest.raises(CommitConflictError, match="Table UUID does not match"):
        commit(ours, T, attempt, base=base, sleep=lambda _: None)
    new = theirs.load_table(T)
    assert new.metadata.table_uuid != base.metadata.table_uuid
    assert new.metadata.schema() == NEW_SCHEMA
    assert "written-by" not in new.metadata.properties  # nothing of ours landed in the new table
    assert not list(tmp_path.glob("manifest-*.avro"))  # and what we wrote was cleaned up


def test_rename_and_create_in_its_place_is_refused(tmp_path: Path) -> None:
    """SQLite only: the Hadoop catalog cannot rename."""
    ours = SqliteCatalog(tmp_path / "wh")
    ours.create_namespace(("db",))
    _create(ours, OLD_SCHEMA)
    theirs = SqliteCatalog(tmp_path / "wh")
    base = ours.load_table(T)
    moved = TableIdentifier(("db",), "t_old")

    def rename_and_create() -> None:
        theirs.rename_table(T, moved)
        _create(theirs, NEW_SCHEMA)

    attempt, _ = _marking_attempt(tmp_path, rename_and_create)
    with pytest.raises(CommitConflictError, match="dropped and re-created, or replaced"):
        commit(ours, T, attempt, base=base, sleep=lambda _: None)
    assert "written-by" not in theirs.load_table(T).metadata.properties
    assert "written-by" not in theirs.load_table(moved).metadata.properties


def test_format_upgrade_between_build_and_swap_is_refused(
    catalogs: tuple[Catalog, Catalog], tmp_path: Path
) -> None:
    ours, theirs = catalogs
    base = ours.load_table(T)
    assert base.metadata.format_version == 2

    def upgrade() -> None:
        current = theirs.load_table(T)
        builder = MetadataBuilder(current.metadata)
        builder.upgrade_format_version(3)
        theirs.commit_table(current, builder.build())

    attempt, _ = _marking_attempt(tmp_path, upgrade)
    with pytest.raises(CommitConflictError, match="format version 2 to 3"):
        commit(ours, T, attempt, base=base, sleep=lambda _: None)
    assert "written-by" not in theirs.load_table(T).metadata.properties


def test_an_ordinary_concurrent_commit_is_still_retried(
    catalogs: tuple[Catalog, Catalog], tmp_path: Path
) -> None:
    ours, theirs = catalogs
    base = ours.load_table(T)

    def other_commit() -> None:
        current = theirs.load_table(T)
        builder = MetadataBuilder(current.metadata)
        builder.set_properties({"other": "1"})
        theirs.commit_table(current, builder.build())

    attempt, seen = _marking_attempt(tmp_path, other_commit)
    committed = commit(ours, T, attempt, base=base, sleep=lambda _: None)
    assert len(seen) == 2 and seen[0] == seen[1]  # retried, on the same table
    assert committed.metadata.properties["written-by"] == "statement-a"
    assert committed.metadata.properties["other"] == "1"
