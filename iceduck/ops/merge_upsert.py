"""A change feed's MERGE on an upsert table, written by key without reading the table.

The MERGE Spark users write to apply a change feed::

    MERGE INTO t USING feed s ON t.id = s.id
    WHEN MATCHED AND s.op = 'D' THEN DELETE
    WHEN MATCHED THEN UPDATE SET *
    WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *

decides each source row's fate from the source row alone once the target row is known to
exist or not -- and for a feed the two answers agree: a row that would update a matched row
inserts when there is none (an upsert), a row that would delete does nothing when there is
none (a delete by key). On a table with identifier fields and ``write.upsert.enabled=true``
(:mod:`iceduck.ops.upsert`), such a MERGE is written as Flink writes the feed: equality
deletes of the keys of every acting row, plus the rows that upsert, in one snapshot,
without reading the table.

When it applies, checked before anything is written:

* the ON condition is exactly ``t.k = s.k`` for each identifier field ``k``
  (:func:`iceduck.sql.key_match.on_keys`), so the key a row deletes is the key it writes;
* the clauses are ``WHEN MATCHED [AND c] THEN DELETE | UPDATE SET *`` and ``WHEN NOT
  MATCHED [AND c] THEN INSERT *``, their conditions naming source columns only (``s.op``);
* for every source row, the first matching ``WHEN MATCHED`` clause and the first matching
  ``WHEN NOT MATCHED`` clause agree: UPDATE with INSERT, DELETE with none, or none with none.
  (A row that would only update an existing row, or only insert a new one, needs the table:
  the statement is then run as any MERGE, reading it.)

The one difference from a MERGE that reads: several source rows with one key are not an
error ("multiple source rows matched") but applied in order, the last one winning, as an
upsert table's writers do. ``rowcount`` is the rows written, or -1 when some rows delete
(how many target rows they removed is unknown without reading the table).
"""

from __future__ import annotations

from iceduck.engine.queries import temp_table
from iceduck.engine.types import quote_identifier
from iceduck.engine.write import column_ref, write_data_files
from iceduck.ops.context import OpContext, OpResult, WriteTarget
from iceduck.ops.context import rows as row_count
from iceduck.ops.rows import branch_snapshot, params_for, run_sql
from iceduck.ops.snapshot_commit import WrittenFiles, commit_changes, file_target
from iceduck.ops.upsert import (
    delete_specs,
    key_deletes_possible,
    last_per_key_sql,
    upsert_enabled,
    write_key_deletes,
)
from iceduck.spec.snapshot import Operation
from iceduck.spec.types import StructType
from iceduck.sql.key_match import names_only, on_keys
from iceduck.sql.statements import Merge, MergeAction, MergeClause, MergeMatch
from iceduck.txn.snapshot import SnapshotChanges

#: the per-row decisions, in the temporary table of acting source rows
_MATCHED = "__iceduck_when_matched"
_NOT_MATCHED = "__iceduck_when_not_matched"
_FEED_CLAUSES = {
    (MergeMatch.MATCHED, MergeAction.DELETE),
    (MergeMatch.MATCHED, MergeAction.UPDATE_ALL),
    (MergeMatch.NOT_MATCHED, MergeAction.INSERT_ALL),
}


def is_feed_merge(target: WriteTarget, stmt: Merge, alias: str, source: str) -> bool:
    """Whether ``stmt`` has the shape written by key on an upsert table (the per-row check
    is made when it runs)."""
    metadata = target.table.metadata
    schema = metadata.schema()
    key = schema.identifier_field_ids
    if not key or metadata.format_version < 2 or not upsert_enabled(metadata):
        return False
    if any(schema.parent_id(k) is not None or isinstance(schema.find_type(k), StructType) for k in key):
        return False
    if not stmt.clauses or any((c.match, c.action) not in _FEED_CLAUSES for c in stmt.clauses):
        return False
    if all(c.match is MergeMatch.NOT_MATCHED for c in stmt.clauses):
        return False  # insert-only: an append (:mod:`iceduck.ops.merge`)
    if any(c.condition is not None and not names_only(c.condition, source) for c in stmt.clauses):
        return False
    names = [schema.find_field(k).name for k in key]
    return on_keys(stmt.on, names, alias, source)


def _decision(clauses: tuple[MergeClause, ...], match: MergeMatch) -> str:
    """SQL of the action the first clause of kind ``match`` whose condition holds takes:
    ``'D'``, ``'U'``, ``'I'`` or NULL."""
    codes = {MergeAction.DELETE: "'D'", MergeAction.UPDATE_ALL: "'U'", MergeAction.INSERT_ALL: "'I'"}
    whens = [f"WHEN {c.condition or 'true'} THEN {codes[c.action]}" for c in clauses if c.match is match]
    return f"CASE {' '.join(whens)} END" if whens else "NULL"


def merge_by_key(
    ctx: OpContext, target: WriteTarget, stmt: Merge, alias: str, source: str
) -> OpResult | None:
    """Apply the feed MERGE ``stmt`` by key (see the module docstring); None when some
    source row needs the table read (the caller then runs it as any MERGE)."""
    metadata = target.table.metadata
    schema = metadata.schema()
    key = schema.identifier_field_ids
    if not key_deletes_possible(ctx, target, key):
        return None
    s = quote_identifier(source)
    columns = ", ".join(
        f"{s}.{quote_identifier(f.name)} AS {quote_identifier(f.name)}" for f in schema.fields
    )
    matched, not_matched = (
        _decision(stmt.clauses, MergeMatch.MATCHED),
        _decision(stmt.clauses, MergeMatch.NOT_MATCHED),
    )
    decided = (
        f"SELECT {columns}, {matched} AS {_MATCHED}, {not_matched} AS {_NOT_MATCHED} "
        f"FROM (SELECT * FROM {stmt.source}) AS {s}"
    )
    query = ctx.prepare_query(decided)
    acting = f"SELECT * FROM ({query}) WHERE {_MATCHED} IS NOT NULL OR {_NOT_MATCHED} IS NOT NULL"
    with temp_table(ctx.duck, ctx.unique_name("feed"), acting, params_for(query, ctx.params)) as feed:
        pair = f"coalesce({_MATCHED}, '-') || coalesce({_NOT_MATCHED}, '-')"  # never null
        if run_sql(ctx, f"SELECT count(*) FROM {feed} WHERE {pair} NOT IN ('UI', 'D-')")[0][0]:
            return None
        with temp_table(ctx.duck, ctx.unique_name("feed_last"), last_per_key_sql(schema, key, feed)) as last:
            return _write(ctx, target, last)


def _write(ctx: OpContext, target: WriteTarget, last: str) -> OpResult:
    """Equality deletes of every key of ``last``, and its upserting rows as data files."""
    metadata = target.table.metadata
    schema = metadata.schema()
    key = schema.identifier_field_ids
    ((upserts, deletes),) = run_sql(
        ctx, f"SELECT count(*) FILTER ({_MATCHED} = 'U'), count(*) FILTER ({_MATCHED} = 'D') FROM {last}"
    )
    if not upserts and not deletes:
        return OpResult(rowcount=0, message=f"merged 0 rows into {target.identifier}")
    names = ", ".join(column_ref(schema, f.field_id) for f in schema.fields)
    with WrittenFiles() as written:
        data = []
        if upserts:
            rows = f"SELECT {names} FROM {last} WHERE {_MATCHED} = 'U'"
            data = written.add(
                write_data_files(ctx.duck, rows, file_target(metadata), width=len(schema.fields))
            )
        specs = delete_specs(ctx, target, key, "MERGE by key")
        removed = written.add(write_key_deletes(ctx, target, specs, key, last))
        snapshot = branch_snapshot(target)
        changes = SnapshotChanges(
            operation=Operation.OVERWRITE if data else Operation.DELETE,
            added_data_files=tuple(data),
            added_delete_files=tuple(removed),
            validate_from_snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        )
        commit_changes(ctx, target, changes, written)
    done = f"upserted {row_count(int(upserts))} and deleted {int(deletes):,} key(s)"
    message = f"merged by key into {target.identifier}: {done}"
    return OpResult(rowcount=-1 if deletes else int(upserts), message=message)
