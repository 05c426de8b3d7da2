"""What each route needs of its caller, checked before the handler runs.

Every route of :data:`iceduck.serve.api.ROUTES` names a :class:`Need`: a privilege and
where it must be held (the path's table, its namespace, the namespace a body creates...).
:func:`check` decides it from the request alone, before the handler looks anything up,
so a refusal reads the same whether the object exists or not. The privileges:

========== ==================================================================================
``read``   load a table or view, its credentials, ``HEAD``, report metrics
``write``  commit to a table or replace a view; set a namespace's properties
``create`` create (or stage, or register) a table or view in a namespace; create a namespace
           below it (``create`` on the catalog: a top-level one)
``drop``   drop a table, view or namespace; the source of a rename (which also needs
           ``create`` on the destination namespace)
``admin``  all of the above; on the catalog, also reloading the principals file
========== ==================================================================================

Listings and ``GET .../namespaces/{namespace}`` need only that the caller *sees* the
namespace (:class:`~iceduck.serve.access.Caller`); what they list is filtered by the handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from iceduck.catalog.base import Namespace
from iceduck.serve.access import Caller
from iceduck.serve.names import identifier_from_json, namespace_from_json, namespace_from_path
from iceduck.serve.request import Request


@dataclass(frozen=True)
class Need:
    #: the privilege (None: any caller that authenticated)
    privilege: str | None
    #: where it must be held: a key of :data:`_TARGETS`
    target: str = "none"


ANY = Need(None)


def check(need: Need, caller: Caller, req: Request) -> None:
    """Nothing, or the 403 of the first privilege ``caller`` lacks for ``req``."""
    if caller.grants is None:
        return
    _TARGETS[need.target](need.privilege or "read", caller, req)


def _none(privilege: str, caller: Caller, req: Request) -> None:
    return None


def _seen_namespace(namespace: Namespace, caller: Caller) -> None:
    if not caller.sees_namespace(namespace):
        caller.require("read", namespace)  # raises: nothing there is granted


def _path_namespace(privilege: str, caller: Caller, req: Request) -> None:
    caller.require(privilege, namespace_from_path(req.params["namespace"]))


def _visible_namespace(privilege: str, caller: Caller, req: Request) -> None:
    _seen_namespace(namespace_from_path(req.params["namespace"]), caller)


def _listed_parent(privilege: str, caller: Caller, req: Request) -> None:
    parent = req.query.get("parent")
    if parent:
        _seen_namespace(namespace_from_path(parent), caller)


def _new_namespace(privilege: str, caller: Caller, req: Request) -> None:
    namespace = namespace_from_json(req.json().get("namespace"))
    caller.require(privilege, namespace[:-1])


def _path_object(key: str) -> Callable[[str, Caller, Request], None]:
    def need(privilege: str, caller: Caller, req: Request) -> None:
        caller.require(privilege, namespace_from_path(req.params["namespace"]), req.params[key])

    return need


def _table_commit(privilege: str, caller: Caller, req: Request) -> None:
    """``write`` on the table, or ``create`` in its namespace for the commit that creates a
    staged table (``assert-create``)."""
    namespace = namespace_from_path(req.params["namespace"])
    if _creates(req.json()):
        caller.require("create", namespace)
    else:
        caller.require("write", namespace, req.params["table"])


def _creates(change: dict[str, Any]) -> bool:
    requirements = change.get("requirements") or []
    return isinstance(requirements, list) and any(
        isinstance(r, dict) and r.get("type") == "assert-create" for r in requirements
    )


def _register(privilege: str, caller: Caller, req: Request) -> None:
    """``create`` in the namespace; with ``overwrite``, also ``write`` on the table replaced."""
    namespace = namespace_from_path(req.params["namespace"])
    caller.require("create", namespace)
    body = req.json()
    if body.get("overwrite") is True and isinstance(body.get("name"), str):
        caller.require("write", namespace, body["name"])


def _rename(privilege: str, caller: Caller, req: Request) -> None:
    body = req.json()
    source = identifier_from_json(body.get("source"), "source")
    destination = identifier_from_json(body.get("destination"), "destination")
    caller.require("drop", source.namespace, source.name)
    caller.require("create", destination.namespace)


def _transaction(privilege: str, caller: Caller, req: Request) -> None:
    changes = req.json().get("table-changes")
    for i, change in enumerate(changes if isinstance(changes, list) else []):
        if not isinstance(change, dict):
            continue
        identifier = identifier_from_json(change.get("identifier"), f"table-changes[{i}].identifier")
        caller.require("write", identifier.namespace, identifier.name)


def _catalog(privilege: str, caller: Caller, req: Request) -> None:
    caller.require(privilege)


_TARGETS: dict[str, Callable[[str, Caller, Request], None]] = {
    "none": _none,
    "catalog": _catalog,
    "namespace": _path_namespace,
    "visible-namespace": _visible_namespace,
    "listed-parent": _listed_parent,
    "new-namespace": _new_namespace,
    "table": _path_object("table"),
    "view": _path_object("view"),
    "table-commit": _table_commit,
    "register": _register,
    "rename": _rename,
    "transaction": _transaction,
}
