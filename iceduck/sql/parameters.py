"""Which of a statement's parameters a piece of its SQL uses, read from sqlglot's tokens.

A write statement runs as several DuckDB statements (the rows a DELETE matches, an
UPDATE's new values, an INSERT's query...), each a piece of the user's text, and DuckDB
refuses parameters a text does not use. So each piece is given the subset it names.
Parameters are found as the tokenizer reads them -- a ``$`` token followed, without a gap,
by a number (``$1``) or a name (``$name``) -- so a ``'$1'`` in a string literal, a
``$$...$$`` string or a comment is text, never a parameter. ``?`` placeholders were
numbered ``$1, $2, ...`` when the statement was parsed (:func:`iceduck.sql.parse.normalise`),
in the same token-aware way.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from sqlglot.tokens import TokenType

from iceduck.errors import UserError
from iceduck.sql.parse import tokenize


def parameter_names(sql: str) -> frozenset[str]:
    """The parameters ``sql`` uses: ``"1"`` for ``$1``, ``"name"`` for ``$name``.

    Text the tokenizer cannot read names none: DuckDB then reports its own syntax error.
    """
    if "$" not in sql:  # the common case needs no tokenizing
        return frozenset()
    try:
        tokens = tokenize(sql)
    except UserError:
        return frozenset()
    return frozenset(
        after.text
        for token, after in pairwise(tokens)
        if token.token_type is TokenType.PARAMETER and after.start == token.end + 1
    )


def parameters_used(sql: str, params: Any) -> Any:
    """The statement's parameters that ``sql`` (a piece of the statement) uses, as DuckDB
    takes them: positional ones by number (``{"2": v}`` binds ``$2``), named ones by
    name; None when it uses none."""
    if not params:
        return None
    used = parameter_names(sql)
    if not used:
        return None
    if isinstance(params, dict):
        return {k: v for k, v in params.items() if k in used}
    values = list(params)
    return {n: values[int(n) - 1] for n in used if n.isdigit() and 0 < int(n) <= len(values)}


def parameters_left(statement_text: str, rewritten: str, params: Any) -> Any:
    """The parameters DuckDB takes for ``rewritten``, the text iceduck made of the
    statement: all of them while it uses every parameter the statement used (so DuckDB
    still refuses a wrong count), else only those it uses -- a time-travel clause
    (``VERSION AS OF ?``) is resolved by iceduck and leaves the text with its parameter."""
    if not params:
        return params
    left = parameter_names(rewritten)
    if left >= parameter_names(statement_text):
        return params
    return parameters_used(rewritten, params)
