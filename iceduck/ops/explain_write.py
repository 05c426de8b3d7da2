"""``EXPLAIN`` of a write statement: which write it would do, decided as the statement
decides it, without reading rows or writing anything.

An INSERT appends, upserts (:mod:`iceduck.ops.upsert`), or overwrites; a DELETE, UPDATE or
MERGE rewrites the files holding the rows it changes (copy-on-write) or writes deletes
for them (merge-on-read: deletion vectors in v3, position delete files in v2), by the
table's ``write.<kind>.mode``; the line says which, with the isolation level checked on
commit.
"""

from __future__ import annotations

from iceduck.ops.context import OpContext, WriteTarget
from iceduck.ops.key_delete import key_delete_query
from iceduck.ops.merge import requalified, source_alias
from iceduck.ops.merge_upsert import is_feed_merge
from iceduck.ops.snapshot_commit import isolation_level, row_level_mode
from iceduck.ops.upsert import upsert_description, upsert_enabled
from iceduck.ops.wap import write_target
from iceduck.spec import properties as props
from iceduck.sql.statements import Delete, Insert, Merge, MergeAction, MergeMatch, Update

_PROPERTIES = {
    Delete: (props.DELETE_MODE, props.DELETE_ISOLATION_LEVEL, "DELETE"),
    Update: (props.UPDATE_MODE, props.UPDATE_ISOLATION_LEVEL, "UPDATE"),
    Merge: (props.MERGE_MODE, props.MERGE_ISOLATION_LEVEL, "MERGE"),
}


def explain_write(ctx: OpContext, statement: Insert | Delete | Update | Merge) -> list[str]:
    """The EXPLAIN lines of ``statement``: the table written and the write it would do."""
    target = write_target(ctx, statement.name)
    lines = [f"Iceberg write to {target.identifier} (branch {target.branch})"]
    if isinstance(statement, Insert):
        lines.append(f"  write: {_insert(target, statement)}")
    else:
        lines.extend(f"  {line}" for line in _row_level(ctx, target, statement))
    return lines


def _insert(target: WriteTarget, stmt: Insert) -> str:
    metadata = target.table.metadata
    if stmt.overwrite and stmt.static_partition:
        return (
            "static overwrite: the rows of the PARTITION values are deleted (copy-on-write) and "
            "the new rows added, in one overwrite snapshot"
        )
    if stmt.overwrite:
        return (
            "dynamic overwrite: the partitions the new rows fall in are replaced, in one overwrite snapshot"
        )
    if stmt.replace:
        return upsert_description(target, "INSERT OR REPLACE")
    if upsert_enabled(metadata):
        how = f"INSERT with {props.UPSERT_ENABLED}=true"
        return f"{upsert_description(target, how)} ({props.UPSERT_ENABLED}=true)"
    return "append: the new rows as data files, in one append snapshot; the table is not read"


def _row_level(ctx: OpContext, target: WriteTarget, stmt: Delete | Update | Merge) -> list[str]:
    metadata = target.table.metadata
    mode_property, isolation_property, kind = _PROPERTIES[type(stmt)]
    if isinstance(stmt, Merge) and all(c.match is MergeMatch.NOT_MATCHED for c in stmt.clauses):
        return ["write: insert-only MERGE: the new rows are appended; no target row changes"]
    if isinstance(stmt, Merge):
        source, alias = source_alias(stmt), stmt.alias or target.identifier.name
        if is_feed_merge(target, requalified(stmt, ctx.catalog.name, target), alias, source):
            return [
                "write: by key: equality deletes of the keys of the source rows that act, plus the "
                "rows that upsert, in one snapshot; the table is not read "
                f"({props.UPSERT_ENABLED}=true; a source row whose clauses need the table makes "
                "the MERGE read it instead)"
            ]
    if isinstance(stmt, Delete) and key_delete_query(ctx, target, stmt, stmt.alias or target.identifier.name):
        key = ", ".join(
            metadata.schema().column_name(k) or str(k) for k in metadata.schema().identifier_field_ids
        )
        return [
            f"write: delete by key ({key}): equality deletes of the keys the condition names, one "
            f"file per partition, in one delete snapshot; the table is not read ({props.UPSERT_ENABLED}=true)"
        ]
    mode = row_level_mode(metadata, mode_property)
    if mode == props.COPY_ON_WRITE:
        how = "copy-on-write: the data files holding changed rows are rewritten without them"
    elif metadata.format_version >= 3:
        how = "merge-on-read: changed rows are deleted by deletion vectors (one per data file)"
    else:
        how = "merge-on-read: changed rows are deleted by position delete files (one per partition)"
    adds = isinstance(stmt, Update) or (
        isinstance(stmt, Merge) and any(c.action is not MergeAction.DELETE for c in stmt.clauses)
    )
    lines = [
        f"write: {how}" + ("; new and updated rows are added as data files" if adds else ""),
        f"mode: {mode_property}={mode}",
        f"isolation: {isolation_property}={isolation_level(metadata, isolation_property)}",
        f"reads: the rows of {target.identifier} the {kind} matches (data files pruned by the "
        "condition's columns and partitions)",
    ]
    return lines
