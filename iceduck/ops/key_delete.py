"""DELETE by key on an upsert table: equality deletes of the keys, without reading the table.

On a table with identifier fields and ``write.upsert.enabled=true`` -- a table kept from a
change feed, whose writers upsert (:mod:`iceduck.ops.upsert`) -- a DELETE whose condition
only says which keys go (``id = 5``, ``id IN (1, 2)``, ``(a, b) IN (...)``, ``id IN
(SELECT id FROM feed WHERE op = 'D')``: :mod:`iceduck.sql.key_match`) is written as Flink's
upsert sink writes a feed's deletes: one equality delete file per partition holding the
keys, in a ``delete`` snapshot. Nothing of the table is read, so the statement cannot
know how many rows it deleted: ``rowcount`` is -1 (DB-API: "cannot be determined") and
the message counts the keys.

Keys are compared as the column type holds them; a value that the column type cannot
hold exactly (``id = 1.5`` on an int key, a null) matches no row, as in SQL, and is left
out. Any other DELETE -- and this one on a table partitioned by a column that is not an
identifier field, or whose subquery names the table itself -- reads the table as usual
(:mod:`iceduck.ops.row_delete`).
"""

from __future__ import annotations

from iceduck.engine.queries import describe, temp_table
from iceduck.engine.types import quote_identifier, try_cast_sql
from iceduck.ops.context import OpContext, OpResult, WriteTarget
from iceduck.ops.rows import branch_snapshot, params_for, run_sql
from iceduck.ops.snapshot_commit import WrittenFiles, commit_changes
from iceduck.ops.upsert import delete_specs, key_deletes_possible, upsert_enabled, write_key_deletes
from iceduck.spec.snapshot import Operation
from iceduck.spec.types import StructType
from iceduck.sql.key_match import KEY_COLUMN, key_rows
from iceduck.sql.statements import Delete
from iceduck.txn.snapshot import SnapshotChanges


def key_delete_query(ctx: OpContext, target: WriteTarget, stmt: Delete, alias: str) -> str | None:
    """The query (runnable on the statement's cursor) of the distinct keys ``stmt`` deletes,
    typed as the key columns and named like them, when it is a delete by key on an upsert
    table; else None."""
    metadata = target.table.metadata
    schema = metadata.schema()
    key = schema.identifier_field_ids
    if stmt.where is None or not key or metadata.format_version < 2 or not upsert_enabled(metadata):
        return None
    fields = [schema.find_field(k) for k in key]
    if any(
        schema.parent_id(k) is not None or isinstance(f.field_type, StructType)
        for k, f in zip(key, fields, strict=True)
    ):
        return None  # a key nested in a struct: the condition names no top-level column
    rows = key_rows(stmt.where, [f.name for f in fields], alias)
    if rows is None or not key_deletes_possible(ctx, target, key):
        return None
    prepared = ctx.prepare_query(rows)
    try:  # a correlated subquery (naming the table) does not bind on its own
        width = len(describe(ctx.duck, prepared, params_for(prepared, ctx.params)))
    except Exception:
        return None
    if width != len(fields):
        return None
    raw = [KEY_COLUMN.format(i) for i in range(len(fields))]
    cast = [try_cast_sql(r, f.field_type) for r, f in zip(raw, fields, strict=True)]
    items = ", ".join(f"{c} AS {quote_identifier(f.name)}" for c, f in zip(cast, fields, strict=True))
    exact = " AND ".join(f"{c} = {r}" for c, r in zip(cast, raw, strict=True))
    return f"SELECT DISTINCT {items} FROM ({prepared}) AS __iceduck_k WHERE {exact}"


def delete_by_key(ctx: OpContext, target: WriteTarget, query: str) -> OpResult:
    """Write and commit equality deletes of the keys ``query`` yields."""
    key = target.table.metadata.schema().identifier_field_ids
    specs = delete_specs(ctx, target, key, "DELETE by key")
    with temp_table(ctx.duck, ctx.unique_name("deleted_keys"), query, params_for(query, ctx.params)) as keys:
        count = int(run_sql(ctx, f"SELECT count(*) FROM {keys}")[0][0])
        message = (
            f"deleted {count:,} key{'' if count == 1 else 's'} from {target.identifier} by equality deletes"
        )
        if not count:
            return OpResult(rowcount=0, message=message)
        with WrittenFiles() as written:
            deletes = written.add(write_key_deletes(ctx, target, specs, key, keys))
            snapshot = branch_snapshot(target)
            changes = SnapshotChanges(
                operation=Operation.DELETE,
                added_delete_files=tuple(deletes),
                validate_from_snapshot_id=None if snapshot is None else snapshot.snapshot_id,
            )
            commit_changes(ctx, target, changes, written)
    return OpResult(rowcount=-1, message=f"{message} (the table was not read: rows are not counted)")
