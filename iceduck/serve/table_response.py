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
mechanisms"): with ``--storage-credentials FILE``, the file's entry for
the table's location (:mod:`iceduck.serve.storage_credentials`); otherwise with
``--vend-credentials``, for a request asking for ``vended-credentials``, the object-store
properties the server was given (``-p s3.endpoint=...``, ``s3.access-key-id``...; never a
catalog property such as ``jdbc.password``) go in the result's ``config`` and in
``storage-credentials`` for the warehouse prefix ("Clients must first check whether the
respective credentials exist in the ``storage-credentials`` field before checking the
``config``"). Without the flag,
never: the server's keys are its own unless its operator says otherwise.
"""

from __future__ import annotations

import hashlib

from iceduck.catalog.base import TableIdentifier
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
    table: TableIdentifier | None = None,
) -> Response:
    """The 200 ``LoadTableResult`` for ``metadata``, with its ETag and any vended credentials.
    Credentials are handed only to a caller who may read ``table`` (the routes that load a
    table checked it already; a caller who may create a table need not be able to read it)."""
    body = load_table_result(metadata, metadata_location, snapshots)
    may_read = table is None or req.caller.allows("read", table.namespace, table.name)
    if may_read and asked_to_vend(ctx, req):
        config, credentials = vended(ctx, metadata.location)
        if config:
            body["config"] = config
        if credentials:
            body["storage-credentials"] = credentials
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


def asked_to_vend(ctx: ServeContext, req: Request) -> bool:
    """Whether the server vends and this request asked for vended credentials."""
    if not (ctx.vend_credentials or ctx.storage_credentials is not None):
        return False
    asked = {m.strip().lower() for m in (req.header(ACCESS_DELEGATION) or "").split(",")}
    return VENDED_CREDENTIALS in asked


def vended(ctx: ServeContext, table_location: str) -> tuple[dict[str, str], list[dict[str, object]]]:
    """The ``config`` and ``storage-credentials`` for a table at ``table_location``: the
    ``--storage-credentials`` entry for its location when there is one (and nothing
    else), otherwise the server's own object-store properties for the warehouse."""
    if ctx.storage_credentials is not None:
        entry = ctx.storage_credentials.for_location(table_location)
        if entry is not None:
            return {}, [entry.json()]
    if not ctx.vend_credentials:
        return {}, []
    config = {k: v for k, v in ctx.storage.items() if k.startswith(STORAGE_PREFIXES)}
    return (dict(config), [{"prefix": ctx.warehouse, "config": dict(config)}]) if config else ({}, [])
