"""Who sent a request (:class:`Caller`), and what the principals file lets them do.

A grant on the catalog applies to everything; on a namespace, to it and everything below
it (nested namespaces, their tables and views); on a table, to that table (or the view of
that name). What a caller may *see* is wider than what they may read: a namespace is
seen when a grant lies in, above or below it (so the path to a granted table can be
listed), a table or view when the caller holds any privilege on it. Listings show only
what is seen; a refusal names the privilege missing and the object asked for, and is
decided before anything is looked up, so it says nothing about which objects exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from iceduck.catalog.base import Namespace
from iceduck.serve.errors import HttpRefusal
from iceduck.serve.principals import Grant, Securable


@dataclass(frozen=True)
class Caller:
    """A request's caller: ``name`` is the principal (the OAuth2 client id or ``token``
    without a principals file; None when the server asks for no credentials), ``grants``
    what the principals file grants them, or None for a server without one, where every
    caller that got in may do everything."""

    name: str | None = None
    grants: tuple[Grant, ...] | None = None

    def allows(self, privilege: str, namespace: Namespace = (), name: str | None = None) -> bool:
        if self.grants is None:
            return True
        return any(privilege in g.privileges and g.on.covers(namespace, name) for g in self.grants)

    def require(self, privilege: str, namespace: Namespace = (), name: str | None = None) -> None:
        """Nothing, or a 403 ``ForbiddenException`` naming ``privilege`` and the object."""
        if not self.allows(privilege, namespace, name):
            shown = Securable(namespace, name).shown()
            raise HttpRefusal(
                403,
                "ForbiddenException",
                f"principal {self.name!r} lacks the privilege {privilege} on {shown}",
            )

    def sees_namespace(self, namespace: Namespace) -> bool:
        if self.grants is None:
            return True
        return any(g.on.related(namespace) for g in self.grants)

    def sees(self, namespace: Namespace, name: str) -> bool:
        """Whether a table or view shows in listings: any privilege on it."""
        if self.grants is None:
            return True
        return any(g.on.covers(namespace, name) for g in self.grants)


#: the caller of a server that asks for no credentials
ANYONE = Caller()
