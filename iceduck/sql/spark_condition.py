"""A condition written in Spark SQL, as procedures take it (``rewrite_data_files``' ``where``),
turned into the DuckDB condition iceduck evaluates.

Spark quotes strings with either quote (``name = "x"`` compares with the string ``x``) and
names with backquotes; DuckDB reads ``"x"`` as a column. sqlglot reads the text in its
Spark dialect and writes it back in DuckDB's, so the condition means what Spark would make
of it; the result is a :class:`~iceduck.sql.condition.Condition` the filter layer
(:func:`iceduck.sql.filters.row_filter`) turns into an Iceberg row filter.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from iceduck.errors import UserError
from iceduck.sql.condition import Condition


def spark_condition(text: str, what: str = "the condition") -> Condition:
    """``text`` (Spark SQL) as a DuckDB :class:`Condition`; UserError when it is not one
    boolean expression."""
    try:
        tree = sqlglot.parse_one(text, read="spark", into=exp.Condition)
    except (ParseError, TokenError) as e:
        raise UserError(f"cannot read {what} {text!r}: {e}") from e
    except RecursionError:
        raise UserError(f"cannot read {what} {text!r}: nested too deeply") from None
    if tree is None or isinstance(tree, exp.Query):
        raise UserError(f"{what} {text!r} is not a boolean expression")
    return Condition(tree.sql(dialect="duckdb"))
