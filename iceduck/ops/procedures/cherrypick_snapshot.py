"""``CALL system.cherrypick_snapshot(table, snapshot_id)``: apply a snapshot to ``main``.

The rules are Java's ``CherryPickOperation`` (:mod:`iceduck.txn.cherrypick`): a
fast-forward when the snapshot's parent is the current snapshot, else an ``append`` or a
dynamic overwrite re-applied as a new snapshot with ``source-snapshot-id``. Spark's result:
``source_snapshot_id`` (the picked one) and ``current_snapshot_id`` (main after the pick).
"""

from __future__ import annotations

from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows
from iceduck.ops.procedures.snapshots import PICK_OUTPUT, commit_change
from iceduck.txn.cherrypick import cherrypick


def cherrypick_snapshot(ctx: OpContext, args: Arguments) -> Rows:
    snapshot_id = args.required("snapshot_id")
    _, after = commit_change(ctx, args, lambda metadata: cherrypick(metadata, snapshot_id, ctx.manifests))
    return [(snapshot_id, after)]


PROCEDURE = Procedure(
    name="cherrypick_snapshot",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("snapshot_id", Kind.LONG, required=True),
    ),
    output=PICK_OUTPUT,
    run=cherrypick_snapshot,
    summary="apply a snapshot (staged, rolled back, of another branch) to main",
)
