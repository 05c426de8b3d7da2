"""A DELETE condition that only says "the key is one of these values": the key rows it names.

A DELETE on a keyed table (:mod:`iceduck.ops.upsert`) whose WHERE picks rows by their
identifier fields alone can be written as equality deletes of those keys, without reading
the table -- as Flink's upsert sink writes a change feed's deletes. This module recognises
such conditions and gives a query of the key rows; anything else (another column, a
function of the key, NOT, a range) gets None and the DELETE reads the table as usual.

Recognised, for key columns ``k`` (one) or ``k1, k2`` (several), each condition may be
joined by OR (the union of the key rows):

* ``k = v`` / ``v = k``, and for several columns ``k1 = v1 AND k2 = v2`` naming each once;
* ``k IN (v1, v2, ...)``, ``(k1, k2) IN ((v1, v2), ...)``;
* ``k IN (SELECT ...)``, ``(k1, k2) IN (SELECT a, b ...)``: a change feed's deletes
  (``WHERE id IN (SELECT id FROM feed WHERE op = 'D')``).

A value ``v`` may be any expression without column references (literals, parameters,
casts, functions of them). The subquery must stand alone: the caller binds it on its own,
and a correlated one (naming the table) fails that and is read the usual way.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from iceduck.sql.condition import Condition

#: names of the key columns in the query :func:`key_rows` gives, in key order
KEY_COLUMN = "__iceduck_k{}"


def key_rows(condition: Condition, keys: Sequence[str], alias: str) -> str | None:
    """SQL of the key rows ``condition`` selects (columns :data:`KEY_COLUMN` 0.. in the
    order of ``keys``, values uncast), or None when it is not a condition on the key alone.

    ``keys`` are the key columns' names; a column reference may be qualified by ``alias``.
    """
    names = [k.lower() for k in keys]
    parts = []
    for branch in _disjuncts(_unwrap(condition.tree)):
        part = _branch_rows(branch, names, alias.lower())
        if part is None:
            return None
        parts.append(part)
    return " UNION ALL ".join(parts) if parts else None


def _unwrap(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _disjuncts(node: exp.Expr) -> list[exp.Expr]:
    node = _unwrap(node)
    if isinstance(node, exp.Or):
        return _disjuncts(node.left) + _disjuncts(node.right)
    return [node]


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    node = _unwrap(node)
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _key_index(node: exp.Expr, names: list[str], alias: str) -> int | None:
    """The position in the key of a column reference to a key column, else None."""
    node = _unwrap(node)
    if not isinstance(node, exp.Column) or node.args.get("catalog") or node.args.get("db"):
        return None
    table = node.table.lower() if node.table else None
    if table not in (None, alias) or node.name.lower() not in names:
        return None
    return names.index(node.name.lower())


def _is_value(node: exp.Expr) -> bool:
    """An expression without column references or subqueries: a constant of the statement."""
    return not any(isinstance(n, exp.Column | exp.Query | exp.Star) for n in node.walk())


def _columns(values: Sequence[str]) -> str:
    return ", ".join(f"{v} AS {KEY_COLUMN.format(i)}" for i, v in enumerate(values))


def _branch_rows(node: exp.Expr, names: list[str], alias: str) -> str | None:
    """The key rows of one OR branch, or None."""
    if isinstance(node, exp.In):
        return _in_rows(node, names, alias)
    found: dict[int, str] = {}
    for term in _conjuncts(node):
        if not isinstance(term, exp.EQ):
            return None
        for column, value in ((term.left, term.right), (term.right, term.left)):
            index = _key_index(column, names, alias)
            if index is not None and _is_value(value):
                if index in found:
                    return None
                found[index] = value.sql(dialect="duckdb")
                break
        else:
            return None
    if sorted(found) != list(range(len(names))):
        return None
    return f"SELECT {_columns([found[i] for i in range(len(names))])}"


def _in_rows(node: exp.In, names: list[str], alias: str) -> str | None:
    """``k IN (...)`` / ``(k1, k2) IN (...)`` naming the whole key in order."""
    if node.args.get("is_global") or node.args.get("unnest") or node.args.get("field"):
        return None
    target = _unwrap(node.this)
    columns = target.expressions if isinstance(target, exp.Tuple) else [target]
    order = [_key_index(c, names, alias) for c in columns]
    if any(i is None for i in order) or sorted(i for i in order if i is not None) != list(range(len(names))):
        return None
    positions = [i for i in order if i is not None]
    query = node.args.get("query")
    if query is not None:
        inner = query.this if isinstance(query, exp.Subquery) else query
        if not isinstance(inner, exp.Query):
            return None
        aliases = ", ".join(KEY_COLUMN.format(p) for p in positions)
        picked = ", ".join(KEY_COLUMN.format(i) for i in range(len(names)))
        return f"SELECT {picked} FROM ({inner.sql(dialect='duckdb')}) AS __iceduck_keys({aliases})"
    rows = []
    for item in node.expressions:
        item = _unwrap(item)
        values = item.expressions if isinstance(item, exp.Tuple) else [item]
        if len(values) != len(positions) or not all(_is_value(v) for v in values):
            return None
        by_key = dict(zip(positions, (v.sql(dialect="duckdb") for v in values), strict=True))
        rows.append(f"({', '.join(by_key[i] for i in range(len(names)))})")
    if not rows:
        return None
    aliases = ", ".join(KEY_COLUMN.format(i) for i in range(len(names)))
    return f"SELECT * FROM (VALUES {', '.join(rows)}) AS __iceduck_keys({aliases})"


def on_keys(on: Condition, keys: Sequence[str], target: str, source: str) -> bool:
    """Whether a MERGE's ON is exactly ``target.k = source.k`` for each key column ``k``
    (the same name on both sides, each once, joined by AND): then the key a source row
    deletes is the key of the row it writes."""
    names = [k.lower() for k in keys]
    found: set[str] = set()
    for term in _conjuncts(on.tree):
        if not isinstance(term, exp.EQ):
            return False
        sides = {_qualifier(_unwrap(term.left)), _qualifier(_unwrap(term.right))}
        if sides != {target.lower(), source.lower()}:
            return False
        left, right = _unwrap(term.left), _unwrap(term.right)
        assert isinstance(left, exp.Column) and isinstance(right, exp.Column)  # _qualifier said so
        name = left.name.lower()
        if right.name.lower() != name or name not in names or name in found:
            return False
        found.add(name)
    return found == set(names)


def _qualifier(node: exp.Expr) -> str | None:
    """The table qualifier of a plain column reference (lower case), else None."""
    if not isinstance(node, exp.Column) or node.args.get("catalog") or node.args.get("db") or not node.table:
        return None
    return node.table.lower()


def names_only(condition: str, source: str) -> bool:
    """Whether every column ``condition`` names is qualified by ``source`` (so the
    condition is decided by a source row alone), with no subquery."""
    tree = Condition(condition).tree
    if any(isinstance(n, exp.Query) for n in tree.walk()):
        return False
    return all(_qualifier(c) == source.lower() for c in tree.find_all(exp.Column))
