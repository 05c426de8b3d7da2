"""How a compaction lays rows out in its new files: the SQL that numbers the output file of
each row of a file group.

*bin-pack* keeps the rows' order and lets the writer roll files at the target size.
*sort* orders the whole group by a sort order and cuts it into consecutive runs of about a
target file's worth of rows, so the files of a partition cover disjoint ranges of the
first sort column (the writer's own per-file sort then orders each file: DuckDB's
partitioned ``COPY`` does not keep a query's order across files, so the cut must be
explicit). *z-order* does the same on a z-value.

The z-value: DuckDB has no z-order function, so it is computed in SQL. Each column's value
is replaced by its order-preserving rank among the group's distinct values
(``dense_rank() - 1``, nulls first), scaled to ``BITS`` bits (``rank * (2^BITS - 1) /
max rank``) so that columns with few and many distinct values weigh the same, and the bits
of the scaled ranks are interleaved, most significant first: bit ``b`` of column ``j`` of
``n`` columns lands at bit ``b * n + (n - 1 - j)`` of the z-value (a HUGEINT, which holds
the 16 x 8 bits of up to eight columns). Rows close in every column get close z-values, so
each file of the cut covers a small box of the columns' space. Ranks rather than raw values
make it work for every orderable type (strings, dates, decimals), as Java's ``zorder``
maps values to order-preserving bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from iceduck.errors import UserError

#: bits of each column's scaled rank in the z-value
BITS = 16
#: the most columns a z-value interleaves (16 bits each in a 128-bit HUGEINT)
MAX_ZORDER_COLUMNS = 8

CHUNK = "__iceduck_chunk"


def zorder_chunks_sql(relation: str, items: str, columns: Sequence[str], rows_per_file: int) -> str:
    """``items`` of ``relation`` plus the output file number (:data:`CHUNK`) of each row,
    cutting the rows in z-value order into runs of ``rows_per_file``."""
    n = len(columns)
    if not 1 <= n <= MAX_ZORDER_COLUMNS:
        raise UserError(f"zorder takes 1 to {MAX_ZORDER_COLUMNS} columns, not {n}")
    top = (1 << BITS) - 1
    dense = ", ".join(
        f"dense_rank() OVER (ORDER BY {c} ASC NULLS FIRST) - 1 AS __iceduck_r{j}"
        for j, c in enumerate(columns)
    )
    scaled = ", ".join(
        f"CAST(__iceduck_r{j} * {top} // greatest(max(__iceduck_r{j}) OVER (), 1) AS HUGEINT) "
        f"AS __iceduck_z{j}"
        for j in range(n)
    )
    bits = " + ".join(
        f"(((__iceduck_z{j} >> {b}) & 1) << {b * n + (n - 1 - j)})" for j in range(n) for b in range(BITS)
    )
    ranked = f"SELECT *, {dense} FROM {relation}"
    with_z = f"SELECT *, {scaled} FROM ({ranked})"
    return (
        f"SELECT {items}, (row_number() OVER (ORDER BY {bits}) - 1) // {rows_per_file} AS {CHUNK} "
        f"FROM ({with_z})"
    )


def sorted_chunks_sql(relation: str, items: str, order_by: str, rows_per_file: int) -> str:
    """``items`` of ``relation`` plus the output file number of each row, cutting the rows
    in ``order_by`` order (`` ORDER BY ...``) into runs of ``rows_per_file``."""
    return (
        f"SELECT {items}, (row_number() OVER ({order_by.strip()}) - 1) // {rows_per_file} AS {CHUNK} "
        f"FROM {relation}"
    )


def rows_per_file(records: int, size_bytes: int, target_size: int) -> int:
    """Rows making about ``target_size`` bytes, at the input files' bytes per row."""
    if records <= 0 or size_bytes <= 0:
        return max(records, 1)
    per_row = size_bytes / records
    return max(1, int(target_size / per_row))
