"""Namespace handlers: list (with ``parent`` and paging), create, load, exists, update
properties, drop.

Shapes from the spec: ``ListNamespacesResponse`` (``namespaces``, ``next-page-token``),
``CreateNamespaceRequest``/``Response`` (``namespace``, ``properties``),
``GetNamespaceResponse``. Dropping a namespace that still holds tables, views or namespaces is a
409 ``NamespaceNotEmptyException`` (spec, ``dropNamespace``), checked here because the
catalogs report it as a plain validation error.
"""

from __future__ import annotations

from typing import Any

from iceduck.errors import UserError
from iceduck.serve.context import ServeContext
from iceduck.serve.errors import HttpRefusal
from iceduck.serve.names import UNIT_SEPARATOR, namespace_from_json, namespace_from_path
from iceduck.serve.paging import page
from iceduck.serve.request import NO_CONTENT, Request, Response


def list_namespaces(ctx: ServeContext, req: Request) -> Response:
    """``GET /v1/{prefix}/namespaces?parent=a%1Fb``: the direct children of ``parent``."""
    parent = namespace_from_path(req.query["parent"]) if req.query.get("parent") else ()
    if parent and not ctx.catalog.namespace_exists(parent):
        raise HttpRefusal(404, "NoSuchNamespaceException", f"namespace {_shown(parent)} does not exist")
    children = sorted(ns for ns in ctx.catalog.list_namespaces(parent) if req.caller.sees_namespace(ns))
    items, token = page(children, req.query)
    body: dict[str, Any] = {"namespaces": [list(ns) for ns in items]}
    if token is not None:
        body["next-page-token"] = token
    return Response(200, body)


def create_namespace(ctx: ServeContext, req: Request) -> Response:
    body = req.json()
    namespace = namespace_from_json(body.get("namespace"))
    if not namespace:
        raise UserError("namespace must have at least one level")
    properties = _string_map(body.get("properties", {}), "properties")
    ctx.catalog.create_namespace(namespace, properties)
    return Response(
        200, {"namespace": list(namespace), "properties": ctx.catalog.load_namespace_properties(namespace)}
    )


def load_namespace(ctx: ServeContext, req: Request) -> Response:
    namespace = namespace_from_path(req.params["namespace"])
    properties = ctx.catalog.load_namespace_properties(namespace)
    return Response(200, {"namespace": list(namespace), "properties": properties})


def namespace_exists(ctx: ServeContext, req: Request) -> Response:
    """``HEAD``: 204 when it exists, else the 404 a ``GET`` would give (the spec's
    ``IcebergErrorResponse``: its headers are sent, its body is not, as for any HEAD)."""
    namespace = namespace_from_path(req.params["namespace"])
    if not ctx.catalog.namespace_exists(namespace):
        ctx.catalog.load_namespace_properties(namespace)  # raises GET's not-found error
    return NO_CONTENT


def update_properties(ctx: ServeContext, req: Request) -> Response:
    """``UpdateNamespacePropertiesRequest`` -> ``UpdateNamespacePropertiesResponse``
    (``updated``, ``removed``, ``missing``); a key both set and removed is a 422
    ``UnprocessableEntityException`` (spec, ``updateProperties``)."""
    namespace = namespace_from_path(req.params["namespace"])
    body = req.json()
    updates = _string_map(body.get("updates") or {}, "updates")
    removals = body.get("removals") or []
    if not isinstance(removals, list) or not all(isinstance(k, str) for k in removals):
        raise UserError("removals must be an array of strings")
    both = sorted(set(updates) & set(removals))
    if both:
        raise HttpRefusal(
            422, "UnprocessableEntityException", f"properties both set and removed: {', '.join(both)}"
        )
    updated, removed, missing = ctx.catalog.update_namespace_properties(namespace, updates, removals)
    return Response(200, {"updated": updated, "removed": removed, "missing": missing})


def drop_namespace(ctx: ServeContext, req: Request) -> Response:
    namespace = namespace_from_path(req.params["namespace"])
    if not ctx.catalog.namespace_exists(namespace):
        raise HttpRefusal(404, "NoSuchNamespaceException", f"namespace {_shown(namespace)} does not exist")
    holds = ctx.catalog.list_tables(namespace) or ctx.catalog.list_views(namespace)
    if holds or ctx.catalog.list_namespaces(namespace):
        raise HttpRefusal(409, "NamespaceNotEmptyException", f"namespace {_shown(namespace)} is not empty")
    ctx.catalog.drop_namespace(namespace)
    return NO_CONTENT


def _string_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise UserError(f"{where} must be an object of string values")
    return dict(value)


def _shown(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace).replace(UNIT_SEPARATOR, ".")
