"""The schemas of manifests and manifest lists, as Iceberg Java 1.10 writes them.

Spark and iceduck share tables, so iceduck writes the very schemas Java writes: the
Iceberg structs of ``V1Metadata``/``V2Metadata``/``V3Metadata`` (field ids, names, docs,
required-ness, order) converted to Avro the way ``avro.TypeToSchema`` does -- records
named ``r<field-id>`` (``r2`` data_file, ``r102`` partition, ``r508`` field_summary)
except the top-level ``manifest_entry``/``manifest_file``, maps with ``int`` keys as
arrays of ``k<key-id>_v<value-id>`` records, optional values as ``["null", T]`` unions
with default ``null``.

Appendix A: "Optional fields, array elements, and map values must be wrapped in an Avro
``union`` with ``null``", "Optional fields without an Iceberg default must set the Avro
field default value to ``null``", "Maps with non-string keys must use an array
representation with the ``map`` logical type", and field ids live in ``field-id`` (record
fields) and ``element-id`` (arrays).

The Iceberg structs are also what Java stores as the ``iceberg.schema`` key-value
metadata of every Avro file it writes, see :func:`iceberg_schema_json`.
"""

from __future__ import annotations

import json
from typing import Any

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.avro_projection import find_field
from iceduck.formats.schema_json import schema_to_json
from iceduck.spec.partition import PARTITION_DATA_ID_START
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

AvroSchema = dict[str, Any] | list[Any] | str

MANIFEST_ENTRY_RECORD = "manifest_entry"
MANIFEST_FILE_RECORD = "manifest_file"
FIELD_ID = "field-id"
ELEMENT_ID = "element-id"
KEY_ID = "key-id"
VALUE_ID = "value-id"
ICEBERG_FIELD_NAME = "iceberg-field-name"
ADJUST_TO_UTC = "adjust-to-utc"

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)


def check_format_version(format_version: int) -> None:
    if format_version not in SUPPORTED_FORMAT_VERSIONS:
        raise UnsupportedError(f"Iceberg format version {format_version} is not supported (1, 2 or 3 are)")


# -- the Iceberg structs (Java's ManifestEntry, DataFile, ManifestFile fields) -------------


def _opt(field_id: int, name: str, t: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(field_id, name, t, required=False, doc=doc)


def _req(field_id: int, name: str, t: IcebergType, doc: str | None = None) -> NestedField:
    return NestedField(field_id, name, t, required=True, doc=doc)


def _int_map(field_id: int, name: str, key_id: int, value_type: IcebergType, doc: str) -> NestedField:
    return _opt(field_id, name, MapType(key_id, IntegerType(), key_id + 1, value_type, True), doc)


_CONTENT = _req(
    134, "content", IntegerType(), "Contents of the file: 0=data, 1=position deletes, 2=equality deletes"
)
_FILE_PATH = _req(100, "file_path", StringType(), "Location URI with FS scheme")
_FILE_FORMAT = _req(101, "file_format", StringType(), "File format name: avro, orc, or parquet")
_PARTITION_DOC = "Partition data tuple, schema based on the partition spec"
_RECORD_COUNT = _req(103, "record_count", LongType(), "Number of records in the file")
_FILE_SIZE = _req(104, "file_size_in_bytes", LongType(), "Total file size in bytes")
_BLOCK_SIZE = _req(105, "block_size_in_bytes", LongType())  # v1 only, no doc (V1Metadata.BLOCK_SIZE)
_METRICS = (
    _int_map(108, "column_sizes", 117, LongType(), "Map of column id to total size on disk"),
    _int_map(109, "value_counts", 119, LongType(), "Map of column id to total count, including null and NaN"),
    _int_map(110, "null_value_counts", 121, LongType(), "Map of column id to null value count"),
    _int_map(
        137, "nan_value_counts", 138, LongType(), "Map of column id to number of NaN values in the column"
    ),
    _int_map(125, "lower_bounds", 126, BinaryType(), "Map of column id to lower bound"),
    _int_map(128, "upper_bounds", 129, BinaryType(), "Map of column id to upper bound"),
    _opt(131, "key_metadata", BinaryType(), "Encryption key metadata blob"),
    _opt(132, "split_offsets", ListType(133, LongType(), True), "Splittable offsets"),
)
_EQUALITY_IDS = _opt(135, "equality_ids", ListType(136, IntegerType(), True), "Equality comparison field IDs")
_SORT_ORDER_ID = _opt(140, "sort_order_id", IntegerType(), "Sort order ID")
_FIRST_ROW_ID = _opt(
    142, "first_row_id", LongType(), "The first row ID assigned to the first row in the data file"
)
_REFERENCED_DATA_FILE = _opt(
    143,
    "referenced_data_file",
    StringType(),
    "Fully qualified location (URI with FS scheme) of a data file that all deletes reference",
)
_CONTENT_OFFSET = _opt(144, "content_offset", LongType(), "The offset in the file where the content starts")
_CONTENT_SIZE = _opt(
    145, "content_size_in_bytes", LongType(), "The length of referenced content stored in the file"
)


def data_file_type(partition_type: StructType, format_version: int) -> StructType:
    """The ``data_file`` struct Java writes for ``format_version``.

    v1 (``V1Metadata.dataFileSchema``): no ``content``, the deprecated but "Always written"
    ``block_size_in_bytes``. v2 adds ``content`` (required), ``equality_ids`` and (Java
    1.10) ``referenced_data_file``; v3 adds ``first_row_id``, ``content_offset`` and
    ``content_size_in_bytes``.
    """
    check_format_version(format_version)
    if format_version == 1:
        partition = _req(102, "partition", partition_type)
        fields = (_FILE_PATH, _FILE_FORMAT, partition, _RECORD_COUNT, _FILE_SIZE, _BLOCK_SIZE, *_METRICS)
        return StructType((*fields, _SORT_ORDER_ID))
    partition = _req(102, "partition", partition_type, _PARTITION_DOC)
    head = (_CONTENT, _FILE_PATH, _FILE_FORMAT, partition, _RECORD_COUNT, _FILE_SIZE, *_METRICS)
    if format_version == 2:
        return StructType((*head, _EQUALITY_IDS, _SORT_ORDER_ID, _REFERENCED_DATA_FILE))
    tail = (
        _EQUALITY_IDS,
        _SORT_ORDER_ID,
        _FIRST_ROW_ID,
        _REFERENCED_DATA_FILE,
        _CONTENT_OFFSET,
        _CONTENT_SIZE,
    )
    return StructType((*head, *tail))


def manifest_entry_type(partition_type: StructType, format_version: int) -> StructType:
    """The ``manifest_entry`` struct; data and delete manifests share it.

    Java writes ``snapshot_id`` optional in every version (v1 included) and the sequence
    numbers (3, 4) from v2 on.
    """
    fields = [_req(0, "status", IntegerType()), _opt(1, "snapshot_id", LongType())]
    if format_version >= 2:
        fields += [_opt(3, "sequence_number", LongType()), _opt(4, "file_sequence_number", LongType())]
    fields.append(_req(2, "data_file", data_file_type(partition_type, format_version)))
    return StructType(tuple(fields))


FIELD_SUMMARY_TYPE = StructType(
    (
        _req(509, "contains_null", BooleanType(), "True if any file has a null partition value"),
        _opt(518, "contains_nan", BooleanType(), "True if any file has a nan partition value"),
        _opt(510, "lower_bound", BinaryType(), "Partition lower bound for all files"),
        _opt(511, "upper_bound", BinaryType(), "Partition upper bound for all files"),
    )
)


def manifest_file_type(format_version: int) -> StructType:
    """The ``manifest_file`` struct of a manifest list (``V<n>Metadata.MANIFEST_LIST_SCHEMA``).

    v1 keeps Java's historical order (``partitions`` before the row counts) and optional
    counts; v2 makes content, sequence numbers and counts required; v3 adds ``first_row_id``.
    """
    check_format_version(format_version)
    v1 = format_version == 1
    field = _opt if v1 else _req
    path = _req(500, "manifest_path", StringType(), "Location URI with FS scheme")
    length = _req(501, "manifest_length", LongType(), "Total file size in bytes")
    spec_id = _req(502, "partition_spec_id", IntegerType(), "Spec ID used to write")
    snapshot_id = _req(503, "added_snapshot_id", LongType(), "Snapshot ID that added the manifest")
    files = (
        field(504, "added_files_count", IntegerType(), "Added entry count"),
        field(505, "existing_files_count", IntegerType(), "Existing entry count"),
        field(506, "deleted_files_count", IntegerType(), "Deleted entry count"),
    )
    rows = (
        field(512, "added_rows_count", LongType(), "Added rows count"),
        field(513, "existing_rows_count", LongType(), "Existing rows count"),
        field(514, "deleted_rows_count", LongType(), "Deleted rows count"),
    )
    partitions = _opt(
        507, "partitions", ListType(508, FIELD_SUMMARY_TYPE, True), "Summary for each partition"
    )
    key_metadata = _opt(519, "key_metadata", BinaryType(), "Encryption key metadata blob")
    if v1:
        return StructType((path, length, spec_id, snapshot_id, *files, partitions, *rows, key_metadata))
    fields = [
        path,
        length,
        spec_id,
        _req(517, "content", IntegerType(), "Contents of the manifest: 0=data, 1=deletes"),
        _req(515, "sequence_number", LongType(), "Sequence number when the manifest was added"),
        _req(516, "min_sequence_number", LongType(), "Lowest sequence number in the manifest"),
        snapshot_id,
        *files,
        *rows,
        partitions,
        key_metadata,
    ]
    if format_version >= 3:
        fields.append(
            _opt(520, "first_row_id", LongType(), "Starting row ID to assign to new rows in ADDED data files")
        )
    return StructType(tuple(fields))


# -- what readers expect (matched by field id: iceduck.formats.avro_projection) ----------------

#: v1's ``distinct_counts`` (spec: "Deprecated. Do not write."), still read from old manifests
_DISTINCT_COUNTS = _int_map(111, "distinct_counts", 123, LongType(), "Map of column id to distinct count")
#: the partition tuple's field id in ``data_file``; its type is each manifest's own
PARTITION_FIELD_ID = 102


def merged_read_type(structs: tuple[StructType, ...]) -> StructType:
    """One struct a reader of every format version can expect: every field of ``structs``
    by id (the last struct's order, then fields only older ones have), nested structs merged
    alike, required only where every struct has the field required -- the rest may be
    absent from a file and then reads as null."""
    order: list[int] = []
    versions: dict[int, list[NestedField]] = {}
    for struct in reversed(structs):
        for f in struct.fields:
            if f.field_id not in versions:
                order.append(f.field_id)
                versions[f.field_id] = []
            versions[f.field_id].append(f)
    fields = []
    for field_id in order:
        seen = versions[field_id]
        latest = seen[0]
        nested = [f.field_type for f in seen if isinstance(f.field_type, StructType)]
        field_type = (
            merged_read_type(tuple(reversed(nested))) if len(nested) == len(seen) else latest.field_type
        )
        required = len(seen) == len(structs) and all(f.required for f in seen)
        fields.append(NestedField(field_id, latest.name, field_type, required=required, doc=latest.doc))
    return StructType(tuple(fields))


def manifest_file_read_type() -> StructType:
    """The ``manifest_file`` struct a manifest-list reader expects, of any format version."""
    return merged_read_type(tuple(manifest_file_type(v) for v in SUPPORTED_FORMAT_VERSIONS))


def manifest_entry_read_type() -> StructType:
    """The ``manifest_entry`` struct a manifest reader expects, of any format version, plus
    v1's ``distinct_counts``. Its partition tuple (field :data:`PARTITION_FIELD_ID`) is
    empty: read it as the file wrote it (``kept``), its type from the file's schema."""
    merged = merged_read_type(
        tuple(manifest_entry_type(StructType(()), v) for v in SUPPORTED_FORMAT_VERSIONS)
    )
    fields = []
    for f in merged.fields:
        if f.field_id == 2 and isinstance(f.field_type, StructType):
            f = NestedField(
                2, f.name, StructType((*f.field_type.fields, _DISTINCT_COUNTS)), f.required, f.doc
            )
        fields.append(f)
    return StructType(tuple(fields))


def manifest_entry_schema(partition_type: StructType, format_version: int) -> dict[str, Any]:
    """The Avro schema of a manifest (record ``manifest_entry``)."""
    return struct_to_avro(manifest_entry_type(partition_type, format_version), MANIFEST_ENTRY_RECORD)


def manifest_list_schema(format_version: int) -> dict[str, Any]:
    """The Avro schema of a manifest list (record ``manifest_file``)."""
    return struct_to_avro(manifest_file_type(format_version), MANIFEST_FILE_RECORD)


def iceberg_schema_json(struct: StructType) -> str:
    """The ``iceberg.schema`` key-value metadata: the struct as a schema with id 0, in the
    compact JSON of Java's ``SchemaParser.toJson``."""
    return json.dumps(schema_to_json(Schema(struct.fields, 0)), separators=(",", ":"), ensure_ascii=False)


# -- Iceberg -> Avro (Java's TypeToSchema) -----------------------------------------------------


def struct_to_avro(struct: StructType, record_name: str) -> dict[str, Any]:
    """Convert a struct to an Avro record named ``record_name`` (nested ones: ``r<id>``)."""
    return _record(struct, record_name, set())


def _record(struct: StructType, record_name: str, defined: set[str]) -> dict[str, Any]:
    fields = []
    for f in struct.fields:
        avro_type = _to_avro(f.field_type, f.field_id, defined)
        name = f.name if valid_avro_name(f.name) else sanitize_avro_name(f.name)
        # key order as Java's Avro writes it: name, type, doc, default, properties
        field: dict[str, Any] = {"name": name, "type": avro_type if f.required else _option(avro_type)}
        if f.doc is not None:
            field["doc"] = f.doc
        if not f.required:
            field["default"] = None
        if name != f.name:
            field[ICEBERG_FIELD_NAME] = f.name
        field[FIELD_ID] = f.field_id
        fields.append(field)
    return {"type": "record", "name": record_name, "fields": fields}


def _option(avro_type: AvroSchema) -> AvroSchema:
    return avro_type if avro_type == "null" else ["null", avro_type]


def _to_avro(t: IcebergType, field_id: int, defined: set[str]) -> AvroSchema:
    if isinstance(t, StructType):
        return _record(t, f"r{field_id}", defined)
    if isinstance(t, ListType):
        items = _to_avro(t.element_type, t.element_id, defined)
        return {
            "type": "array",
            "items": items if t.element_required else _option(items),
            ELEMENT_ID: t.element_id,
        }
    if isinstance(t, MapType):
        key = _to_avro(t.key_type, t.key_id, defined)
        value = _to_avro(t.value_type, t.value_id, defined)
        value = value if t.value_required else _option(value)
        if key == "string":
            return {"type": "map", "values": value, KEY_ID: t.key_id, VALUE_ID: t.value_id}
        value_field: dict[str, Any] = {"name": "value", "type": value}
        if not t.value_required:
            value_field["default"] = None
        value_field[FIELD_ID] = t.value_id
        pair = {
            "type": "record",
            "name": f"k{t.key_id}_v{t.value_id}",
            "fields": [{"name": "key", "type": key, FIELD_ID: t.key_id}, value_field],
        }
        return {"type": "array", "items": pair, "logicalType": "map"}
    return primitive_to_avro(t, defined)


def decimal_required_bytes(precision: int) -> int:
    """Appendix A: decimals are "Stored as fixed using the minimum number of bytes for the
    given precision" (Java ``TypeUtil.decimalRequiredBytes``)."""
    size = 1
    while (1 << (8 * size - 1)) - 1 < 10**precision - 1:
        size += 1
    return size


def primitive_to_avro(t: IcebergType, defined: set[str]) -> AvroSchema:
    """Appendix A's Avro type of an Iceberg primitive.

    ``defined`` holds the named (fixed) types already written in the enclosing schema: an
    Avro name is defined once and referred to by name afterwards, which is what Java's
    schema cache produces when two partition fields share a decimal type.
    """
    simple = _SIMPLE_AVRO.get(type(t))
    if simple is not None:
        return dict(simple) if isinstance(simple, dict) else simple
    if isinstance(t, UUIDType):
        return _named({"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}, defined)
    if isinstance(t, FixedType):
        return _named({"type": "fixed", "name": f"fixed_{t.length}", "size": t.length}, defined)
    if isinstance(t, DecimalType):
        fixed = {
            "type": "fixed",
            "name": f"decimal_{t.precision}_{t.scale}",
            "size": decimal_required_bytes(t.precision),
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
        return _named(fixed, defined)
    raise UnsupportedError(f"type {t} cannot be written to a manifest")


_SIMPLE_AVRO: dict[type, AvroSchema] = {
    UnknownType: "null",
    BooleanType: "boolean",
    IntegerType: "int",
    LongType: "long",
    FloatType: "float",
    DoubleType: "double",
    StringType: "string",
    BinaryType: "bytes",
    GeometryType: "bytes",
    GeographyType: "bytes",
    DateType: {"type": "int", "logicalType": "date"},
    TimeType: {"type": "long", "logicalType": "time-micros"},
    TimestampType: {"type": "long", "logicalType": "timestamp-micros", ADJUST_TO_UTC: False},
    TimestamptzType: {"type": "long", "logicalType": "timestamp-micros", ADJUST_TO_UTC: True},
    TimestampNanoType: {"type": "long", "logicalType": "timestamp-nanos", ADJUST_TO_UTC: False},
    TimestamptzNanoType: {"type": "long", "logicalType": "timestamp-nanos", ADJUST_TO_UTC: True},
}


def _named(schema: dict[str, Any], defined: set[str]) -> AvroSchema:
    name = schema["name"]
    if name in defined:
        return name
    defined.add(name)
    return schema


def valid_avro_name(name: str) -> bool:
    """Java ``AvroSchemaUtil.validAvroName``: a letter or ``_``, then letters, digits, ``_``."""
    if not name or not (name[0].isalpha() or name[0] == "_"):
        return False
    return all(c.isalnum() or c == "_" for c in name[1:])


def sanitize_avro_name(name: str) -> str:
    """Java ``AvroSchemaUtil.sanitize``: a leading digit becomes ``_<d>``, any other invalid
    character ``_x<HEX>`` of its UTF-16 code unit (Java iterates ``char``s)."""
    units = name.encode("utf-16-be")
    out = []
    for i in range(0, len(units), 2):
        code = int.from_bytes(units[i : i + 2], "big")
        c = "" if 0xD800 <= code <= 0xDFFF else chr(code)
        if c and (c.isalpha() or c == "_" or (i > 0 and c.isalnum())):
            out.append(c)
        elif c.isdigit():
            out.append("_" + c)
        else:
            out.append(f"_x{code:X}")
    return "".join(out)


# -- Avro -> Iceberg (the partition tuple of a manifest, Java's SchemaToType) -------------------


def partition_type_from_avro(entry_schema: dict[str, Any], path: str | None = None) -> StructType:
    """The partition struct a manifest was written with, read from its own Avro schema.

    Readers trust the file over the table metadata here: after a source column is dropped
    the spec's result type is unknowable from the schema, but the manifest still says it.
    """
    try:
        data_file = _field_type(entry_schema, 2, "data_file")
        record = _field_type(data_file, PARTITION_FIELD_ID, "partition")
        named: dict[str, Any] = {}
        fields = []
        for i, f in enumerate(record["fields"]):
            avro_type, optional = _unwrap_option(f["type"])
            t = avro_to_primitive(avro_type, named)
            name = f.get(ICEBERG_FIELD_NAME, f["name"])
            # v1 writers that tracked no partition field ids used 1000, 1001, ... (spec, Partitioning)
            field_id = int(f.get(FIELD_ID, PARTITION_DATA_ID_START + i))
            fields.append(NestedField(field_id, name, t, required=not optional, doc=f.get("doc")))
        return StructType(tuple(fields))
    except (KeyError, TypeError, ValueError) as e:
        raise CorruptDataError(f"manifest Avro schema has no valid partition record: {e!r}", path) from e


def _field_type(record: dict[str, Any], field_id: int, name: str) -> dict[str, Any]:
    """The record type of the field with ``field_id`` (by ``name`` if the writer wrote no ids)."""
    f = find_field(record, field_id, name)
    if f is None:
        raise KeyError(f"{field_id} {name}")
    t, _ = _unwrap_option(f["type"])
    if not isinstance(t, dict) or t.get("type") != "record":
        raise ValueError(f"field {field_id} {name!r} is not a record")
    return t


def _unwrap_option(avro_type: Any) -> tuple[Any, bool]:
    if isinstance(avro_type, list):
        others = [t for t in avro_type if t != "null"]
        if len(others) > 1 or len(avro_type) > 2:
            raise ValueError(f"unsupported union {avro_type!r}")
        return (others[0] if others else "null"), True
    return avro_type, avro_type == "null"


def avro_to_primitive(avro_type: Any, named: dict[str, Any]) -> IcebergType:
    """The Iceberg type of an Avro primitive (logical types as Appendix A maps them)."""
    if isinstance(avro_type, str):
        if avro_type in named:
            avro_type = named[avro_type]
        else:
            simple = _AVRO_SIMPLE.get(avro_type)
            if simple is None:
                raise ValueError(f"unsupported Avro type {avro_type!r}")
            return simple
    if not isinstance(avro_type, dict):
        raise ValueError(f"unsupported Avro type {avro_type!r}")
    base = avro_type.get("type")
    logical = avro_type.get("logicalType")
    if base == "fixed":
        named[avro_type["name"]] = avro_type
        if logical == "decimal":
            return DecimalType(int(avro_type["precision"]), int(avro_type.get("scale", 0)))
        if logical == "uuid":
            return UUIDType()
        return FixedType(int(avro_type["size"]))
    utc = bool(avro_type.get(ADJUST_TO_UTC, False))
    if logical == "date" and base == "int":
        return DateType()
    if logical in ("time-micros", "time-millis"):
        return TimeType()
    if logical in ("timestamp-micros", "timestamp-millis"):
        return TimestamptzType() if utc else TimestampType()
    if logical == "timestamp-nanos":
        return TimestamptzNanoType() if utc else TimestampNanoType()
    if logical == "decimal" and base == "bytes":
        return DecimalType(int(avro_type["precision"]), int(avro_type.get("scale", 0)))
    if logical == "uuid" and base == "string":
        return UUIDType()
    return avro_to_primitive(base, named)


_AVRO_SIMPLE: dict[str, IcebergType] = {
    "null": UnknownType(),
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "string": StringType(),
    "bytes": BinaryType(),
}
