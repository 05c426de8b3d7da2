"""Column values of rows a statement writes, as DuckDB SQL: SET assignments (top-level or
nested struct fields), write defaults of columns a statement leaves out, casts to the
table's types.

Spec, "Default values": "The ``write-default`` is used to populate the field's value for
any records written after the field was added to the schema, if the writer does not
supply the field's value" -- so INSERT and MERGE ... INSERT fill omitted columns with it
(null when the column has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from iceduck.engine.types import cast_sql, quote_identifier, sql_literal
from iceduck.errors import NotFoundError, UserError
from iceduck.spec.column_names import sql_names
from iceduck.spec.schema import Schema
from iceduck.spec.types import NestedField, StructType
from iceduck.sql.statements import ColumnPath


def find_column(schema: Schema, name: str) -> NestedField:
    """The top-level column ``name``, matched without case as DuckDB matches it, by the name
    the table's columns have in SQL (:mod:`iceduck.spec.column_names`: of ``user_id`` and
    ``uSeR_Id``, the second is ``uSeR_Id_1``)."""
    names = sql_names(schema.fields)
    for f in schema.fields:
        if names[f.field_id].lower() == name.lower():
            return f
    columns = ", ".join(names[f.field_id] for f in schema.fields)
    raise NotFoundError(f"column {name!r} does not exist: the table has {columns}")


def write_default(f: NestedField) -> str:
    """What a row the statement does not give ``f`` a value holds: its write-default."""
    return sql_literal(f.field_type, f.write_default)


def assigned_values(schema: Schema, assignments: Sequence[tuple[ColumnPath, str]], current: str) -> list[str]:
    """Each top-level column's new value: its assignment, or the current value
    (``<current>."col"``). A nested path rebuilds the struct around the assigned field."""
    tree: dict[str, object] = {}
    for path, expr in assignments:
        if not path:
            raise UserError("an assignment needs a column")
        top = find_column(schema, path[0])
        node = tree.setdefault(top.name, {}) if len(path) > 1 else tree
        if len(path) == 1:
            if top.name in tree:
                raise UserError(f"column {top.name!r} is assigned more than once")
            tree[top.name] = expr
            continue
        if not isinstance(node, dict):
            raise UserError(f"column {top.name!r} is assigned more than once")
        _nest(node, top, path[1:], expr)
    values = []
    names = sql_names(schema.fields)
    for f in schema.fields:
        value = tree.get(f.name)
        column = f"{current}.{quote_identifier(names[f.field_id])}"
        if value is None:
            values.append(column)
        elif isinstance(value, str):
            values.append(value)
        else:
            values.append(_rebuild(f, column, cast(dict[str, object], value)))
    return values


def _nest(node: dict[str, object], parent: NestedField, path: ColumnPath, expr: str) -> None:
    if not isinstance(parent.field_type, StructType):
        raise UserError(f"column {parent.name!r} is not a struct: cannot assign {'.'.join(path)}")
    child = next((f for f in parent.field_type.fields if f.name.lower() == path[0].lower()), None)
    if child is None:
        raise NotFoundError(f"struct {parent.name!r} has no field {path[0]!r}")
    if len(path) == 1:
        if child.name in node:
            raise UserError(f"field {child.name!r} is assigned more than once")
        node[child.name] = expr
        return
    sub = node.setdefault(child.name, {})
    if not isinstance(sub, dict):
        raise UserError(f"field {child.name!r} is assigned more than once")
    _nest(sub, child, path[1:], expr)


def _rebuild(f: NestedField, current: str, tree: dict[str, object]) -> str:
    """``struct_pack`` of ``f``'s fields: assigned ones replaced (null structs stay null
    unless a field is assigned, as Spark builds a struct from its fields)."""
    assert isinstance(f.field_type, StructType)
    parts = []
    for child in f.field_type.fields:
        value = tree.get(child.name)
        access = f"struct_extract({current}, {sql_literal_name(child.name)})"
        if value is None:
            parts.append(f"{quote_identifier(child.name)} := {access}")
        elif isinstance(value, str):
            parts.append(f"{quote_identifier(child.name)} := {cast_sql(value, child.field_type)}")
        else:
            rebuilt = _rebuild(child, access, cast(dict[str, object], value))
            parts.append(f"{quote_identifier(child.name)} := {rebuilt}")
    return "struct_pack(" + ", ".join(parts) + ")"


def sql_literal_name(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def insert_values(schema: Schema, columns: Sequence[str], values: Sequence[str]) -> list[str]:
    """Each top-level column's value for ``INSERT (columns) VALUES (values)``-like clauses:
    listed columns get their value, the others their write default. Without a column list
    (``INSERT VALUES (...)``, DuckDB's MERGE) the values fill the table's columns in order."""
    if not columns:
        if len(values) != len(schema.fields):
            raise UserError(f"the table has {len(schema.fields)} columns but {len(values)} values are given")
        return list(values)
    if len(columns) != len(values):
        raise UserError(f"{len(columns)} columns are listed but {len(values)} values are given")
    given: dict[str, str] = {}
    for name, value in zip(columns, values, strict=True):
        f = find_column(schema, name)
        if f.name in given:
            raise UserError(f"column {f.name!r} is listed more than once")
        given[f.name] = value
    return [given.get(f.name, write_default(f)) for f in schema.fields]
