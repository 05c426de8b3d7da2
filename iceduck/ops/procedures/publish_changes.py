"""``CALL system.publish_changes(table, wap_id)``: publish a write-audit-publish stage.

The staged snapshot is the one snapshot of the table whose summary has ``wap.id`` =
``wap_id`` (none: "Cannot apply unknown WAP ID '<id>'"; several: "Cannot apply non-unique
WAP ID", as Spark's procedure); it is cherry-picked onto ``main``
(:mod:`iceduck.txn.cherrypick`), which records ``published-wap-id`` and refuses a WAP id
already published. Spark's result: ``source_snapshot_id`` (the staged snapshot) and
``current_snapshot_id``.
"""

from __future__ import annotations

from iceduck.errors import NotFoundError, ValidationError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.ops.procedures.snapshots import PICK_OUTPUT, commit_change
from iceduck.txn.cherrypick import cherrypick, staged_wap_id


def publish_changes(ctx: OpContext, args: Arguments) -> Rows:
    wap_id = args.required("wap_id")
    metadata = table_argument(ctx, args).metadata
    staged = [s.snapshot_id for s in metadata.snapshots if staged_wap_id(s) == wap_id]
    if not staged:
        raise NotFoundError(f"Cannot apply unknown WAP ID '{wap_id}'")
    if len(staged) > 1:
        raise ValidationError(
            f"Cannot apply non-unique WAP ID. Found multiple snapshots with WAP ID '{wap_id}'"
        )
    snapshot_id = staged[0]
    _, after = commit_change(ctx, args, lambda base: cherrypick(base, snapshot_id, ctx.manifests))
    return [(snapshot_id, after)]


PROCEDURE = Procedure(
    name="publish_changes",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("wap_id", Kind.STRING, required=True),
    ),
    output=PICK_OUTPUT,
    run=publish_changes,
    summary="publish the snapshot staged with a write-audit-publish id",
)
