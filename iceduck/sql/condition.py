"""The condition of a DELETE or UPDATE (``WHERE``) and of a MERGE (``ON``): text and tree.

A condition is used twice: DuckDB evaluates it, as the user's text *verbatim* inside the
query that finds the affected rows (regenerating SQL from sqlglot's tree could subtly
change DuckDB-specific syntax, see :mod:`iceduck.sql.parse`), and iceduck reads its tree
to derive the Iceberg row filter that prunes files (:func:`iceduck.sql.filters.row_filter`)
and to find columns qualified by the table's full name
(:func:`iceduck.sql.qualifiers.requalify_condition`). The tree is parsed once, when first
needed, and kept with the text: a statement is cached by the session, so a repeated
DELETE with new parameters parses its condition no more. It is parsed on first use
rather than with the statement so that errors keep their order (an unknown table is
reported before a condition sqlglot cannot read).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from iceduck.errors import UserError
from iceduck.sql.parse import DIALECT, NESTED_TOO_DEEPLY


@dataclass(frozen=True)
class Condition:
    """A boolean DuckDB expression of a write statement: ``text`` as written (normalised
    like the statement: ``?`` numbered ``$1``..., backquoted names double-quoted).
    Conditions are equal when their texts are."""

    text: str

    @cached_property
    def tree(self) -> exp.Expr:
        """The sqlglot tree of :attr:`text` (spans index :attr:`text`); UserError when
        sqlglot cannot read it. Never modify it: copy first."""
        return parse_condition(self.text)


def parse_condition(text: str) -> exp.Expr:
    """``text`` parsed as a WHERE condition is (sqlglot's DuckDB dialect)."""
    try:
        trees = DIALECT.parse_into(exp.Condition, text)
    except (ParseError, TokenError) as e:
        raise UserError(f"cannot read the condition {text!r}: {e}") from e
    except RecursionError:
        raise UserError(NESTED_TOO_DEEPLY) from None
    tree = trees[0] if trees else None
    if tree is None:
        raise UserError(f"cannot read the condition {text!r}")
    return tree
