"""The columns of a data-file write as DuckDB SQL: casts to the table's types, the checks
DuckDB runs while writing (required fields, fixed lengths), and the Parquet field ids.

Types follow Appendix A's Parquet mapping through :func:`engine.types.duckdb_type` (so
``timestamptz_ns`` is written as DuckDB's TIMESTAMPTZ_NS and Parquet says
``isAdjustedToUTC=true``). A failed check stops the COPY with DuckDB's ``error()`` and a
message starting with :data:`CHECK`, which the writer turns into a ValidationError.
"""

from __future__ import annotations

from dataclasses import replace

from iceduck.engine.types import duckdb_type, quote_identifier, quote_string
from iceduck.spec.column_names import sql_names
from iceduck.spec.schema import LAST_UPDATED_SEQUENCE_NUMBER_ID, ROW_ID_ID, Schema
from iceduck.spec.types import (
    FixedType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StructType,
    UnknownType,
)

#: message prefix of the checks raised inside DuckDB, to tell them from DuckDB's own errors
CHECK = "iceduck-check: "


def field_ids_option(fields: tuple[NestedField, ...]) -> str:
    """DuckDB's ``FIELD_IDS`` value: ``{"a": 1, "s": {__duckdb_field_id: 2, "x": 3}}``."""

    def nested(f: NestedField) -> str:
        t = f.field_type
        children: tuple[NestedField, ...] = ()
        if isinstance(t, StructType):
            children = t.fields
        elif isinstance(t, ListType):
            children = (NestedField(t.element_id, "element", t.element_type),)
        elif isinstance(t, MapType):
            children = (t.key_field, t.value_field)
        if not children:
            return str(f.field_id)
        inner = ", ".join(f"{quote_identifier(c.name)}: {nested(c)}" for c in children)
        return f"{{__duckdb_field_id: {f.field_id}, {inner}}}"

    return "{" + ", ".join(f"{quote_identifier(f.name)}: {nested(f)}" for f in fields) + "}"


def _checked(f: NestedField, value: str, path: str) -> str:
    """``value`` with the required-field and fixed-length checks of ``f`` (through structs)."""
    checks = []
    if f.required:
        checks.append((f"{value} IS NULL", f"null value in required column {path}"))
    if isinstance(f.field_type, FixedType):
        n = f.field_type.length
        checks.append(
            (f"octet_length({value}) <> {n}", f"value of column {path} is not {n} bytes (fixed[{n}])")
        )
    for cond, message in checks:
        value = f"CASE WHEN {cond} THEN error({quote_string(CHECK + message)}) ELSE {value} END"
    t = f.field_type
    if isinstance(t, StructType) and any(_needs_check(c) for c in t.fields):
        parts = ", ".join(
            f"{quote_identifier(c.name)} := "
            + _checked(c, f"{value}.{quote_identifier(c.name)}", f"{path}.{c.name}")
            for c in t.fields
        )
        value = f"CASE WHEN {value} IS NULL THEN NULL ELSE struct_pack({parts}) END"
    return value


def _needs_check(f: NestedField) -> bool:
    t = f.field_type
    if f.required or isinstance(t, FixedType):
        return True
    return isinstance(t, StructType) and any(_needs_check(c) for c in t.fields)


def select_sql(
    query_sql: str, schema: Schema, width: int, row_lineage: bool
) -> tuple[str, list[NestedField]]:
    """``SELECT`` of the columns to write (cast and checked, named as the schema names them)
    over the ``width`` columns of ``query_sql``, and the fields written (``unknown`` columns
    are left out: "Omit from data files"; with ``row_lineage`` the two trailing columns are
    ``_row_id`` and ``_last_updated_sequence_number``). Columns whose names differ only in
    case are written under their SQL names (``uSeR_Id_1``, :mod:`iceduck.spec.column_names`):
    DuckDB cannot hold both spellings in one relation, and readers match Parquet columns to
    fields by the field ids written beside them."""
    names = sql_names(schema.fields)
    fields = [
        replace(f, name=names[f.field_id]) for f in schema.fields if not isinstance(f.field_type, UnknownType)
    ]
    positions = {f.field_id: i for i, f in enumerate(schema.fields)}
    if row_lineage:
        fields += [
            NestedField(ROW_ID_ID, "_row_id", LongType()),
            NestedField(LAST_UPDATED_SEQUENCE_NUMBER_ID, "_last_updated_sequence_number", LongType()),
        ]
        positions[ROW_ID_ID] = len(schema.fields)
        positions[LAST_UPDATED_SEQUENCE_NUMBER_ID] = len(schema.fields) + 1
    aliases = ", ".join(f"c{i}" for i in range(width))
    items = []
    for f in fields:
        cast = f"CAST(__q.c{positions[f.field_id]} AS {duckdb_type(f.field_type)})"
        items.append(f"{_checked(f, cast, f.name)} AS {quote_identifier(f.name)}")
    return f"SELECT {', '.join(items)} FROM ({query_sql}) AS __q({aliases})", fields
