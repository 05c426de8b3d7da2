"""Running ``CALL [catalog.]system.name(...)``: the procedure found, its arguments bound,
its rows returned as an Arrow table of Spark's result columns."""

from __future__ import annotations

import pyarrow as pa

from iceduck.errors import NotFoundError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.arguments import bind_arguments
from iceduck.ops.procedures.registry import find
from iceduck.sql.call import CallStatement


def call(ctx: OpContext, statement: CallStatement) -> pa.Table:
    """Run ``statement``; its result rows. A catalog name, when written, must be this
    session's (as in Spark, ``CALL other.system.x`` runs in catalog ``other``)."""
    if statement.catalog is not None and statement.catalog != ctx.catalog.name:
        raise NotFoundError(
            f"catalog {statement.catalog} is not this connection's: CALL {ctx.catalog.name}.system.... "
            "or CALL system...."
        )
    procedure = find(statement.procedure)
    arguments = bind_arguments(ctx, procedure, statement)
    return procedure.rows_table(procedure.run(ctx, arguments))
