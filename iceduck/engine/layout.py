"""The physical schema of Parquet files: field ids and names at every level, cached.

DuckDB's ``read_parquet(..., schema = MAP {field_id: ...})`` selects *top-level* columns
by field id but matches the members of a struct by *name* (checked on DuckDB 2.0: a
nested rename reads null, a dropped and re-added nested name reads the old values). The
spec requires ids at every level ("Columns in Iceberg data files are selected by field
id"), so when a projection holds a struct the engine looks at each file's own schema:
this module reads it with DuckDB's ``parquet_schema`` (footers only) and keeps it per
path, since data files are immutable. The same tree, with ids taken from
``schema.name-mapping.default``, serves files written without field ids.

A file's schema is a tuple of :class:`FileField` trees. Lists and maps keep only the
nodes DuckDB reads positionally (element; key and value), whatever the file names them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iceduck.engine.file_errors import reading_files
from iceduck.engine.object_stores import duck_paths
from iceduck.errors import CorruptDataError
from iceduck.lru import LRUCache

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

STRUCT = "struct"
LIST = "list"
MAP = "map"
PRIMITIVE = "primitive"

#: how many file schemas a session keeps by default (a few hundred bytes each)
MAX_CACHED_LAYOUTS = 200_000


@dataclass(frozen=True)
class FileField:
    """One node of a Parquet file's schema as DuckDB reads it."""

    name: str
    field_id: int | None
    kind: str
    #: DuckDB's type of the node (``parquet_schema``'s ``duckdb_type``)
    duckdb_type: str
    children: tuple[FileField, ...] = ()

    def child(self, field_id: int) -> FileField | None:
        for c in self.children:
            if c.field_id == field_id:
                return c
        return None


FileSchema = tuple[FileField, ...]


def has_field_ids(schema: FileSchema) -> bool:
    """Whether a file carries Iceberg field ids (a file written by Iceberg always does)."""
    return any(f.field_id is not None for f in schema)


def find(schema: FileSchema, field_id: int) -> FileField | None:
    for f in schema:
        if f.field_id == field_id:
            return f
    return None


# -- reading footers -------------------------------------------------------------------------


class LayoutCache:
    """File schemas by path, least recently used dropped first (data files are immutable).

    Each session owns one (:class:`~iceduck.session.session.Session` passes it to every scan it
    attaches) and uses it from several cursors at once: the underlying
    :class:`~iceduck.lru.LRUCache` locks."""

    def __init__(self, max_entries: int = MAX_CACHED_LAYOUTS) -> None:
        self._entries: LRUCache[str, FileSchema] = LRUCache(max_entries)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def missing(self, paths: Iterable[str]) -> int:
        """How many of ``paths`` have no cached schema (nothing is read)."""
        return self._entries.count_missing(paths)

    def get_many(self, con: Duck, paths: Sequence[str]) -> dict[str, FileSchema]:
        """The schema of every path (a location as in the manifest), reading missing ones
        with one ``parquet_schema`` call."""
        found = self._entries.get_many(paths)
        missing = [p for p in paths if p not in found]
        if missing:
            read = read_file_schemas(con, missing)  # outside the lock: footers take time
            found.update(read)
            self._entries.put_many(read.items())
        return found


def read_file_schemas(con: Duck, locations: Sequence[str]) -> dict[str, FileSchema]:
    """Read the schema trees of Parquet files (footers only), keyed by location."""
    local = dict(zip(duck_paths(con, list(locations)), locations, strict=True))
    with reading_files(con, list(local)):  # a broken footer is named, even when DuckDB does not
        rows = con.execute(
            "SELECT file_name, name, repetition_type, num_children, converted_type, field_id, "
            "logical_type, duckdb_type FROM parquet_schema(?)",
            [list(local)],
        ).fetchall()
    by_file: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_file.setdefault(row[0], []).append(row[1:])
    result = {}
    for path, location in local.items():
        elements = by_file.get(path)
        if not elements:
            raise CorruptDataError("Parquet file has no schema", location)
        result[location] = _tree(elements, location)
    return result


def _tree(elements: list[tuple[Any, ...]], location: str) -> FileSchema:
    """Rebuild the nested schema from ``parquet_schema``'s depth-first element list."""
    position = 0

    def node() -> tuple[str, Any, Any, Any, Any, Any, Any, list[Any]]:
        nonlocal position
        if position >= len(elements):
            raise CorruptDataError("truncated Parquet schema", location)
        name, repetition, num_children, converted, field_id, logical, duck_type = elements[position]
        position += 1
        children = [node() for _ in range(num_children or 0)]
        return name, repetition, num_children, converted, field_id, logical, duck_type, children

    root = node()
    return tuple(_field(child, location) for child in root[7])


def _field(raw: tuple[Any, ...], location: str) -> FileField:
    name, repetition, num_children, converted, field_id, logical, duck_type, children = raw
    fid = int(field_id) if field_id is not None else None
    duck_type = duck_type or ""
    annotation = f"{converted or ''} {logical or ''}".upper()
    if not num_children:
        if repetition == "REPEATED":  # legacy 2-level list of a primitive
            element = FileField("element", None, PRIMITIVE, duck_type)
            return FileField(name, fid, LIST, f"{duck_type}[]", (element,))
        return FileField(name, fid, PRIMITIVE, duck_type)
    if "MAP" in annotation:
        key_value = children[0]
        if len(children) != 1 or len(key_value[7]) != 2:
            raise CorruptDataError(f"map column {name!r} is not a 3-level Parquet map", location)
        return FileField(name, fid, MAP, duck_type, tuple(_field(c, location) for c in key_value[7]))
    if "LIST" in annotation:
        repeated = children[0]
        if len(children) != 1:
            raise CorruptDataError(f"list column {name!r} has {len(children)} children", location)
        grandchildren = repeated[7]
        if len(grandchildren) == 1 and repeated[0] not in ("array", f"{name}_tuple"):
            element = _field(grandchildren[0], location)  # the 3-level list of the spec
        else:
            element = _field((*repeated[:1], "REQUIRED", *repeated[2:]), location)
        return FileField(name, fid, LIST, duck_type, (element,))
    fields = tuple(_field(c, location) for c in children)
    if repetition == "REPEATED":  # legacy 2-level list of structs
        element = FileField("element", None, STRUCT, duck_type.removesuffix("[]"), fields)
        return FileField(name, fid, LIST, duck_type, (element,))
    return FileField(name, fid, STRUCT, duck_type, fields)


# -- name mapping (spec, "Column Projection" and "Name Mapping Serialization") ----------------


@dataclass(frozen=True)
class MappedField:
    names: tuple[str, ...]
    field_id: int | None
    fields: tuple[MappedField, ...] = ()


def parse_name_mapping(text: str) -> tuple[MappedField, ...]:
    """Parse ``schema.name-mapping.default``: a JSON list of ``{names, field-id, fields}``."""
    try:
        return _mapped_fields(json.loads(text))
    except (ValueError, TypeError, KeyError) as e:
        raise CorruptDataError(f"invalid schema.name-mapping.default: {e}") from None


def _mapped_fields(items: Any) -> tuple[MappedField, ...]:
    if not isinstance(items, list):
        raise TypeError("a name mapping must be a JSON list of field mappings")
    out = []
    for item in items:
        names = item["names"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise TypeError("'names' must be a list of strings")
        field_id = item.get("field-id")
        if field_id is not None and not isinstance(field_id, int):
            raise TypeError("'field-id' must be an integer")
        out.append(MappedField(tuple(names), field_id, _mapped_fields(item.get("fields") or [])))
    return tuple(out)


def apply_name_mapping(schema: FileSchema, mapping: Sequence[MappedField]) -> FileSchema:
    """Give the fields of a file without ids the ids the mapping assigns to their names.

    "A name may contain ``.`` but this refers to a literal name"; list elements map
    through the mapping's ``element`` entry and map keys/values through ``key``/``value``,
    whatever the file calls those nodes.
    """
    return tuple(_map_field(f, _lookup(mapping, f.name)) for f in schema)


def _lookup(mapping: Iterable[MappedField], name: str) -> MappedField | None:
    for m in mapping:
        if name in m.names:
            return m
    return None


def _map_field(f: FileField, m: MappedField | None) -> FileField:
    sub = m.fields if m is not None else ()
    children: tuple[FileField, ...]
    if f.kind == LIST:
        children = (_map_field(f.children[0], _lookup(sub, "element")),)
    elif f.kind == MAP:
        children = (
            _map_field(f.children[0], _lookup(sub, "key")),
            _map_field(f.children[1], _lookup(sub, "value")),
        )
    else:
        children = tuple(_map_field(c, _lookup(sub, c.name)) for c in f.children)
    field_id = f.field_id if f.field_id is not None else (m.field_id if m is not None else None)
    return FileField(f.name, field_id, f.kind, f.duckdb_type, children)


def _ids(fields: Iterable[FileField]) -> Iterable[int]:
    for f in fields:
        if f.field_id is not None:
            yield f.field_id
        yield from _ids(f.children)


def provided_field_ids(schema: FileSchema, mapping: Sequence[MappedField]) -> frozenset[int] | None:
    """None for a file with field ids; else the ids (at every level) ``mapping`` gives its
    columns: the fields a scan reads from it (:mod:`iceduck.scan.trusted_metrics`)."""
    if has_field_ids(schema):
        return None
    return frozenset(_ids(apply_name_mapping(schema, mapping)))


def field_ids_reader(
    con: Duck, layouts: LayoutCache, name_mapping: str | None
) -> Callable[[Sequence[str]], dict[str, frozenset[int] | None]] | None:
    """What planning asks of a table with a name mapping (None without one): for each
    Parquet data file, None when it carries field ids, else the ids the mapping gives its
    columns (:mod:`iceduck.scan.trusted_metrics`). Footers are read once per session,
    through ``layouts``, which the scan reads them from too."""
    if name_mapping is None:
        return None
    mapping = parse_name_mapping(name_mapping)

    def field_ids_of(paths: Sequence[str]) -> dict[str, frozenset[int] | None]:
        schemas = layouts.get_many(con, list(dict.fromkeys(paths)))
        return {path: provided_field_ids(schema, mapping) for path, schema in schemas.items()}

    return field_ids_of
