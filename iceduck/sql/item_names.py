"""Select-list items that DuckDB would name after text iceduck rewrote.

DuckDB names an unaliased select item after its parsed expression printed back
(``(SELECT max(id) FROM shop.orders)``, ``count_star()``). When the item holds an Iceberg
table, the text DuckDB runs holds the scan instead (:mod:`iceduck.sql.rewrite`), and the
column would be headed ``(SELECT max(id) FROM (SELECT c0 AS id ... read_parquet(...)))``
-- in the shell, in ``cursor.description``, in a DataFrame, and in the names a ``*`` over
a derived table sees. :func:`unnamed_items` finds those items in the user's text; the
session asks DuckDB what it would name each one (:func:`iceduck.engine.queries.item_names`)
and gives the rewritten item that name as an explicit alias, so the names DuckDB shows are
the names of the user's own text.

Items are found on the token stream (sqlglot's tree keeps no offsets for expressions): a
``SELECT`` opens a list at its parenthesis depth, a comma at that depth ends an item, and
a clause keyword at that depth, or the closing of the parenthesis around it, ends the list.
Whether an item has an alias is read off sqlglot's tree (an ``AS name`` or bare ``name``
after the expression), whose alias identifiers carry their offsets.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from iceduck.sql.parse import Statement

#: keywords that end a select list at its own depth
_ENDS = {
    TokenType.FROM,
    TokenType.WHERE,
    TokenType.GROUP_BY,
    TokenType.HAVING,
    TokenType.WINDOW,
    TokenType.QUALIFY,
    TokenType.ORDER_BY,
    TokenType.LIMIT,
    TokenType.OFFSET,
    TokenType.FETCH,
    TokenType.UNION,
    TokenType.EXCEPT,
    TokenType.INTERSECT,
    TokenType.INTO,
    TokenType.SEMICOLON,
}
#: words between SELECT and the first item
_MODIFIERS = {TokenType.DISTINCT, TokenType.ALL}


@dataclass
class _List:
    depth: int
    start: int | None = None  # token index of the current item's first token
    items: list[tuple[int, int]] = field(default_factory=list)  # token index ranges, inclusive


def unnamed_items(statement: Statement, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``[start, end)`` text spans of the select items written without an alias that
    contain one of ``spans`` (the rewritten references), outermost first."""
    if not spans or not _in_select_list(statement.tree):
        return []
    tokens = statement.tokens
    aliases = _alias_starts(statement.tree)
    found: list[tuple[int, int]] = []
    for first, last in _items(tokens):
        start, end = tokens[first].start, tokens[last].end + 1
        if tokens[last].start in aliases:
            continue
        if any(start <= a and b <= end for a, b in spans):
            found.append((start, end))
    return sorted(found, key=lambda span: (span[0], -span[1]))


def _in_select_list(tree: exp.Expression) -> bool:
    """Whether any table of ``tree`` sits inside a projection of some SELECT (a cheap test
    that keeps the token walk off the common path, where tables are only in FROM)."""
    for table in tree.find_all(exp.Table):
        node: exp.Expr | None = table
        while node is not None and node.parent is not None:
            if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
                return True
            node = node.parent
    return False


def _alias_starts(tree: exp.Expression) -> set[int]:
    starts = set()
    for alias in tree.find_all(exp.Alias):
        identifier = alias.args.get("alias")
        start = identifier.meta.get("start") if isinstance(identifier, exp.Identifier) else None
        if start is not None:
            starts.add(start)
    return starts


def _items(tokens: Sequence[Token]) -> Iterator[tuple[int, int]]:
    """Each select item of every SELECT in ``tokens``, as first and last token index."""
    depth = 0
    lists: list[_List] = []

    def close(upto: int) -> None:
        current = lists[-1]
        if current.start is not None and current.start <= upto:
            current.items.append((current.start, upto))
        current.start = None

    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind is TokenType.L_PAREN:
            depth += 1
        elif kind is TokenType.R_PAREN:
            depth -= 1
            while lists and lists[-1].depth > depth:
                close(i - 1)
                yield from lists.pop().items
        elif kind is TokenType.SELECT:
            lists.append(_List(depth, _first_item(tokens, i)))
        elif lists and lists[-1].depth == depth and i >= (lists[-1].start or 0):
            if kind is TokenType.COMMA:
                close(i - 1)
                lists[-1].start = i + 1
            elif kind in _ENDS and not _within_group(tokens, i):
                close(i - 1)
                yield from lists.pop().items
    while lists:
        close(len(tokens) - 1)
        yield from lists.pop().items


def _first_item(tokens: Sequence[Token], select: int) -> int:
    """The index of the first item's first token: past ``DISTINCT``, ``ALL`` and the
    parenthesised list of ``DISTINCT ON (...)``."""
    i = select + 1
    while i < len(tokens) and tokens[i].token_type in _MODIFIERS:
        i += 1
        distinct = tokens[i - 1].token_type is TokenType.DISTINCT
        if distinct and i < len(tokens) and tokens[i].token_type is TokenType.ON:
            i += 1
            depth = 0
            while i < len(tokens):
                depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(tokens[i].token_type, 0)
                i += 1
                if depth == 0:
                    break
    return i


def _within_group(tokens: Sequence[Token], i: int) -> bool:
    """``WITHIN GROUP (ORDER BY ...)`` of an ordered-set aggregate is no GROUP BY."""
    return i > 0 and tokens[i - 1].text.upper() == "WITHIN"
