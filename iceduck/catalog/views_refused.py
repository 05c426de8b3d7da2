"""Catalogs that keep no Iceberg views: they list none and refuse to write one.

Java's ``HadoopCatalog`` is no ``ViewCatalog`` (a file-system warehouse has nowhere to
record that a folder is a view rather than a table, and Spark answers ``CREATE VIEW`` on it
with "Catalog ... does not support views"). iceduck's Glue, Hive and Paimon catalogs do not
keep views yet. Mixed into such a catalog, :class:`NoViews` gives the view methods of
:class:`~iceduck.catalog.base.Catalog`: reads behave as for a catalog without views (nothing
listed, nothing exists, :class:`NotFoundError` on load), so a query naming a table is never
refused because of views; writes raise :class:`UnsupportedError` naming the catalog kind
and why.
"""

from __future__ import annotations

from typing import Protocol

from iceduck.catalog.base import LoadedView, Namespace, TableIdentifier
from iceduck.errors import NotFoundError, UnsupportedError
from iceduck.spec.view_metadata import ViewMetadata


class _Namespaces(Protocol):
    def namespace_exists(self, namespace: Namespace) -> bool: ...


class NoViews:
    """The view methods of a catalog that keeps no views; see the module docstring."""

    name: str
    #: how the catalog is named in messages ("the file-system (Hadoop) catalog")
    views_kind: str = "this catalog"
    #: why it keeps no views, the end of the refusal's sentence
    views_reason: str = "iceduck does not store views in it yet"

    def list_views(self: _Namespaces, namespace: Namespace) -> list[TableIdentifier]:
        if not self.namespace_exists(namespace):
            raise NotFoundError(f"Namespace does not exist: {'.'.join(namespace)}")
        return []

    def view_exists(self, identifier: TableIdentifier) -> bool:
        return False

    def load_view(self, identifier: TableIdentifier) -> LoadedView:
        raise NotFoundError(f"View does not exist: {identifier} ({self._no_views_refusal()})")

    def default_view_location(self, identifier: TableIdentifier) -> str:
        raise self._views_unsupported()

    def create_view(self, identifier: TableIdentifier, metadata: ViewMetadata) -> LoadedView:
        raise self._views_unsupported()

    def commit_view(self, base: LoadedView, metadata: ViewMetadata) -> LoadedView:
        raise self._views_unsupported()

    def drop_view(self, identifier: TableIdentifier) -> None:
        raise self._views_unsupported()

    def rename_view(self, source: TableIdentifier, target: TableIdentifier) -> None:
        raise self._views_unsupported()

    def register_view(self, identifier: TableIdentifier, metadata_location: str) -> LoadedView:
        raise self._views_unsupported()

    def _no_views_refusal(self) -> str:
        return f"{self.views_kind} {self.name!r} keeps no views: {self.views_reason}"

    def _views_unsupported(self) -> UnsupportedError:
        return UnsupportedError(f"views are not supported: {self._no_views_refusal()}")
