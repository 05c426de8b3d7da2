"""AWS Glue for the tests: moto's Glue, served by the run's moto server (tests/support/s3.py:
one moto server answers every AWS service at one endpoint).

moto keeps one Glue catalog per AWS account, and takes the account of a request from its
``x-moto-account-id`` header (else from the access key: all tests share moto's default
one). :func:`glue_account` gives each test an account of its own -- a fresh, empty Glue
catalog, as a new AWS account would have -- by setting that header on every request a
boto3 client sends (botocore's ``before-sign`` event). The ``glue.id`` property names the
same account, as the catalog id of a real account's catalog is its account id.
"""

from __future__ import annotations

import uuid
from typing import Any

from iceduck.catalog.glue import GlueCatalog
from tests.support.s3 import S3Server


def new_account() -> str:
    """A 12-digit AWS account id no other test uses."""
    return f"{uuid.uuid4().int % 10**12:012d}"


def glue_properties(server: S3Server, account: str) -> dict[str, str]:
    """Catalog properties reaching moto's Glue (and S3) at ``server`` in ``account``."""
    return {**server.properties, "glue.endpoint": server.endpoint_url, "glue.id": account}


def route_to_account(client: Any, account: str) -> None:
    """Make every request of boto3 ``client`` one of moto's ``account``."""

    def add_header(request: Any, **_: Any) -> None:
        request.headers["x-moto-account-id"] = account

    client.meta.events.register("before-sign.*.*", add_header)


def glue_catalog(server: S3Server, account: str, warehouse: str, **properties: str) -> GlueCatalog:
    """iceduck's Glue catalog on moto's ``account`` (its clients routed there)."""
    catalog = GlueCatalog("iceduck", warehouse, {**glue_properties(server, account), **properties})
    for client in (catalog._read, catalog._write):
        route_to_account(client, account)
    return catalog


def glue_table(catalog: GlueCatalog, identifier: Any) -> dict[str, Any]:
    """The Glue table of ``identifier`` as GetTable answers it (not through iceduck's reading)."""
    answer = catalog._read.get_table(DatabaseName=identifier.namespace[0], Name=identifier.name)
    return answer["Table"]  # type: ignore[no-any-return]
