"""Storage properties scoped to a location prefix: a table's own credentials.

A REST catalog that vends credentials hands each table its own (spec, ``LoadTableResult``:
"storage-credentials": "Credentials ... for the prefix", and "Clients must first check
whether the respective credentials exist in the ``storage-credentials`` field before checking
the ``config``"), often short-lived and often for a bucket no other table uses. A
:class:`Scope` is one such set: the properties that apply to every location under its
``prefix``, over the connection's own. The longest prefix a location starts with wins, as
Java's ``S3FileIO`` picks among its ``StorageCredential`` objects; no prefix leaves the
connection's properties.

Expiry is read from the properties Iceberg Java names for it: S3's
``s3.session-token-expires-at-ms``, GCS's ``gcs.oauth2.token-expires-at`` and ADLS's
``adls.sas-token-expires-at-ms.<account>``, all in epoch milliseconds. A scope whose
credentials expire within :data:`REFRESH_MARGIN_MS` and that knows how to ask for new ones
(its ``refresh``) is renewed before it is used again.

Several connections of a process may scope the same prefix (two connections to one REST
catalog are vended the same warehouse): each scope has an ``owner`` (a :class:`ScopeOwner`,
the connection's catalog's), the one registered last is in effect, and an owner's scopes
are released when it closes, as Java closes a table's ``FileIO`` with its catalog, so the
credentials a connection was vended do not outlive it while another's stay.

Pure: nothing here does I/O; :mod:`iceduck.io.object_store` keeps the scopes and calls the
refreshers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from iceduck.errors import UserError

#: fresh credentials for a table: ``{prefix: properties}`` (a LoadCredentialsResponse)
Refresher = Callable[[], Mapping[str, Mapping[str, str]]]

#: renew credentials this long before they expire (milliseconds): a statement started with
#: credentials about to lapse would otherwise fail half-way through its reads
REFRESH_MARGIN_MS = 5 * 60 * 1000

#: the properties saying when a store's credentials expire (epoch milliseconds)
EXPIRY_PROPERTIES = ("s3.session-token-expires-at-ms", "gcs.oauth2.token-expires-at")
#: ADLS keys its SAS tokens' expiry by account: ``adls.sas-token-expires-at-ms.<account>``
ADLS_EXPIRY_PREFIX = "adls.sas-token-expires-at-ms."


class ScopeOwner:
    """Who registered a scope (a connection's catalog): its scopes go when it is released
    (:func:`iceduck.io.object_store.release`). Compared by identity."""

    def __repr__(self) -> str:
        return f"ScopeOwner({id(self):#x})"


@dataclass(frozen=True)
class Scope:
    """Properties for every location under ``prefix`` (canonical: ``s3://bucket/key``)."""

    prefix: str
    properties: Mapping[str, str]
    #: asks the catalog for new credentials; None: these cannot be renewed
    refresh: Refresher | None = field(default=None, compare=False)
    #: who registered it; None: the process (never released)
    owner: ScopeOwner | None = field(default=None, compare=False)

    def expires_at_ms(self) -> int | None:
        """When the earliest of the scope's credentials expires, or None."""
        return expires_at_ms(self.properties)

    def due(self, now_ms: int) -> bool:
        """Whether the scope should be renewed before its next use."""
        expiry = self.expires_at_ms()
        return self.refresh is not None and expiry is not None and expiry - now_ms <= REFRESH_MARGIN_MS


def expires_at_ms(properties: Mapping[str, str]) -> int | None:
    """The earliest expiry among ``properties`` (epoch milliseconds), or None."""
    found: list[int] = []
    for name, value in properties.items():
        if name in EXPIRY_PROPERTIES or name.startswith(ADLS_EXPIRY_PREFIX):
            try:
                found.append(int(float(value)))
            except ValueError:
                raise UserError(f"property {name} must be epoch milliseconds, not {value!r}") from None
    return min(found) if found else None


def longest(scopes: Iterable[Scope], location: str) -> Scope | None:
    """The scope with the longest prefix ``location`` starts with, or None."""
    best: Scope | None = None
    for scope in scopes:
        if location.startswith(scope.prefix) and (best is None or len(scope.prefix) > len(best.prefix)):
            best = scope
    return best
