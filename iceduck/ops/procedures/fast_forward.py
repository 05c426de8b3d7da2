"""``CALL system.fast_forward(table, branch, to)``: move ``branch`` to ``to``'s snapshot.

Java's ``ManageSnapshots.fastForwardBranch`` (:func:`iceduck.txn.snapshot_refs.fast_forward`):
``branch`` must be an existing branch whose head is an ancestor of ``to``'s snapshot, so no
commit of ``branch`` is lost ("Cannot fast-forward: b is not an ancestor of c"). Spark's
result: ``branch_updated`` and its snapshot before (``previous_ref``) and after
(``updated_ref``).
"""

from __future__ import annotations

from functools import partial

import pyarrow as pa

from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows
from iceduck.ops.procedures.snapshots import commit_change, metadata_only
from iceduck.txn import snapshot_refs


def fast_forward(ctx: OpContext, args: Arguments) -> Rows:
    branch = args.required("branch")
    change = partial(snapshot_refs.fast_forward, branch=branch, to=args.required("to"))
    before, after = commit_change(ctx, args, metadata_only(change), ref=branch)
    return [(branch, before, after)]


PROCEDURE = Procedure(
    name="fast_forward",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("branch", Kind.STRING, required=True),
        Parameter("to", Kind.STRING, required=True),
    ),
    output=pa.schema(
        [
            pa.field("branch_updated", pa.string(), nullable=False),
            pa.field("previous_ref", pa.int64()),
            pa.field("updated_ref", pa.int64(), nullable=False),
        ]
    ),
    run=fast_forward,
    summary="move a branch forward to another ref's snapshot",
)
