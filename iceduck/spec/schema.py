"""Table schemas: a struct of fields with ids, plus identifier fields (spec: "Schemas").

A schema is immutable; its lookup indexes (by id, by dotted name, parent ids) are
built once on construction because planning looks fields up per predicate and per
manifest, and schemas are shared by every scan of a table.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from iceduck.errors import NotFoundError
from iceduck.spec.column_names import sql_names
from iceduck.spec.types import IcebergType, ListType, MapType, NestedField, StructType

#: Reserved field ids (spec: "Reserved Field IDs") -- metadata columns readers may project.
FILE_PATH_ID = 2147483646
POS_ID = 2147483645
ROW_ID_ID = 2147483540
LAST_UPDATED_SEQUENCE_NUMBER_ID = 2147483539


@dataclass(frozen=True)
class Schema:
    """A table schema: top-level fields in order, a schema id and identifier field ids."""

    fields: tuple[NestedField, ...]
    schema_id: int = 0
    identifier_field_ids: tuple[int, ...] = ()
    _by_id: dict[int, NestedField] = field(default_factory=dict, init=False, repr=False, compare=False)
    _by_name: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _parents: dict[int, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: :meth:`sql_names` and :meth:`by_sql_name`, built on first use
    _sql_names: dict[int, str] | None = field(default=None, init=False, repr=False, compare=False)
    _by_sql_name: dict[str, NestedField] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "identifier_field_ids", tuple(self.identifier_field_ids))
        by_id: dict[int, NestedField] = {}
        by_name: dict[str, int] = {}
        parents: dict[int, int] = {}
        for path, f, parent in _walk(self.fields, (), None):
            by_id[f.field_id] = f
            by_name[".".join(path)] = f.field_id
            if parent is not None:
                parents[f.field_id] = parent
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_parents", parents)

    def __hash__(self) -> int:
        return hash((self.fields, self.schema_id, self.identifier_field_ids))

    def as_struct(self) -> StructType:
        return StructType(self.fields)

    @property
    def highest_field_id(self) -> int:
        return max(self._by_id, default=0)

    def field_ids(self) -> Iterator[int]:
        """Every field id in the schema, nested ones included."""
        return iter(self._by_id)

    def find_field(self, key: int | str, case_sensitive: bool = True) -> NestedField:
        """The field with this id or dotted name (``a.b`` for struct ``a``'s field ``b``).

        List elements are named ``element`` and map keys/values ``key``/``value``, as
        in Iceberg Java's ``Schema.findField``.
        """
        found = self.find_field_or_none(key, case_sensitive)
        if found is None:
            raise NotFoundError(f"no field {key!r} in schema {self.schema_id}")
        return found

    def find_field_or_none(self, key: int | str, case_sensitive: bool = True) -> NestedField | None:
        if isinstance(key, int):
            return self._by_id.get(key)
        field_id = self._by_name.get(key)
        if field_id is None and not case_sensitive:
            lowered = key.lower()
            for name, fid in self._by_name.items():
                if name.lower() == lowered:
                    field_id = fid
                    break
        return self._by_id.get(field_id) if field_id is not None else None

    def find_type(self, key: int | str) -> IcebergType:
        return self.find_field(key).field_type

    def column_name(self, field_id: int) -> str | None:
        """The dotted name of a field id, or None."""
        for name, fid in self._by_name.items():
            if fid == field_id:
                return name
        return None

    def sql_names(self) -> dict[int, str]:
        """The SQL name of each top-level field, by id (:func:`iceduck.spec.column_names.sql_names`),
        computed once: every scan and pushed filter of every statement asks (shared: read-only)."""
        names = self._sql_names
        if names is None:
            names = sql_names(self.fields)
            object.__setattr__(self, "_sql_names", names)
        return names

    def by_sql_name(self, name: str) -> NestedField | None:
        """The top-level field whose SQL name is ``name`` without case, as DuckDB resolves it."""
        index = self._by_sql_name
        if index is None:
            visible = self.sql_names()
            index = {}
            for f in self.fields:
                index.setdefault(visible[f.field_id].lower(), f)
            object.__setattr__(self, "_by_sql_name", index)
        return index.get(name.lower())

    def parent_id(self, field_id: int) -> int | None:
        """The id of the struct/list/map field that contains ``field_id`` (None at top level)."""
        return self._parents.get(field_id)

    def is_in_list_or_map(self, field_id: int) -> bool:
        """Whether a field sits inside a list or map (no partition source may, per the spec)."""
        parent = self._parents.get(field_id)
        while parent is not None:
            if isinstance(self._by_id[parent].field_type, ListType | MapType):
                return True
            parent = self._parents.get(parent)
        return False


def select_fields(schema: Schema, field_ids: tuple[int, ...]) -> Schema:
    """The schema of only ``field_ids`` and the structs that hold them, in the schema's
    order (Java's ``TypeUtil.select``): the columns of an equality delete file, whose
    "schema [...] must contain the equality fields" with the table's field ids."""
    wanted = set(field_ids)

    def keep(fields: tuple[NestedField, ...]) -> tuple[NestedField, ...]:
        out = []
        for f in fields:
            if f.field_id in wanted:
                out.append(f)
            elif isinstance(f.field_type, StructType):
                inner = keep(f.field_type.fields)
                if inner:
                    out.append(replace(f, field_type=StructType(inner)))
        return tuple(out)

    return Schema(keep(schema.fields), schema.schema_id, tuple(field_ids))


def _walk(
    fields: tuple[NestedField, ...], prefix: tuple[str, ...], parent: int | None
) -> Iterator[tuple[tuple[str, ...], NestedField, int | None]]:
    for f in fields:
        path = (*prefix, f.name)
        yield path, f, parent
        t = f.field_type
        if isinstance(t, StructType):
            yield from _walk(t.fields, path, f.field_id)
        elif isinstance(t, ListType | MapType):
            yield from _walk(t.fields, path, f.field_id)
