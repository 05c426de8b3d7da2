"""``CALL [catalog.]system.<procedure>(arguments)``: Spark's stored-procedure statement, read.

Iceberg's Spark extensions run table maintenance as procedures::

    CALL iceduck.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2024-01-01')
    CALL system.rollback_to_snapshot('db.t', 1234)

Arguments are all positional or all named (``name => value``), as Spark requires. A value
is a constant: a string, a number, ``true``/``false``, ``NULL``, ``array(...)`` or
``map(k, v, ...)`` of constants -- kept as Python values -- or any other expression
(``TIMESTAMP '...'``, ``now() - INTERVAL 1 DAY``), kept as DuckDB SQL text for the
procedure's binder to evaluate as the type its parameter takes
(:mod:`iceduck.ops.procedures.arguments`). sqlglot reads ``CALL`` only as an opaque command,
so the statement's shape is read here from its tokens and each value by sqlglot's Spark
dialect, whose ``array``/``map`` are Spark's.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import Token, TokenType

from iceduck.errors import UserError
from iceduck.sql.parse import tokenize

#: the namespace Spark's procedures live in
SYSTEM = "system"
#: the leading keyword, after any comments
_CALL = re.compile(r"\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*CALL\b", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Unevaluated:
    """An argument that is an expression, not a literal: DuckDB SQL text to evaluate."""

    sql: str


@dataclass(frozen=True)
class BoundParameter:
    """An argument that is a statement parameter: ``?`` (numbered from 1 in the order they
    appear), ``$n`` or ``$name``; its value comes from the statement's parameters."""

    key: int | str


@dataclass(frozen=True)
class CallArgument:
    """One argument: its name (None when positional), value and text as written."""

    name: str | None
    value: Any
    text: str


@dataclass(frozen=True)
class CallStatement:
    """``CALL [catalog.]system.name(...)``: ``catalog`` None when not written."""

    catalog: str | None
    procedure: str
    arguments: tuple[CallArgument, ...]

    @property
    def named(self) -> bool:
        return any(a.name is not None for a in self.arguments)


def parse_call(text: str) -> CallStatement:
    """The CALL statement ``text`` holds; a UserError naming what is malformed."""
    m = _CALL.match(text)
    if m is None:
        raise UserError("a CALL statement starts with CALL")
    text = text[m.end() :]  # the tokenizer reads CALL as a command swallowing the rest
    tokens = [t for t in tokenize(text) if t.token_type is not TokenType.SEMICOLON]
    open_at = next((i for i, t in enumerate(tokens) if t.token_type is TokenType.L_PAREN), None)
    if open_at is None or tokens[-1].token_type is not TokenType.R_PAREN:
        raise UserError("CALL takes a procedure and its arguments: CALL system.name(arg => value, ...)")
    parts = _name(tokens[:open_at])
    if len(parts) < 2 or len(parts) > 3 or parts[-2].lower() != SYSTEM:
        shown = ".".join(parts) or "nothing"
        raise UserError(f"CALL names a procedure as [catalog.]system.name, not {shown}")
    catalog = parts[0] if len(parts) == 3 else None
    arguments = _numbered(tuple(_argument(text, group) for group in _split(tokens[open_at + 1 : -1])))
    named = [a for a in arguments if a.name is not None]
    if named and len(named) != len(arguments):
        raise UserError("named and positional arguments cannot be mixed in a CALL")
    seen: set[str] = set()
    for argument in named:
        assert argument.name is not None
        if argument.name in seen:
            raise UserError(f"duplicate procedure argument: {argument.name}")
        seen.add(argument.name)
    return CallStatement(catalog, parts[-1].lower(), arguments)


def _numbered(arguments: tuple[CallArgument, ...]) -> tuple[CallArgument, ...]:
    """``?`` parameters numbered in the order they appear (inside ``array``/``map`` too), as
    DuckDB numbers them."""
    count = itertools.count(1)

    def number(value: Any) -> Any:
        if value == BoundParameter(0):
            return BoundParameter(next(count))
        if isinstance(value, list):
            return [number(v) for v in value]
        if isinstance(value, dict):
            return {number(k): number(v) for k, v in value.items()}
        return value

    return tuple(CallArgument(a.name, number(a.value), a.text) for a in arguments)


def _name(tokens: list[Token]) -> tuple[str, ...]:
    names = [t.text for t in tokens if t.token_type is not TokenType.DOT]
    if len(tokens) != 2 * len(names) - 1 or any(
        (t.token_type is TokenType.DOT) != (i % 2 == 1) for i, t in enumerate(tokens)
    ):
        return ()
    return tuple(names)


def _split(tokens: list[Token]) -> list[list[Token]]:
    """The arguments' tokens, split at the commas outside parentheses."""
    groups: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        if token.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif token.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1
        if token.token_type is TokenType.COMMA and depth == 0:
            groups.append([])
        else:
            groups[-1].append(token)
    if groups == [[]]:
        return []
    if any(not g for g in groups):
        raise UserError("a CALL argument is missing between commas")
    return groups


def _argument(text: str, tokens: list[Token]) -> CallArgument:
    name = None
    if len(tokens) > 2 and tokens[1].token_type is TokenType.FARROW:
        name = tokens[0].text.lower()
        tokens = tokens[2:]
    value_text = text[tokens[0].start : tokens[-1].end + 1]
    return CallArgument(name, _value(value_text), value_text)


def _value(text: str) -> Any:
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except ParseError as e:
        raise UserError(f"cannot read the CALL argument {text!r}: {str(e).splitlines()[0]}") from e
    return _constant(tree)


def _constant(tree: exp.Expr) -> Any:
    """A literal's Python value; an expression as :class:`Unevaluated` DuckDB text."""
    if isinstance(tree, exp.Literal):
        if tree.is_string:
            return tree.this
        number = str(tree.this)
        return int(number) if number.lstrip("-").isdigit() else float(number)
    if isinstance(tree, exp.Boolean):
        return bool(tree.this)
    if isinstance(tree, exp.Null):
        return None
    if isinstance(tree, exp.Neg) and isinstance(tree.this, exp.Literal) and not tree.this.is_string:
        value = _constant(tree.this)
        return -value
    if isinstance(tree, exp.Array):
        return [_constant(e) for e in tree.expressions]
    if isinstance(tree, exp.VarMap):
        keys = [_constant(k) for k in tree.args["keys"].expressions]
        values = [_constant(v) for v in tree.args["values"].expressions]
        return dict(zip(keys, values, strict=True))
    if isinstance(tree, exp.Placeholder) and tree.this is None:
        return BoundParameter(0)  # numbered by _numbered
    if isinstance(tree, exp.Parameter):
        key = str(tree.this.this if isinstance(tree.this, exp.Expr) else tree.this)
        return BoundParameter(int(key) if key.isdigit() else key)
    if any(isinstance(node, exp.Placeholder | exp.Parameter) for node in tree.walk()):
        raise UserError(f"a parameter must be a whole CALL argument, not part of {tree.sql('spark')}")
    return Unevaluated(tree.sql("duckdb"))
