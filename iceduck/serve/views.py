"""The view routes: answered, not served. iceduck's catalogs keep no views.

``GET /v1/config`` does not list these routes, so a client that reads ``endpoints``
(Java's ``RESTSessionCatalog`` since 1.7, PyIceberg) never calls them; older clients and
hand-written requests still get answers they understand rather than a generic 404:

* listing views of an existing namespace: an empty ``ListTablesResponse`` (true: it has
  none), and ``NoSuchNamespaceException`` for a missing namespace;
* loading, checking or dropping a view: 404 ``NoSuchViewException`` (Java's
  ``ErrorHandlers.viewErrorHandler`` makes it ``NoSuchViewException``, so Spark goes on to
  look for a table of that name);
* creating, replacing, renaming or registering one: 406 ``UnsupportedOperationException``
  (Java's default handler maps 406 to ``UnsupportedOperationException``).
"""

from __future__ import annotations

from iceduck.serve.context import ServeContext
from iceduck.serve.errors import HttpRefusal, no_such_namespace
from iceduck.serve.names import check_name, namespace_from_path
from iceduck.serve.request import Request, Response

_WHY = "this server keeps no views (iceduck's catalogs store tables only)"


def list_views(ctx: ServeContext, req: Request) -> Response:
    namespace = namespace_from_path(req.params["namespace"])
    if not ctx.catalog.namespace_exists(namespace):
        raise no_such_namespace(f"namespace {'.'.join(namespace)} does not exist")
    return Response(200, {"identifiers": []})


def no_such_view(ctx: ServeContext, req: Request) -> Response:
    namespace = namespace_from_path(req.params["namespace"])
    name = check_name(req.params["view"], "view")
    raise HttpRefusal(
        404, "NoSuchViewException", f"view {'.'.join((*namespace, name))} does not exist: {_WHY}"
    )


def unsupported(ctx: ServeContext, req: Request) -> Response:
    raise HttpRefusal(406, "UnsupportedOperationException", f"views are not supported: {_WHY}")
