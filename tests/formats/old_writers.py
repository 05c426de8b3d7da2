"""Metadata files as other writers wrote them, built with fastavro (not iceduck's writer).

:data:`JAVA_1_4_V2_MANIFEST_LIST` is the Avro schema of a v2 manifest list written by Iceberg
Java 1.4 and older (``V2Metadata.MANIFEST_LIST_SCHEMA`` of that release): the field ids of
the spec, but fields 504-506 named ``added_data_files_count``,
``existing_data_files_count`` and ``deleted_data_files_count`` (renamed ``added_files_count``
and so on in Java 1.5). The helpers rename or strip ids in any schema to stand for other
writers.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import fastavro

from iceduck.formats.avro_files import encode_header, parse_header

#: Java 1.4's renamed manifest-list fields, by field id
JAVA_1_4_NAMES = {
    504: "added_data_files_count",
    505: "existing_data_files_count",
    506: "deleted_data_files_count",
}
ID_KEYS = ("field-id", "element-id", "key-id", "value-id")


def _f(field_id: int, name: str, avro_type: Any, optional: bool = False) -> dict[str, Any]:
    field: dict[str, Any] = {"name": name, "type": ["null", avro_type] if optional else avro_type}
    if optional:
        field["default"] = None
    field["field-id"] = field_id
    return field


_SUMMARY = {
    "type": "record",
    "name": "r508",
    "fields": [
        _f(509, "contains_null", "boolean"),
        _f(518, "contains_nan", "boolean", optional=True),
        _f(510, "lower_bound", "bytes", optional=True),
        _f(511, "upper_bound", "bytes", optional=True),
    ],
}
JAVA_1_4_V2_MANIFEST_LIST: dict[str, Any] = {
    "type": "record",
    "name": "manifest_file",
    "fields": [
        _f(500, "manifest_path", "string"),
        _f(501, "manifest_length", "long"),
        _f(502, "partition_spec_id", "int"),
        _f(517, "content", "int"),
        _f(515, "sequence_number", "long"),
        _f(516, "min_sequence_number", "long"),
        _f(503, "added_snapshot_id", "long"),
        _f(504, "added_data_files_count", "int"),
        _f(505, "existing_data_files_count", "int"),
        _f(506, "deleted_data_files_count", "int"),
        _f(512, "added_rows_count", "long"),
        _f(513, "existing_rows_count", "long"),
        _f(514, "deleted_rows_count", "long"),
        _f(507, "partitions", {"type": "array", "items": _SUMMARY, "element-id": 508}, optional=True),
        _f(519, "key_metadata", "bytes", optional=True),
    ],
}


def decode(data: bytes) -> tuple[dict[str, str], dict[str, Any], list[dict[str, Any]]]:
    """fastavro's reading of a container: user metadata, writer schema, records."""
    reader = fastavro.reader(io.BytesIO(data))
    metadata = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
    return metadata, json.loads(reader.metadata["avro.schema"]), list(reader)


def write(schema: dict[str, Any], records: list[dict[str, Any]], metadata: dict[str, str]) -> bytes:
    """A container written by fastavro (codec ``deflate``, as Java's default)."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec="deflate", metadata=metadata)
    return out.getvalue()


def java_1_4_manifest_list(current: bytes) -> bytes:
    """The manifest list ``current`` (iceduck's, v2) as Java 1.4 writes it: same metadata and
    values, records keyed by Java 1.4's names."""
    metadata, _, records = decode(current)
    renamed = {"added_files_count": 504, "existing_files_count": 505, "deleted_files_count": 506}
    old = [{JAVA_1_4_NAMES.get(renamed.get(k, -1), k): v for k, v in r.items()} for r in records]
    return write(JAVA_1_4_V2_MANIFEST_LIST, old, metadata)


def map_fields(schema: Any, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """A copy of an Avro schema with ``change`` applied to every record field (nested too)."""
    if isinstance(schema, list):
        return [map_fields(s, change) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: map_fields(v, change) for k, v in schema.items() if k != "fields"}
    if "fields" in schema:
        out["fields"] = [change({**f, "type": map_fields(f["type"], change)}) for f in schema["fields"]]
    return out


def without_ids(schema: Any) -> Any:
    """The schema as a writer that tracks no Iceberg ids writes it."""
    if isinstance(schema, list):
        return [without_ids(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: without_ids(v) for k, v in schema.items() if k not in ID_KEYS}


def with_schema(data: bytes, schema: dict[str, Any]) -> bytes:
    """``data`` with another header schema: names and Iceberg ids do not change Avro's
    binary encoding, so the blocks stay valid."""
    metadata, sync, start = parse_header(data, "<test>")
    metadata["avro.schema"] = json.dumps(schema)
    return encode_header(metadata, sync) + data[start:]
