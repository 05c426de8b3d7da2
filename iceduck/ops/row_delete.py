"""DELETE FROM table [AS alias] [WHERE condition].

Rows where the condition is true go (SQL semantics: a null condition keeps the row).
Files the condition covers entirely -- by partition values or column metrics, when the
SQL layer says the Iceberg filter it derived is exact -- are removed from metadata
without reading their data, as Spark's metadata-only delete does; the rows of the other
files are located through DuckDB (:func:`iceduck.ops.rows.find_matches`) and removed as
``write.delete.mode`` says (:mod:`iceduck.ops.row_changes`). ``rowcount`` is the number
of rows deleted.

On a table with identifier fields and ``write.upsert.enabled=true``, a condition on the
key alone is written as equality deletes instead (:mod:`iceduck.ops.key_delete`).

``write.delete.isolation-level`` (default ``serializable``, as Spark) decides whether a
data file another writer appended meanwhile that may hold rows matching the condition
makes the commit fail: under serializable it does, since the statement did not see (and
so did not delete) those rows.
"""

from __future__ import annotations

from iceduck.engine.queries import registered
from iceduck.ops.context import OpContext, OpResult
from iceduck.ops.context import rows as row_count
from iceduck.ops.key_delete import delete_by_key, key_delete_query
from iceduck.ops.row_changes import RowChanges, apply_row_changes, conflict_detection
from iceduck.ops.rows import find_matches
from iceduck.ops.snapshot_commit import isolation_level, row_level_mode
from iceduck.ops.update import target_parts
from iceduck.ops.wap import write_target
from iceduck.spec import properties as props
from iceduck.sql.qualifiers import requalify_delete, table_qualifiers
from iceduck.sql.statements import Delete


def delete(ctx: OpContext, stmt: Delete) -> OpResult:
    target = write_target(ctx, stmt.name)
    alias = stmt.alias or target.identifier.name
    if stmt.alias is None:  # db.t.k, iceduck.db.t.k name the target's columns too
        names = table_qualifiers(ctx.catalog.name, target_parts(target), stmt.name)
        stmt = requalify_delete(stmt, names, alias)
    by_key = key_delete_query(ctx, target, stmt, alias)
    if by_key is not None:  # an upsert table: equality deletes (:mod:`iceduck.ops.key_delete`)
        return delete_by_key(ctx, target, by_key)
    mode = row_level_mode(target.table.metadata, props.DELETE_MODE)
    isolation = isolation_level(target.table.metadata, props.DELETE_ISOLATION_LEVEL)
    matches = find_matches(ctx, target, stmt.where, alias)
    with registered(ctx.duck, ctx.unique_name("deleted"), matches.addresses) as addresses:
        changes = RowChanges(matches.plan, matches.whole, addresses)
        conflicts = conflict_detection(
            f"DELETE FROM {target.identifier}", matches.plan, isolation, props.DELETE_ISOLATION_LEVEL
        )
        apply_row_changes(ctx, target, changes, mode, conflicts)
    count = matches.whole_rows + matches.addresses.num_rows
    return OpResult(rowcount=count, message=f"deleted {row_count(count)} from {target.identifier}")
