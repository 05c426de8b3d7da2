"""``CALL system.set_current_snapshot(table, snapshot_id | ref)``: ``main`` to any snapshot.

Unlike a rollback the snapshot need not be an ancestor: any snapshot in the table, or the
snapshot a branch or tag points at, becomes current. Exactly one of ``snapshot_id`` and
``ref`` is given (Spark: "Either snapshot_id or ref must be provided, not both"); an
unknown ref: "Cannot find matching snapshot ID for ref <name>".
"""

from __future__ import annotations

from functools import partial

from iceduck.errors import NotFoundError, UserError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.ops.procedures.snapshots import MOVE_OUTPUT, commit_change, metadata_only
from iceduck.txn.snapshot_refs import set_current


def set_current_snapshot(ctx: OpContext, args: Arguments) -> Rows:
    snapshot_id: int | None = args.get("snapshot_id")
    ref: str | None = args.get("ref")
    if (snapshot_id is None) == (ref is None):
        raise UserError("Either snapshot_id or ref must be provided, not both")
    if ref is not None:  # the ref's snapshot as the call finds it, as Spark resolves it once
        found = table_argument(ctx, args).metadata.refs.get(ref)
        if found is None:
            raise NotFoundError(f"Cannot find matching snapshot ID for ref {ref}")
        snapshot_id = found.snapshot_id
    assert snapshot_id is not None
    before, after = commit_change(ctx, args, metadata_only(partial(set_current, snapshot_id=snapshot_id)))
    return [(before, after)]


PROCEDURE = Procedure(
    name="set_current_snapshot",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("snapshot_id", Kind.LONG),
        Parameter("ref", Kind.STRING),
    ),
    output=MOVE_OUTPUT,
    run=set_current_snapshot,
    summary="make any snapshot (or a branch's or tag's) the current one",
)
