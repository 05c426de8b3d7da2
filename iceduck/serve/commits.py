"""``POST .../tables/{table}``: a ``CommitTableRequest`` (requirements + updates) applied
through the catalog's compare-and-swap; ``POST .../transactions/commit``: several at once.

The spec: "The server must check that the requirements are met" and "If any of the
requirements are not met, the server must respond with a 409 (Conflict)"; then "the server
applies the updates in order". Here: load the current table (or none, for a create with
``assert-create``), :func:`~iceduck.table_updates.requirements.check_requirements`,
:func:`~iceduck.txn.apply_updates.apply_updates`, then
:meth:`Catalog.commit_table <iceduck.catalog.base.Catalog.commit_table>` from the loaded
metadata. A commit that lost the race (another request committed in between) is the
catalog's :class:`~iceduck.errors.CommitConflictError`, a 409 ``CommitFailedException``:
retrying on fresh metadata is the client's job (Java's and PyIceberg's clients do), so no
commit is ever lost or silently merged.

Locations a commit asks the server to record (``set-location``, a created table's
location, manifest lists and statistics files of added snapshots) must lie under the
warehouse: a later purge deletes what the metadata references.
"""

from __future__ import annotations

from typing import Any

from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    NotFoundError,
    UnsupportedError,
    UserError,
)
from iceduck.serve.context import ServeContext
from iceduck.serve.errors import no_such_namespace
from iceduck.serve.names import check_name, identifier_from_json, namespace_from_path
from iceduck.serve.request import NO_CONTENT, Request, Response
from iceduck.serve.table_response import table_response
from iceduck.spec.table_metadata import TableMetadata
from iceduck.table_updates.requirements import (
    AssertCreate,
    Requirement,
    check_requirements,
    parse_requirements,
)
from iceduck.table_updates.updates import (
    AddSnapshot,
    SetPartitionStatistics,
    SetStatistics,
    Update,
    parse_updates,
)
from iceduck.txn.apply_updates import apply_updates


def commit_table(ctx: ServeContext, req: Request) -> Response:
    identifier = TableIdentifier(
        namespace_from_path(req.params["namespace"]), check_name(req.params["table"], "table")
    )
    body = req.json()
    if (
        body.get("identifier") is not None
        and identifier_from_json(body["identifier"], "identifier") != identifier
    ):
        raise UserError("CommitTableRequest: identifier does not match the table of the path")
    requirements, updates = parse_changes(body)
    committed = commit(ctx, identifier, requirements, updates)
    return table_response(ctx, req, committed.metadata, committed.metadata_location, table=identifier)


def commit_transaction(ctx: ServeContext, req: Request) -> Response:
    """``POST /v1/{prefix}/transactions/commit``: a ``CommitTransactionRequest`` whose
    ``table-changes`` "must be applied atomically" (spec): every table's requirements are
    checked and updates applied first, then the catalog swaps all tables in one database
    transaction (:meth:`Catalog.commit_tables`). 204 on success, 409 when any table moved."""
    body = req.json()
    changes = body.get("table-changes")
    if not isinstance(changes, list) or not changes:
        raise UserError("CommitTransactionRequest: table-changes must be a non-empty array")
    staged: list[tuple[LoadedTable, TableMetadata]] = []
    for i, change in enumerate(changes):
        if not isinstance(change, dict) or change.get("identifier") is None:
            raise UserError(f"CommitTransactionRequest: table-changes[{i}] needs an identifier")
        identifier = identifier_from_json(change["identifier"], f"table-changes[{i}].identifier")
        requirements, updates = parse_changes(change)
        if any(isinstance(r, AssertCreate) for r in requirements):
            raise UnsupportedError("a multi-table commit cannot create a table (assert-create)")
        base = ctx.catalog.load_table(identifier)
        check_requirements(base.metadata, requirements)
        new = apply_updates(base.metadata, updates)
        _check_locations(ctx, new, updates, base)
        staged.append((base, new))
    ctx.catalog.commit_tables(staged)
    return NO_CONTENT


def parse_changes(body: dict[str, Any]) -> tuple[list[Requirement], list[Update]]:
    """The ``requirements`` and ``updates`` arrays of a ``CommitTableRequest`` (either may
    be absent: nothing to assert, or nothing to change)."""
    return parse_requirements(body.get("requirements", [])), parse_updates(body.get("updates", []))


def commit(
    ctx: ServeContext, identifier: TableIdentifier, requirements: list[Requirement], updates: list[Update]
) -> LoadedTable:
    """Check, apply and swap one table's changes; returns the table as committed."""
    base = _current(ctx, identifier)
    check_requirements(None if base is None else base.metadata, requirements)
    if base is None:
        if not any(isinstance(r, AssertCreate) for r in requirements):
            raise NotFoundError(f"table {identifier} does not exist")
        if not ctx.catalog.namespace_exists(identifier.namespace):
            raise no_such_namespace(f"namespace {'.'.join(identifier.namespace)} does not exist")
        if ctx.catalog.view_exists(identifier):
            # Java's CatalogHandlers builds the create on a view-aware table builder, which
            # refuses a view's name in these words (an AlreadyExistsException, not a conflict)
            raise AlreadyExistsError(f"View with same name already exists: {identifier}")
    if base is not None and not updates:
        return base  # nothing to change: no new metadata file (as Java's CatalogHandlers)
    new = apply_updates(None if base is None else base.metadata, updates)
    _check_locations(ctx, new, updates, base)
    if base is None:
        try:
            return ctx.catalog.create_table(identifier, new)
        except AlreadyExistsError as e:  # created by another request since the check
            raise CommitConflictError(f"Requirement failed: table already exists ({e})") from None
    return ctx.catalog.commit_table(base, new)


def _current(ctx: ServeContext, identifier: TableIdentifier) -> LoadedTable | None:
    try:
        return ctx.catalog.load_table(identifier)
    except NotFoundError:
        return None


def _check_locations(
    ctx: ServeContext, metadata: TableMetadata, updates: list[Update], base: LoadedTable | None
) -> None:
    """The new metadata's locations lie under the warehouse, or under the location the
    table already had (a table the operator placed elsewhere stays writable there)."""
    own = None if base is None else base.metadata.location
    ctx.check_within_warehouse(metadata.location, "table location", own)
    for u in updates:
        if isinstance(u, AddSnapshot) and u.snapshot.manifest_list is not None:
            ctx.check_within_warehouse(u.snapshot.manifest_list, "manifest list", own)
        elif isinstance(u, SetStatistics):
            ctx.check_within_warehouse(u.statistics.statistics_path, "statistics file", own)
        elif isinstance(u, SetPartitionStatistics):
            path = u.partition_statistics.statistics_path
            ctx.check_within_warehouse(path, "partition statistics file", own)
