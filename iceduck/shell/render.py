"""How the shell prints rows: the output modes ``box`` (default), ``csv``, ``json``, ``markdown``, ``line``.

A :class:`Writer` takes the column names and DuckDB types once, then rows in chunks, then
``finish``: ``csv``, ``json`` and ``line`` stream (batch mode prints millions of rows without
holding them), while ``box`` and ``markdown`` buffer the rows they show, since their column
widths depend on every row. Grids fit a terminal ``width`` when one is given, as DuckDB's
CLI does: a column is as wide as its widest value as long as the terminal holds it; else the
columns of free text shrink first (cells end in ``…``; a path keeps its distinctive end and
loses its common prefix), numbers, timestamps and other fixed-width values stay whole, and
then trailing columns are dropped behind a ``…`` column. Without a width (a pipe, a file)
no column is wider than :data:`MAX_WIDTH`.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import io
import json
import math
import re
import uuid
from collections.abc import Sequence
from typing import Any, TextIO

MODES = ("box", "csv", "json", "markdown", "line")
#: to fit the terminal, grid columns shrink down to this many characters; then trailing ones go
MIN_WIDTH = 10
#: without a terminal width (output to a pipe or file), no column is wider than this
MAX_WIDTH = 80
NULL = "NULL"
ELLIPSIS = "…"
#: DuckDB types printed right-aligned in grids
_NUMERIC = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
    "REAL",
    "NUMBER",
)
#: DuckDB types whose values are short and only useful whole: grids shrink other columns first
_FIXED = (*_NUMERIC, "DATE", "TIME", "TIMESTAMP", "INTERVAL", "UUID", "BOOLEAN")
#: a file path or URI (no spaces, a slash): cut at its start, since its end tells files apart
_PATH = re.compile(r"(?:/|\.{1,2}/|[A-Za-z][\w+.-]*:/*)[^\s]*/[^\s]*")


# -- values -----------------------------------------------------------------------------------------


def format_value(value: Any) -> str:
    """A value as text, as DuckDB's shell shows it (``NULL``, ``true``, ``[1, 2]``, ``{'a': 1}``)."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in bytes(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_nested(k)}: {_nested(v)}" for k, v in value.items()) + "}"
    return str(value)


def _nested(value: Any) -> str:
    """An element of a list or struct: strings quoted, as DuckDB prints them."""
    if isinstance(value, str):
        return "'" + value.replace("'", "\\'") + "'"
    return format_value(value)


def json_value(value: Any) -> str:
    """A value as JSON text: numbers stay numbers (decimals exact), dates and UUIDs are strings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "null"
    if isinstance(value, decimal.Decimal):
        return str(value) if value.is_finite() else "null"
    if isinstance(value, list | tuple):
        return "[" + ",".join(json_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{json_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bytes | bytearray | memoryview):
        return json.dumps(base64.b64encode(bytes(value)).decode("ascii"))
    if isinstance(value, dt.date | dt.time | dt.timedelta | uuid.UUID):
        return json.dumps(str(value))
    return json.dumps(str(value), ensure_ascii=False)


def is_numeric(duck_type: str) -> bool:
    return duck_type.upper().startswith(_NUMERIC)


def is_fixed(duck_type: str) -> bool:
    """Whether values of ``duck_type`` keep their width when a grid must shrink (numbers, times)."""
    return duck_type.upper().startswith(_FIXED)


def _cell(value: Any, lines: bool = False) -> str:
    """A grid cell: one line (newlines and tabs shown escaped); with ``lines`` (box mode, as
    DuckDB's CLI), a multi-line value (``SHOW CREATE TABLE``) keeps its newlines and is
    printed as lines of the cell."""
    text = format_value(value).replace("\t", "\\t")
    if lines:
        return text.replace("\r\n", "\n").replace("\r", "\\r")
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _text_width(text: str) -> int:
    """The width of a cell: of its longest line."""
    return max(len(line) for line in text.split("\n")) if "\n" in text else len(text)


def _cell_lines(cells: Sequence[str]) -> list[list[str]]:
    """A row whose cells may hold several lines as that many lines of cells (shorter cells
    padded with empty lines)."""
    parts = [c.split("\n") for c in cells]
    height = max((len(p) for p in parts), default=1)
    return [[p[k] if k < len(p) else "" for p in parts] for k in range(height)]


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters: a path loses its start (``…/data/00001.parquet``),
    other text its end."""
    if len(text) <= width:
        return text
    if width > 1 and _PATH.fullmatch(text):
        return ELLIPSIS + text[len(text) - width + 1 :]
    return text[: max(width - 1, 0)] + ELLIPSIS


def fit_widths(
    natural: Sequence[int], width: int | None, border: int, fixed: Sequence[bool] = ()
) -> tuple[list[int], bool]:
    """Column widths fitting ``width`` characters (``border`` per column plus one), and whether
    trailing columns had to be dropped (the caller then adds a one-character ``…`` column).

    Columns marked ``fixed`` (numbers, timestamps) shrink only when a single column is left
    that is still too wide: a cut number or timestamp misleads, a cut comment does not."""
    if width is None:
        return [min(w, MAX_WIDTH) for w in natural], False
    widths = list(natural)
    fixed = list(fixed) + [False] * (len(widths) - len(fixed))
    total = lambda ws: sum(ws) + border * len(ws) + 1  # noqa: E731
    while total(widths) > width:
        flexible = [i for i in range(len(widths)) if not fixed[i] and widths[i] > MIN_WIDTH]
        if not flexible:
            break
        widths[max(flexible, key=lambda i: widths[i])] -= 1
    if total(widths) <= width:
        return widths, False
    dropped = False
    while len(widths) > 1 and total([*widths, 1]) > width:  # room for the `…` column too
        widths.pop()
        dropped = True
    extra = 1 + border if dropped else 0
    if len(widths) == 1 and total(widths) + extra > width:  # one column, still too wide: cut it
        widths[0] = max(width - border - 1 - extra, 1)
    return widths, dropped


def footer(shown: int, more: bool, total: int | None = None) -> str:
    """``3 rows``, or ``40 rows shown of 1,000,000 (.maxrows N to change, 0 for all)`` when the
    row limit cut the result (``total`` None: the rest was not counted)."""
    noun = "row" if shown == 1 else "rows"
    if more:
        of = f" of {total:,}" if total is not None else ", more not counted"
        return f"{shown} {noun} shown{of} (.maxrows N to change, 0 for all)"
    return f"{shown} {noun}"


# -- writers ----------------------------------------------------------------------------------------


class Writer:
    """Prints one result: ``start`` once, ``rows`` per chunk, ``finish`` once."""

    def __init__(self, out: TextIO, width: int | None = None) -> None:
        self.out = out
        self.width = width
        self.columns: list[str] = []
        self.types: list[str] = []
        self.count = 0

    def start(self, columns: Sequence[str], types: Sequence[str]) -> None:
        self.columns, self.types = list(columns), list(types)

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def finish(self, more: bool = False, total: int | None = None) -> None:
        """``more``: the row limit cut the result short, ``total`` rows in all (grids say so
        in their footer)."""


class CsvWriter(Writer):
    """RFC 4180 with a header line; NULL is an empty field."""

    def start(self, columns: Sequence[str], types: Sequence[str]) -> None:
        super().start(columns, types)
        self._csv = csv.writer(self.out, lineterminator="\n")
        self._csv.writerow(self.columns)

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self._csv.writerows([["" if v is None else format_value(v) for v in row] for row in rows])
        self.count += len(rows)


class JsonWriter(Writer):
    """A JSON array of objects, one row per line (as DuckDB's ``.mode json``)."""

    def start(self, columns: Sequence[str], types: Sequence[str]) -> None:
        super().start(columns, types)
        self._keys = [json.dumps(c, ensure_ascii=False) for c in self.columns]

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        for row in rows:
            body = ",".join(f"{k}:{json_value(v)}" for k, v in zip(self._keys, row, strict=True))
            self.out.write(("[" if self.count == 0 else ",\n") + "{" + body + "}")
            self.count += 1

    def finish(self, more: bool = False, total: int | None = None) -> None:
        self.out.write("[]\n" if self.count == 0 else "]\n")


class LineWriter(Writer):
    """One ``column = value`` line per value, rows separated by a blank line (sqlite's line mode)."""

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        pad = max((len(c) for c in self.columns), default=0)
        for row in rows:
            if self.count:
                self.out.write("\n")
            for name, value in zip(self.columns, row, strict=True):
                self.out.write(f"{name.rjust(pad)} = {format_value(value)}\n")
            self.count += 1


class _GridWriter(Writer):
    """Buffers the rows shown, then prints them with widths that fit every row."""

    def start(self, columns: Sequence[str], types: Sequence[str]) -> None:
        super().start(columns, types)
        self._cells: list[list[str]] = []

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self._cells.extend([_cell(v) for v in row] for row in rows)
        self.count += len(rows)

    def _layout(self, border: int, with_types: bool) -> tuple[list[int], list[bool], bool]:
        natural = [
            max(len(c), len(t) if with_types else 0, *(_text_width(r[i]) for r in self._cells))
            for i, (c, t) in enumerate(zip(self.columns, self.types, strict=True))
        ]
        fixed = [is_fixed(t) for t in self.types]
        widths, dropped = fit_widths(natural, self.width, border, fixed)
        right = [is_numeric(t) for t in self.types[: len(widths)]]
        return widths, right, dropped

    @staticmethod
    def _line(cells: Sequence[str], widths: Sequence[int], right: Sequence[bool], center: bool) -> list[str]:
        out = []
        for text, w, r in zip(cells, widths, right, strict=False):
            text = _fit(text, w)
            out.append(text.center(w) if center else text.rjust(w) if r else text.ljust(w))
        return out


class BoxWriter(_GridWriter):
    """DuckDB's box mode: names and types over the rows, the row count under them."""

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self._cells.extend([_cell(v, lines=True) for v in row] for row in rows)
        self.count += len(rows)

    def finish(self, more: bool = False, total: int | None = None) -> None:
        widths, right, dropped = self._layout(border=3, with_types=True)
        cols = len(widths)
        names, types = self.columns[:cols], [t.lower() for t in self.types[:cols]]
        rows = [r[:cols] for r in self._cells]
        if dropped:
            widths, right = [*widths, 1], [*right, False]
            names, types = [*names, ELLIPSIS], [*types, ""]
            rows = [[*r, ELLIPSIS] for r in rows]
        bar = lambda left, mid, end: left + mid.join("─" * (w + 2) for w in widths) + end  # noqa: E731
        row = lambda cells: "│ " + " │ ".join(cells) + " │"  # noqa: E731
        lines = [bar("┌", "┬", "┐"), row(self._line(names, widths, right, True))]
        lines.append(row(self._line(types, widths, right, True)))
        lines.append(bar("├", "┼", "┤"))
        lines.extend(row(self._line(line, widths, right, False)) for r in rows for line in _cell_lines(r))
        lines.append(bar("└", "┴", "┘"))
        lines.append(
            footer(self.count, more, total)
            + (f" ({len(self.columns)} columns, some not shown)" if dropped else "")
        )
        self.out.write("\n".join(lines) + "\n")


class MarkdownWriter(_GridWriter):
    """A GitHub-flavoured Markdown table (``|`` in values escaped, numbers right-aligned)."""

    def rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self._cells.extend([_cell(v).replace("|", "\\|") for v in row] for row in rows)
        self.count += len(rows)

    def finish(self, more: bool = False, total: int | None = None) -> None:
        widths, right, dropped = self._layout(border=3, with_types=False)
        widths = [max(w, 3) for w in widths]
        cols = len(widths)
        names, rows = self.columns[:cols], [r[:cols] for r in self._cells]
        if dropped:
            widths, right = [*widths, 3], [*right, False]
            names, rows = [*names, ELLIPSIS], [[*r, ELLIPSIS] for r in rows]
        row = lambda cells: "| " + " | ".join(cells) + " |"  # noqa: E731
        rule = (
            "|"
            + "|".join(
                "-" * (w + 1) + ":" if r else "-" * (w + 2) for w, r in zip(widths, right, strict=True)
            )
            + "|"
        )
        lines = [row(self._line(names, widths, right, False)), rule]
        lines.extend(row(self._line(r, widths, right, False)) for r in rows)
        if more:
            lines.append("")
            lines.append(footer(self.count, more, total))
        self.out.write("\n".join(lines) + "\n")


WRITERS: dict[str, type[Writer]] = {
    "box": BoxWriter,
    "csv": CsvWriter,
    "json": JsonWriter,
    "markdown": MarkdownWriter,
    "line": LineWriter,
}


def writer(mode: str, out: TextIO, width: int | None = None) -> Writer:
    """The writer of output mode ``mode`` (one of :data:`MODES`)."""
    return WRITERS[mode](out, width)


def render(
    mode: str,
    columns: Sequence[str],
    types: Sequence[str],
    rows: Sequence[Sequence[Any]],
    width: int | None = None,
    more: bool = False,
    total: int | None = None,
) -> str:
    """The whole text of one result (tests and small outputs)."""
    buffer = io.StringIO()
    w = writer(mode, buffer, width)
    w.start(columns, types)
    w.rows(rows)
    w.finish(more, total)
    return buffer.getvalue()
