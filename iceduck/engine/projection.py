"""Column projection by field id (spec, "Column Projection"), as DuckDB SQL.

Each column of the scan is read from a group of files with one entry of
``read_parquet(..., schema = MAP {field_id: {name, type, default_value}})`` -- DuckDB picks
the top-level column by id, renames it, casts it (type promotion: int -> long, float ->
double, decimal widening) and fills ``default_value`` in files that lack the id -- plus an
expression over what was read. The rules for a field id a file lacks, in the spec's order:

1. "Return the value from partition metadata if an Identity Transform exists for the
   field and the partition value is present in the partition struct";
2. "Use ``schema.name-mapping.default`` metadata to map field id to columns without
   field id" (files without ids are read by name, see :mod:`iceduck.engine.layout`);
3. "Return the default value if it has a defined ``initial-default``";
4. "Return ``null`` in all other cases."

Two modes, decided per scan by :func:`needs_layouts`:

* *blind* (no footer read): the MAP carries the current type and the ``initial-default``;
  identity partition values fill nulls with ``COALESCE``: a file that has the column
  holds the partition value in every row (identity transform), so a null there is a null
  partition value and the fill changes nothing;
* *with layouts*: each file's schema tree is known, so nested fields are matched by id
  (the file's own member names are read, then rebuilt with ``struct_pack`` under the
  current names), files without ids go through the name mapping, and a missing column
  reads its partition value or default directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iceduck.engine.layout import LIST, MAP, PRIMITIVE, STRUCT, FileField
from iceduck.engine.object_stores import duck_location
from iceduck.engine.types import (
    contains_struct,
    default_literal,
    duckdb_type,
    quote_identifier,
    quote_string,
    sql_literal,
)
from iceduck.errors import CorruptDataError, UserError
from iceduck.scan.tasks import FileScanTask
from iceduck.spec.schema import (
    FILE_PATH_ID,
    LAST_UPDATED_SEQUENCE_NUMBER_ID,
    POS_ID,
    ROW_ID_ID,
    Schema,
)
from iceduck.spec.types import (
    BooleanType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
    VariantType,
)

DELETED_ID = 2147483644
SPEC_ID_ID = 2147483643
#: metadata columns a scan can project (spec, "Reserved Field IDs")
METADATA_COLUMNS: dict[int, NestedField] = {
    FILE_PATH_ID: NestedField(FILE_PATH_ID, "_file", StringType(), True),
    POS_ID: NestedField(POS_ID, "_pos", LongType(), True),
    DELETED_ID: NestedField(DELETED_ID, "_deleted", BooleanType(), True),
    SPEC_ID_ID: NestedField(SPEC_ID_ID, "_spec_id", IntegerType(), True),
    ROW_ID_ID: NestedField(ROW_ID_ID, "_row_id", LongType()),
    LAST_UPDATED_SEQUENCE_NUMBER_ID: NestedField(
        LAST_UPDATED_SEQUENCE_NUMBER_ID, "_last_updated_sequence_number", LongType()
    ),
}
#: a reserved id no file holds: DuckDB refuses an empty schema MAP
PLACEHOLDER_ID = 2147483500

FILE_INDEX = "file_index::BIGINT"
ROW_NUMBER = "file_row_number"


@dataclass(frozen=True)
class ColumnRead:
    """How a group of files reads one column: an optional MAP entry and an expression."""

    #: the type to read (None: the column is not read from the files)
    read_type: str | None
    #: the MAP entry's ``default_value`` (VARCHAR: DuckDB casts it to ``read_type``)
    default: str
    #: SQL over the MAP entry's name (substituted for ``{}``) giving the current type
    expr: str


def output_fields(schema: Schema, field_ids: Sequence[int] | None) -> list[NestedField]:
    """The scan's columns: top-level fields (and metadata columns) in the order asked."""
    if field_ids is None:
        return list(schema.fields)
    by_id = {f.field_id: f for f in schema.fields}
    out = []
    for fid in field_ids:
        f = by_id.get(fid) or METADATA_COLUMNS.get(fid)
        if f is None:
            raise UserError(f"field id {fid} is not a top-level column of schema {schema.schema_id}")
        out.append(f)
    return out


def output_names(schema: Schema, fields: Sequence[NestedField]) -> list[str]:
    """The SQL names of the scan's columns: each field's name, unique without case across
    the whole schema (:mod:`iceduck.spec.column_names`), whichever columns are read."""
    names = schema.sql_names()
    return [names.get(f.field_id, f.name) for f in fields]


def needs_layouts(
    fields: Sequence[NestedField], name_mapping: str | None, tasks: Sequence[FileScanTask]
) -> bool:
    """Whether reading needs each file's schema (footers): see the module docstring."""
    if name_mapping:
        return True
    for f in fields:
        if f.field_id in METADATA_COLUMNS:
            continue
        if contains_struct(f.field_type):
            return True
        if f.initial_default is not None and not f.field_type.is_primitive:
            return True
    identity_with_default = {f.field_id for f in fields if f.initial_default is not None}
    if identity_with_default:
        return any(identity_with_default & t.identity_values.keys() for t in tasks)
    return False


# -- one column ------------------------------------------------------------------------------


def blind_read(f: NestedField) -> ColumnRead:
    """Read ``f`` by id with the current type; a file without it reads the initial default."""
    if isinstance(f.field_type, UnknownType):
        return ColumnRead(None, "", "NULL")
    default = (
        f"CAST({default_literal(f)} AS VARCHAR)" if f.initial_default is not None else "CAST(NULL AS VARCHAR)"
    )
    return ColumnRead(duckdb_type(f.field_type), default, "{}")


def layout_read(f: NestedField, node: FileField | None, location: str) -> ColumnRead:
    """Read ``f`` from a file whose schema node for it is ``node`` (None: absent)."""
    if isinstance(f.field_type, UnknownType):
        return ColumnRead(None, "", "NULL")
    if node is None:
        return ColumnRead(None, "", default_literal(f))
    read_type, expr, identity = nested_read(f.field_type, node, "{}", 0, location)
    if not identity:
        expr = f"CAST({expr} AS {duckdb_type(f.field_type)})"
    return ColumnRead(read_type, "CAST(NULL AS VARCHAR)", expr)


def nested_read(t: IcebergType, node: FileField, x: str, depth: int, location: str) -> tuple[str, str, bool]:
    """``(type to read node as, expression turning x into the current type, is identity)``.

    The read type keeps the file's member names (DuckDB matches struct members by name)
    with the current member types (DuckDB casts: promotion); the expression rebuilds the
    struct under the current names, members matched by field id, missing members set to
    their defaults; list elements and map keys/values go through ``list_transform``.
    """
    if isinstance(t, StructType):
        return _struct_read(t, node, x, depth, location)
    if isinstance(t, ListType):
        _expect(node, LIST, t, location)
        var = f"__x{depth}"
        etype, eexpr, same = nested_read(t.element_type, node.children[0], var, depth + 1, location)
        if same:
            return f"{etype}[]", x, True
        return f"{etype}[]", f"list_transform({x}, lambda {var}: {eexpr})", False
    if isinstance(t, MapType):
        _expect(node, MAP, t, location)
        var = f"__x{depth}"
        key_node, value_node = node.children
        ktype, kexpr, ksame = nested_read(t.key_type, key_node, f"{var}.key", depth + 1, location)
        vtype, vexpr, vsame = nested_read(t.value_type, value_node, f"{var}.value", depth + 1, location)
        read_type = f"MAP({ktype}, {vtype})"
        if ksame and vsame:
            return read_type, x, True
        entry = f"struct_pack(key := {kexpr}, value := {vexpr})"
        return read_type, f"map_from_entries(list_transform(map_entries({x}), lambda {var}: {entry}))", False
    if not isinstance(t, VariantType):  # a variant is a group in Parquet but a primitive here
        _expect(node, PRIMITIVE, t, location)
    return duckdb_type(t), x, True


def _struct_read(t: StructType, node: FileField, x: str, depth: int, location: str) -> tuple[str, str, bool]:
    _expect(node, STRUCT, t, location)
    members: list[str] = []
    parts: list[str] = []
    identity = True
    for f in t.fields:
        child = None if isinstance(f.field_type, UnknownType) else node.child(f.field_id)
        if child is None:
            parts.append(f"{quote_identifier(f.name)} := {default_literal(f)}")
            identity = False
            continue
        access = f"struct_extract({x}, {quote_string(child.name)})"
        ctype, cexpr, same = nested_read(f.field_type, child, access, depth, location)
        members.append(f"{quote_identifier(child.name)} {ctype}")
        parts.append(f"{quote_identifier(f.name)} := {cexpr}")
        identity = identity and same and child.name == f.name
    if not members:  # no member survives: read one anyway, for the struct's own nullness
        if not node.children:
            raise CorruptDataError(f"struct column {node.name!r} has no fields", location)
        first = node.children[0]
        members.append(f"{quote_identifier(first.name)} {first.duckdb_type}")
    read_type = "STRUCT(" + ", ".join(members) + ")"
    if identity:
        return read_type, x, True
    return read_type, f"CASE WHEN {x} IS NULL THEN NULL ELSE struct_pack({', '.join(parts)}) END", False


def _expect(node: FileField, kind: str, t: IcebergType, location: str) -> None:
    if node.kind != kind:
        raise CorruptDataError(
            f"column {node.name!r} (field id {node.field_id}) is a Parquet {node.kind}, "
            f"but the table schema says {t}",
            location,
        )


# -- a group of files -------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One MAP entry of a group's ``read_parquet``: the key (field id, or the column name in
    files without ids), the internal column name and how it is read."""

    field_id: int
    key: int | str
    read: ColumnRead
    #: the column's name inside the group's read: the table's SQL name where nothing
    #: shadows it (:func:`iceduck.engine.groups.read_names`), so the plans and filters
    #: DuckDB prints name the user's columns; ``__r<id>`` otherwise
    column: str = ""

    @property
    def name(self) -> str:
        return self.column or f"__r{self.field_id}"

    @property
    def expr(self) -> str:
        return self.read.expr.replace("{}", self.name)


def schema_map(entries: Sequence[Entry], by_name: bool) -> str:
    """The ``schema = MAP {...}`` argument; DuckDB refuses an empty map, so a placeholder id
    no file holds stands in when nothing is read (``count(*)``)."""
    items = [
        f"{quote_string(str(e.key)) if by_name else e.key}: {{name: {quote_string(e.name)}, "
        f"type: {quote_string(e.read.read_type)}, default_value: {e.read.default}}}"
        for e in entries
        if e.read.read_type is not None
    ]
    if not items:
        key = quote_string("__iceduck_placeholder") if by_name else str(PLACEHOLDER_ID)
        items.append(
            f"{key}: {{name: '__placeholder', type: 'BOOLEAN', default_value: CAST(NULL AS VARCHAR)}}"
        )
    return "MAP {" + ", ".join(items) + "}"


def per_file(literals: Sequence[str]) -> str:
    """A per-file constant: one literal, or a list indexed by the row's ``file_index``."""
    if len(set(literals)) == 1:
        return literals[0]
    return "[" + ", ".join(literals) + f"][{FILE_INDEX} + 1]"


def identity_literals(f: NestedField, tasks: Sequence[FileScanTask]) -> list[str] | None:
    """Each task's identity partition value for ``f`` as a literal; None when none has one."""
    values = [t.identity_values.get(f.field_id) for t in tasks]
    if all(v is None for v in values):
        return None
    return [sql_literal(f.field_type, v) for v in values]


def metadata_expr(f: NestedField, tasks: Sequence[FileScanTask], file_column: str | None) -> str:
    """A metadata column (spec, "Reserved Field IDs" and "Row Lineage"); ``file_column`` is
    the column the files themselves store it in (row lineage), when read."""
    fid = f.field_id
    if fid == FILE_PATH_ID:
        if all(duck_location(t.path) == t.path for t in tasks):
            return "filename"  # DuckDB's own column: the path as passed, here the location
        return per_file([quote_string(t.path) for t in tasks])
    if fid == POS_ID:
        return ROW_NUMBER
    if fid == DELETED_ID:
        return "false"  # deleted rows are never returned
    if fid == SPEC_ID_ID:
        return per_file([sql_literal(IntegerType(), t.spec_id) for t in tasks])
    if fid == ROW_ID_ID:
        # "When null, a row's _row_id field is assigned to the first_row_id from its
        # containing data file plus the row position in that data file"
        base = per_file([sql_literal(LongType(), t.first_row_id) for t in tasks])
        inherited = f"{base} + {ROW_NUMBER}"
        return f"COALESCE({file_column}, {inherited})" if file_column else inherited
    if fid == LAST_UPDATED_SEQUENCE_NUMBER_ID:
        # "if _last_updated_sequence_number is null it is assigned the sequence_number of
        # the data file's manifest entry"
        seq = per_file([sql_literal(LongType(), t.data_sequence_number) for t in tasks])
        return f"COALESCE({file_column}, {seq})" if file_column else seq
    raise UserError(f"metadata column {f.name} cannot be read")
