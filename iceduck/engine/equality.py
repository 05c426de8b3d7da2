"""Equality deletes turned into the positions they delete, once per data file.

Spec, "Equality Delete Files": "A data row is deleted if its values are equal to all
delete columns for any row in an equality delete file that applies to the row's data
file", and "A null value in a delete column matches a row if the row's value is null".

Applied on every read, that is a hash anti-join of the whole data file against the delete
rows: 3-5x the plain scan at 10% deleted (DuckDB 2.0.1, measured). But a data file and its
delete files never change, so the rows an equality delete removes from a data file are a
fixed set of positions. This module finds them with one ``SEMI JOIN`` (``file_row_number``
of the matching rows, null matching with ``IS NOT DISTINCT FROM``) and caches them in the
:class:`~iceduck.engine.deletes.PositionCache`; the scan then drops them like position
deletes, with the bitmap filter of :mod:`iceduck.engine.bitmaps`. A cold read pays the
join once; warm reads cost what a deletion vector costs.

Which equality delete files apply to which data file is the planner's answer ("the data
file's data sequence number is *strictly less than* the delete's data sequence number",
partition scoping, global deletes: :mod:`iceduck.scan.delete_index`); the join keeps it by
numbering the data files (``__ord``) so each delete file's targets are a few runs
``[lo, hi]`` tested inside the join. The cache key is the data file, the exact set of delete
files applied to it, and how its key columns are read (the field-id MAP entries, the
identity partition values and defaults that fill a missing column, the key columns), so a
different scope or schema never reuses another's positions.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from iceduck.engine.deletes import (
    KeyColumn,
    PositionCache,
    anti_join_condition,
    equality_delete_relation,
    runs,
)
from iceduck.engine.file_errors import reading_files
from iceduck.engine.groups import Grouper, select_items
from iceduck.engine.layout import LayoutCache, find
from iceduck.engine.object_stores import duck_paths
from iceduck.engine.projection import ROW_NUMBER, schema_map
from iceduck.engine.types import duckdb_type, quote_identifier, quote_string
from iceduck.errors import CorruptDataError
from iceduck.scan.tasks import DeleteFile, FileScanTask
from iceduck.spec.schema import Schema
from iceduck.spec.types import ListType, MapType, NestedField, StructType

# numpy is imported by the functions that match equality deletes (only their tables need it)
if TYPE_CHECKING:
    import numpy as np

    from iceduck.engine.connection import Duck


def equality_positions(
    con: Duck,
    schema: Schema,
    tasks: Sequence[FileScanTask],
    keys: tuple[KeyColumn, ...],
    grouper: Grouper,
    cache: PositionCache,
) -> dict[str, np.ndarray]:
    """The positions (sorted, unique int64) the equality deletes of each task remove, for
    tasks where there are any. ``grouper`` reads ``keys`` (its spec has no other field)."""
    import numpy as np

    result: dict[str, np.ndarray] = {}
    missing: dict[str, tuple[FileScanTask, Any]] = {}
    for t in tasks:
        key = _cache_key(schema, t, keys, grouper)
        hit = cache.get(key)
        if hit is None:
            missing[t.path] = (t, key)
        elif len(hit):
            result[t.path] = hit
    if missing:
        found = _matching_positions(con, [t for t, _ in missing.values()], keys, grouper)
        for path, (_, key) in missing.items():
            positions = found.get(path, np.empty(0, dtype=np.int64))
            cache.put(key, positions, len(positions) + 1)
            if len(positions):
                result[path] = positions
    return result


def _cache_key(schema: Schema, t: FileScanTask, keys: tuple[KeyColumn, ...], grouper: Grouper) -> Any:
    entries, by_name = grouper.entries_for(t)
    fields = tuple(repr(schema.find_field_or_none(k.top_id)) for k in keys)
    identity = tuple(repr(t.identity_values.get(k.top_id)) for k in keys)
    deletes = tuple(sorted((d.path, d.equality_ids, d.file_format.value) for d in t.equality_deletes))
    return ("eq", t.path, deletes, repr((entries, by_name, grouper.layouts is None, keys, fields, identity)))


def _matching_positions(
    con: Duck, tasks: list[FileScanTask], keys: tuple[KeyColumn, ...], grouper: Grouper
) -> dict[str, np.ndarray]:
    """One query: for each task, the positions of its rows some applicable delete matches."""
    import numpy as np

    groups = grouper.group(tasks, set())
    spec = grouper.spec
    key_names = {k.field_id: f"__k{i}" for i, k in enumerate(keys)}
    prefix = f"__iceduck_eq_{uuid.uuid4().hex}__"
    variables: dict[str, list[str]] = {}
    parts = []
    ordinals: list[str] = []
    for n, g in enumerate(groups):
        name = f"{prefix}f{n}"
        variables[name] = duck_paths(con, [t.path for t in g.tasks])
        items = ", ".join([*select_items(g, spec, key_names), f"{ROW_NUMBER} AS __pos"])
        parts.append(
            f"SELECT {items} FROM read_parquet(getvariable({quote_string(name)}), "
            f"schema = {schema_map(g.entries, g.by_name)})"
        )
        ordinals.extend(t.path for t in g.tasks)  # ordinal_base runs on in group order

    targets: dict[str, list[int]] = {}
    deletes: dict[str, DeleteFile] = {}
    for g in groups:
        for i, t in enumerate(g.tasks):
            for d in t.equality_deletes:
                deletes.setdefault(d.path, d)
                targets.setdefault(d.path, []).append(g.ordinal_base + i)
    by_ids: dict[tuple[int, ...], list[tuple[DeleteFile, list[tuple[int, int]]]]] = {}
    for path, d in deletes.items():
        if not d.equality_ids:
            raise CorruptDataError("equality delete file without equality_ids", path)
        by_ids.setdefault(tuple(d.equality_ids), []).append((d, runs(targets[path])))
    by_id = {k.field_id: k for k in keys}
    data = f"({' UNION ALL '.join(parts)})"
    selects = []
    for j, (ids, files) in enumerate(by_ids.items()):
        name = f"{prefix}e{j}"
        variables[name] = duck_paths(con, [d.path for d, _ in files])
        relation = equality_delete_relation(files, [by_id[fid] for fid in ids], name)
        condition = anti_join_condition("__e", f"__t{j}", [key_names[fid] for fid in ids])
        selects.append(
            f"SELECT __e.__ord, __e.__pos FROM {data} AS __e SEMI JOIN ({relation}) AS __t{j} ON {condition}"
        )
    sql = " UNION ALL ".join(selects)  # sorted and made unique below: numpy does it faster
    try:
        for name, value in variables.items():
            con.execute(f"SET VARIABLE {quote_identifier(name)} = ?", [value])
        with reading_files(con, [p for v in variables.values() for p in v]):
            table = con.sql(sql).to_arrow_table()
    finally:
        for name in variables:
            con.execute(f"RESET VARIABLE {quote_identifier(name)}")
    ords = table.column("__ord").to_numpy().astype(np.int64, copy=False)
    pos = table.column("__pos").to_numpy().astype(np.int64, copy=False)
    order = np.lexsort((pos, ords))
    ords, pos = ords[order], pos[order]
    if len(pos):  # several delete column sets may match one row
        first = np.concatenate(([True], (np.diff(ords) != 0) | (np.diff(pos) != 0)))
        ords, pos = ords[first], pos[first]
    starts = np.flatnonzero(np.diff(ords)) + 1
    bounds = np.concatenate(([0], starts, [len(pos)])).tolist()
    found: dict[str, np.ndarray] = {}
    for a, b in itertools.pairwise(bounds):
        if a < b:
            found[ordinals[int(ords[a])]] = pos[a:b]
    return found


def key_columns(
    con: Duck, schema: Schema, tasks: Sequence[FileScanTask], layouts: LayoutCache
) -> tuple[KeyColumn, ...]:
    """Where each equality delete column lives: in the schema (possibly inside structs), or
    -- "If a delete column in an equality delete file is later dropped from the table, it
    must still be used when applying the equality deletes" -- only in the delete files."""
    ids: dict[int, DeleteFile] = {}
    for t in tasks:
        for d in t.equality_deletes:
            for fid in d.equality_ids:
                ids.setdefault(fid, d)
    keys = []
    for fid, d in ids.items():
        if schema.find_field_or_none(fid) is not None:
            keys.append(_schema_key(schema, fid))
            continue
        node = find(layouts.get_many(con, [d.path])[d.path], fid)
        if node is None:
            raise CorruptDataError(
                f"equality delete column {fid} is neither in the table nor in the file", d.path
            )
        keys.append(KeyColumn(fid, fid, (), node.duckdb_type))
    return tuple(keys)


def _schema_key(schema: Schema, fid: int) -> KeyColumn:
    chain = [fid]
    parent = schema.parent_id(fid)
    while parent is not None:
        chain.append(parent)
        parent = schema.parent_id(parent)
    chain.reverse()
    fields: list[NestedField] = [schema.find_field(i) for i in chain]
    if any(isinstance(f.field_type, ListType | MapType) for f in fields[:-1]):
        raise CorruptDataError(f"equality delete column {fid} is inside a list or map")
    if any(not isinstance(f.field_type, StructType) for f in fields[:-1]):
        raise CorruptDataError(f"equality delete column {fid} is not reachable through structs")
    top = fields[0]
    return KeyColumn(fid, top.field_id, tuple(f.name for f in fields[1:]), duckdb_type(top.field_type))

