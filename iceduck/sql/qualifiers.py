"""Columns qualified by a table's full name in queries, DELETE, UPDATE and MERGE.

Spark resolves a qualified column against every suffix of the relation's qualifier
(``catalog.namespace.table``): with ``MERGE INTO db.t ...`` and no alias, ``t.k``,
``db.t.k`` and ``iceduck.db.t.k`` all name column ``k`` of the target, and DuckDB does the
same for its own tables. iceduck runs the statement over a *relation* that reads the
table, aliased by the statement's alias or the table's name (``... AS "t"``), so DuckDB
knows the target by that one name only: ``db.t.k`` is a binder error there.

:func:`requalify` rewrites, in the statement's expression texts, every column whose
leading parts are one of those qualifiers to start with the alias instead
(``db.t.k`` -> ``"t".k``); everything else stays byte for byte. It finds the columns
with sqlglot's tree, so a table named in a subquery (``FROM db.t.files``) is never
mistaken for a column. As in Spark and DuckDB, an explicit alias hides the table's
name: then no rewrite applies (callers pass no qualifiers), and ``db.t.k`` stays an
error naming ``db.t``.

A column of the same spelling as a qualifier plus field (a struct column ``db`` with a
field ``t``) is read as the qualified column, as Spark tries qualifiers before nested
fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from sqlglot import exp, parse_one
from sqlglot.errors import ParseError, TokenError

from iceduck.errors import UserError
from iceduck.sql.condition import Condition
from iceduck.sql.parse import DIALECT
from iceduck.sql.references import TableRef
from iceduck.sql.rewrite import quote_identifier, splice
from iceduck.sql.statements import ColumnPath, Delete, Merge, MergeClause, Name, Update

#: a ``[start, end)`` span of the text and what replaces it
Edit = tuple[tuple[int, int], str]
#: wraps an expression so sqlglot parses it as a query; offsets are shifted back by its length
_PREFIX = "SELECT "


def qualifiers(*names: Sequence[str]) -> tuple[Name, ...]:
    """The qualifiers that name a table whose full names are ``names`` (say the
    catalog-qualified identifier and the name as written): every suffix of two parts or
    more, longest first, lower-cased (Spark and DuckDB compare names without case). The
    one-part suffix is the relation's alias, which DuckDB already knows."""
    found: list[Name] = []
    for name in names:
        parts = tuple(p.lower() for p in name)
        found += [parts[i:] for i in range(len(parts) - 1)]
    return tuple(sorted(set(found), key=lambda q: (-len(q), q)))


def table_qualifiers(catalog: str, identifier: Name, written: Name) -> tuple[Name, ...]:
    """The qualifiers of a table loaded as ``identifier`` (namespace and name) from
    ``catalog``, and written ``written`` in the statement (which may name a branch, or
    start with the catalog)."""
    spelled = written if written and written[0].lower() == catalog.lower() else (catalog, *written)
    return qualifiers((catalog, *identifier), spelled)


def requalify(text: str, names: Sequence[Name], alias: str) -> str:
    """``text`` (a DuckDB expression) with each column starting with one of ``names`` (see
    :func:`qualifiers`) starting with the quoted ``alias`` instead. A text sqlglot cannot
    parse is returned unchanged: DuckDB then judges it as written."""
    if not _may_name(text, names):
        return text
    try:
        tree = parse_one(_PREFIX + text, read=DIALECT)
    except (ParseError, TokenError):
        return text
    return _requalified(text, tree, names, alias, len(_PREFIX))


def requalify_condition(condition: Condition, names: Sequence[Name], alias: str) -> Condition:
    """:func:`requalify` of a condition, reading the tree it carries; the same condition
    when nothing changes (or sqlglot cannot read it: DuckDB then judges it as written)."""
    if not _may_name(condition.text, names):
        return condition
    try:
        tree = condition.tree
    except UserError:
        return condition
    text = _requalified(condition.text, tree, names, alias, 0)
    return condition if text == condition.text else Condition(text)


def _may_name(text: str, names: Sequence[Name]) -> bool:
    """Whether ``text`` may hold one of ``names`` (a cheap test before reading a tree)."""
    lowered = text.lower()
    return bool(names) and any(q[0] in lowered for q in names)


def _requalified(text: str, tree: exp.Expr, names: Sequence[Name], alias: str, shift: int) -> str:
    """``text``, whose tree is ``tree`` (spans ``shift`` characters after the text's), with
    its columns qualified by ``names`` qualified by ``alias`` instead."""
    edits = []
    for column in tree.find_all(exp.Column):
        span = _qualifier_span(column.parts, names)
        if span is not None:
            edits.append(((span[0] - shift, span[1] - shift), quote_identifier(alias)))
    return splice(text, edits) if edits else text


def query_edits(
    tree: exp.Expression,
    refs: Sequence[TableRef],
    catalog: str,
    identifiers: Mapping[int, Name] | None = None,
) -> list[Edit]:
    """The edits that let a query name columns by the full name of a table it reads
    without an alias (``SELECT db.t.k FROM db.t``, ``iceduck.db.t.k``): the reference
    becomes ``(SELECT ...) AS "t"`` (:func:`iceduck.sql.rewrite.replacement`), so each
    such qualifier is replaced by that alias, as :func:`requalify` does for DML.
    ``identifiers`` gives, by ``id(ref.node)``, the namespace and name a reference was
    resolved to (``orders`` read in the current namespace ``db`` is also ``db.orders``)."""
    resolved = identifiers or {}
    targets = [
        (table_qualifiers(catalog, resolved.get(id(ref.node), ()), ref.parts), ref.parts[-1], _scope(ref))
        for ref in refs
        if ref.parts and not ref.alias and isinstance(ref.node.parent, exp.From | exp.Join)
    ]
    if not targets:
        return []
    edits: list[Edit] = []
    for column in tree.find_all(exp.Column):
        for names, alias, scope in targets:
            span = _qualifier_span(column.parts, names)
            if span is not None and _inside(column, scope):
                edits.append((span, quote_identifier(alias)))
                break
    return edits


def _scope(ref: TableRef) -> exp.Expr | None:
    """The SELECT whose FROM reads ``ref``: its columns and its subqueries' see the table
    by name; a column outside it (``SELECT db.t.k FROM (SELECT * FROM db.t)``) does not."""
    return ref.node.find_ancestor(exp.Select)


def _inside(node: exp.Expr, scope: exp.Expr | None) -> bool:
    parent: exp.Expr | None = node
    while parent is not None:
        if parent is scope:
            return True
        parent = parent.parent
    return scope is None


def _qualifier_span(parts: Sequence[exp.Expr], names: Sequence[Name]) -> tuple[int, int] | None:
    """The ``[start, end)`` text range of the leading parts of a column that match one of
    ``names`` (longest first) and leave at least the column's name after them."""
    spelled = [p.name.lower() for p in parts]
    for q in names:
        if len(spelled) > len(q) and tuple(spelled[: len(q)]) == q:
            first, last = parts[0].meta, parts[len(q) - 1].meta
            if "start" in first and "end" in last:
                return first["start"], last["end"] + 1
    return None


def strip_qualifier(path: ColumnPath, names: Sequence[Name]) -> ColumnPath:
    """An assignment target without a leading qualifier (``SET db.t.v = 1`` sets ``v``)."""
    spelled = tuple(p.lower() for p in path)
    for q in names:
        if len(spelled) > len(q) and spelled[: len(q)] == q:
            return path[len(q) :]
    return path


def _assignments(
    assignments: Sequence[tuple[ColumnPath, str]], names: Sequence[Name], alias: str
) -> tuple[tuple[ColumnPath, str], ...]:
    return tuple((strip_qualifier(p, names), requalify(value, names, alias)) for p, value in assignments)


def _optional(condition: Condition | None, names: Sequence[Name], alias: str) -> Condition | None:
    return None if condition is None else requalify_condition(condition, names, alias)


def requalify_delete(stmt: Delete, names: Sequence[Name], alias: str) -> Delete:
    """``stmt`` with its condition's target columns qualified by ``alias``."""
    return dataclasses.replace(stmt, where=_optional(stmt.where, names, alias))


def requalify_update(stmt: Update, names: Sequence[Name], alias: str) -> Update:
    """``stmt`` with the target columns of its assignments and condition qualified by
    ``alias`` (the FROM relations are left alone: they are names of other tables)."""
    return dataclasses.replace(
        stmt,
        assignments=_assignments(stmt.assignments, names, alias),
        where=_optional(stmt.where, names, alias),
    )


def requalify_merge(
    stmt: Merge, target: Sequence[Name], target_alias: str, source: Sequence[Name], source_alias: str
) -> Merge:
    """``stmt`` with target and source columns qualified by their aliases, in the ON
    condition, the clause conditions and the UPDATE and INSERT values."""

    def both(text: str) -> str:
        return requalify(requalify(text, target, target_alias), source, source_alias)

    on = requalify_condition(requalify_condition(stmt.on, target, target_alias), source, source_alias)

    def clause(c: MergeClause) -> MergeClause:
        return dataclasses.replace(
            c,
            condition=None if c.condition is None else both(c.condition),
            assignments=tuple((strip_qualifier(p, target), both(v)) for p, v in c.assignments),
            insert_values=tuple(both(v) for v in c.insert_values),
        )

    return dataclasses.replace(stmt, on=on, clauses=tuple(clause(c) for c in stmt.clauses))
