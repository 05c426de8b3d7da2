"""``executemany`` of ``INSERT INTO t VALUES (?, ?)`` as one statement, hence one Iceberg commit.

Run row by row, ``executemany`` over 10,000 rows would make 10,000 snapshots, each with
its own data file, manifest and metadata file. Instead, a statement whose VALUES row is
made of parameter markers only is rewritten so that every parameter becomes a *column*
of values::

    INSERT INTO ns.t (a, b) VALUES (?, ?)          -- with [(1, 'x'), (2, 'y'), ...]
    INSERT INTO ns.t (a, b) SELECT unnest($1), unnest($2)   -- with [[1, 2, ...], ['x', 'y', ...]]

DuckDB unnests the lists side by side (row order kept) and iceduck's INSERT writes them
as one data file set in one commit. The text does not grow with the batch, so the parsed
statement is cached and a batch of any size costs one parse. Named markers (``$name``
with dicts) and numbered ones (``$1``) are rewritten the same way.

Anything else (expressions around the markers, ``INSERT OVERWRITE``, other statements,
rows of the wrong shape) is run once per row by the caller, as PEP 249 describes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_NAME = r'(?:"(?:[^"]|"")*"|[A-Za-z_][\w$]*)'
_MARKER = r"(?:\?|\$\w+)"
_INSERT = re.compile(
    rf"""^\s*
    (?P<head>INSERT\s+INTO\s+{_NAME}(?:\s*\.\s*{_NAME})*  # the target, dotted
      (?:\s*\((?:"(?:[^"]|"")*"|[^()"])*\))?)            # an optional column list
    \s*VALUES\s*\(\s*(?P<markers>{_MARKER}(?:\s*,\s*{_MARKER})*)\s*\)
    \s*;?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True)
class BatchInsert:
    """One INSERT statement and its parameters covering every row of an ``executemany``."""

    sql: str
    parameters: list[Any] | dict[str, Any]
    rows: int


def batch_insert(sql: str, rows: Sequence[Any]) -> BatchInsert | None:
    """The single statement inserting ``rows`` through ``sql``; None when it cannot be batched."""
    match = _INSERT.match(sql)
    if match is None or not rows:
        return None
    markers = [m.strip() for m in match["markers"].split(",")]
    if all(m == "?" for m in markers):
        columns = _positional(rows, list(range(len(markers))))
        names = [f"${i}" for i in range(1, len(markers) + 1)]
    elif all(m[1:].isdigit() for m in markers):
        positions = [int(m[1:]) - 1 for m in markers]
        width = max(positions) + 1
        if sorted(set(positions)) != list(range(width)):
            return None
        columns = _positional(rows, list(range(width)))
        names = markers
    elif all(m.startswith("$") and not m[1:].isdigit() for m in markers):
        return _named(match["head"], markers, rows)
    else:
        return None
    if columns is None:
        return None
    select = ", ".join(f"unnest({name})" for name in names)
    return BatchInsert(f"{match['head']} SELECT {select}", columns, len(rows))


def _positional(rows: Sequence[Any], positions: list[int]) -> list[list[Any]] | None:
    width = len(positions)
    if not all(isinstance(row, Sequence) and not isinstance(row, str | bytes) for row in rows):
        return None
    if any(len(row) != width for row in rows):
        return None
    return [[row[i] for row in rows] for i in positions]


def _named(head: str, markers: list[str], rows: Sequence[Any]) -> BatchInsert | None:
    keys = [m[1:] for m in markers]
    wanted = set(keys)
    if not all(isinstance(row, Mapping) and wanted <= row.keys() for row in rows):
        return None
    columns = {key: [row[key] for row in rows] for key in wanted}
    select = ", ".join(f"unnest(${key})" for key in keys)
    return BatchInsert(f"{head} SELECT {select}", columns, len(rows))
