"""What every handler serves from: the catalog, the warehouse it may write under, the
prefix, who may call (:class:`~iceduck.serve.auth.Authenticator`) and the object-store
properties the server may vend to clients."""

from __future__ import annotations

import os.path
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from iceduck.catalog.base import Catalog
from iceduck.errors import UserError
from iceduck.io.fileio import to_local_path
from iceduck.serve.audit import AuditTrail
from iceduck.serve.auth import Authenticator
from iceduck.serve.idempotency import IdempotencyKeys
from iceduck.serve.storage_credentials import CredentialsFile


@dataclass(frozen=True)
class ServeContext:
    catalog: Catalog
    #: the warehouse location as the catalog records it (iceduck.catalog.open.warehouse_location)
    warehouse: str
    #: the spec's optional ``{prefix}`` path segment, advertised in ``GET /v1/config``
    prefix: str | None = None
    #: ``--catalog-name``: accepted as the ``warehouse`` of ``GET /v1/config``
    catalog_name: str = "iceduck"
    auth: Authenticator = field(default_factory=Authenticator)
    #: the object-store properties of ``-p`` (``s3.endpoint``, ``s3.access-key-id``...)
    storage: Mapping[str, str] = field(default_factory=dict)
    #: ``--vend-credentials``: hand :attr:`storage` to clients that ask for it
    vend_credentials: bool = False
    #: ``--storage-credentials FILE``: what to vend per location prefix instead (implies vending)
    storage_credentials: CredentialsFile | None = None
    #: the answers of mutations sent with an ``Idempotency-Key``, for their retries (None:
    #: keys are not honoured, nor ``idempotency-key-lifetime`` advertised)
    idempotency: IdempotencyKeys | None = field(default_factory=IdempotencyKeys)
    #: ``--audit``: where the lines of mutations and refusals go (None: nowhere)
    audit: AuditTrail | None = None

    def check_within_warehouse(self, location: str, what: str, table_location: str | None = None) -> str:
        """``location`` when it lies under the warehouse, or under ``table_location``, the
        location an existing table already has in the catalog (its operator put it there):
        a client-chosen table location or registered metadata file must not make the server
        write or read elsewhere. Local paths are compared resolved (``..`` and symbolic
        links); other locations by their normalised text, scheme included (``s3a://`` is
        not ``s3://``)."""
        if _within(location, self.warehouse):
            return location
        if table_location is not None and _within(location, table_location):
            return location
        raise UserError(f"{what} {location} is outside the warehouse {self.warehouse}")


def _normal(location: str) -> str:
    if "://" in location and not location.lower().startswith("file:"):
        scheme, _, rest = location.partition("://")
        return f"{scheme.lower()}://{posixpath.normpath('/' + rest).lstrip('/')}"
    # a symbolic link inside the warehouse may point elsewhere: compare resolved paths
    return os.path.realpath(to_local_path(location))


def _within(location: str, warehouse: str) -> bool:
    loc, root = _normal(location), _normal(warehouse).rstrip("/")
    return loc == root or loc.startswith(root + "/")
