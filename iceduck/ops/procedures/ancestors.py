"""``CALL system.ancestors_of(table, snapshot_id)``: the snapshot's lineage, newest first.

Spark's result: one row per ancestor, starting with ``snapshot_id`` (default: the current
snapshot) and following ``parent-snapshot-id`` back to the first snapshot still in the
metadata (an expired parent ends the walk), columns ``snapshot_id`` and ``timestamp``
(the snapshot's ``timestamp-ms``).
"""

from __future__ import annotations

import pyarrow as pa

from iceduck.errors import NotFoundError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument


def ancestors_of(ctx: OpContext, args: Arguments) -> Rows:
    table = table_argument(ctx, args)
    metadata = table.metadata
    snapshot_id = args.get("snapshot_id", metadata.current_snapshot_id)
    if snapshot_id is None:
        return []
    snapshot = metadata.find_snapshot(snapshot_id)
    if snapshot is None:
        raise NotFoundError(f"table {table.identifier} has no snapshot with id {snapshot_id}")
    rows: list[tuple[int, int]] = []
    while snapshot is not None:
        rows.append((snapshot.snapshot_id, snapshot.timestamp_ms))
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.find_snapshot(parent)
    return rows


PROCEDURE = Procedure(
    name="ancestors_of",
    parameters=(Parameter("table", Kind.STRING, required=True), Parameter("snapshot_id", Kind.LONG)),
    output=pa.schema([pa.field("snapshot_id", pa.int64()), pa.field("timestamp", pa.int64())]),
    run=ancestors_of,
    summary="the lineage of a snapshot, newest first",
)
