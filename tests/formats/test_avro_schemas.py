"""The Avro schemas of manifests and manifest lists against what Iceberg Java 1.10 writes."""

from __future__ import annotations

import json

import pytest

from iceduck.errors import UnsupportedError
from iceduck.formats import avro_schemas as A
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
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

# The manifest_entry schema of a v3 manifest written by Spark 3.5 + Iceberg 1.10.2 for a
# table partitioned by (bucket(4, id), truncate(1, s), years(d), months(ts), days(tsn),
# truncate(2, dec), bucket(3, bin)), copied from the file's avro.schema metadata.
JAVA_V3_ENTRY = json.loads(
    '{"type":"record","name":"manifest_entry","fields":[{"name":"status","type":"int","field-id":0},'
    '{"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1},{"name":"sequence_number",'
    '"type":["null","long"],"default":null,"field-id":3},{"name":"file_sequence_number","type":["null",'
    '"long"],"default":null,"field-id":4},{"name":"data_file","type":{"type":"record","name":"r2","fields":'
    '[{"name":"content","type":"int","doc":"Contents of the file: 0=data, 1=position deletes, 2=equality '
    'deletes","field-id":134},{"name":"file_path","type":"string","doc":"Location URI with FS scheme",'
    '"field-id":100},{"name":"file_format","type":"string","doc":"File format name: avro, orc, or parquet",'
    '"field-id":101},{"name":"partition","type":{"type":"record","name":"r102","fields":[{"name":'
    '"id_bucket","type":["null","int"],"default":null,"field-id":1000},{"name":"s_trunc","type":["null",'
    '"string"],"default":null,"field-id":1001},{"name":"d_year","type":["null","int"],"default":null,'
    '"field-id":1002},{"name":"ts_month","type":["null","int"],"default":null,"field-id":1003},{"name":'
    '"tsn_day","type":["null",{"type":"int","logicalType":"date"}],"default":null,"field-id":1004},'
    '{"name":"dec_trunc","type":["null",{"type":"fixed","name":"decimal_10_2","size":5,"logicalType":'
    '"decimal","precision":10,"scale":2}],"default":null,"field-id":1005},{"name":"bin_bucket","type":'
    '["null","int"],"default":null,"field-id":1006}]},"doc":"Partition data tuple, schema based on the '
    'partition spec","field-id":102},{"name":"record_count","type":"long","doc":"Number of records in the '
    'file","field-id":103},{"name":"file_size_in_bytes","type":"long","doc":"Total file size in bytes",'
    '"field-id":104},{"name":"column_sizes","type":["null",{"type":"array","items":{"type":"record","name":'
    '"k117_v118","fields":[{"name":"key","type":"int","field-id":117},{"name":"value","type":"long",'
    '"field-id":118}]},"logicalType":"map"}],"doc":"Map of column id to total size on disk","default":null,'
    '"field-id":108},{"name":"value_counts","type":["null",{"type":"array","items":{"type":"record","name":'
    '"k119_v120","fields":[{"name":"key","type":"int","field-id":119},{"name":"value","type":"long",'
    '"field-id":120}]},"logicalType":"map"}],"doc":"Map of column id to total count, including null and '
    'NaN","default":null,"field-id":109},{"name":"null_value_counts","type":["null",{"type":"array","items":'
    '{"type":"record","name":"k121_v122","fields":[{"name":"key","type":"int","field-id":121},{"name":'
    '"value","type":"long","field-id":122}]},"logicalType":"map"}],"doc":"Map of column id to null value '
    'count","default":null,"field-id":110},{"name":"nan_value_counts","type":["null",{"type":"array",'
    '"items":{"type":"record","name":"k138_v139","fields":[{"name":"key","type":"int","field-id":138},'
    '{"name":"value","type":"long","field-id":139}]},"logicalType":"map"}],"doc":"Map of column id to '
    'number of NaN values in the column","default":null,"field-id":137},{"name":"lower_bounds","type":'
    '["null",{"type":"array","items":{"type":"record","name":"k126_v127","fields":[{"name":"key","type":'
    '"int","field-id":126},{"name":"value","type":"bytes","field-id":127}]},"logicalType":"map"}],"doc":'
    '"Map of column id to lower bound","default":null,"field-id":125},{"name":"upper_bounds","type":["null",'
    '{"type":"array","items":{"type":"record","name":"k129_v130","fields":[{"name":"key","type":"int",'
    '"field-id":129},{"name":"value","type":"bytes","field-id":130}]},"logicalType":"map"}],"doc":"Map of '
    'column id to upper bound","default":null,"field-id":128},{"name":"key_metadata","type":["null",'
    '"bytes"],"doc":"Encryption key metadata blob","default":null,"field-id":131},{"name":"split_offsets",'
    '"type":["null",{"type":"array","items":"long","element-id":133}],"doc":"Splittable offsets","default":'
    'null,"field-id":132},{"name":"equality_ids","type":["null",{"type":"array","items":"int","element-id":'
    '136}],"doc":"Equality comparison field IDs","default":null,"field-id":135},{"name":"sort_order_id",'
    '"type":["null","int"],"doc":"Sort order ID","default":null,"field-id":140},{"name":"first_row_id",'
    '"type":["null","long"],"doc":"The first row ID assigned to the first row in the data file","default":'
    'null,"field-id":142},{"name":"referenced_data_file","type":["null","string"],"doc":"Fully qualified '
    'location (URI with FS scheme) of a data file that all deletes reference","default":null,"field-id":'
    '143},{"name":"content_offset","type":["null","long"],"doc":"The offset in the file where the content '
    'starts","default":null,"field-id":144},{"name":"content_size_in_bytes","type":["null","long"],"doc":'
    '"The length of referenced content stored in the file","default":null,"field-id":145}]},"field-id":2}]}'
)

XFORM_PARTITION = StructType(
    (
        NestedField(1000, "id_bucket", IntegerType()),
        NestedField(1001, "s_trunc", StringType()),
        NestedField(1002, "d_year", IntegerType()),
        NestedField(1003, "ts_month", IntegerType()),
        NestedField(1004, "tsn_day", DateType()),
        NestedField(1005, "dec_trunc", DecimalType(10, 2)),
        NestedField(1006, "bin_bucket", IntegerType()),
    )
)


def test_v3_entry_schema_matches_java() -> None:
    assert A.manifest_entry_schema(XFORM_PARTITION, 3) == JAVA_V3_ENTRY


def test_partition_type_read_back_from_java_schema() -> None:
    assert A.partition_type_from_avro(JAVA_V3_ENTRY) == XFORM_PARTITION


def _fields(schema: dict) -> list[tuple[str, int]]:
    return [(f["name"], f["field-id"]) for f in schema["fields"]]


def _data_file_fields(schema: dict) -> list[tuple[str, int]]:
    return _fields(schema["fields"][-1]["type"])


def test_entry_fields_per_version() -> None:
    empty = StructType(())
    v1, v2, v3 = (A.manifest_entry_schema(empty, v) for v in (1, 2, 3))
    assert _fields(v1) == [("status", 0), ("snapshot_id", 1), ("data_file", 2)]
    assert (
        _fields(v2)
        == _fields(v3)
        == [
            ("status", 0),
            ("snapshot_id", 1),
            ("sequence_number", 3),
            ("file_sequence_number", 4),
            ("data_file", 2),
        ]
    )
    metrics = [108, 109, 110, 137, 125, 128, 131, 132]
    assert [i for _, i in _data_file_fields(v1)] == [100, 101, 102, 103, 104, 105, *metrics, 140]
    assert [i for _, i in _data_file_fields(v2)] == [134, 100, 101, 102, 103, 104, *metrics, 135, 140, 143]
    assert [i for _, i in _data_file_fields(v3)] == [
        134, 100, 101, 102, 103, 104, *metrics, 135, 140, 142, 143, 144, 145
    ]  # fmt: skip
    # v1: "block_size_in_bytes ... Always written", required long, no doc
    block = v1["fields"][-1]["type"]["fields"][5]
    assert block == {"name": "block_size_in_bytes", "type": "long", "field-id": 105}


def test_manifest_list_fields_per_version() -> None:
    v1, v2, v3 = (A.manifest_list_schema(v) for v in (1, 2, 3))
    assert [i for _, i in _fields(v1)] == [500, 501, 502, 503, 504, 505, 506, 507, 512, 513, 514, 519]
    assert [i for _, i in _fields(v2)] == [
        500,
        501,
        502,
        517,
        515,
        516,
        503,
        504,
        505,
        506,
        512,
        513,
        514,
        507,
        519,
    ]
    assert _fields(v3) == [*_fields(v2), ("first_row_id", 520)]
    # v1 counts are optional, v2 required
    assert v1["fields"][4]["type"] == ["null", "int"]
    assert v2["fields"][7]["type"] == "int"
    partitions = v2["fields"][13]
    assert partitions["type"][1]["element-id"] == 508
    summary = partitions["type"][1]["items"]
    assert summary["name"] == "r508"
    assert _fields(summary) == [
        ("contains_null", 509),
        ("contains_nan", 518),
        ("lower_bound", 510),
        ("upper_bound", 511),
    ]
    assert summary["fields"][0]["type"] == "boolean"


@pytest.mark.parametrize(
    ("iceberg", "avro"),
    [
        (BooleanType(), "boolean"),
        (IntegerType(), "int"),
        (LongType(), "long"),
        (FloatType(), "float"),
        (DoubleType(), "double"),
        (StringType(), "string"),
        (BinaryType(), "bytes"),
        (DateType(), {"type": "int", "logicalType": "date"}),
        (TimeType(), {"type": "long", "logicalType": "time-micros"}),
        (TimestampType(), {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False}),
        (TimestamptzType(), {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True}),
        (TimestampNanoType(), {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": False}),
        (TimestamptzNanoType(), {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": True}),
        (UUIDType(), {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}),
        (FixedType(7), {"type": "fixed", "name": "fixed_7", "size": 7}),
        (
            DecimalType(38, 10),
            {
                "type": "fixed",
                "name": "decimal_38_10",
                "size": 16,
                "logicalType": "decimal",
                "precision": 38,
                "scale": 10,
            },
        ),
        (UnknownType(), "null"),
    ],
)
def test_appendix_a_type_mapping(iceberg, avro) -> None:
    assert A.primitive_to_avro(iceberg, set()) == avro
    assert A.avro_to_primitive(avro, {}) == iceberg


def test_unknown_partition_field_is_plain_null_with_default() -> None:
    record = A.struct_to_avro(StructType((NestedField(1000, "gone", UnknownType()),)), "r102")
    assert record["fields"] == [{"name": "gone", "type": "null", "default": None, "field-id": 1000}]


@pytest.mark.parametrize(
    ("precision", "size"),
    [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (7, 4), (9, 4), (10, 5), (18, 8), (19, 9), (38, 16)],
)
def test_decimal_required_bytes(precision: int, size: int) -> None:
    assert A.decimal_required_bytes(precision) == size


def test_named_types_are_defined_once() -> None:
    """Two fields of one decimal type: Avro allows one definition, then references by name."""
    partition = StructType(
        (
            NestedField(1000, "a", DecimalType(10, 2)),
            NestedField(1001, "b", DecimalType(10, 2)),
            NestedField(1002, "c", UUIDType()),
            NestedField(1003, "d", UUIDType()),
        )
    )
    fields = A.struct_to_avro(partition, "r102")["fields"]
    assert fields[0]["type"][1]["name"] == "decimal_10_2"
    assert fields[1]["type"] == ["null", "decimal_10_2"]
    assert fields[3]["type"] == ["null", "uuid_fixed"]
    # and the reader resolves the references
    entry = A.manifest_entry_schema(partition, 2)
    assert A.partition_type_from_avro(entry) == partition


@pytest.mark.parametrize(
    ("name", "sanitized"),
    [("a-b", "a_x2Db"), ("1x", "_1x"), ("x.y", "x_x2Ey"), ("ok_1", "ok_1"), ("é", "é"), ("a b", "a_x20b")],
)
def test_field_names_sanitized_like_java(name: str, sanitized: str) -> None:
    record = A.struct_to_avro(StructType((NestedField(1000, name, IntegerType()),)), "r102")
    field = record["fields"][0]
    assert field["name"] == sanitized
    assert field.get("iceberg-field-name") == (None if name == sanitized else name)
    entry = A.manifest_entry_schema(StructType((NestedField(1000, name, IntegerType()),)), 2)
    assert A.partition_type_from_avro(entry).fields[0].name == name


def test_iceberg_schema_metadata_is_javas_compact_json() -> None:
    text = A.iceberg_schema_json(A.manifest_file_type(1))
    assert text.startswith(
        '{"type":"struct","schema-id":0,"fields":[{"id":500,"name":"manifest_path","required":true,'
        '"type":"string","doc":"Location URI with FS scheme"}'
    )
    assert '{"id":507,"name":"partitions","required":false,"type":{"type":"list","element-id":508,' in text


def test_unsupported_versions_and_types() -> None:
    with pytest.raises(UnsupportedError):
        A.manifest_list_schema(4)
    with pytest.raises(UnsupportedError):
        A.manifest_entry_schema(StructType(()), 0)
    with pytest.raises(UnsupportedError):
        A.primitive_to_avro(StructType(()), set())


def test_partition_fields_without_ids_get_v1_ids() -> None:
    """Spec: "In v1, partition field IDs were not tracked, but were assigned sequentially starting
    at 1000 in the reference implementation"."""
    entry = A.manifest_entry_schema(
        StructType((NestedField(1000, "a", IntegerType()), NestedField(1001, "b", DateType()))), 1
    )
    for f in entry["fields"][-1]["type"]["fields"][2]["type"]["fields"]:
        del f["field-id"]
    assert [(f.field_id, f.name) for f in A.partition_type_from_avro(entry).fields] == [
        (1000, "a"),
        (1001, "b"),
    ]


def test_java_field_key_order() -> None:
    """Key order of Java's Avro JSON, so the avro.schema text matches byte for byte."""
    record = A.struct_to_avro(StructType((NestedField(1000, "a-b", IntegerType(), doc="d"),)), "r102")
    assert list(record["fields"][0]) == ["name", "type", "doc", "default", "iceberg-field-name", "field-id"]
