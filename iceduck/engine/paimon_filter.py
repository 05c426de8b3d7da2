"""The key conditions of a scan's filter as SQL, applied to a primary-key table's rows
before they are merged.

Every version of a key carries the key, so dropping the rows whose key fails a condition
on key (and partition) columns drops whole keys, never one version of a key: the merge
of what is left is the merge of the keys the query can return. Done before the merge,
DuckDB pushes the condition into the Parquet scan (row-group statistics, then the rows
the window sorts): a point query on a 300,000-row table went from 54 ms to 6 ms.

Only what renders exactly is rendered: comparisons, ``IN``, ``IS [NOT] NULL`` and
``STARTS WITH`` on top-level columns, under AND/OR. A negated comparison keeps null keys
(``x IS NULL OR x != 1``): the condition need only be implied by the query's own filter,
which DuckDB still applies after the merge. A conjunct that cannot be rendered is left
out (reading more), a disjunction with such a leaf as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from iceduck.engine.types import quote_string, sql_literal
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.expressions.predicates import AlwaysFalse, AlwaysTrue, And, BooleanExpression, Op, Or

_COMPARISONS = {Op.LT: "<", Op.LT_EQ: "<=", Op.GT: ">", Op.GT_EQ: ">=", Op.EQ: "="}


def filter_sql(expr: BooleanExpression, columns: Mapping[int, str]) -> str | None:
    """SQL of a bound expression without NOT (:func:`rewrite_not`) whose leaves name the
    field ids of ``columns`` (field id -> SQL expression of the column); None when
    nothing of it renders."""
    if isinstance(expr, AlwaysTrue):
        return None
    if isinstance(expr, AlwaysFalse):
        return "false"
    if isinstance(expr, And):
        parts = [
            p for p in (filter_sql(expr.left, columns), filter_sql(expr.right, columns)) if p is not None
        ]
        return " AND ".join(f"({p})" for p in parts) if parts else None
    if isinstance(expr, Or):
        left, right = filter_sql(expr.left, columns), filter_sql(expr.right, columns)
        return None if left is None or right is None else f"({left}) OR ({right})"
    if isinstance(expr, BoundPredicate):
        return _leaf(expr, columns)
    return None


def _leaf(p: BoundPredicate, columns: Mapping[int, str]) -> str | None:
    column = columns.get(p.ref.field_id)
    if column is None or p.ref.accessor is None or len(p.ref.accessor) != 1:
        return None
    t = p.ref.field_type
    op = p.op
    if op is Op.IS_NULL:
        return f"{column} IS NULL"
    if op is Op.NOT_NULL:
        return f"{column} IS NOT NULL"
    if op in _COMPARISONS:
        return f"{column} {_COMPARISONS[op]} {sql_literal(t, p.literal)}"
    if op is Op.NOT_EQ:
        return f"{column} IS NULL OR {column} != {sql_literal(t, p.literal)}"
    if op in (Op.IN, Op.NOT_IN) and p.literals is not None:
        values = ", ".join(sql_literal(t, v) for v in sorted(p.literals, key=repr))
        if op is Op.IN:
            return f"{column} IN ({values})"
        return f"{column} IS NULL OR {column} NOT IN ({values})"
    if op is Op.STARTS_WITH and isinstance(p.literal, str):
        return f"starts_with({column}, {quote_string(p.literal)})"
    if op is Op.NOT_STARTS_WITH and isinstance(p.literal, str):
        return f"{column} IS NULL OR NOT starts_with({column}, {quote_string(p.literal)})"
    return None
