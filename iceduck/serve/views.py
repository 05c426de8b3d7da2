"""View handlers: list (paging), create, load, exists, replace (commit), drop, rename, register.

Backed by the served catalog's view methods (:class:`~iceduck.catalog.base.Catalog`), in the
shapes of the REST spec: ``CreateViewRequest`` (``name``, ``location``, ``schema``,
``view-version``, ``properties``) and ``CommitViewRequest`` (``identifier``,
``requirements``, ``updates``) in, ``LoadViewResult`` (``metadata-location``, ``metadata``,
``config``) out; ``RegisterViewRequest`` (``name``, ``metadata-location``: Iceberg 1.11's
``registerView``) too. A catalog that keeps no views
(:class:`~iceduck.catalog.views_refused.NoViews`) has none of these routes listed in
``GET /v1/config`` (:func:`serves_views`); a client calling them anyway gets that catalog's
answers: nothing listed, 404 ``NoSuchViewException``, 406 on writes.

Errors as Java's ``RESTCatalogAdapter`` answers them for ``CatalogHandlers``, since Java's
``ErrorHandlers.viewErrorHandler`` reads them: a missing view is 404 ``NoSuchViewException``
("View does not exist: ns.v"), a missing namespace 404 ``NoSuchNamespaceException``, a name
held by a view or a table 409 ``AlreadyExistsException`` ("View with same name already
exists: ns.v" / "Table with same name already exists: ns.t"), a failed requirement 409
``CommitFailedException``. A broken rule of the view builder (two queries for one
dialect, a dialect dropped by a replace...) is Java's ``IllegalArgumentException``, a 400
typed so, which Java's client raises as ``IllegalArgumentException`` with the message.

A commit is applied as Java's ``CatalogHandlers.commit`` applies it: the requirements are
checked against the view's current metadata, the updates replayed on it
(:func:`~iceduck.table_updates.view_apply.apply_view_updates`), and nothing is written when
they change nothing; a compare-and-swap lost to a concurrent commit is retried on the newer
metadata (Java's server-side retry), up to :data:`COMMIT_ATTEMPTS` times.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from iceduck.catalog.base import Catalog, LoadedView, Namespace, TableIdentifier
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.catalog.views_refused import NoViews
from iceduck.errors import CommitConflictError, CorruptDataError, UserError, ValidationError
from iceduck.formats.schema_json import schema_from_json
from iceduck.formats.view_metadata_json import view_metadata_json, view_version_from_json
from iceduck.io.fileio import MissingFileError
from iceduck.serve.context import ServeContext
from iceduck.serve.errors import HttpRefusal, no_such_namespace
from iceduck.serve.names import check_name, identifier_from_json, identifier_to_json, namespace_from_path
from iceduck.serve.paging import page
from iceduck.serve.request import NO_CONTENT, Request, Response
from iceduck.spec.view_metadata import SQL_REPRESENTATION, WRITE_METADATA_LOCATION, ViewMetadata, new_view
from iceduck.table_updates.view_apply import apply_view_updates
from iceduck.table_updates.view_updates import (
    SetLocation,
    SetProperties,
    ViewUpdate,
    check_view_requirements,
    parse_view_requirements,
    parse_view_updates,
)

#: how often a commit is re-applied on newer metadata after losing a compare-and-swap
COMMIT_ATTEMPTS = 4


def serves_views(catalog: Catalog) -> bool:
    """Whether the view routes are listed in ``GET /v1/config``: the catalog keeps views (a
    served REST catalog: its own server offers them)."""
    if isinstance(catalog, RestCatalog):
        return catalog.offers_views
    return not isinstance(catalog, NoViews)


@contextmanager
def java_argument_errors() -> Iterator[None]:
    """A broken rule of the view builder answered as Java's ``IllegalArgumentException``."""
    try:
        yield
    except ValidationError as e:
        raise HttpRefusal(400, "IllegalArgumentException", str(e)) from None
    except CorruptDataError as e:
        raise UserError(f"invalid view request: {e}") from None


def _namespace(ctx: ServeContext, req: Request) -> Namespace:
    namespace = namespace_from_path(req.params["namespace"])
    if not ctx.catalog.namespace_exists(namespace):
        raise no_such_namespace(f"namespace {'.'.join(namespace)} does not exist")
    return namespace


def _identifier(req: Request) -> TableIdentifier:
    namespace = namespace_from_path(req.params["namespace"])
    return TableIdentifier(namespace, check_name(req.params["view"], "view"))


def view_result(view: LoadedView) -> Response:
    """The spec's ``LoadViewResult``; ``config`` is empty (no view-specific settings)."""
    body = {
        "metadata-location": view.metadata_location,
        "metadata": view_metadata_json(view.metadata),
        "config": {},
    }
    return Response(200, body)


def _check_locations(ctx: ServeContext, md: ViewMetadata, current: str | None = None) -> None:
    """The view's location and its ``write.metadata.path`` must lie under the warehouse (or
    under the location the view already has): the server writes its metadata files there."""
    ctx.check_within_warehouse(md.location, "view location", current)
    metadata_path = md.properties.get(WRITE_METADATA_LOCATION)
    if metadata_path:
        ctx.check_within_warehouse(metadata_path.rstrip("/"), WRITE_METADATA_LOCATION, current)


def list_views(ctx: ServeContext, req: Request) -> Response:
    namespace = _namespace(ctx, req)
    seen = [v for v in ctx.catalog.list_views(namespace) if req.caller.sees(v.namespace, v.name)]
    identifiers = sorted(seen, key=lambda t: (t.namespace, t.name))
    items, token = page(identifiers, req.query)
    body: dict[str, Any] = {"identifiers": [identifier_to_json(t) for t in items]}
    if token is not None:
        body["next-page-token"] = token
    return Response(200, body)


def create_view(ctx: ServeContext, req: Request) -> Response:
    """``CreateViewRequest``: the view version's representations, default catalog and
    namespace, summary and timestamp are kept as sent (Java's server builds a new version
    of them); its schema is the request's ``schema``, numbered 0 and version 1."""
    namespace = _namespace(ctx, req)
    body = req.json()
    name = body.get("name")
    if not isinstance(name, str):
        raise UserError("CreateViewRequest: name must be a string")
    identifier = TableIdentifier(namespace, check_name(name, "view"))
    location = body.get("location")
    if location is not None and not isinstance(location, str):
        raise UserError("CreateViewRequest: location must be a string")
    properties = body.get("properties") or {}
    if not isinstance(properties, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in properties.items()
    ):
        raise UserError("CreateViewRequest: properties must be an object of string values")
    with java_argument_errors():
        schema = schema_from_json(body.get("schema"), "CreateViewRequest.schema")
        version = view_version_from_json(body.get("view-version"), "CreateViewRequest.view-version")
        unsupported = sorted({r.type for r in version.representations if r.type != SQL_REPRESENTATION})
        if unsupported:
            raise UserError(f"Found unsupported view representations: {unsupported}")
        metadata = new_view(
            location.rstrip("/") if location else ctx.catalog.default_view_location(identifier),
            schema,
            version.representations,
            version.default_namespace,
            version.default_catalog,
            version.summary,
            properties,
            timestamp_ms=version.timestamp_ms,
        )
    _check_locations(ctx, metadata)
    return view_result(ctx.catalog.create_view(identifier, metadata))


def load_view(ctx: ServeContext, req: Request) -> Response:
    return view_result(ctx.catalog.load_view(_identifier(req)))


def view_exists(ctx: ServeContext, req: Request) -> Response:
    """``HEAD``: 204 when it exists, else the 404 a ``GET`` would give (headers only)."""
    identifier = _identifier(req)
    if not ctx.catalog.view_exists(identifier):
        raise HttpRefusal(404, "NoSuchViewException", f"View does not exist: {identifier}")
    return NO_CONTENT


def commit_view(ctx: ServeContext, req: Request) -> Response:
    """``CommitViewRequest`` on ``POST .../views/{view}`` (Java's ``replaceView``)."""
    identifier = _identifier(req)
    body = req.json()
    if body.get("identifier") is not None:
        named = identifier_from_json(body["identifier"], "identifier")
        if named != identifier:
            raise UserError(f"CommitViewRequest: identifier {named} is not the path's view {identifier}")
    requirements = parse_view_requirements(body.get("requirements"))
    updates = parse_view_updates(body.get("updates"))
    for attempt in range(COMMIT_ATTEMPTS):
        base = ctx.catalog.load_view(identifier)
        check_view_requirements(base.metadata, requirements)
        with java_argument_errors():
            updated = apply_view_updates(base.metadata, updates)
        if updated is None:
            return view_result(base)
        if _touches_locations(updates):
            _check_locations(ctx, updated, base.metadata.location)
        try:
            return view_result(ctx.catalog.commit_view(base, updated))
        except CommitConflictError:
            if attempt == COMMIT_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _touches_locations(updates: list[ViewUpdate]) -> bool:
    return any(
        isinstance(u, SetLocation) or (isinstance(u, SetProperties) and WRITE_METADATA_LOCATION in u.updates)
        for u in updates
    )


def drop_view(ctx: ServeContext, req: Request) -> Response:
    """A missing view is a 404, in a catalog without views too (Java's ``dropView`` answers
    false there: nothing to drop)."""
    identifier = _identifier(req)
    if not ctx.catalog.view_exists(identifier):
        ctx.catalog.load_view(identifier)  # raises the catalog's not-found error
    ctx.catalog.drop_view(identifier)
    return NO_CONTENT


def rename_view(ctx: ServeContext, req: Request) -> Response:
    """``POST /v1/{prefix}/views/rename``: a ``RenameTableRequest`` (source, destination)."""
    body = req.json()
    source = identifier_from_json(body.get("source"), "source")
    destination = identifier_from_json(body.get("destination"), "destination")
    if not ctx.catalog.namespace_exists(destination.namespace):
        raise no_such_namespace(f"namespace {'.'.join(destination.namespace)} does not exist")
    ctx.catalog.rename_view(source, destination)
    return NO_CONTENT


def register_view(ctx: ServeContext, req: Request) -> Response:
    """``RegisterViewRequest`` (Iceberg 1.11's ``registerView``): name and metadata-location,
    which must lie under the warehouse (the server reads it)."""
    namespace = _namespace(ctx, req)
    body = req.json()
    name, location = body.get("name"), body.get("metadata-location")
    if not isinstance(name, str) or not isinstance(location, str):
        raise UserError("RegisterViewRequest: name and metadata-location must be strings")
    ctx.check_within_warehouse(location, "metadata-location")
    identifier = TableIdentifier(namespace, check_name(name, "view"))
    try:
        return view_result(ctx.catalog.register_view(identifier, location))
    except MissingFileError:
        raise UserError(f"RegisterViewRequest: metadata-location {location} does not exist") from None
