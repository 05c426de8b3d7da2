"""Config negotiation: what ``GET /v1/config`` tells the client before anything else.

The spec's ``CatalogConfig``: "defaults" are "properties that should be used as default
configuration; applied before client configuration", "overrides" are "properties that
should be used to override client configuration; applied after defaults and client
configuration". So the catalog's properties are ``defaults``, then the user's, then
``overrides``; the ``prefix`` among them is the path segment every other route carries
(``/v1/{prefix}/namespaces``). The ``warehouse`` property, when given, is sent as the
request's ``warehouse`` parameter ("Warehouse location or identifier to request from the
service").

``endpoints`` (spec: "A list of endpoints that the server supports"), each
``"METHOD /v1/{prefix}/path"``: when present, the client calls nothing else
(:meth:`RestConfig.require`); when absent (servers older than the field) every route of
the spec is assumed, as Java's ``RESTSessionCatalog`` assumes its default set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iceduck.errors import StorageError, UnsupportedError, UserError

WAREHOUSE = "warehouse"
PREFIX = "prefix"
PAGE_SIZE = "rest-page-size"
#: ``CatalogConfig``'s "idempotency-key-lifetime": the server honours ``Idempotency-Key``
IDEMPOTENCY_LIFETIME = "idempotency-key-lifetime"


@dataclass(frozen=True)
class RestConfig:
    """The negotiated catalog properties, the route prefix, and the server's endpoints
    (``None``: not listed, so all assumed)."""

    properties: dict[str, str]
    prefix: str | None
    endpoints: frozenset[str] | None
    #: the server advertised ``idempotency-key-lifetime``: it replays the answer of a
    #: mutation retried with the same ``Idempotency-Key``
    idempotent: bool = False

    def supports(self, method: str, route: str) -> bool:
        """Whether the server serves ``method /v1/{prefix}/route`` (``route`` as the spec
        writes it: ``namespaces/{namespace}/tables/{table}``)."""
        return self.endpoints is None or f"{method} /v1/{{prefix}}/{route}" in self.endpoints

    def require(self, method: str, route: str, uri: str) -> None:
        """An :class:`UnsupportedError` naming the endpoint when the server does not list it."""
        if not self.supports(method, route):
            raise UnsupportedError(
                f"the REST catalog at {uri} does not offer {method} /v1/{{prefix}}/{route} "
                "(not among the endpoints its /v1/config lists)"
            )


def config_query(properties: Mapping[str, str]) -> dict[str, str]:
    """The query of ``GET /v1/config``: the ``warehouse`` property, when given."""
    warehouse = properties.get(WAREHOUSE)
    return {WAREHOUSE: warehouse} if warehouse else {}


def negotiated(body: Any, user: Mapping[str, str], uri: str) -> RestConfig:
    """The :class:`RestConfig` of a ``CatalogConfig`` answer and the user's properties."""
    if not isinstance(body, dict):
        raise StorageError(f"the REST catalog at {uri} answered /v1/config without a CatalogConfig object")
    defaults = _string_map(body.get("defaults"), "defaults", uri)
    overrides = _string_map(body.get("overrides"), "overrides", uri)
    properties = {**defaults, **user, **overrides}
    endpoints_value = body.get("endpoints")
    endpoints: frozenset[str] | None = None
    if endpoints_value is not None:
        if not isinstance(endpoints_value, list) or not all(isinstance(e, str) for e in endpoints_value):
            raise StorageError(f"the REST catalog at {uri} listed endpoints that are not strings")
        endpoints = frozenset(" ".join(e.split()) for e in endpoints_value)
    prefix = properties.get(PREFIX) or None
    lifetime = body.get(IDEMPOTENCY_LIFETIME)
    idempotent = isinstance(lifetime, str) and bool(lifetime.strip())
    return RestConfig(properties, prefix.strip("/") if prefix else None, endpoints, idempotent)


def _string_map(value: Any, where: str, uri: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StorageError(
            f"the REST catalog at {uri} answered /v1/config with {where} that is not an object"
        )
    return {str(k): str(v) for k, v in value.items() if v is not None}


def page_size(properties: Mapping[str, str]) -> int | None:
    """``rest-page-size`` (Java's ``RESTSessionCatalog.REST_PAGE_SIZE``): the ``pageSize``
    of list requests; None sends none (the server's whole list)."""
    text = properties.get(PAGE_SIZE)
    if text is None or text == "":
        return None
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"{PAGE_SIZE} must be a positive integer, not {text!r}")
    return int(text)
