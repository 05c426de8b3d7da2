"""The Iceberg row filter of a DELETE/UPDATE/MERGE condition over one table.

Reads use :mod:`iceduck.sql.predicates` to prune files a query cannot need: a filter
*implied by* the WHERE clause. Writes need one more fact: whether the filter is
**exact** -- true for a row exactly when the SQL condition is TRUE -- because then a file
whose rows all satisfy the filter (by partition values or metrics) may be deleted whole,
without reading it, and a file none of whose rows can satisfy it is left alone.

Exactness is stricter than :func:`iceduck.sql.predicates.convert`, which may map a NULL
SQL result either way: SQL keeps a row whose condition is NULL (``DELETE ... WHERE x <> 1``
keeps the rows where ``x`` is null) while Iceberg's ``notEqual(x, 1)`` holds for a null
``x``. So the exact filter is built as "the condition is TRUE" in three-valued logic:
NOT is pushed to the leaves (De Morgan holds in SQL's logic), and each leaf comparison on
a nullable column ``x`` is TRUE only when ``x`` is not null: ``x <> 1`` becomes
``notNull(x) and notEqual(x, 1)``, ``NOT (x < 5)`` becomes ``notNull(x) and x >= 5``.
``IS [NOT] NULL`` and ``IS [NOT] DISTINCT FROM`` are never NULL (``NOT (x IS NOT DISTINCT
FROM 1)`` becomes ``isNull(x) or (notNull(x) and notEqual(x, 1))``, whatever an
evaluator makes of ``notEqual`` on null);
``x IN (1, NULL)`` is never FALSE, so its negation is ``false``.

Any part that cannot be translated exactly makes the whole filter inexact; the filter is
then :func:`iceduck.sql.predicates.weaken`'s (implied by the condition, ``true`` at worst).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import build_scope

from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    IsNull,
    Not,
    NotNull,
    Or,
    UnboundPredicate,
    and_,
    not_,
    or_,
    rewrite_not,
)
from iceduck.spec.schema import Schema
from iceduck.sql.condition import Condition
from iceduck.sql.literals import Kind
from iceduck.sql.parse import DIALECT
from iceduck.sql.predicates import Target, convert, weaken

#: the source name the condition's columns are bound against when no alias is given
_ANONYMOUS = "__iceduck_target__"


def row_filter(
    condition: Condition,
    schema: Schema,
    params: Any,
    timezone: str,
    alias: str | None = None,
    *,
    other_sources: Sequence[str] = (),
) -> tuple[BooleanExpression, bool]:
    """The Iceberg filter of ``condition`` over a table of ``schema``, and whether it
    is exact (see the module docstring).

    ``alias`` is the name the condition may qualify the table's columns with: the
    statement's ``AS`` alias, else the table's own (last) name. ``params`` and
    ``timezone`` are the statement's parameters and the session's time zone, as for reads.
    ``other_sources`` names the other relations the condition may qualify columns with
    (``UPDATE ... FROM s``, a MERGE source): ``s.id`` is then never read as a field
    ``id`` of a struct column ``s`` of the table.
    """
    sources = ", ".join(_quoted(name) for name in (alias or _ANONYMOUS, *other_sources))
    # the condition's columns are bound in the scope of a query reading those sources
    tree = sqlglot.parse_one(f"SELECT 1 FROM {sources}", dialect=DIALECT)
    assert isinstance(tree, exp.Select)
    tree.set("where", exp.Where(this=condition.tree.copy()))
    scope = build_scope(tree)
    from_ = tree.args.get("from_") or tree.args.get("from")
    table = from_.this if from_ is not None else None
    if scope is None or not isinstance(table, exp.Table):
        return AlwaysTrue(), False
    target = Target(scope, {id(table): schema}, table, params, timezone)
    condition_tree = tree.args["where"].this
    exact = _true(condition_tree, target, negate=False)
    if exact is not None:
        return rewrite_not(exact), True
    return rewrite_not(weaken(condition_tree, target)), False


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _true(node: exp.Expr, target: Target, negate: bool) -> BooleanExpression | None:
    """Iceberg filter that holds exactly when ``node`` (``NOT node`` with ``negate``) is TRUE."""
    node = _unparen(node)
    if isinstance(node, exp.Not):
        return _true(node.this, target, not negate)
    if isinstance(node, exp.And | exp.Or):
        left, right = _true(node.left, target, negate), _true(node.right, target, negate)
        if left is None or right is None:
            return None
        conjunction = isinstance(node, exp.And) != negate  # De Morgan
        return and_(left, right) if conjunction else or_(left, right)
    if isinstance(node, exp.Boolean):
        return AlwaysTrue() if bool(node.this) != negate else AlwaysFalse()
    return _leaf(node, target, negate)


def _leaf(node: exp.Expr, target: Target, negate: bool) -> BooleanExpression | None:
    converted = convert(node, target)
    if converted is None:
        return None
    if isinstance(node, exp.Is | exp.NullSafeEQ):
        # never NULL; the Iceberg form is isNull or equalTo (false for a null x, as in SQL)
        if not negate:
            return converted
        if isinstance(converted, IsNull):
            return NotNull(converted.term)
        # x IS DISTINCT FROM v: TRUE for a null x too, where notEqual's meaning varies
        assert isinstance(converted, UnboundPredicate)
        return or_(IsNull(converted.term), _not_null(not_(converted), node, target))
    if isinstance(node, exp.In) and _has_null_item(node, target):
        # x IN (.., NULL): TRUE where x is among the others, otherwise NULL, never FALSE
        return AlwaysFalse() if negate else _not_null(converted, node, target)
    return _not_null(not_(converted) if negate else converted, node, target)


def _has_null_item(node: exp.In, target: Target) -> bool:
    for item in node.expressions:
        literal = target.literal(item)
        if literal is not None and literal.kind is Kind.NULL:
            return True
    return False


def _not_null(result: BooleanExpression, node: exp.Expr, target: Target) -> BooleanExpression:
    """``result`` restricted to rows where the leaf's columns are not null (where SQL's
    comparison is not NULL); required columns need no guard."""
    guards: list[BooleanExpression] = []
    for name in sorted(_terms(result)):
        if not _never_null(target.schema, name):
            guards.append(NotNull(name))
    return and_(*guards, result)


def _never_null(schema: Schema, name: str) -> bool:
    """Whether the field ``a.b.c`` and every struct around it are required."""
    parts = name.split(".")
    for k in range(1, len(parts) + 1):
        field = schema.find_field_or_none(".".join(parts[:k]))
        if field is None or not field.required:
            return False
    return True


def _terms(expr: BooleanExpression) -> set[str]:
    if isinstance(expr, UnboundPredicate):
        return {expr.term} if not isinstance(expr, IsNull | NotNull) else set()
    if isinstance(expr, And | Or):
        return _terms(expr.left) | _terms(expr.right)
    if isinstance(expr, Not):
        return _terms(expr.child)
    return set()
