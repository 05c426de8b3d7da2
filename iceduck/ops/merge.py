"""MERGE INTO target [AS t] USING source [AS s] ON condition WHEN ... THEN ...

One DuckDB query joins the target (with its row addresses) to the source -- a full outer
join, so target rows without a source row (``WHEN NOT MATCHED BY SOURCE``) and source rows
without a target row (``WHEN NOT MATCHED``) are both seen -- and picks for each joined row
the first clause of its kind whose condition holds (Spark: "the first matching clause
wins"; a row no clause takes is left alone). The chosen clause decides the row's fate:
UPDATE and DELETE remove the target row (its address), UPDATE and INSERT add a row.
Updated rows keep their ``_row_id`` in v3 (spec, "Row Lineage"); inserted ones get new ids.

Spark's cardinality rule: when the statement has a WHEN MATCHED clause, a target row
matched by more than one source row is an error ("MERGE ... multiple source rows
matched"), since it would be updated or deleted more than once. ``write.merge.mode``
chooses copy-on-write or merge-on-read; ``rowcount`` is the rows updated, deleted and
inserted.

``write.merge.isolation-level`` (default ``serializable``): a data file appended
concurrently that may hold target rows the ON condition matches (every file, with a
``WHEN NOT MATCHED BY SOURCE`` clause) fails the commit. A MERGE with only ``WHEN NOT
MATCHED`` clauses changes no target row; Spark runs it as a plain append, and so is it
committed here: without that check.

On a table with identifier fields and ``write.upsert.enabled=true``, a change feed's MERGE
(ON the key, DELETE / UPDATE SET * / INSERT * decided by source columns) is written by key
without reading the table (:mod:`iceduck.ops.merge_upsert`).

Without aliases, the clauses may name the target's and the source's columns by their
full names (``db.t.k``, ``iceduck.db.t.k``), as Spark and DuckDB allow; they are
rewritten to the names the joined relations carry (:mod:`iceduck.sql.qualifiers`).
"""

from __future__ import annotations

import re

from iceduck.engine.errors import is_conversion_error
from iceduck.engine.queries import create_temp_table, drop_temp_table
from iceduck.engine.types import cast_sql, quote_identifier, try_cast_sql
from iceduck.errors import UserError, ValidationError
from iceduck.ops.assignments import assigned_values, find_column, insert_values
from iceduck.ops.context import OpContext, OpResult, WriteTarget
from iceduck.ops.context import rows as row_count
from iceduck.ops.merge_upsert import is_feed_merge, merge_by_key
from iceduck.ops.row_changes import RowChanges, apply_row_changes, conflict_detection
from iceduck.ops.rows import (
    FILE,
    POS,
    ROW_ID,
    has_lineage,
    params_for,
    plan_target,
    register_target,
    run_sql,
)
from iceduck.ops.snapshot_commit import isolation_level, row_level_mode
from iceduck.ops.update import RID, implied_filter, new_row_columns, rows_sql, target_parts
from iceduck.ops.wap import write_target
from iceduck.scan.tasks import MATCH_ALL, ScanPlan
from iceduck.spec import properties as props
from iceduck.spec.column_names import unique_names
from iceduck.spec.expressions.predicates import BooleanExpression
from iceduck.spec.schema import Schema
from iceduck.sql.qualifiers import qualifiers, requalify_merge, table_qualifiers
from iceduck.sql.statements import Merge, MergeAction, MergeClause, MergeMatch, Name

CLAUSE = "__iceduck_clause"
MATCHED = "__iceduck_matched"
SOURCE_PRESENT = "__iceduck_source"
_UPDATES = (MergeAction.UPDATE, MergeAction.UPDATE_ALL)
_INSERTS = (MergeAction.INSERT, MergeAction.INSERT_ALL)
_SIMPLE_NAME = re.compile(r'^\s*(?:"[^"]+"|\w+)(?:\s*\.\s*(?:"[^"]+"|\w+))*\s*$')
_NAME_PART = re.compile(r'"([^"]+)"|(\w+)')


def source_alias(stmt: Merge) -> str:
    """The name the clauses use for the source: its alias, or a table's last name part."""
    if stmt.source_alias:
        return stmt.source_alias
    if _SIMPLE_NAME.match(stmt.source):
        return stmt.source.strip().split(".")[-1].strip().strip('"')
    return "source"


def _source_name(stmt: Merge) -> Name:
    """The parts of a source given as a plain table name (``db.src``), else ()."""
    if stmt.source_alias or not _SIMPLE_NAME.match(stmt.source):
        return ()
    return tuple(quoted or bare for quoted, bare in _NAME_PART.findall(stmt.source))


def requalified(stmt: Merge, catalog: str, target: WriteTarget) -> Merge:
    """``stmt`` with columns qualified by the target's or the source's full name
    (``db.t.k``, ``iceduck.db.t.k``) qualified by the names the joined relations carry,
    as Spark and DuckDB accept them (:mod:`iceduck.sql.qualifiers`). An alias hides the
    full name, so a target or source with an alias gets no rewrite."""
    target_names = () if stmt.alias else table_qualifiers(catalog, target_parts(target), stmt.name)
    source = _source_name(stmt)
    source_names = qualifiers(source, (catalog, *source)) if source else ()
    alias = stmt.alias or target.identifier.name
    return requalify_merge(stmt, target_names, alias, source_names, source_alias(stmt))


def clause_choice(clauses: tuple[MergeClause, ...], t: str, s: str) -> str:
    """SQL numbering the clause each joined row takes (null: none), first match winning."""

    def first(kind: MergeMatch) -> str:
        whens = [f"WHEN {c.condition or 'true'} THEN {i}" for i, c in enumerate(clauses) if c.match is kind]
        return f"CASE {' '.join(whens)} END" if whens else "NULL"

    present = f"{t}.{FILE} IS NOT NULL"
    return (
        f"CASE WHEN {present} AND {s}.{SOURCE_PRESENT} THEN {first(MergeMatch.MATCHED)} "
        f"WHEN {s}.{SOURCE_PRESENT} THEN {first(MergeMatch.NOT_MATCHED)} "
        f"ELSE {first(MergeMatch.NOT_MATCHED_BY_SOURCE)} END"
    )


def clause_values(schema: Schema, clause: MergeClause, t: str, s: str) -> list[str] | None:
    """The row a clause writes (None for DELETE): each top-level column's SQL."""
    if clause.action is MergeAction.DELETE:
        return None
    if clause.action is MergeAction.UPDATE:
        return assigned_values(schema, clause.assignments, t)
    if clause.action is MergeAction.UPDATE_ALL or clause.action is MergeAction.INSERT_ALL:
        return [f"{s}.{quote_identifier(name)}" for name in unique_names([f.name for f in schema.fields])]
    return insert_values(schema, clause.insert_columns, clause.insert_values)


def _name_bad_column(
    ctx: OpContext,
    target: WriteTarget,
    schema: Schema,
    per_clause: list[list[str] | None],
    relation: str,
    choice: str,
    error: Exception,
) -> None:
    """After a failed cast, find the column whose value did not convert and raise an error
    naming it (DuckDB's message names only the value). Returns when none is found."""
    probes = []
    for n, f in enumerate(schema.fields):
        for i, values in enumerate(per_clause):
            if values is not None:
                value = values[n]
                test = f"({value}) IS NOT NULL AND {try_cast_sql(value, f.field_type)} IS NULL"
                probes.append((f, f"CASE WHEN {CLAUSE} = {i} THEN {test} ELSE false END"))
    if not probes:
        return
    tests = ", ".join(f"{p} AS __p{k}" for k, (_, p) in enumerate(probes))
    inner = f"SELECT {choice} AS {CLAUSE}, {tests} FROM {relation}"
    found = ", ".join(f"bool_or(__p{k})" for k in range(len(probes)))
    sql = ctx.prepare_query(f"SELECT {found} FROM ({inner}) AS __probe")
    try:
        (flags,) = run_sql(ctx, sql)
    except Exception:  # the probe is a courtesy: the original error stands
        return
    for (f, _), bad in zip(probes, flags, strict=True):
        if bad:
            first = str(error).split("\n", 1)[0]
            raise ValidationError(
                f"MERGE INTO {target.identifier}: a value for column {f.name} ({f.field_type}) "
                f"does not convert: {first}"
            ) from error


def _target_filter(ctx: OpContext, target: WriteTarget, stmt: Merge, alias: str) -> BooleanExpression:
    """What the ON condition implies about the target rows worth reading: a target row
    failing it matches no source row, so without ``WHEN NOT MATCHED BY SOURCE`` it plays
    no part and its files need not be read."""
    if any(c.match is MergeMatch.NOT_MATCHED_BY_SOURCE for c in stmt.clauses):
        return MATCH_ALL
    return implied_filter(ctx, target, stmt.on, alias)


def _check_clauses(clauses: tuple[MergeClause, ...]) -> None:
    for c in clauses:
        inserting = c.action in _INSERTS
        if inserting != (c.match is MergeMatch.NOT_MATCHED):
            raise UserError(f"MERGE: WHEN {c.match.value.upper()} cannot {c.action.value.upper()}")
    if not clauses:
        raise UserError("MERGE needs at least one WHEN clause")


def merge(ctx: OpContext, stmt: Merge) -> OpResult:
    target = write_target(ctx, stmt.name)
    metadata = target.table.metadata
    mode = row_level_mode(metadata, props.MERGE_MODE)
    _check_clauses(stmt.clauses)
    schema = metadata.schema()
    lineage = has_lineage(metadata)
    alias = stmt.alias or target.identifier.name
    stmt = requalified(stmt, ctx.catalog.name, target)
    if is_feed_merge(target, stmt, alias, source_alias(stmt)):  # an upsert table's change feed
        by_key = merge_by_key(ctx, target, stmt, alias, source_alias(stmt))
        if by_key is not None:
            return by_key
    plan = plan_target(ctx, target, _target_filter(ctx, target, stmt, alias))
    scan = register_target(ctx, plan, lineage)
    t = quote_identifier(alias)
    s = quote_identifier(source_alias(stmt))
    for c in stmt.clauses:
        for name in c.insert_columns:
            find_column(schema, name)
    choice = clause_choice(stmt.clauses, t, s)
    columns = new_row_columns(len(schema.fields))
    per_clause = [clause_values(schema, c, t, s) for c in stmt.clauses]
    items = [f"{t}.{FILE} AS {FILE}", f"{t}.{POS} AS {POS}", f"{choice} AS {CLAUSE}"]
    items.append(f"{t}.{FILE} IS NOT NULL AND {s}.{SOURCE_PRESENT} IS NOT NULL AS {MATCHED}")
    items += [f"{t}.{ROW_ID} AS {RID}"] if lineage else []
    for n, (f, name) in enumerate(zip(schema.fields, columns, strict=True)):
        whens = [
            f"WHEN {i} THEN {cast_sql(values[n], f.field_type)}"
            for i, values in enumerate(per_clause)
            if values is not None
        ]
        items.append(f"CASE {CLAUSE} {' '.join(whens)} END AS {name}" if whens else f"NULL AS {name}")
    source = f"(SELECT *, true AS {SOURCE_PRESENT} FROM {stmt.source})"
    relation = f"{scan.relation} AS {t} FULL OUTER JOIN {source} AS {s} ON {stmt.on.text}"
    joined = f"SELECT {', '.join(items)} FROM {relation}"
    table = ctx.unique_name("merged")
    query = ctx.prepare_query(joined)
    kept = f"SELECT * FROM ({query}) WHERE {CLAUSE} IS NOT NULL OR {MATCHED}"
    try:
        create_temp_table(ctx.duck, table, kept, params_for(query, ctx.params))
    except Exception as e:
        if is_conversion_error(e):
            _name_bad_column(ctx, target, schema, per_clause, relation, choice, e)
        raise
    try:
        count = _apply(ctx, target, stmt, plan, table, mode, lineage, len(columns))
    finally:
        drop_temp_table(ctx.duck, table)
    return OpResult(rowcount=count, message=f"merged {row_count(count)} into {target.identifier}")


def _apply(
    ctx: OpContext,
    target: WriteTarget,
    stmt: Merge,
    plan: ScanPlan,
    table: str,
    mode: str,
    lineage: bool,
    width: int,
) -> int:
    """Check cardinality, then write what the chosen clauses ask for; the rows merged."""
    q = quote_identifier(table)
    if any(c.match is MergeMatch.MATCHED for c in stmt.clauses):
        duplicates = run_sql(
            ctx, f"SELECT {FILE}, {POS} FROM {q} WHERE {MATCHED} GROUP BY ALL HAVING count(*) > 1 LIMIT 1"
        )
        if duplicates:
            duplicate = duplicates[0]
            raise UserError(
                f"MERGE INTO {target.identifier}: multiple source rows matched the same target row "
                f"(data file {duplicate[0]}, position {duplicate[1]}); a target row may be updated or "
                "deleted by one source row only"
            )
    removing = [i for i, c in enumerate(stmt.clauses) if c.match is not MergeMatch.NOT_MATCHED]
    writing = [i for i, c in enumerate(stmt.clauses) if c.action is not MergeAction.DELETE]
    updating = [i for i, c in enumerate(stmt.clauses) if c.action in _UPDATES]
    count = run_sql(ctx, f"SELECT count(*) FROM {q} WHERE {CLAUSE} IS NOT NULL")[0][0]
    if not count:
        return 0
    row_id = f"CASE WHEN {CLAUSE} IN ({_ids(updating)}) THEN {RID} END" if lineage else None
    changes = RowChanges(
        plan,
        addresses=f"(SELECT {FILE}, {POS} FROM {q} WHERE {CLAUSE} IN ({_ids(removing)}))",
        new_rows=rows_sql(table, width, lineage, row_id, f" WHERE {CLAUSE} IN ({_ids(writing)})"),
    )
    conflicts = None
    if removing:  # not an insert-only MERGE
        isolation = isolation_level(target.table.metadata, props.MERGE_ISOLATION_LEVEL)
        conflicts = conflict_detection(
            f"MERGE INTO {target.identifier}", plan, isolation, props.MERGE_ISOLATION_LEVEL
        )
    apply_row_changes(ctx, target, changes, mode, conflicts)
    return int(count)


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids)) if ids else "NULL"
