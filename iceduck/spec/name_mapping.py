"""A default name mapping built from a schema (spec, "Name Mapping Serialization").

"Name mapping [...] is used to map field names to field ids when a data file does not
have field ids": importing files written by another tool (``add_files``) relies on it, so
a table about to receive such files gets ``schema.name-mapping.default`` built from its
current schema when it has none, as Java's ``MappingUtil.create`` does: every field under
its one current name, list elements as ``element``, map keys and values as ``key`` and
``value``; "``fields`` [is] omitted when there are no nested fields".
"""

from __future__ import annotations

import json
from typing import Any

from iceduck.spec.schema import Schema
from iceduck.spec.types import IcebergType, ListType, MapType, NestedField, StructType


def _mapped(field_id: int, name: str, t: IcebergType) -> dict[str, Any]:
    entry: dict[str, Any] = {"field-id": field_id, "names": [name]}
    nested = _nested(t)
    if nested:
        entry["fields"] = nested
    return entry


def _nested(t: IcebergType) -> list[dict[str, Any]]:
    if isinstance(t, StructType):
        return [_mapped(f.field_id, f.name, f.field_type) for f in t.fields]
    if isinstance(t, ListType):
        return [_mapped(t.element_id, "element", t.element_type)]
    if isinstance(t, MapType):
        return [_mapped(t.key_id, "key", t.key_type), _mapped(t.value_id, "value", t.value_type)]
    return []


def mapping_for_fields(fields: tuple[NestedField, ...]) -> list[dict[str, Any]]:
    """The name mapping of ``fields`` as JSON-ready objects."""
    return [_mapped(f.field_id, f.name, f.field_type) for f in fields]


def name_mapping_json(schema: Schema) -> str:
    """``schema.name-mapping.default`` for ``schema``: every field by its current name."""
    return json.dumps(mapping_for_fields(schema.fields), separators=(",", ":"))
