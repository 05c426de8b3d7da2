"""``CALL system.rollback_to_snapshot(table, snapshot_id)``: ``main`` back to an ancestor.

Java's ``ManageSnapshots.rollbackTo``: the snapshot must exist ("Cannot roll back to
unknown snapshot id") and be the current snapshot or one of its ancestors ("Cannot roll
back to snapshot, not an ancestor of the current state"); a snapshot of another lineage
takes ``set_current_snapshot``. The newer snapshots stay in the table (``VERSION AS OF``
still reads them, ``cherrypick_snapshot`` can re-apply them).
"""

from __future__ import annotations

from functools import partial

from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows
from iceduck.ops.procedures.snapshots import MOVE_OUTPUT, commit_change, metadata_only
from iceduck.txn.snapshot_refs import rollback_to


def rollback_to_snapshot(ctx: OpContext, args: Arguments) -> Rows:
    snapshot_id = args.required("snapshot_id")
    before, after = commit_change(ctx, args, metadata_only(partial(rollback_to, snapshot_id=snapshot_id)))
    return [(before, after)]


PROCEDURE = Procedure(
    name="rollback_to_snapshot",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("snapshot_id", Kind.LONG, required=True),
    ),
    output=MOVE_OUTPUT,
    run=rollback_to_snapshot,
    summary="move main back to one of its ancestors",
)
