"""Conditions of an enclosing query that reach the tables inside a derived table or a view.

``SELECT * FROM (SELECT id AS k FROM t) AS s WHERE k = 42`` reads only rows of ``t`` with
``id = 42``: the outer condition, with each output column replaced by the projection it names,
is a condition on the inner query's FROM rows that every returned row satisfies. It is used
for pruning only (:func:`iceduck.sql.predicates.pushdown` weakens it like a WHERE); the SQL
text DuckDB runs is unchanged and still applies every filter, so a condition passed down must
only be *implied* by the query: never pass one that could drop a returned row. Hence a
condition is passed into a SELECT only when filtering its output equals filtering its input:

* the SELECT only projects and filters: no GROUP BY, HAVING, QUALIFY, LIMIT, OFFSET, FETCH,
  DISTINCT ON, aggregate or window function, sample, or non-deterministic function, and is
  not a set operation (plain DISTINCT is fine: a row filter commutes with it); nor is the
  enclosing query sampled (DuckDB draws a sample before applying the WHERE);
* every column the condition names is a plain column of that SELECT (``id AS k``), never a
  computed one (``id + 1 AS k``), and the condition has no subquery or placeholder;
* the derived table is not on the null-supplying side of an outer join of its parent
  (:func:`preserved_sources`), except for the ON of a LEFT JOIN whose right side it is;
* never into a CTE, which may be read twice with different filters.

For a catalog view, the relation casts each column to the view schema's type; ``CAST(x AS T)
= 42`` is ``x = 42`` only when ``x`` has type T, so each substituted column carries the declared
type (``meta["iceduck_type"]``) and the pushdown drops it when the field's type differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

#: the key of a substituted column's declared (view schema) types in ``exp.Column.meta``: a
#: tuple, one per catalog view the condition came through (a view of a view casts twice)
TYPE_KEY = "iceduck_type"
_INNER_KINDS = frozenset({"", "INNER", "CROSS"})
_VOLATILE = frozenset({"random", "rand", "uuid", "gen_random_uuid", "nextval", "currval", "setseed"})


@dataclass(frozen=True)
class Outer:
    """Conditions over a query's output columns, from where the query is used.

    ``columns``: the output names by position (a catalog view's schema), else the query's
    own item names; ``types``: the declared type of each of ``columns`` (a catalog view)."""

    conditions: tuple[exp.Expr, ...] = ()
    columns: tuple[str, ...] | None = None
    types: tuple[Any, ...] | None = field(default=None, compare=False)


#: no conditions from outside
NO_OUTER = Outer()


def inherited(
    tree: exp.Expr, outer: Outer = NO_OUTER, stars: Mapping[int, tuple[str, ...]] | None = None
) -> dict[int, list[exp.Expr]]:
    """``{id(select): conditions over its FROM sources}`` passed down from enclosing queries
    (and from ``outer`` to the root SELECT), for every SELECT that receives any. ``stars``:
    the columns ``*`` gives over a table reference, by ``id(node)``, to match ``outer``'s
    positional names with a root ``SELECT * FROM table``."""
    result: dict[int, list[exp.Expr]] = {}
    if not outer.conditions and tree.find(exp.Subquery) is None:
        return result  # no derived table: nothing to pass (and no second scope walk)
    scopes = list(reversed(traverse_scope(tree)))  # root first
    if scopes and outer.conditions:
        root = scopes[0].expression
        mapped = _mapped(outer.conditions, root, outer.columns, outer.types, stars or {})
        if mapped:
            result[id(root)] = mapped
    for scope in scopes:
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        available = result.get(id(select), [])
        for name, source in scope.sources.items():
            if not (isinstance(source, Scope) and source.is_derived_table):
                continue
            subquery = source.expression.parent
            if subquery is None:
                continue
            columns = _alias_columns(subquery)
            conditions = _for_source(select, scope, name, subquery, available)
            mapped = _mapped(conditions, source.expression, columns, None, {})
            if mapped:
                result.setdefault(id(source.expression), []).extend(mapped)
    return result


def passed_down(tree: exp.Expr, node: exp.Table, outer: Outer = NO_OUTER) -> tuple[exp.Expr, ...]:
    """The conditions that table reference ``node`` (a catalog view) receives, over its column
    names unqualified: the same rules as for a derived table, with the view's own query as the
    receiver (which :func:`inherited` maps with the view's schema names)."""
    received = inherited(tree, outer)
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        for name, source in scope.sources.items():
            if source is node:
                found = _for_source(select, scope, name, node, received.get(id(select), []))
                return tuple(_unqualified(c) for c in found if not c.find(exp.Placeholder, exp.Parameter))
    return ()


def _for_source(
    select: exp.Select, scope: Scope, name: str, node: exp.Expr, available: Sequence[exp.Expr]
) -> list[exp.Expr]:
    """The conjuncts of ``select`` (WHERE, inherited, inner-join ON; a LEFT JOIN's ON for its
    right side) that name only columns of its source ``name``."""
    name = name.lower()
    if select.args.get("sample") or node.args.get("sample"):
        return []  # a sample is drawn before the WHERE: fewer rows in, another sample out
    candidates: list[exp.Expr] = []
    if name in preserved_sources(select):
        where = select.args.get("where")
        if where is not None:
            candidates.extend(conjuncts(where.this))
        candidates.extend(available)
    for on in join_conditions(select, node, name in preserved_sources(select)):
        candidates.extend(conjuncts(on))
    single = len(scope.sources) == 1
    return [c for c in candidates if _only_of(c, name, single)]


def conjuncts(node: exp.Expr) -> list[exp.Expr]:
    """The parts of an AND chain."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return [*conjuncts(node.left), *conjuncts(node.right)]
    return [node]


def _only_of(condition: exp.Expr, name: str, single: bool) -> bool:
    """Whether every column of ``condition`` is ``name.col``, or ``col`` in a one-source scope."""
    if condition.find(exp.Subquery, exp.Select, exp.Query):
        return False
    columns = list(condition.find_all(exp.Column))
    if not columns:
        return False
    for column in columns:
        if isinstance(column.this, exp.Star) or column.args.get("db") or column.args.get("catalog"):
            return False
        qualifier = column.table.lower()
        if qualifier != name and not (qualifier == "" and single):
            return False
    return True


def _unqualified(condition: exp.Expr) -> exp.Expr:
    copy = condition.copy()
    for column in copy.find_all(exp.Column):
        column.set("table", None)
    return copy


def _alias_columns(node: exp.Expr) -> tuple[str, ...] | None:
    alias = node.args.get("alias")
    columns = alias.args.get("columns") if isinstance(alias, exp.TableAlias) else None
    return tuple(c.name for c in columns) if columns else None


def receives(select: exp.Expr) -> bool:
    """Whether filtering ``select``'s output equals filtering its FROM rows (module docstring)."""
    if not isinstance(select, exp.Select):
        return False  # a set operation, VALUES...
    keys = ("group", "having", "qualify", "limit", "offset", "fetch", "connect", "prewhere")
    if any(select.args.get(k) for k in keys):
        return False
    distinct = select.args.get("distinct")
    if distinct is not None and distinct.args.get("on"):
        return False
    if select.find(exp.AggFunc, exp.Window, exp.TableSample, exp.Rand, exp.Uuid):
        return False
    return not any(f.name.lower() in _VOLATILE for f in select.find_all(exp.Anonymous))


def _mapped(
    conditions: Sequence[exp.Expr],
    select: exp.Expr,
    columns: Sequence[str] | None,
    types: Sequence[Any] | None,
    stars: Mapping[int, tuple[str, ...]],
) -> list[exp.Expr]:
    """``conditions`` over ``select``'s output, as conditions over its FROM rows; each that
    names anything but a plain column of it dropped."""
    if not conditions or not receives(select):
        return []
    assert isinstance(select, exp.Select)
    items = _items(select, columns, types, stars)
    if items is None:
        return []
    result = []
    for condition in conditions:
        if condition.find(exp.Placeholder, exp.Parameter, exp.Subquery, exp.Query):
            continue
        copy = condition.copy()
        ok = True
        for column in list(copy.find_all(exp.Column)):
            found = items.get(column.name.lower())
            if found is None:
                ok = False
                break
            replacement, declared = found
            new = replacement.copy()
            declared_all = (*column.meta.get(TYPE_KEY, ()), *(() if declared is None else (declared,)))
            if declared_all:
                new.meta[TYPE_KEY] = declared_all
            if column is copy:
                copy = new
            else:
                column.replace(new)
        if ok:
            result.append(copy)
    return result


def _items(
    select: exp.Select,
    columns: Sequence[str] | None,
    types: Sequence[Any] | None,
    stars: Mapping[int, tuple[str, ...]],
) -> dict[str, tuple[exp.Column, Any]] | None:
    """{output name (lower case): (the plain column it is, its declared type)}; names whose item
    is computed, or that are ambiguous, are left out; None when the items cannot be matched."""
    projections = select.expressions
    if len(projections) == 1 and _bare_star(projections[0]):
        from_ = select.args.get("from_") or select.args.get("from")
        if select.args.get("joins") or from_ is None:
            return None
        star = projections[0]
        if isinstance(star, exp.Column) and star.table.lower() != from_.this.alias_or_name.lower():
            return None  # ``s.*`` of a struct column, not of the source
        if columns is None:
            return _StarItems()
        names = stars.get(id(from_.this))
        if names is None or len(names) != len(columns):
            return None  # positional names over a star need the source's columns
        named = [exp.Alias(this=exp.column(n, quoted=True), alias=exp.to_identifier(n)) for n in names]
        expanded = select.copy()
        expanded.set("expressions", named)
        return _items(expanded, columns, types, stars)
    if any(_bare_star(p) or isinstance(p, exp.Star) for p in projections):
        return None
    if columns is not None and len(columns) != len(projections):
        return None
    items: dict[str, tuple[exp.Column, Any]] = {}
    seen: dict[str, int] = {}
    for i, item in enumerate(projections):
        name = (columns[i] if columns is not None else item.alias_or_name).lower()
        seen[name] = seen.get(name, 0) + 1
        value = item.this if isinstance(item, exp.Alias) else item
        if isinstance(value, exp.Column) and not isinstance(value.this, exp.Star):
            declared = types[i] if types is not None and i < len(types) else None
            items[name] = (value, declared)
    return {k: v for k, v in items.items() if seen[k] == 1}


def _bare_star(node: exp.Expr) -> bool:
    if isinstance(node, exp.Star):
        return not any(node.args.get(k) for k in ("except", "except_", "replace", "rename", "ilike"))
    return isinstance(node, exp.Column) and isinstance(node.this, exp.Star)


class _StarItems(dict):
    """The items of ``SELECT * FROM one_source``: each name is that source's column."""

    def get(self, key: Any, default: Any = None) -> Any:
        return (exp.column(key, quoted=True), None)


def join_conditions(select: exp.Select, source: exp.Expr, preserved: bool) -> list[exp.Expr]:
    """The ON conditions of ``select``'s joins that hold for every row ``source`` gives: an
    inner join's when ``source`` is on a preserved side, and a LEFT JOIN's when ``source`` is
    its right side (rows failing it never come from there)."""
    found = []
    for join in select.args.get("joins") or ():
        on = join.args.get("on")
        if on is None or join.args.get("method"):
            continue
        side = str(join.args.get("side") or "").upper()
        kind = str(join.args.get("kind") or "").upper()
        if not side and kind in _INNER_KINDS and preserved:
            found.append(on)
        elif side == "LEFT" and kind in ("", "OUTER") and join.this is source:
            found.append(on)
    return found


def preserved_sources(select: exp.Select) -> set[str]:
    """Names of the sources whose rows are never null-extended by an outer join."""
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        return set()
    seen: list[str] = []
    nullable: set[str] = set()
    first = from_.this
    if isinstance(first, exp.Table | exp.Subquery) and not first.args.get("joins"):
        seen.append(first.alias_or_name.lower())
    for join in select.args.get("joins") or ():
        name = join.this.alias_or_name.lower()
        method = str(join.args.get("method") or "").upper()
        side = str(join.args.get("side") or "").upper()
        kind = str(join.args.get("kind") or "").upper()
        if method in ("ASOF", "POSITIONAL") or join.this.args.get("joins"):
            return set()
        if kind in ("SEMI", "ANTI") or side == "LEFT":
            nullable.add(name)
        elif side == "RIGHT":
            nullable.update(seen)
        elif side == "FULL":
            nullable.update((*seen, name))
        seen.append(name)
    return set(seen) - nullable
