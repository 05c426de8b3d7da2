"""The rows of a changelog, as Spark's ``create_changelog_view`` gives them.

Per snapshot (:mod:`iceduck.scan.changes` says which files), the candidate rows are the
inserted files' rows and the removed files' rows, plus, for a file whose deletes changed,
the rows live before and not after (found by ``_pos``). A row that is both deleted and
inserted by one snapshot -- a copy-on-write rewrite copies the rows it keeps -- is a
*carry-over*, not a change, and is removed, as Spark's ``RemoveCarryoverIterator`` does:
per snapshot, the multiset difference of the two sides (``EXCEPT ALL``; nulls equal, as
Java's ``Objects.equals``).

Then, as the procedure's arguments say (Iceberg's ``CreateChangelogViewProcedure``):

* ``compute_updates`` (default: when identifier columns are given): a deleted and an
  inserted row with the same identifier values in one snapshot become ``UPDATE_BEFORE`` and
  ``UPDATE_AFTER``; two deleted rows with one identifier are Spark's error "Cannot compute
  updates because there are multiple rows with the same identifier fields([...]). Please
  make sure the rows are unique.";
* ``net_changes``: across all the snapshots, a row deleted and inserted again (or the
  reverse) cancels out; what remains is the net change of each row (Spark's
  ``RemoveNetCarryoverIterator``), with the ordinal and snapshot of the latest change.

Columns: the table's (current schema), then ``_change_type``, ``_change_ordinal``,
``_commit_snapshot_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from iceduck.engine.deletes import PositionCache
from iceduck.engine.layout import LayoutCache
from iceduck.engine.object_stores import duck_paths
from iceduck.engine.queries import arrow_rows, create_temp_table, drop_temp_table
from iceduck.engine.read import attach_scan
from iceduck.engine.types import duckdb_type, quote_identifier, quote_string
from iceduck.errors import UserError
from iceduck.scan.changes import ChangedFiles
from iceduck.scan.tasks import DeleteFile, ScanPlan
from iceduck.spec.column_names import unique_names
from iceduck.spec.schema import FILE_PATH_ID, POS_ID, Schema

if TYPE_CHECKING:
    import pyarrow as pa

    from iceduck.engine.connection import Duck

CHANGE_TYPE = "_change_type"
CHANGE_ORDINAL = "_change_ordinal"
COMMIT_SNAPSHOT_ID = "_commit_snapshot_id"
_ORDER = (
    "CASE _change_type WHEN 'DELETE' THEN 0 WHEN 'UPDATE_BEFORE' THEN 1 WHEN 'UPDATE_AFTER' THEN 2 ELSE 3 END"
)


def changelog_rows(
    duck: Duck,
    schema: Schema,
    steps: Sequence[ChangedFiles],
    unique_name: Callable[[str], str],
    *,
    layouts: LayoutCache | None = None,
    positions: PositionCache | None = None,
    identifier_columns: Sequence[str] = (),
    compute_updates: bool = False,
    net_changes: bool = False,
) -> pa.Table:
    """The changelog of ``steps`` as an Arrow table (see the module docstring)."""
    names = [quote_identifier(n) for n in unique_names([f.name for f in schema.fields])]
    columns = ", ".join(names)
    parts = []

    def scan(plan: ScanPlan) -> str:
        ids = [f.field_id for f in schema.fields] + [FILE_PATH_ID, POS_ID]
        return (
            f"({attach_scan(duck, plan, unique_name('changes'), ids, layouts=layouts, positions=positions)})"
        )

    for step in steps:
        inserted, deleted = [], []
        if step.inserted.tasks:
            inserted.append(f"SELECT {columns} FROM {scan(step.inserted)}")
        if step.removed.tasks:
            deleted.append(f"SELECT {columns} FROM {scan(step.removed)}")
        if step.before.tasks:
            old, new = scan(step.before), scan(step.after)
            on = "o._file = n._file AND o._pos = n._pos"
            deleted.append(
                f"SELECT {', '.join('o.' + n for n in names)} FROM {old} o ANTI JOIN {new} n ON {on}"
            )
            inserted.append(
                f"SELECT {', '.join('n.' + n for n in names)} FROM {new} n ANTI JOIN {old} o ON {on}"
            )
        for plan, files in step.by_key:
            deleted.append(_matching_keys(duck, schema, names, scan(plan), files))
        if not inserted and not deleted:
            continue
        meta = f"{step.ordinal} AS {CHANGE_ORDINAL}, {step.snapshot.snapshot_id} AS {COMMIT_SNAPSHOT_ID}"
        ins = " UNION ALL ".join(inserted) or f"SELECT {columns} FROM {scan(step.inserted)} LIMIT 0"
        dels = " UNION ALL ".join(deleted) or f"SELECT {columns} FROM {scan(step.inserted)} LIMIT 0"
        if net_changes:  # Spark cancels rows across the whole range, carry-overs included
            parts.append(f"SELECT *, 'INSERT' AS {CHANGE_TYPE}, {meta} FROM ({ins})")
            parts.append(f"SELECT *, 'DELETE' AS {CHANGE_TYPE}, {meta} FROM ({dels})")
        else:
            parts.append(f"SELECT *, 'INSERT' AS {CHANGE_TYPE}, {meta} FROM (({ins}) EXCEPT ALL ({dels}))")
            parts.append(f"SELECT *, 'DELETE' AS {CHANGE_TYPE}, {meta} FROM (({dels}) EXCEPT ALL ({ins}))")
    if not parts:
        empty = f"SELECT {columns}, NULL::VARCHAR AS {CHANGE_TYPE}, NULL::INTEGER AS {CHANGE_ORDINAL}, "
        empty += f"NULL::BIGINT AS {COMMIT_SNAPSHOT_ID} FROM {scan(ScanPlan(schema, None, ()))} LIMIT 0"
        return arrow_rows(duck, empty)
    typed = f"SELECT {columns}, {CHANGE_TYPE}, {CHANGE_ORDINAL}::INTEGER AS {CHANGE_ORDINAL}, "
    typed += f"{COMMIT_SNAPSHOT_ID}::BIGINT AS {COMMIT_SNAPSHOT_ID} FROM ({' UNION ALL '.join(parts)})"
    table = unique_name("changelog")
    create_temp_table(duck, table, typed)
    try:
        relation = quote_identifier(table)
        if compute_updates:
            keys = [_column(names, c) for c in identifier_columns]
            if not keys:
                raise UserError("Cannot compute the update images because identifier columns are not set")
            query = _updates(relation, keys)
        elif net_changes:
            query = _net(relation, names)
        else:
            query = f"SELECT * FROM {relation}"
        order = f" ORDER BY {CHANGE_ORDINAL}, {_ORDER}, {columns}"
        return arrow_rows(duck, f"SELECT * FROM ({query}){order}")
    finally:
        drop_temp_table(duck, table)


def _matching_keys(
    duck: Duck, schema: Schema, names: Sequence[str], before: str, files: Sequence[DeleteFile]
) -> str:
    """The rows of ``before`` whose equality fields equal a row of the equality delete
    ``files`` ("A data row is deleted if its values are equal to all delete columns for
    any row in an equality delete file"; nulls equal nulls), the files read by field id."""
    ids = files[0].equality_ids
    fields = {f.field_id: (f, name) for f, name in zip(schema.fields, names, strict=True)}
    entries = ", ".join(
        f"{fid}: {{name: '__k{fid}', type: {quote_string(duckdb_type(fields[fid][0].field_type))}, "
        "default_value: CAST(NULL AS VARCHAR)}"
        for fid in ids
    )
    paths = ", ".join(quote_string(p) for p in duck_paths(duck, [d.path for d in files]))
    columns = ", ".join(f"__k{fid}" for fid in ids)
    keys = f"SELECT DISTINCT {columns} FROM read_parquet([{paths}], schema = MAP {{{entries}}})"
    on = " AND ".join(f"b.{fields[fid][1]} IS NOT DISTINCT FROM k.__k{fid}" for fid in ids)
    return f"SELECT {', '.join('b.' + n for n in names)} FROM {before} b SEMI JOIN ({keys}) k ON {on}"


def _column(names: Sequence[str], name: str) -> str:
    """A changelog column by its name (without case, as Spark resolves it)."""
    wanted = name.strip("`").lower()
    for quoted in names:
        if quoted.strip('"').replace('""', '"').lower() == wanted:
            return quoted
    raise UserError(f"identifier column {name!r} is not a column of the table")


def _updates(relation: str, keys: Sequence[str]) -> str:
    """Deleted/inserted pairs with one identifier in one snapshot as update images."""
    group = ", ".join([*keys, CHANGE_ORDINAL])
    counted = (
        f"SELECT *, count(*) FILTER ({CHANGE_TYPE} = 'DELETE') OVER (PARTITION BY {group}) AS __d, "
        f"count(*) FILTER ({CHANGE_TYPE} = 'INSERT') OVER (PARTITION BY {group}) AS __i, "
        f"row_number() OVER (PARTITION BY {group}, {CHANGE_TYPE}) AS __n FROM {relation}"
    )
    fields = quote_string(",".join(k.strip('"') for k in keys))
    kind = (
        f"CASE WHEN __d > 1 THEN error('Cannot compute updates because there are multiple rows with the same "
        f"identifier fields([' || {fields} || ']). Please make sure the rows are unique.') "
        f"WHEN __d = 1 AND __i >= 1 AND {CHANGE_TYPE} = 'DELETE' THEN 'UPDATE_BEFORE' "
        f"WHEN __d = 1 AND {CHANGE_TYPE} = 'INSERT' AND __n = 1 THEN 'UPDATE_AFTER' "
        f"ELSE {CHANGE_TYPE} END"
    )
    return f"SELECT * EXCLUDE (__d, __i, __n) REPLACE ({kind} AS {CHANGE_TYPE}) FROM ({counted})"


def _net(relation: str, names: Sequence[str]) -> str:
    """Spark's ``RemoveNetCarryoverIterator`` over each row's changes (all data columns
    equal), in order of ordinal then type (DELETE first): a run starts at a change and ends
    when as many opposite changes have followed; the last run left open emits its first
    change as many times as it is open. With INSERT +1 and DELETE -1, runs end where the
    running sum returns to 0: the row after the last such point, ``|sum|`` times."""
    group = ", ".join(names)
    order = f"{CHANGE_ORDINAL}, {CHANGE_TYPE}"
    sign = f"CASE WHEN {CHANGE_TYPE} = 'INSERT' THEN 1 ELSE -1 END"
    within = f"PARTITION BY {group}"
    steps = (
        f"SELECT *, sum({sign}) OVER ({within} ORDER BY {order} ROWS UNBOUNDED PRECEDING) AS __c, "
        f"row_number() OVER ({within} ORDER BY {order}) AS __k FROM {relation}"
    )
    bounds = (
        f"SELECT *, sum({sign}) OVER ({within})::BIGINT AS __net, "
        f"coalesce(max(CASE WHEN __c = 0 THEN __k END) OVER ({within}), 0) AS __zero FROM ({steps})"
    )
    picked = f"SELECT * FROM ({bounds}) WHERE __net <> 0 AND __k = __zero + 1"
    dropped = "__c, __k, __net, __zero, __copy"
    return f"SELECT * EXCLUDE ({dropped}) FROM ({picked}), range(abs(__net)) AS __r(__copy)"
