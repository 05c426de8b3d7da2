"""``CALL system.rollback_to_timestamp(table, timestamp)``: ``main`` back to the newest of
its ancestors committed before ``timestamp``.

Java's ``ManageSnapshots.rollbackToTime``: the target is chosen among the current
snapshot's ancestors by ``timestamp-ms`` (strictly older); none: "Cannot roll back, no
valid snapshot older than: <ms>". Chosen once, on the table as the call found it (as
Java does); a concurrent commit is then re-checked: the target must still be an ancestor.
"""

from __future__ import annotations

from functools import partial

from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.ops.procedures.snapshots import MOVE_OUTPUT, commit_change, metadata_only
from iceduck.txn.snapshot_refs import latest_ancestor_before, rollback_to


def rollback_to_timestamp(ctx: OpContext, args: Arguments) -> Rows:
    target = latest_ancestor_before(table_argument(ctx, args).metadata, args.required("timestamp"))
    before, after = commit_change(ctx, args, metadata_only(partial(rollback_to, snapshot_id=target)))
    return [(before, after)]


PROCEDURE = Procedure(
    name="rollback_to_timestamp",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("timestamp", Kind.TIMESTAMP, required=True),
    ),
    output=MOVE_OUTPUT,
    run=rollback_to_timestamp,
    summary="move main back to its newest ancestor older than a timestamp",
)
