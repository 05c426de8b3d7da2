"""Namespaces and table names from request paths and bodies, checked before any use.

The spec encodes a multi-level namespace in one path segment with the unit separator:
"Multipart namespace parts should be separated by the unit separator (``0x1F``) byte"
(parameter ``namespace``). A name that holds ``/``, is ``.`` or ``..``, or holds NUL or
another control character is refused with a 400 before it reaches the catalog: such a
name would become a folder under the warehouse (``<warehouse>/<namespace>/<table>``) or
a confusing file name. The catalogs check new names too (:mod:`iceduck.catalog.names`);
this check also covers names only looked up, so no request can aim a path outside the
warehouse.
"""

from __future__ import annotations

from typing import Any

from iceduck.catalog.base import Namespace, TableIdentifier
from iceduck.errors import UserError

UNIT_SEPARATOR = "\x1f"


def check_name(name: str, kind: str) -> str:
    """``name`` if it can be a namespace level or table name, else a :class:`UserError`."""
    if not name:
        raise UserError(f"a {kind} name must not be empty")
    if name in (".", ".."):
        raise UserError(f"{kind} name {name!r} is refused: it would name a folder outside its parent")
    if "/" in name or "\\" in name:
        raise UserError(f"{kind} name {name!r} is refused: it holds a path separator")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise UserError(f"{kind} name {name!r} is refused: it holds a NUL or control character")
    return name


def namespace_from_path(segment: str) -> Namespace:
    """The ``{namespace}`` path parameter, its levels split on the unit separator."""
    return tuple(check_name(level, "namespace") for level in segment.split(UNIT_SEPARATOR))


def namespace_from_json(value: Any, where: str = "namespace") -> Namespace:
    """A ``Namespace`` of the spec: a JSON array of strings."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where} must be an array of strings")
    return tuple(check_name(level, "namespace") for level in value)


def identifier_from_json(value: Any, where: str) -> TableIdentifier:
    """A ``TableIdentifier`` of the spec: ``{"namespace": [...], "name": "..."}``."""
    if not isinstance(value, dict):
        raise UserError(f"{where} must be an object with namespace and name")
    name = value.get("name")
    if not isinstance(name, str):
        raise UserError(f"{where}.name must be a string")
    return TableIdentifier(
        namespace_from_json(value.get("namespace"), f"{where}.namespace"), check_name(name, "table")
    )


def identifier_to_json(identifier: TableIdentifier) -> dict[str, Any]:
    return {"namespace": list(identifier.namespace), "name": identifier.name}
