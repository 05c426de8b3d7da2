"""Which column names a query can use, so a scan outputs only those.

Every Iceberg table in a query becomes a derived table over ``read_parquet``; DuckDB prunes
the columns nobody reads, but it still binds every column of every layer first. On TPC-DS,
whose queries name a dozen references to tables of 20-30 columns, binding the full
derived tables cost DuckDB 15-20 ms of planning per query (q83: 45 ms against 27 ms for
the same query over plain views). A scan that outputs only the columns the query can name
binds like a plain table.

The rule is conservative: a column is kept when any identifier of the statement equals its
name (case-insensitively, as DuckDB resolves names), wherever it appears -- select lists,
predicates, ``USING``, struct access (``s.a`` names ``s``), subqueries. Where a query can
use a column without naming it, nothing is pruned: ``COLUMNS(...)``, ``NATURAL`` joins,
``PIVOT``/``UNPIVOT``, and a table's row used as a value (``SELECT t FROM db.t AS t``).

A star (``*``, ``t.*``) reads whole only the tables its own SELECT reads directly in its
FROM and joins: a star over derived tables and CTEs (``SELECT * FROM (SELECT a, b FROM
db.t) AS x``, TPC-DS's usual outer query) expands to the columns they name, and a star
inside them that reads a table is judged where it stands. ``count(*)`` and the star of
``EXISTS (SELECT * ...)`` show no column at all. (Before this, any star in a statement left
every scan unpruned: 22 of the 99 TPC-DS queries, q21 binding 68 columns for the 10 it uses.)
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlglot import exp


@dataclass(frozen=True)
class ColumnsUsed:
    """What a statement can name of its tables' columns."""

    #: the lower-cased identifiers of the statement; None when a column of any table may be
    #: used unnamed (nothing is pruned)
    names: frozenset[str] | None
    #: the ``id`` of the table nodes a star reads whole (their scans are not pruned)
    whole: frozenset[int] = frozenset()


def columns_used(tree: exp.Expression, tables: Collection[int] | None = None) -> ColumnsUsed:
    """The identifiers of ``tree`` and the tables read whole by a star.

    ``tables`` are the ``id`` of the table nodes whose scans are pruned (None: every table
    node, CTE names included): a star reads whole the ones its SELECT reads directly (not
    through a subquery), except ``count(*)`` and the star of ``EXISTS (SELECT * ...)``,
    whose columns nobody sees. One walk of the tree: statements are parsed once, but this
    runs for every execution."""
    names: set[str] = set()
    relations: set[str] = set()
    bare_columns: set[str] = set()
    whole: set[int] = set()
    for node in tree.walk():
        if isinstance(node, exp.Identifier):
            names.add(node.name.lower())
        elif isinstance(node, exp.Star):
            if isinstance(node.parent, exp.Count) and node.arg_key == "this":
                continue
            select = node.find_ancestor(exp.Select)
            if select is None:
                return ColumnsUsed(None)
            if isinstance(select.parent, exp.Exists):
                continue
            whole.update(_tables_read(select, tables))
        elif isinstance(node, exp.Columns | exp.Pivot):
            return ColumnsUsed(None)
        elif isinstance(node, exp.Join):
            if str(node.args.get("method") or "").upper() == "NATURAL":
                return ColumnsUsed(None)
        elif isinstance(node, exp.Table | exp.TableAlias):
            if node.name:
                relations.add(node.name.lower())
        elif isinstance(node, exp.Column) and not node.table:
            bare_columns.add(node.name.lower())
    if bare_columns & relations:  # a table's row used as a value
        return ColumnsUsed(None)
    return ColumnsUsed(frozenset(names), frozenset(whole))


def names_used(tree: exp.Expression, tables: Collection[int] | None = None) -> frozenset[str] | None:
    """The lower-cased identifiers of ``tree``, or None when a column of one of ``tables``
    may be used unnamed (see :func:`columns_used`)."""
    used = columns_used(tree, tables)
    return None if used.whole else used.names


def _tables_read(select: exp.Select, tables: Collection[int] | None) -> list[int]:
    """The ``id`` of the ``tables`` that ``select`` reads in its FROM or joins, not counting
    subqueries (their own stars are judged where they stand)."""
    parts = [select.args.get("from_") or select.args.get("from"), *(select.args.get("joins") or ())]
    return [id(t) for part in parts if part is not None for t in _tables_in(part, tables)]


def _tables_in(node: exp.Expr, tables: Collection[int] | None) -> list[exp.Table]:
    """The table nodes of ``tables`` in ``node``, outside any subquery."""
    found: list[exp.Table] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, exp.Table) and (tables is None or id(current) in tables):
            found.append(current)
        if current is not node and (
            (isinstance(current, exp.Query) and not isinstance(current, exp.Subquery))
            or (isinstance(current, exp.Subquery) and isinstance(current.this, exp.Query))
        ):
            continue
        stack.extend(current.iter_expressions())
    return found
