"""WHERE clauses -> Iceberg row filters for scan planning (predicate pushdown).

Pushing is an optimisation only: the query keeps its WHERE and DuckDB evaluates all of it,
so a pushed filter must never drop a row the query would return. The filter given to a
table is therefore always *implied by* the SQL condition: whenever the SQL condition is
TRUE for a row, the Iceberg filter is true for that row's table part. Parts that cannot be
translated are weakened to ``true`` (never to ``false``):

* :func:`convert` translates a condition *exactly* -- the Iceberg expression agrees with
  SQL whenever SQL yields TRUE or FALSE (a NULL result may map to either) -- or gives
  ``None``. Exactness survives AND, OR and NOT, which is what lets NOT be pushed at all.
* :func:`weaken` translates what it can of an AND/OR tree and replaces the rest by
  ``true``: ``(a = 1 AND f(b)) OR a = 2`` gives ``a = 1 OR a = 2``. Under NOT only exact
  translations are used, because NOT turns a weakening into a strengthening.

Which conditions reach which table, per SELECT scope (and from an enclosing query into a
derived table or view that only projects and filters, :mod:`iceduck.sql.derived`; never into
a CTE or a subquery in an expression):

* the WHERE clause and the ON clauses of inner joins, to tables that are not on the
  null-supplying side of an outer join (``a LEFT JOIN b ... WHERE b.x IS NULL`` keeps the
  ``a`` rows whose match was pruned away, so nothing is pushed into ``b``);
* the ON clause of a LEFT JOIN, to its right-hand table (a row of it failing the ON
  condition can never be matched, so skipping it changes nothing);
* nothing in scopes with ASOF or POSITIONAL joins, or tables nested in parenthesised joins.

Columns are matched as DuckDB binds them: a qualifier names a source of the scope (any
case), an unqualified name belongs to the one Iceberg source that has it, ``s.a`` reaches
into a struct. A literal is pushed only where DuckDB and Iceberg compare alike
(:mod:`iceduck.sql.literals`): never range comparisons on float/double columns, whose NaN
ordering differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from iceduck.errors import IceduckError
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    BooleanExpression,
    EqualTo,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThanOrEqual,
    NotNull,
    Op,
    StartsWith,
    and_,
    not_,
    or_,
    predicate,
    rewrite_not,
)
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    BooleanType,
    DoubleType,
    FloatType,
    IcebergType,
    NestedField,
    StringType,
    StructType,
    UUIDType,
)
from iceduck.sql.derived import NO_OUTER, TYPE_KEY, Outer, inherited, join_conditions, preserved_sources
from iceduck.sql.literals import Kind, SqlLiteral, iceberg_value, literal_of

_COMPARISONS: dict[type[exp.Expr], Op] = {
    exp.EQ: Op.EQ,
    exp.NEQ: Op.NOT_EQ,
    exp.LT: Op.LT,
    exp.LTE: Op.LT_EQ,
    exp.GT: Op.GT,
    exp.GTE: Op.GT_EQ,
}
_FLIPPED = {
    Op.EQ: Op.EQ,
    Op.NOT_EQ: Op.NOT_EQ,
    Op.LT: Op.GT,
    Op.LT_EQ: Op.GT_EQ,
    Op.GT: Op.LT,
    Op.GT_EQ: Op.LT_EQ,
}
#: operators whose meaning does not depend on an order DuckDB and Iceberg might disagree on
_EQUALITY_OPS = frozenset({Op.EQ, Op.NOT_EQ, Op.IN})


@dataclass(frozen=True)
class Column:
    """A column reference resolved to an Iceberg table source: its dotted name and field."""

    node: exp.Table
    name: str
    field: NestedField


class Target:
    """Resolves the columns of one scope, for filters aimed at one Iceberg source."""

    def __init__(
        self,
        scope: Scope,
        schemas: Mapping[int, Schema],
        target: exp.Table,
        params: Any,
        timezone: str,
    ) -> None:
        self.scope = scope
        self.schemas = schemas
        self.target = target
        self.params = params
        self.timezone = timezone
        self.sources = {name.lower(): source for name, source in scope.sources.items()}
        self.iceberg = {
            name: source
            for name, source in self.sources.items()
            if isinstance(source, exp.Table) and id(source) in schemas
        }
        self.outer_names = _outer_names(scope)

    def column(self, node: exp.Expr) -> Column | None:
        """The target table's field ``node`` refers to, or None (another source, unknown...)."""
        parts = _column_parts(node)
        if not parts:
            return None
        first = parts[0].lower()
        if len(parts) >= 2 and first in self.sources:
            source = self.iceberg.get(first)
            if source is not self.target:
                return None
            path = parts[1:]
        elif len(parts) >= 2 and first in self.outer_names:
            return None  # may be a correlated reference to an enclosing query
        else:
            owners = [s for s in self.iceberg.values() if _field(self.schemas[id(s)], parts[:1])]
            if len(owners) != 1 or owners[0] is not self.target:
                return None
            path = parts
        found = _field(self.schemas[id(self.target)], path)
        if found is None:
            return None
        name, field = found
        declared = node.meta.get(TYPE_KEY, ()) if isinstance(node, exp.Column) else ()
        if any(t != field.field_type for t in declared):
            return None  # a catalog view's column, cast to another type: not this column's values
        return Column(self.target, name, field)

    def literal(self, node: exp.Expression) -> SqlLiteral | None:
        return literal_of(node, self.params)

    @property
    def schema(self) -> Schema:
        return self.schemas[id(self.target)]


def _outer_names(scope: Scope) -> set[str]:
    names: set[str] = set()
    parent = scope.parent
    while parent is not None:
        names.update(name.lower() for name in parent.sources)
        parent = parent.parent
    return names


def _column_parts(node: exp.Expr) -> list[str] | None:
    """``a.b.c`` as names, for a Column or a chain of struct accesses (Dot) on one."""
    if isinstance(node, exp.Column):
        if isinstance(node.this, exp.Star):
            return None
        return [p.name for p in node.parts]
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
        head = _column_parts(node.this)
        return None if head is None else [*head, node.expression.name]
    return None


def _field(schema: Schema, path: list[str]) -> tuple[str, NestedField] | None:
    """The field at ``path`` through structs only, matched without case as DuckDB does; a
    top-level column by the name the scan gives it (:mod:`iceduck.spec.column_names`), so a
    filter is pushed to the field DuckDB evaluates it on."""
    found = schema.by_sql_name(path[0])
    if found is None:
        return None
    names = [found.name]
    for part in path[1:]:
        fields = found.field_type.fields if isinstance(found.field_type, StructType) else ()
        matches = [f for f in fields if f.name.lower() == part.lower()]
        exact = [f for f in matches if f.name == part]
        if len(matches) != 1 and len(exact) != 1:
            return None
        found = exact[0] if exact else matches[0]
        names.append(found.name)
    return ".".join(names), found


# -- conversion -----------------------------------------------------------------------------------


def weaken(node: exp.Expr, target: Target) -> BooleanExpression:
    """An Iceberg filter implied by ``node`` (see the module docstring); ``true`` at worst."""
    node = _unparen(node)
    if isinstance(node, exp.And):
        return and_(weaken(node.left, target), weaken(node.right, target))
    if isinstance(node, exp.Or):
        return or_(weaken(node.left, target), weaken(node.right, target))
    if isinstance(node, exp.Not):
        inner = _unparen(node.this)
        # De Morgan and double negation hold in SQL's three-valued logic too
        if isinstance(inner, exp.Not):
            return weaken(inner.this, target)
        if isinstance(inner, exp.And | exp.Or):
            flipped = exp.Or if isinstance(inner, exp.And) else exp.And
            negated = flipped(this=exp.Not(this=inner.left), expression=exp.Not(this=inner.right))
            return weaken(negated, target)
    exact = convert(node, target)
    return AlwaysTrue() if exact is None else exact


def convert(node: exp.Expr, target: Target) -> BooleanExpression | None:
    """The exact Iceberg equivalent of ``node`` over the target's columns, or None."""
    node = _unparen(node)
    if isinstance(node, exp.And | exp.Or):
        left, right = convert(node.left, target), convert(node.right, target)
        if left is None or right is None:
            return None
        return and_(left, right) if isinstance(node, exp.And) else or_(left, right)
    if isinstance(node, exp.Not):
        inner = convert(node.this, target)
        return None if inner is None else not_(inner)
    if isinstance(node, exp.Boolean):
        return AlwaysTrue() if node.this else AlwaysFalse()
    result = _leaf(node, target)
    if result is None:
        return None
    try:  # the planner binds again; binding here only proves the filter is well-typed
        bind(target.schema, result, case_sensitive=True)
    except IceduckError:
        return None
    return result


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _leaf(node: exp.Expr, target: Target) -> BooleanExpression | None:
    op = _COMPARISONS.get(type(node))
    if op is not None:
        return _comparison(op, node.this, node.expression, target)
    if isinstance(node, exp.NullSafeEQ):
        return _null_safe_eq(node, target)
    if isinstance(node, exp.Is):
        column = target.column(node.this)
        if column is not None and isinstance(node.expression, exp.Null):
            return IsNull(column.name)
        return None
    if isinstance(node, exp.In):
        return _in(node, target)
    if isinstance(node, exp.Between):
        return _between(node, target)
    if isinstance(node, exp.Like):
        result = _like(node, target)
        return not_(result) if result is not None and node.args.get("negate") else result
    if isinstance(node, exp.StartsWith):
        return _starts_with(node.this, node.expression, target)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "prefix" and len(node.expressions) == 2:
        return _starts_with(node.expressions[0], node.expressions[1], target)
    if isinstance(node, exp.IsNan):
        column = target.column(node.this)
        if column is not None and isinstance(column.field.field_type, FloatType | DoubleType):
            return IsNaN(column.name)
        return None
    column = target.column(node)
    if column is not None and isinstance(column.field.field_type, BooleanType):
        return EqualTo(column.name, True)
    return None


def _value(column: Column, literal: SqlLiteral | None, op: Op, target: Target) -> Any:
    """The Iceberg literal to compare ``column`` with, or None when it must not be pushed."""
    if literal is None or literal.kind is Kind.NULL:
        return None
    t: IcebergType = column.field.field_type
    if isinstance(t, UUIDType) and op not in _EQUALITY_OPS:
        return None  # DuckDB orders UUIDs by its own integer layout
    return iceberg_value(literal, t, target.timezone)


def _comparison(
    op: Op, left: exp.Expression, right: exp.Expression, target: Target
) -> BooleanExpression | None:
    column = target.column(left)
    other = right
    if column is None:
        column, other, op = target.column(right), left, _FLIPPED[op]
    if column is None:
        return None
    value = _value(column, target.literal(other), op, target)
    return None if value is None else predicate(op, column.name, value)


def _null_safe_eq(node: exp.NullSafeEQ, target: Target) -> BooleanExpression | None:
    """``x IS NOT DISTINCT FROM v``: never NULL, so ``x = v`` (false for a null ``x``) is exact."""
    column, other = target.column(node.this), node.expression
    if column is None:
        column, other = target.column(node.expression), node.this
    if column is None:
        return None
    literal = target.literal(other)
    if literal is not None and literal.kind is Kind.NULL:
        return IsNull(column.name)
    value = _value(column, literal, Op.EQ, target)
    return None if value is None else EqualTo(column.name, value)


def _in(node: exp.In, target: Target) -> BooleanExpression | None:
    if any(node.args.get(key) for key in ("query", "unnest", "field")):
        return None
    column = target.column(node.this)
    if column is None or not node.expressions:
        return None
    values = []
    for item in node.expressions:
        literal = target.literal(item)
        if literal is not None and literal.kind is Kind.NULL:
            continue  # x IN (.., NULL) is never TRUE because of the NULL: dropping it is exact
        value = _value(column, literal, Op.IN, target)
        if value is None:
            return None
        values.append(value)
    if not values:
        return None
    return In(column.name, frozenset(values))


def _between(node: exp.Between, target: Target) -> BooleanExpression | None:
    if node.args.get("symmetric"):
        return None
    column = target.column(node.this)
    if column is None:
        return None
    low = _value(column, target.literal(node.args["low"]), Op.GT_EQ, target)
    high = _value(column, target.literal(node.args["high"]), Op.LT_EQ, target)
    if low is None or high is None:
        return None
    return and_(GreaterThanOrEqual(column.name, low), LessThanOrEqual(column.name, high))


def _like(node: exp.Like, target: Target) -> BooleanExpression | None:
    """``x LIKE 'abc%'`` is ``startsWith(x, 'abc')``; DuckDB's LIKE has no default escape."""
    if node.args.get("escape"):
        return None
    column = target.column(node.this)
    literal = target.literal(node.expression)
    if column is None or literal is None or literal.kind is not Kind.STRING:
        return None
    if not isinstance(column.field.field_type, StringType):
        return None
    pattern: str = literal.value
    body = pattern.rstrip("%")
    if "%" in body or "_" in body:
        return None
    if body == pattern:
        return EqualTo(column.name, pattern)
    return StartsWith(column.name, body) if body else NotNull(column.name)


def _starts_with(value: exp.Expression, prefix: exp.Expression, target: Target) -> BooleanExpression | None:
    column = target.column(value)
    literal = target.literal(prefix)
    if column is None or literal is None or literal.kind is not Kind.STRING:
        return None
    if not isinstance(column.field.field_type, StringType):
        return None
    return StartsWith(column.name, literal.value)


# -- scopes ---------------------------------------------------------------------------------------


def pushdown(
    tree: exp.Expression,
    schemas: Mapping[int, Schema],
    params: Any = None,
    timezone: str = "UTC",
    outer: Outer = NO_OUTER,
) -> dict[int, BooleanExpression]:
    """The row filter for each Iceberg table reference of ``tree``.

    ``schemas`` maps ``id(table_node)`` of every Iceberg table reference to the schema
    its rows are read with; the result maps the same keys to filters (``true`` when
    nothing can be pushed). ``params`` are the statement's parameter values and
    ``timezone`` DuckDB's session time zone (for TIMESTAMPTZ literals without offset);
    ``outer`` the conditions on ``tree``'s output from where it is used (a catalog view's
    query). Conditions of an enclosing query reach the tables of a derived table as
    :mod:`iceduck.sql.derived` says.
    """
    filters: dict[int, BooleanExpression] = dict.fromkeys(schemas, AlwaysTrue())
    stars = {key: tuple(schema.sql_names().values()) for key, schema in schemas.items()}
    received = inherited(tree, outer, stars)
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        preserved = preserved_sources(select)
        for name, source in scope.sources.items():
            if not (isinstance(source, exp.Table) and id(source) in schemas):
                continue
            target = Target(scope, schemas, source, params, timezone)
            found = and_(*_conditions(select, source, name.lower() in preserved, target, received))
            filters[id(source)] = rewrite_not(found)
    return filters


def _conditions(
    select: exp.Select,
    source: exp.Table,
    preserved: bool,
    target: Target,
    received: Mapping[int, list[exp.Expr]],
) -> list[BooleanExpression]:
    found: list[BooleanExpression] = []
    where = select.args.get("where")
    if where is not None and preserved:
        found.append(weaken(where.this, target))
    if preserved:
        found.extend(weaken(condition, target) for condition in received.get(id(select), ()))
    found.extend(weaken(on, target) for on in join_conditions(select, source, preserved))
    return found
