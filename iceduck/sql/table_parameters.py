"""Parameters bound to tables: ``SELECT * FROM ?`` with a DataFrame or an Arrow table.

DuckDB binds a parameter to a value, never to a relation: ``FROM ?`` is a syntax error
and a DataFrame as a value is "Unable to transform python value". So a parameter whose
value is a table object, written where a table name goes (after ``FROM``, ``JOIN`` or
MERGE's ``USING``), is replaced in the text by a name (``"__iceduck_param_1"``, the
parameter's position or name) under which the session registers the object, and dropped
from the parameters DuckDB gets; the remaining ``$n`` are renumbered. The names depend
only on the parameter, so a repeated statement keeps one text (and one parsed statement).
Markers are found by token, so a ``?`` in a string or a comment is not one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot.tokens import Token, TokenType

from iceduck.errors import UserError
from iceduck.sql.parse import tokenize

#: the words a table name follows
_TABLE_POSITIONS = frozenset({"FROM", "JOIN", "USING", "DESCRIBE"})
#: the prefix of the names parameters bound to tables are registered under
PREFIX = "__iceduck_param_"


def bind_tables(
    text: str, params: Any, is_table: Callable[[Any], bool]
) -> tuple[str, Any, dict[str, Any]]:
    """``(text, params, bound)``: ``text`` with each parameter whose value ``is_table``
    replaced by a quoted name, the parameters left for DuckDB, and name -> object to
    register. Unchanged when no parameter is a table (the common case: no tokenizing)."""
    if not params:
        return text, params, {}
    values = params.items() if isinstance(params, dict) else enumerate(params, start=1)
    tables = {str(key) for key, value in values if is_table(value)}
    if not tables:
        return text, params, {}
    tokens = tokenize(text)
    edits: list[tuple[int, int, str]] = []
    bound: dict[str, Any] = {}
    placeholders = 0
    positional = isinstance(params, list | tuple)
    kept = [n for n in range(1, len(params) + 1) if str(n) not in tables] if positional else []
    renumber = {str(old): str(new) for new, old in enumerate(kept, start=1)}
    for i, token in enumerate(tokens):
        key, end = _marker(tokens, i, placeholders)
        if key is None:
            continue
        if token.token_type is TokenType.PLACEHOLDER:
            placeholders += 1
        if key in tables:
            before = tokens[i - 1].text.upper() if i > 0 else ""
            if before not in _TABLE_POSITIONS:
                raise UserError(
                    f"parameter {_shown(key, params)} is a table ({type(_value(params, key)).__name__}): "
                    "a table can only be bound where a table name goes (FROM ?, JOIN ?, USING ?)"
                )
            name = PREFIX + key
            bound[name] = _value(params, key)
            edits.append((token.start, end, f'"{name}"'))
        elif token.token_type is TokenType.PARAMETER and key in renumber and renumber[key] != key:
            edits.append((token.start, end, f"${renumber[key]}"))
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end:]
    if isinstance(params, dict):
        left: Any = {k: v for k, v in params.items() if k not in tables}
    else:
        left = [params[n - 1] for n in kept]
    return text, left, bound


def _marker(tokens: list[Token], i: int, placeholders: int) -> tuple[str | None, int]:
    """The parameter the token at ``i`` marks (``"2"`` for the second ``?`` or ``$2``,
    ``"name"`` for ``$name``) and the end of its text; (None, 0) for any other token."""
    token = tokens[i]
    if token.token_type is TokenType.PLACEHOLDER and token.text == "?":
        return str(placeholders + 1), token.end + 1
    if token.token_type is TokenType.PARAMETER and i + 1 < len(tokens):
        after = tokens[i + 1]
        if after.start == token.end + 1:
            return after.text, after.end + 1
    return None, 0


def _value(params: Any, key: str) -> Any:
    return params[key] if isinstance(params, dict) else params[int(key) - 1]


def _shown(key: str, params: Any) -> str:
    return f"${key}" if isinstance(params, dict) else key
