"""Table handlers: list (paging), create (staged too), load, exists, drop, rename, register
(with ``overwrite``), metrics.

Every name is checked (:mod:`iceduck.serve.names`) and every client-chosen location must
lie under the warehouse (:meth:`ServeContext.check_within_warehouse`), so a request can
make the server neither write nor read files elsewhere. A missing namespace is a 404 typed
``NoSuchNamespaceException`` (Java's ``ErrorHandlers.tableErrorHandler`` tells it from
``NoSuchTableException`` by that type).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.metadata_files import read_metadata
from iceduck.catalog.purge import reachable_files
from iceduck.errors import AlreadyExistsError, CommitConflictError, NotFoundError, UserError
from iceduck.io.fileio import MissingFileError, storage_error, to_local_path
from iceduck.io.object_store import is_object_store
from iceduck.serve.context import ServeContext
from iceduck.serve.errors import no_such_namespace
from iceduck.serve.names import (
    check_name,
    identifier_from_json,
    identifier_to_json,
    namespace_from_path,
)
from iceduck.serve.paging import page
from iceduck.serve.request import NO_CONTENT, Request, Response
from iceduck.serve.table_json import create_table_request
from iceduck.serve.table_response import not_modified, table_response, vended
from iceduck.txn.builder import new_table_metadata


def _namespace(ctx: ServeContext, req: Request) -> Namespace:
    namespace = namespace_from_path(req.params["namespace"])
    if not ctx.catalog.namespace_exists(namespace):
        raise no_such_namespace(f"namespace {'.'.join(namespace)} does not exist")
    return namespace


def _identifier(req: Request) -> TableIdentifier:
    return TableIdentifier(
        namespace_from_path(req.params["namespace"]), check_name(req.params["table"], "table")
    )


def list_tables(ctx: ServeContext, req: Request) -> Response:
    namespace = _namespace(ctx, req)
    seen = [t for t in ctx.catalog.list_tables(namespace) if req.caller.sees(t.namespace, t.name)]
    identifiers = sorted(seen, key=lambda t: (t.namespace, t.name))
    items, token = page(identifiers, req.query)
    body: dict[str, Any] = {"identifiers": [identifier_to_json(t) for t in items]}
    if token is not None:
        body["next-page-token"] = token
    return Response(200, body)


def create_table(ctx: ServeContext, req: Request) -> Response:
    """Create the table, or with ``stage-create`` only build its first metadata: "the table
    is created when the transaction is committed" (spec), by a commit asserting
    ``assert-create``."""
    namespace = _namespace(ctx, req)
    request = create_table_request(req.json())
    identifier = TableIdentifier(namespace, request.name)
    if request.location is not None:
        location = ctx.check_within_warehouse(request.location.rstrip("/"), "table location")
    else:
        location = ctx.catalog.default_table_location(identifier)
    metadata = new_table_metadata(
        request.schema, request.spec, request.sort_order, location, request.properties
    )
    if request.stage_create:
        if ctx.catalog.table_exists(identifier):
            raise AlreadyExistsError(f"table {identifier} already exists")
        _prepare_local_folder(location)
        return table_response(ctx, req, metadata, None, table=identifier)
    created = ctx.catalog.create_table(identifier, metadata)
    return table_response(ctx, req, created.metadata, created.metadata_location, table=identifier)


def _prepare_local_folder(location: str) -> None:
    """Create a staged table's ``metadata/`` folder in a local warehouse. A client may write
    files there before the commit that creates the table (DuckDB's ``CREATE TABLE ... AS``
    writes its first manifest into it, through a file system that makes no folders); an
    object store has no folders to make. The location is under the warehouse (checked)."""
    if not is_object_store(location):
        try:
            Path(to_local_path(location), "metadata").mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise storage_error(e, to_local_path(location)) from e


def load_table(ctx: ServeContext, req: Request) -> Response:
    snapshots = req.query.get("snapshots", "all")
    if snapshots not in ("all", "refs"):
        raise UserError(f"snapshots must be all or refs, not {snapshots!r}")
    table = ctx.catalog.load_table(_identifier(req))
    unchanged = not_modified(req, table.metadata_location, snapshots)
    if unchanged is not None:
        return unchanged
    return table_response(ctx, req, table.metadata, table.metadata_location, snapshots)


def load_credentials(ctx: ServeContext, req: Request) -> Response:
    """``GET .../tables/{table}/credentials`` (spec ``loadCredentials``: "Load vended
    credentials for a table from the catalog"): the ``storage-credentials`` a load of the
    table would vend now, so a client renews expiring ones without loading the table.
    A server that does not vend answers an empty list (the field is required)."""
    table = ctx.catalog.load_table(_identifier(req))
    vending = ctx.vend_credentials or ctx.storage_credentials is not None
    credentials = vended(ctx, table.metadata.location)[1] if vending else []
    return Response(200, {"storage-credentials": credentials})


def table_exists(ctx: ServeContext, req: Request) -> Response:
    """``HEAD``: 204 when it exists, else the 404 a ``GET`` would give (headers only)."""
    identifier = _identifier(req)
    if not ctx.catalog.table_exists(identifier):
        ctx.catalog.load_table(identifier)  # raises GET's not-found error
    return NO_CONTENT


def drop_table(ctx: ServeContext, req: Request) -> Response:
    identifier = _identifier(req)
    purge = req.flag("purgeRequested")
    table = ctx.catalog.load_table(identifier)  # the catalog's own not-found error
    if purge:
        # a purge deletes every file the metadata reaches, which a client wrote: refuse it
        # rather than delete anything outside the warehouse
        for location in reachable_files(table.metadata, table.metadata_location):
            ctx.check_within_warehouse(location, "a file of the table,")
    ctx.catalog.drop_table(identifier, purge=purge)
    return NO_CONTENT


def rename_table(ctx: ServeContext, req: Request) -> Response:
    """``POST /v1/{prefix}/tables/rename``: ``RenameTableRequest`` (source, destination)."""
    body = req.json()
    source = identifier_from_json(body.get("source"), "source")
    destination = identifier_from_json(body.get("destination"), "destination")
    if not ctx.catalog.namespace_exists(destination.namespace):
        raise no_such_namespace(f"namespace {'.'.join(destination.namespace)} does not exist")
    ctx.catalog.rename_table(source, destination)
    return NO_CONTENT


def register_table(ctx: ServeContext, req: Request) -> Response:
    """``RegisterTableRequest``: name, metadata-location (under the warehouse), and
    ``overwrite`` ("Whether to overwrite table metadata if the table already exists")."""
    namespace = _namespace(ctx, req)
    body = req.json()
    name, location = body.get("name"), body.get("metadata-location")
    if not isinstance(name, str) or not isinstance(location, str):
        raise UserError("RegisterTableRequest: name and metadata-location must be strings")
    overwrite = body.get("overwrite", False)
    if not isinstance(overwrite, bool):
        raise UserError("RegisterTableRequest: overwrite must be true or false")
    ctx.check_within_warehouse(location, "metadata-location")
    identifier = TableIdentifier(namespace, check_name(name, "table"))
    try:
        if overwrite:
            table = _register_over(ctx, identifier, location)
        else:
            table = ctx.catalog.register_table(identifier, location)
    except MissingFileError:
        raise UserError(f"RegisterTableRequest: metadata-location {location} does not exist") from None
    return table_response(ctx, req, table.metadata, table.metadata_location, table=identifier)


def _register_over(ctx: ServeContext, identifier: TableIdentifier, location: str) -> LoadedTable:
    """Replace an existing table's metadata with the file at ``location`` as a commit: the
    catalog's compare-and-swap from the current file to a new metadata file holding the
    registered metadata (its ``metadata-log`` then names the replaced file), so a commit
    racing it is a 409 for one of the two, never a lost update. A table that does not exist
    yet is registered as without ``overwrite``."""
    try:
        base = ctx.catalog.load_table(identifier)
    except NotFoundError:
        try:
            return ctx.catalog.register_table(identifier, location)
        except AlreadyExistsError:
            raise CommitConflictError(
                f"table {identifier} was created meanwhile: retry the register"
            ) from None
    metadata = read_metadata(location)
    # the new metadata file is written under the registered table's location
    ctx.check_within_warehouse(metadata.location, "the registered table's location")
    return ctx.catalog.commit_table(base, metadata)


def report_metrics(ctx: ServeContext, req: Request) -> Response:
    """Accepted and not kept (spec: "Send a metrics report to this endpoint to be processed
    by the backend"); the body must still be a ``ReportMetricsRequest``, in a namespace
    that exists. The table itself may not exist yet: Java's client reports the commit of a
    staged table (CTAS, REPLACE TABLE AS SELECT) before the transaction that creates it is
    sent, and Java's own ``RESTCatalogAdapter`` accepts such a report too."""
    body = req.json()
    if not isinstance(body.get("report-type"), str):
        raise UserError("ReportMetricsRequest: report-type must be a string")
    _identifier(req)  # the names are checked
    _namespace(ctx, req)
    return NO_CONTENT
