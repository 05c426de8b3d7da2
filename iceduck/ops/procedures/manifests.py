"""``CALL system.rewrite_manifests(table, use_caching, spec_id)``: cluster the current
snapshot's manifests by partition so planning skips more of them.

Spark's result: one row, ``rewritten_manifests_count`` and ``added_manifests_count``
(ints); ``0, 0`` when there is nothing to rewrite (an empty table, or one manifest per
content that would become one again). ``spec_id`` picks the partition spec whose
manifests are rewritten (default: the current spec); ``use_caching`` asks Spark to cache
the entries' Dataset while it sorts them -- iceduck sorts in memory, so it is accepted and
has no effect. The rewrite itself is :mod:`iceduck.txn.manifest_rewrite`.
"""

from __future__ import annotations

import pyarrow as pa

from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.txn.manifest_rewrite import commit_manifest_rewrite


def rewrite_manifests(ctx: OpContext, args: Arguments) -> Rows:
    table = table_argument(ctx, args)
    rewrite = commit_manifest_rewrite(ctx.catalog, table, ctx.manifests, args.get("spec_id"))
    return [(len(rewrite.replaced), len(rewrite.added))]


PROCEDURE = Procedure(
    name="rewrite_manifests",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("use_caching", Kind.BOOLEAN),
        Parameter("spec_id", Kind.INT),
    ),
    output=pa.schema(
        [pa.field("rewritten_manifests_count", pa.int32()), pa.field("added_manifests_count", pa.int32())]
    ),
    run=rewrite_manifests,
    summary="cluster the current snapshot's manifests by partition",
)
