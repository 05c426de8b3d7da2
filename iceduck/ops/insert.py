"""INSERT INTO / INSERT OVERWRITE, and writing a query's rows for CREATE TABLE AS.

The query (VALUES, SELECT, anything DuckDB runs; Iceberg tables in it are resolved by the
session's ``prepare_query``) yields rows whose columns are matched to the table's:

* by position (no column list): as many columns as the table has, less those a static
  ``PARTITION (c = v)`` clause fixes -- otherwise an error saying how many are expected;
* by a column list ``INSERT INTO t (b, a)``: the listed columns in that order; the rest
  get their write default ("The ``write-default`` is used to populate the field's value
  for any records written after the field was added to the schema, if the writer does not
  supply the field's value") or null;
* by name (DuckDB's ``INSERT INTO t BY NAME``): query column names, without case.

The file writer casts each value to the column type and refuses a value that does not
convert or a null in a required column, naming the column (nothing is committed then).

``INSERT OVERWRITE`` without PARTITION is *dynamic*, as Spark's
``spark.sql.sources.partitionOverwriteMode=dynamic`` and Iceberg Java's
``ReplacePartitions``: the partitions (of the current spec) the new rows fall in are
replaced; in an unpartitioned table every row is. (Spark's own default mode is *static*,
which without PARTITION replaces the whole table; Iceberg's documentation recommends
dynamic for Iceberg tables, and a user wanting all rows replaced says so with DELETE.)

With ``PARTITION (c = v, ...)`` it is *static*: every row with ``c = v`` is replaced --
files entirely inside the partition are dropped, files only partly inside (possible after
partition evolution) are rewritten without those rows -- and the static values fill ``c``
in the new rows.

Concurrency. Both overwrites remove the files they read, not whatever the partitions hold
when the commit lands (Java's ``ReplacePartitions`` and ``overwriteByRowFilter`` do the
latter). Rows another writer appended meanwhile to a replaced partition would then
survive the overwrite -- a result neither serial order gives. So both always check at
``serializable`` isolation, as Spark does when asked with the ``isolation-level`` write
option (``validateNoConflictingData``): a data file added since the read in a replaced
partition (dynamic: Java's partition set; static: files whose partition or metrics may
match the PARTITION values) fails the commit. Java has no table property for overwrites;
nor has iceduck. An INSERT OVERWRITE that adds nothing and replaces nothing commits
nothing, as Spark skips an empty dynamic overwrite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iceduck.engine.queries import describe, registered, temp_table
from iceduck.engine.types import cast_sql, quote_identifier, typed_null
from iceduck.engine.write import write_data_files
from iceduck.errors import UserError
from iceduck.ops.assignments import find_column, write_default
from iceduck.ops.context import OpContext, OpResult, WriteTarget
from iceduck.ops.context import rows as row_count
from iceduck.ops.row_changes import RowChanges, apply_row_changes, conflict_detection, removed_delete_keys
from iceduck.ops.rows import (
    find_matches,
    has_lineage,
    params_for,
    plan_target,
    run_sql,
)
from iceduck.ops.snapshot_commit import WrittenFiles, commit_changes, file_target
from iceduck.ops.upsert import upsert, upsert_enabled
from iceduck.ops.wap import write_target
from iceduck.scan.tasks import FileScanTask
from iceduck.spec import properties as props
from iceduck.spec.manifest import DataFile
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Operation
from iceduck.spec.types import LongType
from iceduck.sql.condition import Condition
from iceduck.sql.statements import Insert
from iceduck.txn.snapshot import SnapshotChanges
from iceduck.txn.validation import SERIALIZABLE, ConflictDetection

#: names of the query's columns inside the INSERT's SELECT (positional, never clashing)
_Q = "__iceduck_q"


def _query_columns(ctx: OpContext, query: str) -> list[str]:
    """The names of the columns ``query`` yields (DuckDB binds it without running it)."""
    return [name for name, _ in describe(ctx.duck, query, params_for(query, ctx.params))]


def _positional(names: Sequence[str]) -> list[str]:
    return [f"{_Q}.__c{i}" for i in range(len(names))]


def select_for_table(
    schema: Schema,
    query: str,
    query_names: Sequence[str],
    *,
    columns: Sequence[str] | None = None,
    by_name: bool = False,
    static: dict[str, str] | None = None,
    table: str = "the table",
) -> str:
    """A SELECT yielding the table's columns in order from the query's rows."""
    static_values = {find_column(schema, c).name: v for c, v in (static or {}).items()}
    sources = _positional(query_names)
    given: dict[str, str] = {}
    if by_name:
        for name, source in zip(query_names, sources, strict=True):
            f = find_column(schema, name)
            if f.name in given:
                raise UserError(f"INSERT INTO {table} BY NAME: the query has column {f.name!r} twice")
            given[f.name] = source
    else:
        if columns is not None:
            targets = [find_column(schema, c).name for c in columns]
            if len(set(targets)) != len(targets):
                raise UserError(f"INSERT INTO {table}: a column is listed more than once")
        else:
            targets = [f.name for f in schema.fields if f.name not in static_values]
        if len(targets) != len(query_names):
            listed = "listed" if columns is not None else "to fill"
            raise UserError(
                f"INSERT INTO {table}: {len(targets)} columns {listed} "
                f"({', '.join(targets)}) but the query gives {len(query_names)} values"
            )
        given = dict(zip(targets, sources, strict=True))
    clash = set(given) & set(static_values)
    if clash:
        raise UserError(
            f"INSERT INTO {table}: column {sorted(clash)[0]!r} is both in PARTITION and the query"
        )
    items = []
    for f in schema.fields:
        if f.name in static_values:
            value = cast_sql(static_values[f.name], f.field_type)
        else:
            value = given.get(f.name) or write_default(f)
        items.append(f"{value} AS {quote_identifier(f.name)}")
    aliases = ", ".join(f"__c{i}" for i in range(len(query_names)))
    relation = f"({query}) AS {_Q}({aliases})" if query_names else f"({query}) AS {_Q}"
    return f"SELECT {', '.join(items)} FROM {relation}"


def insert(ctx: OpContext, stmt: Insert) -> OpResult:
    target = write_target(ctx, stmt.name)
    metadata = target.table.metadata
    schema = metadata.schema()
    query = ctx.prepare_query(stmt.query)
    select = select_for_table(
        schema,
        query,
        _query_columns(ctx, query),
        columns=stmt.columns,
        by_name=stmt.by_name,
        static=stmt.static_partition,
        table=str(target.identifier),
    )
    if stmt.overwrite and stmt.static_partition:
        return _static_overwrite(ctx, target, stmt, select)
    if stmt.replace or (not stmt.overwrite and upsert_enabled(metadata)):
        how = "INSERT OR REPLACE" if stmt.replace else f"INSERT with {props.UPSERT_ENABLED}=true"
        return upsert(ctx, target, select, how)
    with WrittenFiles() as written:
        files = written.add(
            write_data_files(
                ctx.duck,
                select,
                file_target(metadata),
                params=params_for(select, ctx.params),
                width=len(schema.fields),  # select_for_table: one item per column
            )
        )
        count = sum(f.record_count for f in files)
        if stmt.overwrite:
            changes = _dynamic_overwrite(ctx, target, files)
        else:
            changes = SnapshotChanges(operation=Operation.APPEND, added_data_files=tuple(files))
        if changes is not None:
            commit_changes(ctx, target, changes, written)
    return OpResult(rowcount=count, message=f"inserted {row_count(count)} into {target.identifier}")


def _dynamic_overwrite(ctx: OpContext, target: WriteTarget, files: list[DataFile]) -> SnapshotChanges | None:
    """Replace the partitions of the current spec that ``files`` fall in (all rows when
    the spec is unpartitioned: Java's ``BaseReplacePartitions`` deletes everything then)."""
    metadata = target.table.metadata
    spec = metadata.spec()
    if not files and spec.fields:
        return None
    plan = plan_target(ctx, target)
    if spec.fields:
        keys = {(f.spec_id, _hashable(f.partition)) for f in files}
        replaced = [t for t in plan.tasks if (t.spec_id, _hashable(t.partition)) in keys]
    else:
        keys = set()
        replaced = list(plan.tasks)
    if not files and not replaced:
        return None
    return SnapshotChanges(
        operation=Operation.OVERWRITE,  # Java's BaseReplacePartitions, whatever it replaces
        added_data_files=tuple(files),
        removed_data_files=tuple(t.path for t in replaced),
        removed_delete_files=tuple(_partition_deletes(replaced, keys, bool(spec.fields))),
        validate_from_snapshot_id=plan.snapshot_id,
        validate_no_new_deletes_for=tuple(t.path for t in replaced),
        conflict_detection=ConflictDetection(
            f"INSERT OVERWRITE {target.identifier}",
            SERIALIZABLE,
            partitions=_replaced_partitions(files) if spec.fields else None,
        ),
    )


def _replaced_partitions(files: Sequence[DataFile]) -> tuple[tuple[int, tuple[Any, ...]], ...]:
    """The (spec id, partition) pairs the new files fall in, once each."""
    found = {(f.spec_id, _hashable(f.partition)): (f.spec_id, f.partition) for f in files}
    return tuple(found.values())


def _partition_deletes(tasks: Sequence[FileScanTask], keys: set[Any], partitioned: bool) -> list[Any]:
    """Delete files of the replaced data: DVs and file-scoped position deletes of the
    files, and (as ``ReplacePartitions`` drops whole partitions) the position and equality
    delete files of the replaced partitions -- all of them when nothing is partitioned."""
    found: list[Any] = list(removed_delete_keys(tasks))
    for t in tasks:
        for d in (*t.position_deletes, *t.equality_deletes):
            if not partitioned or (d.spec_id, _hashable(d.partition)) in keys:
                found.append(d.path)
    return list(dict.fromkeys(found))


def _hashable(partition: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(v if not isinstance(v, list | dict | bytearray) else repr(v) for v in partition)


def _static_overwrite(ctx: OpContext, target: WriteTarget, stmt: Insert, select: str) -> OpResult:
    """Delete the static partition's rows (copy-on-write: whole files dropped, straddling
    files rewritten) and add the new rows, in one overwrite snapshot."""
    assert stmt.static_partition is not None
    schema = target.table.metadata.schema()
    alias = target.identifier.name
    condition = " AND ".join(
        f"{quote_identifier(alias)}.{quote_identifier(find_column(schema, c).name)} = ({v})"
        for c, v in stmt.static_partition.items()
    )
    with temp_table(ctx.duck, ctx.unique_name("overwrite"), select, params_for(select, ctx.params)) as table:
        count = run_sql(ctx, f"SELECT count(*) FROM {table}")[0][0]
        matches = find_matches(ctx, target, Condition(condition), alias)
        with registered(ctx.duck, ctx.unique_name("replaced"), matches.addresses) as addresses:
            changes = RowChanges(
                matches.plan,
                matches.whole,
                addresses,
                new_rows=_with_lineage(f"SELECT * FROM {table}", target) if count else None,
            )
            operation = f"INSERT OVERWRITE {target.identifier}"
            conflicts = conflict_detection(operation, matches.plan, SERIALIZABLE)
            apply_row_changes(ctx, target, changes, props.COPY_ON_WRITE, conflicts)
    return OpResult(rowcount=count, message=f"inserted {row_count(count)} into {target.identifier}")


def _with_lineage(rows: str, target: WriteTarget) -> str:
    """New rows as a rewrite writes them: in v3 with null ``_row_id`` and
    ``_last_updated_sequence_number`` (new rows inherit both)."""
    if not has_lineage(target.table.metadata):
        return rows
    null = typed_null(LongType())
    return f"SELECT *, {null}, {null} FROM ({rows})"
