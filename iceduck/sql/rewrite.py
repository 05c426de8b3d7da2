"""Replacing Iceberg table references in the SQL text by the DuckDB relations that read them.

The statement DuckDB runs is the user's text with each reference's span (name plus any
time-travel clause, :class:`~iceduck.sql.references.TableRef`) replaced by a relation:
the scan's SELECT as a derived table ``(SELECT ...)``, or the name of a view or of a
registered Arrow table. Everything else -- DuckDB-only syntax, comments, parameter
markers -- stays byte for byte, which regenerating SQL from sqlglot's tree could not
promise.

A reference written without an alias gets its table name as alias (``ns.t`` becomes
``(SELECT ...) AS "t"``), so ``t.col`` keeps resolving as it did; an explicit alias
follows the span and stays where it is.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from iceduck.errors import UserError
from iceduck.sql.references import TableRef


def quote_identifier(name: str) -> str:
    """A DuckDB identifier, always quoted (``"`` doubled) so any name is safe."""
    return '"' + name.replace('"', '""') + '"'


def replacement(ref: TableRef, relation: str) -> str:
    """The text that replaces ``ref``: ``relation`` (SQL: a quoted name or a parenthesised
    SELECT), aliased like the original name would be."""
    if ref.alias or not isinstance(ref.node.parent, exp.From | exp.Join):
        return relation  # aliased already, or not in a FROM clause (DESCRIBE t)
    implicit = ref.parts[-1] if ref.parts else ref.function
    return f"{relation} AS {quote_identifier(implicit)}"


def splice(text: str, edits: Iterable[tuple[tuple[int, int], str]]) -> str:
    """``text`` with each ``[start, end)`` span replaced; spans must not overlap."""
    ordered = sorted(edits, key=lambda edit: edit[0][0])
    pieces: list[str] = []
    position = 0
    for (start, end), new_text in ordered:
        if start < position or end < start or end > len(text):
            raise UserError(f"internal: overlapping or invalid rewrite span {start}..{end}")
        pieces.append(text[position:start])
        pieces.append(new_text)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def rewrite(
    text: str,
    relations: Iterable[tuple[TableRef, str]],
    more: Iterable[tuple[tuple[int, int], str]] = (),
) -> str:
    """``text`` with every reference replaced by its relation (see the module docstring),
    and the ``more`` edits made too (qualified columns: :mod:`iceduck.sql.qualifiers`)."""
    edits = [(ref.span, replacement(ref, relation)) for ref, relation in relations]
    return splice(text, [*edits, *more])
