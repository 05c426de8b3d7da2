"""What every catalog offers: find tables and namespaces, load a table's current metadata.

A catalog maps ``namespace.table`` to the location of the table's current metadata file;
everything else about a table lives in that file. A commit writes a new metadata file
and swaps that location atomically, only if it still names the file the change was built
on (spec, "Metastore Tables": "the metadata location is swapped [...] if the current
metadata location is the base location"); otherwise it is a
:class:`~iceduck.errors.CommitConflictError` and the caller retries on fresh metadata
(:mod:`iceduck.txn.commit`).

Writes on a catalog opened read-only raise :class:`~iceduck.errors.UserError`
("the catalog is read-only").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.view_metadata import ViewMetadata

Namespace = tuple[str, ...]


@dataclass(frozen=True)
class TableIdentifier:
    namespace: Namespace
    name: str

    def __str__(self) -> str:
        return ".".join((*self.namespace, self.name))


@dataclass(frozen=True)
class LoadedTable:
    """A table as loaded: where its current metadata is, and that metadata."""

    identifier: TableIdentifier
    metadata_location: str
    metadata: TableMetadata


@dataclass(frozen=True)
class LoadedView:
    """A view as loaded: where its current metadata file is, and that metadata."""

    identifier: TableIdentifier
    metadata_location: str
    metadata: ViewMetadata


class Catalog(Protocol):
    name: str

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]: ...

    def namespace_exists(self, namespace: Namespace) -> bool: ...

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """The namespace's properties (with ``location``); NotFoundError when it does not exist."""
        ...

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]: ...

    def table_exists(self, identifier: TableIdentifier) -> bool: ...

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """The table's current metadata; :class:`~iceduck.errors.NotFoundError` naming
        the table when it does not exist."""
        ...

    # -- writes ------------------------------------------------------------------------

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        """Create an empty namespace; AlreadyExistsError if it exists."""
        ...

    def update_namespace_properties(
        self, namespace: Namespace, updates: dict[str, str], removals: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """Set ``updates`` and remove ``removals`` at once; the keys (updated, removed,
        missing). NotFoundError if the namespace is missing, ValidationError for a key in both."""
        ...

    def drop_namespace(self, namespace: Namespace) -> None:
        """Drop an empty namespace; NotFoundError if missing, ValidationError if not empty."""
        ...

    def default_table_location(self, identifier: TableIdentifier) -> str:
        """Where a new table goes when CREATE TABLE names no LOCATION."""
        ...

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        """Write the first metadata file and register it atomically; AlreadyExistsError
        (and no file left behind) when the name is taken. The outcome contract is
        :meth:`commit_table`'s."""
        ...

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        """Write ``metadata`` as the next metadata file and swap it in if ``base`` is still
        current; CommitConflictError (and no file left behind) otherwise.

        The outcome contract every catalog keeps, because callers delete files on it
        (:func:`iceduck.catalog.commit_outcome.certainly_not_committed`): returning means
        the swap landed; an :class:`~iceduck.errors.IceduckError` other than
        :class:`~iceduck.errors.CommitStateUnknownError` means it certainly did not;
        anything else (``CommitStateUnknownError``, an interrupt) means it may have, and
        then no file the new metadata references may be deleted.
        """
        ...

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        """:meth:`commit_table` for several tables, atomically: all land or none does
        (CommitConflictError when any base is no longer current)."""
        ...

    def register_table(self, identifier: TableIdentifier, metadata_location: str) -> LoadedTable:
        """Make ``identifier`` a table whose current metadata is the existing file at
        ``metadata_location`` (Java's ``Catalog.registerTable``): nothing is written but the
        catalog entry. AlreadyExistsError when the name is taken; the file's read errors
        (missing, not table metadata) as they are."""
        ...

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        """Remove the table from the catalog; with ``purge``, delete every file it reaches."""
        ...

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        """Rename a table (within or across namespaces)."""
        ...

    # -- views -------------------------------------------------------------------------
    # Tables and views share one namespace of names, as in Java's catalogs: creating or
    # renaming to a name a view holds is refused for a table ("View with same name already
    # exists: ns.v") and the other way round ("Table with same name already exists: ns.t").
    # Catalogs that keep no views (:class:`~iceduck.catalog.views_refused.NoViews`) list
    # none and refuse writing one.

    def list_views(self, namespace: Namespace) -> list[TableIdentifier]:
        """The views of ``namespace``, sorted; NotFoundError if it does not exist."""
        ...

    def view_exists(self, identifier: TableIdentifier) -> bool: ...

    def load_view(self, identifier: TableIdentifier) -> LoadedView:
        """The view's current metadata; NotFoundError naming the view when it does not exist."""
        ...

    def default_view_location(self, identifier: TableIdentifier) -> str:
        """Where a new view's metadata goes (``<location>/metadata/``) when none is given."""
        ...

    def create_view(self, identifier: TableIdentifier, metadata: ViewMetadata) -> LoadedView:
        """Write the first metadata file and register the view; AlreadyExistsError (and no
        file left behind) when a view or a table has the name."""
        ...

    def commit_view(self, base: LoadedView, metadata: ViewMetadata) -> LoadedView:
        """Write ``metadata`` as the view's next metadata file and swap it in if ``base`` is
        still current; CommitConflictError otherwise (the outcome contract of
        :meth:`commit_table`)."""
        ...

    def drop_view(self, identifier: TableIdentifier) -> None:
        """Remove the view from the catalog and, as Java's ``CatalogUtil.dropViewMetadata``,
        its current metadata file (unless ``gc.enabled`` is false); NotFoundError when
        there is no such view."""
        ...

    def rename_view(self, source: TableIdentifier, target: TableIdentifier) -> None:
        """Rename a view; NotFoundError for a missing source, AlreadyExistsError when a view
        or a table has the target name."""
        ...

    def register_view(self, identifier: TableIdentifier, metadata_location: str) -> LoadedView:
        """Make ``identifier`` a view whose current metadata is the existing file at
        ``metadata_location`` (Java's ``ViewCatalog.registerView``)."""
        ...
