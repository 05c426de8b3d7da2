"""Splitting a scan's files into groups that one ``read_parquet`` each can read.

Files share a group when DuckDB reads them with the same ``schema = MAP {...}`` and the
same delete handling. With no footer read (the common case: flat or list/map-only
projections, files with field ids) every file reads the same MAP, so a scan is at most
three groups: files without deletes (a plain scan), files with position deletes (a mask
filter) and files with equality deletes (an anti-join). Schema evolution by itself does
not split anything -- renames, drops, added columns and promotions are all handled by
the field-id MAP -- only nested evolution and files without field ids do, once their
footers show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from iceduck.engine.deletes import KeyColumn, extract
from iceduck.engine.layout import FileSchema, MappedField, apply_name_mapping, find, has_field_ids
from iceduck.engine.plain_read import VIRTUAL_COLUMNS
from iceduck.engine.projection import (
    FILE_INDEX,
    METADATA_COLUMNS,
    ColumnRead,
    Entry,
    blind_read,
    identity_literals,
    layout_read,
    metadata_expr,
    output_names,
    per_file,
)
from iceduck.engine.types import default_literal, quote_identifier, sql_literal
from iceduck.errors import CorruptDataError
from iceduck.scan.tasks import FileScanTask
from iceduck.spec.schema import LAST_UPDATED_SEQUENCE_NUMBER_ID, ROW_ID_ID, Schema
from iceduck.spec.types import NestedField

_LINEAGE = (ROW_ID_ID, LAST_UPDATED_SEQUENCE_NUMBER_ID)


@dataclass
class Group:
    """Files read by one ``read_parquet``, and how each output column comes out of it."""

    entries: tuple[Entry, ...]
    by_name: bool
    blind: bool
    has_positions: bool
    has_equality: bool
    tasks: list[FileScanTask] = field(default_factory=list)
    #: ordinal of the first file among files with equality deletes (``__ord``)
    ordinal_base: int = 0


@dataclass(frozen=True)
class ReadSpec:
    """What a scan reads: its output fields and the equality delete columns."""

    schema: Schema
    fields: tuple[NestedField, ...]
    keys: tuple[KeyColumn, ...]


class Grouper:
    """Builds the MAP entries of each distinct file schema once, then groups tasks."""

    def __init__(
        self,
        spec: ReadSpec,
        layouts: dict[str, FileSchema] | None,
        mapping: tuple[MappedField, ...] | None,
    ) -> None:
        self.spec = spec
        self.layouts = layouts
        self.mapping = mapping
        self._names = read_names(spec.schema)
        self._reads: dict[Any, tuple[tuple[Entry, ...], bool]] = {}

    def group(self, tasks: Sequence[FileScanTask], with_positions: set[str]) -> list[Group]:
        """Group ``tasks``; ``with_positions`` names the files with deleted positions."""
        groups: dict[Any, Group] = {}
        for t in tasks:
            entries, by_name = self.entries_for(t)
            has_positions = t.path in with_positions
            has_equality = bool(t.equality_deletes)
            key = (id(entries), has_positions, has_equality)  # one entries object per file schema
            g = groups.get(key)
            if g is None:
                g = groups[key] = Group(entries, by_name, self.layouts is None, has_positions, has_equality)
            g.tasks.append(t)
        result = list(groups.values())
        number_equality_files(result)
        return result

    def entries_for(self, task: FileScanTask) -> tuple[tuple[Entry, ...], bool]:
        if self.layouts is None:
            key: Any = None
        else:
            key = self.layouts[task.path]
        hit = self._reads.get(key)
        if hit is None:
            hit = self._reads[key] = self._build(key, task.path)
        return hit

    def _build(self, layout: FileSchema | None, location: str) -> tuple[tuple[Entry, ...], bool]:
        by_name = False
        if layout is not None and not has_field_ids(layout):  # "files without field id information"
            if self.mapping is None:
                raise CorruptDataError(
                    "data file has no Parquet field ids and the table has no schema.name-mapping.default",
                    location,
                )
            layout = apply_name_mapping(layout, self.mapping)
            by_name = True
        entries: dict[int, Entry] = {}

        def add(fid: int, f: NestedField) -> None:
            column = self._names.get(fid, "")
            if layout is None:
                entries[fid] = Entry(fid, fid, blind_read(f), column)
                return
            node = find(layout, fid)
            # files without ids are read by column name (a MAP's keys are all of one kind)
            key: int | str = node.name if by_name and node is not None else fid
            entries[fid] = Entry(fid, key, layout_read(f, node, location), column)

        for f in self.spec.fields:
            if f.field_id in _LINEAGE:  # the file's own column; null means inherited
                add(f.field_id, NestedField(f.field_id, f.name, f.field_type))
            elif f.field_id not in METADATA_COLUMNS:
                add(f.field_id, f)
        for k in self.spec.keys:
            if k.top_id in entries:
                continue
            top = self.spec.schema.find_field_or_none(k.top_id)
            if top is not None:
                add(k.top_id, top)
                continue
            # a delete column since dropped from the table: read with the delete file's type
            node = find(layout, k.top_id) if layout is not None else None
            if layout is not None and node is None:
                entries[k.top_id] = Entry(k.top_id, k.top_id, ColumnRead(None, "", "NULL"))
            else:
                key = node.name if by_name and node is not None else k.top_id
                entries[k.top_id] = Entry(
                    k.top_id, key, ColumnRead(k.top_type, "CAST(NULL AS VARCHAR)", "{}")
                )
        return tuple(entries.values()), by_name


def number_equality_files(groups: Sequence[Group]) -> None:
    """Order the files with equality deletes so each delete's targets are few runs: by
    partition, then data sequence number (a delete applies to one partition, or all, and
    to the files older than itself), and give each group its first ordinal."""
    base = 0
    for g in groups:
        if g.has_equality:
            g.tasks.sort(key=lambda t: (t.spec_id, repr(t.partition), t.data_sequence_number, t.path))
            g.ordinal_base = base
            base += len(g.tasks)


def read_names(schema: Schema) -> dict[int, str]:
    """The name each top-level column is read under inside a scan: its SQL name
    (:mod:`iceduck.spec.column_names`), unless DuckDB's virtual columns or iceduck's own
    helper columns (``__...``) could take it; those keep ``__r<id>``."""
    return {
        fid: name
        for fid, name in schema.sql_names().items()
        if name.lower() not in VIRTUAL_COLUMNS and not name.startswith("__")
    }


def select_items(group: Group, spec: ReadSpec, key_names: dict[int, str]) -> list[str]:
    """The SELECT list of one group: the scan's columns under their SQL names, in output
    order (every group alike: a UNION ALL takes its names from the first), then (files with
    equality deletes) ``__ord`` and the delete columns ``__k<id>``."""
    entries = {e.field_id: e for e in group.entries}
    items = []
    for f, name in zip(spec.fields, output_names(spec.schema, spec.fields), strict=True):
        items.append(f"{column_expr(f, group, entries)} AS {quote_identifier(name)}")
    if group.has_equality:
        items.append(f"{FILE_INDEX} + {group.ordinal_base} AS __ord")
        for k in spec.keys:
            top = entries[k.top_id]
            source = _data_column(spec.schema.find_field_or_none(k.top_id), group, top)
            items.append(f"{extract(source, k.path)} AS {key_names[k.field_id]}")
    return items


def column_expr(f: NestedField, group: Group, entries: dict[int, Entry]) -> str:
    if f.field_id in METADATA_COLUMNS:
        lineage = entries.get(f.field_id)
        column = lineage.name if lineage is not None and lineage.read.read_type is not None else None
        return metadata_expr(f, group.tasks, column)
    return _data_column(f, group, entries[f.field_id])


def _data_column(f: NestedField | None, group: Group, entry: Entry) -> str:
    """A data column's value, with identity partition values where the file may lack it."""
    expr = entry.expr
    if f is None:
        return expr
    literals = identity_literals(f, group.tasks)
    if literals is None:
        return expr
    if group.blind:
        return f"COALESCE({expr}, {per_file(literals)})"
    if entry.read.read_type is None:  # the files lack the column: partition value, else default
        fallback = default_literal(f)
        values = [t.identity_values.get(f.field_id) for t in group.tasks]
        return per_file([fallback if v is None else sql_literal(f.field_type, v) for v in values])
    return expr
