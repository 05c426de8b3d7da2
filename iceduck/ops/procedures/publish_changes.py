"""``CALL system.publish_changes(table, wap_id)``: publish a write-audit-publish stage.

The staged snapshot is the table's snapshot whose summary has ``wap.id`` = ``wap_id``
(the first in the metadata's order, as Spark's procedure finds it; none: "Cannot apply
unknown WAP ID '<id>'"); it is cherry-picked onto ``main`` (:mod:`iceduck.txn.cherrypick`),
which records ``published-wap-id`` and refuses a WAP id already published.
"""

from __future__ import annotations

from iceduck.errors import NotFoundError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.ops.procedures.snapshots import MOVE_OUTPUT, commit_change
from iceduck.txn.cherrypick import cherrypick, staged_wap_id


def publish_changes(ctx: OpContext, args: Arguments) -> Rows:
    wap_id = args.required("wap_id")
    metadata = table_argument(ctx, args).metadata
    staged = next((s for s in metadata.snapshots if staged_wap_id(s) == wap_id), None)
    if staged is None:
        raise NotFoundError(f"Cannot apply unknown WAP ID '{wap_id}'")
    snapshot_id = staged.snapshot_id
    before, after = commit_change(ctx, args, lambda base: cherrypick(base, snapshot_id, ctx.manifests))
    return [(before, after)]


PROCEDURE = Procedure(
    name="publish_changes",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("wap_id", Kind.STRING, required=True),
    ),
    output=MOVE_OUTPUT,
    run=publish_changes,
    summary="publish the snapshot staged with a write-audit-publish id",
)
