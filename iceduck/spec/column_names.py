"""The names under which a schema's top-level columns are seen in SQL, unique without case.

Iceberg names are case-sensitive: a Spark job with ``spark.sql.caseSensitive=true`` (or
PyIceberg) can write a table whose columns are ``user_id`` and ``uSeR_Id``, two fields with
two ids. DuckDB resolves names without case, so a relation cannot hold both under those
names: a derived table renames the later one ``uSeR_Id_1`` (and ``a``, ``a_1``, ``A`` become
``a``, ``a_1``, ``A_2``). iceduck gives the columns those names itself, from the whole
schema, so that ``SELECT *``, ``DESCRIBE``, column pruning, pushed filters and writes all
agree on which field a name means, whichever columns a statement happens to read.
"""

from __future__ import annotations

from collections.abc import Sequence

from iceduck.spec.types import NestedField


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` in order, each one that equals an earlier one without case renamed as DuckDB
    renames a derived table's duplicate column: ``<name>_1``, ``<name>_2``... (the first
    suffix not taken)."""
    taken: set[str] = set()
    out: list[str] = []
    for name in names:
        visible = name
        n = 0
        while visible.lower() in taken:
            n += 1
            visible = f"{name}_{n}"
        taken.add(visible.lower())
        out.append(visible)
    return out


def sql_names(fields: Sequence[NestedField]) -> dict[int, str]:
    """The SQL name of each top-level field of a schema (``fields``: all of them, in schema
    order), by field id: its own name unless an earlier column takes it without case."""
    return {f.field_id: name for f, name in zip(fields, unique_names([f.name for f in fields]), strict=True)}
