"""The REST catalog API this server implements: its routes and ``GET /v1/config``.

``GET /v1/config`` answers the spec's ``CatalogConfig``: "defaults" (properties a client
may override), "overrides" (properties that override the client's; here the ``prefix``
when the server has one) and "endpoints", the routes below, so that a client that reads
them (Java's ``RESTSessionCatalog`` since 1.7) only calls what is served.
"""

from __future__ import annotations

from iceduck.rest import commits, namespaces, tables
from iceduck.rest.context import ServeContext
from iceduck.rest.request import Request, Response
from iceduck.rest.routes import Handler, Route, parse_pattern


def get_config(ctx: ServeContext, req: Request) -> Response:
    overrides = {"prefix": ctx.prefix} if ctx.prefix else {}
    return Response(
        200,
        {
            "defaults": {},
            "overrides": overrides,
            "endpoints": [route.endpoint() for route in ROUTES],
        },
    )


def _r(method: str, pattern: str, resource: str, handler: Handler, prefixed: bool = True) -> Route:
    return Route(method, parse_pattern(pattern), resource, handler, prefixed)


NS = "namespaces/{namespace}"
TABLE = f"{NS}/tables/{{table}}"

ROUTES: list[Route] = [
    _r("GET", "config", "config", get_config, prefixed=False),
    _r("GET", "namespaces", "namespace", namespaces.list_namespaces),
    _r("POST", "namespaces", "namespace", namespaces.create_namespace),
    _r("GET", NS, "namespace", namespaces.load_namespace),
    _r("HEAD", NS, "namespace", namespaces.namespace_exists),
    _r("DELETE", NS, "namespace", namespaces.drop_namespace),
    _r("POST", f"{NS}/properties", "namespace", namespaces.update_properties),
    _r("GET", f"{NS}/tables", "table", tables.list_tables),
    _r("POST", f"{NS}/tables", "table", tables.create_table),
    _r("POST", f"{NS}/register", "table", tables.register_table),
    _r("GET", TABLE, "table", tables.load_table),
    _r("POST", TABLE, "table", commits.commit_table),
    _r("HEAD", TABLE, "table", tables.table_exists),
    _r("DELETE", TABLE, "table", tables.drop_table),
    _r("POST", f"{TABLE}/metrics", "table", tables.report_metrics),
    _r("POST", "tables/rename", "table", tables.rename_table),
    _r("POST", "transactions/commit", "table", commits.commit_transaction),
]
