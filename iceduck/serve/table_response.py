"""Answering with a table: the ``LoadTableResult`` body, its ``ETag``, ``If-None-Match``,
and the storage credentials vended with it.

ETag (spec, parameter ``etag``): "Identifies a unique version of the table metadata.
Implementations that support ETags should produce unique tags for responses that return
different metadata content but represent the same version of table metadata", e.g. for
``snapshots=refs`` and ``all``. A metadata file is never rewritten (every commit writes a
new one), so its location names the version: the tag is a hash of the location and the
``snapshots`` mode. ``loadTable`` takes ``If-None-Match`` ("allows the server to return
304 (Not Modified) if the metadata is current. The content is the value of the ETag
received in a CreateTableResponse, LoadTableResponse or CommitTableResponse"), so those
responses carry it too. A staged table (no metadata location yet) has none.

Vended credentials (spec, ``X-Iceberg-Access-Delegation``: "Optional signal to the server
that the client supports delegated access via a comma-separated list of access
mechanisms. The server may choose to supply access via any or none of the requested
mechanisms"): with ``--vend-credentials`` and a request asking for
``vended-credentials``, the object-store properties the server was given (``-p
s3.endpoint=...``, ``s3.access-key-id``...; never a catalog property such as
``jdbc.password``) go in the result's ``config`` and in ``storage-credentials`` for the
warehouse prefix ("Clients must first check whether the respective credentials exist in
the ``storage-credentials`` field before checking the ``config``"). Without the flag,
never: the server's keys are its own unless its operator says otherwise.
"""

from __future__ import annotations

import hashlib
from typing import Any

from iceduck.serve.context import ServeContext
from iceduck.serve.request import Request, Response
from iceduck.serve.table_json import load_table_result
from iceduck.spec.table_metadata import TableMetadata

ACCESS_DELEGATION = "X-Iceberg-Access-Delegation"
VENDED_CREDENTIALS = "vended-credentials"

#: the property families of the object stores (Iceberg's S3FileIOProperties, GCPProperties,
#: AzureProperties, AwsClientProperties); only these are ever vended
STORAGE_PREFIXES = ("s3.", "gcs.", "adls.", "client.")


def table_response(
    ctx: ServeContext,
    req: Request,
    metadata: TableMetadata,
    metadata_location: str | None,
    snapshots: str = "all",
) -> Response:
    """The 200 ``LoadTableResult`` for ``metadata``, with its ETag and any vended credentials."""
    body = load_table_result(metadata, metadata_location, snapshots)
    config = vended_config(ctx, req)
    if config:
        body["config"] = dict(config)
        body["storage-credentials"] = [{"prefix": ctx.warehouse, "config": dict(config)}]
    headers = {} if metadata_location is None else {"ETag": etag(metadata_location, snapshots)}
    return Response(200, body, headers)


def not_modified(req: Request, metadata_location: str, snapshots: str) -> Response | None:
    """A 304 when the request's ``If-None-Match`` names the current version, else None."""
    given = req.header("If-None-Match")
    if not given:
        return None
    current = etag(metadata_location, snapshots)
    for candidate in given.split(","):
        tag = candidate.strip()
        if tag.startswith("W/"):  # RFC 9110 section 13.1.2: If-None-Match compares weakly
            tag = tag[2:]
        if tag in ("*", current):
            return Response(304, None, {"ETag": current})
    return None


def etag(metadata_location: str, snapshots: str) -> str:
    digest = hashlib.sha256(f"{snapshots}\n{metadata_location}".encode()).hexdigest()[:32]
    return f'"{digest}"'


def vended_config(ctx: ServeContext, req: Request) -> dict[str, Any]:
    """The storage properties to hand this request's client, or none."""
    if not ctx.vend_credentials:
        return {}
    asked = {m.strip().lower() for m in (req.header(ACCESS_DELEGATION) or "").split(",")}
    if VENDED_CREDENTIALS not in asked:
        return {}
    return {k: v for k, v in ctx.storage.items() if k.startswith(STORAGE_PREFIXES)}
