"""What the snapshot-management procedures share: committing a change of ``main`` (or a
branch) through the commit loop and reporting the snapshot before and after.

The procedures (``rollback_to_snapshot``, ``rollback_to_timestamp``,
``set_current_snapshot``, ``cherrypick_snapshot``, ``publish_changes``, ``fast_forward``)
are thin: the rules live in :mod:`iceduck.txn.snapshot_refs` and
:mod:`iceduck.txn.cherrypick`, applied to the base each commit attempt gets, so a
procedure racing a concurrent write re-validates on the refreshed table instead of
undoing that write.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from iceduck.catalog.base import LoadedTable
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, table_argument
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.commit import PendingCommit, commit

#: Spark's result columns of the procedures that move ``main``
MOVE_OUTPUT = pa.schema(
    [
        pa.field("previous_snapshot_id", pa.int64()),
        pa.field("current_snapshot_id", pa.int64(), nullable=False),
    ]
)

#: Spark's result columns of the procedures that apply a snapshot to ``main``
PICK_OUTPUT = pa.schema(
    [
        pa.field("source_snapshot_id", pa.int64(), nullable=False),
        pa.field("current_snapshot_id", pa.int64(), nullable=False),
    ]
)


def commit_change(
    ctx: OpContext, args: Arguments, change: Callable[[TableMetadata], PendingCommit], ref: str | None = None
) -> tuple[int | None, int | None]:
    """Commit ``change`` (run on every attempt's base) to the procedure's table; the
    snapshot id of ``ref`` (default: the current snapshot) in the base the commit landed
    on, and in the committed table."""
    loaded = table_argument(ctx, args)
    before: list[int | None] = [None]

    def attempt(base: LoadedTable) -> PendingCommit:
        before[0] = _ref_snapshot(base.metadata, ref)
        return change(base.metadata)

    committed = commit(ctx.catalog, loaded.identifier, attempt, base=loaded)
    return before[0], _ref_snapshot(committed.metadata, ref)


def metadata_only(
    change: Callable[[TableMetadata], TableMetadata],
) -> Callable[[TableMetadata], PendingCommit]:
    """A change of refs only (no files written) as a commit attempt's result."""
    return lambda metadata: PendingCommit(change(metadata), [])


def _ref_snapshot(metadata: TableMetadata, ref: str | None) -> int | None:
    if ref is None:
        return metadata.current_snapshot_id
    found = metadata.refs.get(ref)
    return None if found is None else found.snapshot_id
