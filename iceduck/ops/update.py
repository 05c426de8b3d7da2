"""UPDATE table [AS alias] SET path = expr, ... [FROM relations] [WHERE condition].

DuckDB computes, for every row the condition matches, its address (``_file``, ``_pos``)
and its new values; they are kept in a temporary table so the addresses and the new rows
agree. ``write.update.mode`` then decides between rewriting the files holding those rows
(copy-on-write) and deleting the old rows by position while appending the new ones
(merge-on-read). In v3 an updated row keeps its ``_row_id`` and gets a null
``_last_updated_sequence_number``, which it then inherits from the new snapshot (spec,
"Row Lineage": "If the write has modified the row, the ``_last_updated_sequence_number``
field must be set to ``null``").

``UPDATE ... FROM`` (DuckDB and PostgreSQL) joins other relations; a target row joined to
several rows would get an arbitrary one of their values, so it is refused, like MERGE's
cardinality rule. ``rowcount`` is the number of rows updated.

``write.update.isolation-level`` (default ``serializable``): a data file appended
concurrently that may hold rows the WHERE matches fails the commit, as in Spark.
"""

from __future__ import annotations

from iceduck.engine.queries import temp_table
from iceduck.engine.types import quote_identifier, typed_null
from iceduck.errors import UnsupportedError, UserError
from iceduck.ops.assignments import assigned_values
from iceduck.ops.context import OpContext, OpResult, WriteTarget
from iceduck.ops.context import rows as row_count
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
from iceduck.ops.wap import write_target
from iceduck.scan.tasks import MATCH_ALL
from iceduck.spec import properties as props
from iceduck.spec.expressions.predicates import BooleanExpression
from iceduck.spec.types import LongType
from iceduck.sql.condition import Condition
from iceduck.sql.filters import row_filter
from iceduck.sql.qualifiers import requalify_update, table_qualifiers
from iceduck.sql.statements import Update

RID = "__iceduck_rid"


def target_parts(target: WriteTarget) -> tuple[str, ...]:
    """The target's namespace and name."""
    return (*target.identifier.namespace, target.identifier.name)


def implied_filter(
    ctx: OpContext, target: WriteTarget, condition: Condition | None, alias: str
) -> BooleanExpression:
    """The Iceberg filter the condition implies on the target (pruning only: the rows are
    always tested by DuckDB); everything when it names other relations it cannot read."""
    if condition is None or not ctx.pruning:
        return MATCH_ALL
    try:
        implied, _ = row_filter(condition, target.table.metadata.schema(), ctx.params, ctx.timezone, alias)
    except (UserError, UnsupportedError):  # pruning is optional: read everything instead
        return MATCH_ALL
    return implied


def new_row_columns(count: int) -> list[str]:
    """Positional names of the new values in the temporary tables (no clash with users')."""
    return [f"__iceduck_c{i}" for i in range(count)]


def rows_sql(table: str, count: int, lineage: bool, row_id: str | None, where: str = "") -> str:
    """The new rows from a temporary table: the table's columns in order, then (v3) the
    kept ``_row_id`` (``row_id`` SQL, None for new rows) and a null last-updated number."""
    items = new_row_columns(count)
    if lineage:
        null = typed_null(LongType())
        items += [f"{row_id or null} AS _row_id", f"{null} AS _lusn"]
    return f"SELECT {', '.join(items)} FROM {quote_identifier(table)}{where}"


def update(ctx: OpContext, stmt: Update) -> OpResult:
    target = write_target(ctx, stmt.name)
    metadata = target.table.metadata
    mode = row_level_mode(metadata, props.UPDATE_MODE)
    isolation = isolation_level(metadata, props.UPDATE_ISOLATION_LEVEL)
    alias = stmt.alias or target.identifier.name
    if stmt.alias is None:  # db.t.v, iceduck.db.t.v name the target's columns too
        names = table_qualifiers(ctx.catalog.name, target_parts(target), stmt.name)
        stmt = requalify_update(stmt, names, alias)
    lineage = has_lineage(metadata)
    plan = plan_target(ctx, target, implied_filter(ctx, target, stmt.where, alias))
    scan = register_target(ctx, plan, lineage)
    schema = metadata.schema()
    a = quote_identifier(alias)
    values = assigned_values(schema, stmt.assignments, a)
    items = [f"{a}.{FILE} AS {FILE}", f"{a}.{POS} AS {POS}"]
    items += [f"{a}.{ROW_ID} AS {RID}"] if lineage else []
    items += [f"{v} AS {n}" for v, n in zip(values, new_row_columns(len(values)), strict=True)]
    source = f"{scan.relation} AS {a}" + (f", {stmt.from_}" if stmt.from_ else "")
    where = f" WHERE ({stmt.where.text})" if stmt.where else ""
    name = ctx.unique_name("updated")
    query = ctx.prepare_query(f"SELECT {', '.join(items)} FROM {source}{where}")
    with temp_table(ctx.duck, name, query, params_for(query, ctx.params)) as table:
        ((count, distinct),) = run_sql(ctx, f"SELECT count(*), count(DISTINCT ({FILE}, {POS})) FROM {table}")
        if count != distinct:
            raise UserError(
                f"UPDATE of {target.identifier}: a target row matched more than one row of the FROM "
                "relations, so its new value is ambiguous"
            )
        changes = RowChanges(
            plan,
            addresses=f"(SELECT {FILE}, {POS} FROM {table})",
            new_rows=rows_sql(name, len(values), lineage, RID) if count else None,
        )
        conflicts = conflict_detection(
            f"UPDATE {target.identifier}", plan, isolation, props.UPDATE_ISOLATION_LEVEL
        )
        apply_row_changes(ctx, target, changes, mode, conflicts)
    return OpResult(rowcount=count, message=f"updated {row_count(count)} of {target.identifier}")
