"""DELETE FROM table [AS alias] [WHERE condition].

Rows where the condition is true go (SQL semantics: a null condition keeps the row).
Files the condition covers entirely -- by partition values or column metrics, when the
SQL layer says the Iceberg filter it derived is exact -- are removed from metadata
without reading their data, as Spark's metadata-only delete does; the rows of the other
files are located through DuckDB (:func:`iceduck.ops.rows.find_matches`) and removed as
``write.delete.mode`` says (:mod:`iceduck.ops.row_changes`). ``rowcount`` is the number
of rows deleted.
"""

from __future__ import annotations

from iceduck.engine.types import quote_identifier
from iceduck.ops.context import OpContext, OpResult
from iceduck.ops.row_changes import RowChanges, apply_row_changes
from iceduck.ops.rows import find_matches, unique_name
from iceduck.ops.snapshot_commit import row_level_mode
from iceduck.sql.statements import Delete

DELETE_MODE = "write.delete.mode"


def delete(ctx: OpContext, stmt: Delete) -> OpResult:
    target = ctx.resolve_target(stmt.name)
    alias = stmt.alias or target.identifier.name
    mode = row_level_mode(target.table.metadata, DELETE_MODE)
    matches = find_matches(ctx, target, stmt.where, alias)
    addresses = unique_name("deleted")
    ctx.duck.register(addresses, matches.addresses)
    try:
        changes = RowChanges(matches.plan, matches.whole, quote_identifier(addresses))
        apply_row_changes(ctx, target, changes, mode)
    finally:
        ctx.duck.unregister(addresses)
    count = matches.whole_rows + matches.addresses.num_rows
    return OpResult(rowcount=count, message=f"deleted {count} rows from {target.identifier}")
