"""The view methods of :class:`~iceduck.catalog.rest_client.catalog.RestCatalog`: the REST
spec's ``/views`` routes, called only when the server offers them.

A server offers views when its ``GET /v1/config`` lists the view endpoints (``GET
/v1/{prefix}/namespaces/{namespace}/views`` stands for them all; each call still checks its
own). A server that lists no endpoints offers them only with ``view-endpoints-supported`` =
``true``, as Java's ``RESTSessionCatalog`` decides (its default endpoints leave views out).
A server that does not offer views is a catalog without views, as
:class:`~iceduck.catalog.views_refused.NoViews`: nothing listed, nothing exists, loading is
:class:`NotFoundError`, writes are :class:`UnsupportedError` saying the server offers no views.

Writes send what Java's ``RESTViewBuilder`` and ``RESTViewOperations`` send: a
``CreateViewRequest`` (the current version and its schema), and a ``CommitViewRequest``
asserting the view's UUID with the updates that make the new metadata
(:func:`~iceduck.table_updates.view_updates.view_changes`), which the server re-applies on
the view's current metadata; a 409 is a :class:`CommitConflictError`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol
from urllib.parse import quote

from iceduck.catalog.base import LoadedView, Namespace, TableIdentifier
from iceduck.catalog.rest_client.config import RestConfig
from iceduck.catalog.rest_client.http import Reply
from iceduck.errors import NotFoundError, StorageError, UnsupportedError
from iceduck.formats.schema_json import schema_to_json
from iceduck.formats.view_metadata_json import parse_view_metadata, view_version_json
from iceduck.spec.view_metadata import ViewMetadata
from iceduck.table_updates.view_updates import (
    AssertViewUUID,
    view_changes,
    view_requirement_json,
    view_update_json,
)

NS = "namespaces/{namespace}"
VIEWS = f"{NS}/views"
VIEW = f"{VIEWS}/{{view}}"
#: Java's ``RESTCatalogProperties.VIEW_ENDPOINTS_SUPPORTED``: a server without ``endpoints``
#: offers views only when it says so
VIEW_ENDPOINTS_SUPPORTED = "view-endpoints-supported"


def _about(identifier: TableIdentifier) -> str:
    return f"view '{identifier}'"


def _identifier_json(identifier: TableIdentifier) -> dict[str, Any]:
    return {"namespace": list(identifier.namespace), "name": identifier.name}


class _Rest(Protocol):
    """What the view methods use of :class:`RestCatalog` (a mixin's self type)."""

    uri: str
    config: RestConfig

    @property
    def offers_views(self) -> bool: ...
    def _no_views(self) -> str: ...
    def _views_writable(self) -> None: ...
    def _writable(self) -> None: ...
    def _ns(self, namespace: Namespace) -> dict[str, str]: ...
    def _call(
        self,
        method: str,
        route: str,
        about: str,
        values: Mapping[str, str] | None = None,
        *,
        ok: tuple[int, ...] = (200,),
        missing_ok: bool = False,
        commit: bool = False,
        namespace: Namespace | None = None,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply: ...
    def _on_view(self, method: str, route: str, identifier: TableIdentifier, **kwargs: Any) -> Reply: ...
    def _loaded_view(self, body: Any, identifier: TableIdentifier) -> LoadedView: ...
    def _pages(
        self, route: str, about: str, values: Mapping[str, str], query: Mapping[str, str], key: str
    ) -> Iterator[Any]: ...
    def namespace_exists(self, namespace: Namespace) -> bool: ...
    def default_table_location(self, identifier: TableIdentifier) -> str: ...


class RestViews:
    """Mixed into :class:`RestCatalog`; see the module docstring."""

    @property
    def offers_views(self: _Rest) -> bool:
        """Whether the server offers the view routes (module docstring)."""
        if self.config.endpoints is None:
            return self.config.properties.get(VIEW_ENDPOINTS_SUPPORTED, "").lower() == "true"
        return self.config.supports("GET", VIEWS)

    def _no_views(self: _Rest) -> str:
        return f"the REST catalog at {self.uri} offers no views (its /v1/config lists no view endpoints)"

    def _on_view(self: _Rest, method: str, route: str, identifier: TableIdentifier, **kwargs: Any) -> Reply:
        """``_call`` on a route under the view's namespace, errors naming the view."""
        values = self._ns(identifier.namespace)
        if "{view}" in route:
            values["view"] = quote(identifier.name, safe="")
        about = _about(identifier)
        return self._call(method, route, about, values, namespace=identifier.namespace, **kwargs)

    def _loaded_view(self: _Rest, body: Any, identifier: TableIdentifier) -> LoadedView:
        """A ``LoadViewResult`` as a :class:`LoadedView`."""
        location = body.get("metadata-location") if isinstance(body, dict) else None
        if not isinstance(location, str) or not isinstance(body.get("metadata"), dict):
            raise StorageError(
                f"the REST catalog at {self.uri} answered for {_about(identifier)} without "
                "metadata-location and metadata"
            )
        source = f"{_about(identifier)} from the REST catalog at {self.uri}"
        return LoadedView(identifier, location, parse_view_metadata(body["metadata"], source))

    # -- reads -------------------------------------------------------------------------------

    def list_views(self: _Rest, namespace: Namespace) -> list[TableIdentifier]:
        if not self.offers_views:
            if not self.namespace_exists(namespace):
                shown = ".".join(namespace)
                raise NotFoundError(f"namespace '{shown}' not found in the REST catalog at {self.uri}")
            return []
        about = f"the views of namespace '{'.'.join(namespace)}'"
        out: list[TableIdentifier] = []
        for item in self._pages(VIEWS, about, self._ns(namespace), {}, "identifiers"):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise StorageError(f"the REST catalog at {self.uri} listed a view identifier without a name")
            out.append(TableIdentifier(tuple(item.get("namespace") or namespace), item["name"]))
        return sorted(out, key=lambda t: (t.namespace, t.name))

    def view_exists(self: _Rest, identifier: TableIdentifier) -> bool:
        if not self.offers_views:
            return False
        method = "HEAD" if self.config.supports("HEAD", VIEW) else "GET"
        reply = self._on_view(method, VIEW, identifier, ok=(200, 204), missing_ok=True)
        return reply.status != 404

    def load_view(self: _Rest, identifier: TableIdentifier) -> LoadedView:
        if not self.offers_views:
            raise NotFoundError(f"{_about(identifier)} not found: {self._no_views()}")
        return self._loaded_view(self._on_view("GET", VIEW, identifier).body, identifier)

    # -- writes ------------------------------------------------------------------------------

    def _views_writable(self: _Rest) -> None:
        self._writable()
        if not self.offers_views:
            raise UnsupportedError(f"views are not supported: {self._no_views()}")

    def default_view_location(self: _Rest, identifier: TableIdentifier) -> str:
        """The server's choice for a table of the name (asked by a ``stage-create``, which
        creates nothing): views are placed as tables are (Java's ``BaseMetastoreViewCatalog``)."""
        self._views_writable()
        return self.default_table_location(identifier)

    def create_view(self: _Rest, identifier: TableIdentifier, metadata: ViewMetadata) -> LoadedView:
        """``CreateViewRequest``: the current version, its schema, location and properties."""
        self._views_writable()
        version = metadata.current_version
        request = {
            "name": identifier.name,
            "location": metadata.location,
            "schema": schema_to_json(metadata.schema_by_id(version.schema_id)),
            "view-version": view_version_json(version),
            "properties": dict(metadata.properties),
        }
        return self._loaded_view(self._on_view("POST", VIEWS, identifier, body=request).body, identifier)

    def commit_view(self: _Rest, base: LoadedView, metadata: ViewMetadata) -> LoadedView:
        """``CommitViewRequest``: ``assert-view-uuid`` and the updates from ``base``."""
        self._views_writable()
        identifier = base.identifier
        request = {
            "identifier": _identifier_json(identifier),
            "requirements": [view_requirement_json(AssertViewUUID(base.metadata.view_uuid))],
            "updates": [view_update_json(u) for u in view_changes(base.metadata, metadata)],
        }
        reply = self._on_view("POST", VIEW, identifier, commit=True, body=request)
        return self._loaded_view(reply.body, identifier)

    def drop_view(self: _Rest, identifier: TableIdentifier) -> None:
        self._views_writable()
        self._on_view("DELETE", VIEW, identifier, ok=(200, 204))

    def rename_view(self: _Rest, source: TableIdentifier, target: TableIdentifier) -> None:
        self._views_writable()
        body = {"source": _identifier_json(source), "destination": _identifier_json(target)}
        about = _about(source)
        self._call("POST", "views/rename", about, ok=(200, 204), body=body, namespace=target.namespace)

    def register_view(self: _Rest, identifier: TableIdentifier, metadata_location: str) -> LoadedView:
        """``RegisterViewRequest`` (Iceberg 1.11's ``registerView``; a server that does not list
        it is an :class:`UnsupportedError` naming the endpoint)."""
        self._views_writable()
        body = {"name": identifier.name, "metadata-location": metadata_location}
        reply = self._on_view("POST", f"{NS}/register-view", identifier, body=body)
        return self._loaded_view(reply.body, identifier)
