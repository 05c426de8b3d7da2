"""The ``where`` argument of the rewrite procedures: a Spark SQL condition on the table's
columns (``'id > 10 and name = "x"'``), read as the Iceberg filter its rows imply.

The condition is first bound by DuckDB over the table's columns (no file is read), so an
unknown column or a type error is reported rather than read as "every file may match";
the Iceberg filter is what the planner prunes partitions (and data files) with.
"""

from __future__ import annotations

from iceduck.engine.errors import duckdb_call
from iceduck.engine.types import quote_identifier
from iceduck.errors import IceduckError, UserError
from iceduck.ops.context import OpContext, WriteTarget
from iceduck.ops.rows import register_target, restricted, run_sql
from iceduck.scan.tasks import ScanPlan
from iceduck.spec.expressions.predicates import BooleanExpression
from iceduck.sql.filters import row_filter
from iceduck.sql.spark_condition import spark_condition


def where_filter(
    ctx: OpContext, target: WriteTarget, plan: ScanPlan, where: str, who: str
) -> BooleanExpression:
    """The Iceberg filter of ``where`` over ``target`` (``plan`` gives the schema read; none
    of its files is read); ``who`` names the procedure in errors."""
    condition = spark_condition(where, f"{who}' where")
    alias = target.identifier.name
    scan = register_target(ctx, restricted(plan, ()), lineage=False, kind="where")
    try:
        sql = f"SELECT count(*) FROM {scan.relation} AS {quote_identifier(alias)} WHERE {condition.text}"
        duckdb_call(run_sql, ctx, sql)
    except IceduckError as e:
        raise UserError(f"{who}' where {where!r}: {e}") from e
    implied, _ = row_filter(condition, target.table.metadata.schema(), None, ctx.timezone, alias)
    return implied
