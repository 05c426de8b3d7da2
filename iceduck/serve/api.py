"""The REST catalog API this server implements: its routes and ``GET /v1/config``.

``GET /v1/config`` answers the spec's ``CatalogConfig``: "defaults" ("properties that
should be used as default configuration; applied before client configuration"; none
here), "overrides" ("applied after defaults and client configuration"; the ``prefix``
when the server has one) and "endpoints", the listed routes below, so that a client that
reads them (Java's ``RESTSessionCatalog`` since 1.7, PyIceberg) only calls what is served:
the view routes are left out when the served catalog keeps no views (Hadoop, Glue, Hive:
:func:`iceduck.serve.views.serves_views`), so that Java's client answers view calls as for
a catalog without views instead of calling routes that only refuse.

Its ``warehouse`` query parameter ("Warehouse location or identifier to request from the
service") may be absent or empty, the catalog name (``--catalog-name``) or the served
warehouse location; one server serves one warehouse, so any other is a 400 naming both
rather than a silent answer about the wrong lake.
"""

from __future__ import annotations

from iceduck.catalog.open import warehouse_location
from iceduck.errors import UserError
from iceduck.serve import admin, commits, idempotency, namespaces, oauth, tables, views
from iceduck.serve.context import ServeContext
from iceduck.serve.permissions import ANY, Need
from iceduck.serve.request import Request, Response
from iceduck.serve.routes import Handler, Route, parse_pattern


def get_config(ctx: ServeContext, req: Request) -> Response:
    _check_warehouse(ctx, req.query.get("warehouse", ""))
    overrides = {"prefix": ctx.prefix} if ctx.prefix else {}
    with_views = views.serves_views(ctx.catalog)
    config = {
        "defaults": {},
        "overrides": overrides,
        # every caller is told every route, whatever they are granted: a client caches this
        # list for its session, and a grant given later (a reload) must be usable at once;
        # a route the caller may not use answers 403, which names the privilege missing
        "endpoints": [
            route.endpoint() for route in ROUTES if route.listed and (not route.views or with_views)
        ],
    }
    if ctx.idempotency is not None:
        config["idempotency-key-lifetime"] = idempotency.LIFETIME
    return Response(200, config)


def _check_warehouse(ctx: ServeContext, requested: str) -> None:
    text = requested.strip()
    if not text or text == ctx.catalog_name:
        return
    try:
        if warehouse_location(text) == ctx.warehouse:
            return
    except (UserError, ValueError, OSError):
        pass
    raise UserError(
        f"warehouse {requested!r} is not served here: this server serves the warehouse "
        f"{ctx.warehouse} as catalog {ctx.catalog_name!r} (ask for either, or for none)"
    )


def _r(
    method: str,
    pattern: str,
    resource: str,
    handler: Handler,
    prefixed: bool = True,
    *,
    public: bool = False,
    views: bool = False,
    need: Need = ANY,
    listed: bool = True,
) -> Route:
    return Route(method, parse_pattern(pattern), resource, handler, prefixed, public, views, need, listed)


def _on(privilege: str | None, target: str) -> Need:
    return Need(privilege, target)


NS = "namespaces/{namespace}"
TABLE = f"{NS}/tables/{{table}}"
VIEW = f"{NS}/views/{{view}}"

ROUTES: list[Route] = [
    _r("GET", "config", "config", get_config, prefixed=False),
    _r("POST", "oauth/tokens", "oauth", oauth.get_token, prefixed=False, public=True),
    _r("GET", "namespaces", "namespace", namespaces.list_namespaces, need=_on(None, "listed-parent")),
    _r("POST", "namespaces", "namespace", namespaces.create_namespace, need=_on("create", "new-namespace")),
    _r("GET", NS, "namespace", namespaces.load_namespace, need=_on(None, "visible-namespace")),
    _r("HEAD", NS, "namespace", namespaces.namespace_exists, need=_on(None, "visible-namespace")),
    _r("DELETE", NS, "namespace", namespaces.drop_namespace, need=_on("drop", "namespace")),
    _r("POST", f"{NS}/properties", "namespace", namespaces.update_properties, need=_on("write", "namespace")),
    _r("GET", f"{NS}/tables", "table", tables.list_tables, need=_on(None, "visible-namespace")),
    _r("POST", f"{NS}/tables", "table", tables.create_table, need=_on("create", "namespace")),
    _r("POST", f"{NS}/register", "table", tables.register_table, need=_on("create", "register")),
    _r("GET", TABLE, "table", tables.load_table, need=_on("read", "table")),
    _r("GET", f"{TABLE}/credentials", "table", tables.load_credentials, need=_on("read", "table")),
    _r("POST", TABLE, "table", commits.commit_table, need=_on("write", "table-commit")),
    _r("HEAD", TABLE, "table", tables.table_exists, need=_on("read", "table")),
    _r("DELETE", TABLE, "table", tables.drop_table, need=_on("drop", "table")),
    _r("POST", f"{TABLE}/metrics", "table", tables.report_metrics, need=_on("read", "table")),
    _r("POST", "tables/rename", "table", tables.rename_table, need=_on("drop", "rename")),
    _r("POST", "transactions/commit", "table", commits.commit_transaction, need=_on("write", "transaction")),
    # views: listed in /v1/config only when the catalog keeps views (views.serves_views)
    _r("GET", f"{NS}/views", "view", views.list_views, views=True, need=_on(None, "visible-namespace")),
    _r("POST", f"{NS}/views", "view", views.create_view, views=True, need=_on("create", "namespace")),
    _r("GET", VIEW, "view", views.load_view, views=True, need=_on("read", "view")),
    _r("HEAD", VIEW, "view", views.view_exists, views=True, need=_on("read", "view")),
    _r("POST", VIEW, "view", views.commit_view, views=True, need=_on("write", "view")),
    _r("DELETE", VIEW, "view", views.drop_view, views=True, need=_on("drop", "view")),
    _r("POST", "views/rename", "view", views.rename_view, views=True, need=_on("drop", "rename")),
    _r(
        "POST",
        f"{NS}/register-view",
        "view",
        views.register_view,
        views=True,
        need=_on("create", "namespace"),
    ),
    # iceduck's own
    _r(
        "POST",
        "iceduck/principals/reload",
        "config",
        admin.reload_principals,
        prefixed=False,
        need=_on("admin", "catalog"),
        listed=False,
    ),
]
