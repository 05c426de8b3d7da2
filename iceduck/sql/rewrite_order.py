"""The ``sort_order`` argument of ``rewrite_data_files``: Spark's text for the order a sort
compaction writes, either sort terms as in ``ALTER TABLE ... WRITE ORDERED BY``
(``'id DESC NULLS LAST, bucket(4, name)'``; Spark's defaults: ascending with nulls first,
descending with nulls last) or ``'zorder(a, b)'``, a z-order over those columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from iceduck.errors import UserError
from iceduck.sql.ddl_terms import column_path, sort_terms
from iceduck.sql.ddl_tokens import Cursor
from iceduck.sql.statements import ColumnPath, SortTerm


@dataclass(frozen=True)
class ZOrder:
    """``zorder(a, b, ...)``: the columns whose values are interleaved."""

    columns: tuple[ColumnPath, ...]


def parse_rewrite_order(text: str) -> tuple[SortTerm, ...] | ZOrder:
    """Sort terms or a :class:`ZOrder`; UserError naming what could not be read."""
    if not text.strip():
        raise UserError("sort_order is empty: give sort terms ('id DESC, name') or zorder(a, b)")
    c = Cursor.of(text, spark=True)
    if c.at("ZORDER") and c.at_type(TokenType.L_PAREN, 1):
        c.next()
        c.next()
        columns = [column_path(c)]
        while c.accept_type(TokenType.COMMA):
            columns.append(column_path(c))
        c.expect_type(TokenType.R_PAREN, ") after the zorder columns")
        if not c.done():
            raise UserError(f"sort_order {text!r}: zorder(...) cannot be combined with other sort terms")
        return ZOrder(tuple(columns))
    terms = sort_terms(c)
    if not c.done():
        raise c.error("a comma or the end of the sort order")
    return terms
