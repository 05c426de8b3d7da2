"""Paimon type strings, schema and snapshot JSON, and their Iceberg counterparts.

Type strings are the ones Java's ``DataType.asSerializableString`` writes (and pypaimon,
whose schema files the sample JSON below is copied from)."""

from __future__ import annotations

import pytest

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.spec.paimon.iceberg_bridge import iceberg_schema, iceberg_type
from iceduck.spec.paimon.schema import schema_from_json
from iceduck.spec.paimon.snapshot import snapshot_from_json
from iceduck.spec.paimon.types import MAX_LENGTH, PaimonType, parse_type
from iceduck.spec.types import (
    BinaryType,
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
)

# pypaimon 2.1.0's schema-0 of a primary-key table (rowkind.field rk, bucket 2)
PK_SCHEMA = {
    "version": 3,
    "id": 0,
    "fields": [
        {"id": 0, "name": "id", "type": "BIGINT NOT NULL"},
        {"id": 1, "name": "v", "type": "STRING"},
        {"id": 2, "name": "n", "type": "INT"},
        {"id": 3, "name": "rk", "type": "STRING"},
    ],
    "highestFieldId": 3,
    "partitionKeys": [],
    "primaryKeys": ["id"],
    "options": {"bucket": "2", "rowkind.field": "rk"},
    "comment": None,
    "timeMillis": 1795594975383,
}

# pypaimon 2.1.0's snapshot-1 of the same table
SNAPSHOT = {
    "version": 3,
    "id": 1,
    "schemaId": 0,
    "baseManifestList": "manifest-list-5b63ac9c-00d6-41c6-9395-e271205c2caf-0",
    "deltaManifestList": "manifest-list-5b63ac9c-00d6-41c6-9395-e271205c2caf-1",
    "totalRecordCount": 4,
    "deltaRecordCount": 4,
    "commitUser": "416bbd30-137f-42ec-a843-cf24a6a84a1d",
    "commitIdentifier": 9223372036854775807,
    "commitKind": "APPEND",
    "timeMillis": 1795594975388,
    "baseManifestListSize": 1234,
    "deltaManifestListSize": 1337,
    "uuid": "e9fcac28-2546-4984-b65c-a00c1eb08662",
    "writerVersion": "python-2.1.0-3a5ffe7870697e2c2605e63413fb5ac5800aae7e",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("BOOLEAN", PaimonType("BOOLEAN")),
        ("TINYINT", PaimonType("TINYINT")),
        ("SMALLINT NOT NULL", PaimonType("SMALLINT", nullable=False)),
        ("INT", PaimonType("INT")),
        ("INTEGER", PaimonType("INT")),
        ("BIGINT NOT NULL", PaimonType("BIGINT", nullable=False)),
        ("FLOAT", PaimonType("FLOAT")),
        ("DOUBLE", PaimonType("DOUBLE")),
        ("STRING", PaimonType("VARCHAR", length=MAX_LENGTH)),
        ("BYTES", PaimonType("VARBINARY", length=MAX_LENGTH)),
        ("VARCHAR(10)", PaimonType("VARCHAR", length=10)),
        ("CHAR(3) NOT NULL", PaimonType("CHAR", nullable=False, length=3)),
        ("BINARY(16)", PaimonType("BINARY", length=16)),
        ("VARBINARY(7)", PaimonType("VARBINARY", length=7)),
        ("DECIMAL(10, 2)", PaimonType("DECIMAL", precision=10, scale=2)),
        ("DECIMAL(38,10)", PaimonType("DECIMAL", precision=38, scale=10)),
        ("DECIMAL", PaimonType("DECIMAL", precision=10, scale=0)),
        ("DATE", PaimonType("DATE")),
        ("TIME(3)", PaimonType("TIME", precision=3)),
        ("TIME", PaimonType("TIME", precision=0)),
        ("TIMESTAMP(3)", PaimonType("TIMESTAMP", precision=3)),
        ("TIMESTAMP", PaimonType("TIMESTAMP", precision=6)),
        ("TIMESTAMP(9) WITHOUT TIME ZONE", PaimonType("TIMESTAMP", precision=9)),
        (
            "TIMESTAMP(6) WITH LOCAL TIME ZONE NOT NULL",
            PaimonType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", nullable=False, precision=6),
        ),
        ("TIMESTAMP_LTZ(3)", PaimonType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", precision=3)),
        ("VARIANT", PaimonType("VARIANT")),
        ("ARRAY<INT NOT NULL>", PaimonType("ARRAY", element=PaimonType("INT", nullable=False))),
        (
            "MAP<STRING, BIGINT> NOT NULL",
            PaimonType(
                "MAP",
                nullable=False,
                key=PaimonType("VARCHAR", length=MAX_LENGTH),
                value=PaimonType("BIGINT"),
            ),
        ),
    ],
)
def test_atomic_and_sql_strings(text: str, expected: PaimonType) -> None:
    assert parse_type(text) == expected


def test_render_round_trips() -> None:
    for text in [
        "STRING",
        "BYTES",
        "DECIMAL(10, 2) NOT NULL",
        "TIMESTAMP(6) WITH LOCAL TIME ZONE",
        "ARRAY<INT>",
    ]:
        assert str(parse_type(text)) == text


def test_nested_json_objects() -> None:
    t = parse_type(
        {
            "type": "ROW NOT NULL",
            "fields": [
                {"id": 5, "name": "a", "type": {"type": "ARRAY", "element": "INT NOT NULL"}},
                {"id": 6, "name": "m", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": "DOUBLE"}},
                {"id": 7, "name": "s", "type": {"type": "MULTISET NOT NULL", "element": "STRING"}},
            ],
        }
    )
    assert t.root == "ROW" and not t.nullable
    a, m, s = t.fields
    assert (a.id, a.name, a.type) == (5, "a", PaimonType("ARRAY", element=PaimonType("INT", nullable=False)))
    assert m.type.key == PaimonType("VARCHAR", nullable=False, length=MAX_LENGTH)
    assert m.type.value == PaimonType("DOUBLE")
    assert s.type.root == "MULTISET" and not s.type.nullable


@pytest.mark.parametrize("bad", ["DECIMAL(10,", "VARCHAR(x)", "INT NOT", "ARRAY<INT", "", "INT INT", "(INT)"])
def test_malformed_type_names_the_file(bad: str) -> None:
    with pytest.raises(CorruptDataError, match="schema-3") as info:
        parse_type(bad, "t/schema/schema-3")
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("unknown", ["INTEGRAL", "GEOMETRY(4326)", "ARRAY<UUID>"])
def test_unknown_type_is_unsupported_and_names_the_file(unknown: str) -> None:
    with pytest.raises(UnsupportedError, match="t/schema/schema-3") as info:
        parse_type(unknown, "t/schema/schema-3")
    assert repr(unknown) in str(info.value)


def test_schema_properties() -> None:
    schema = schema_from_json(PK_SCHEMA, "t/schema/schema-0")
    assert schema.id == 0 and schema.highest_field_id == 3
    assert [f.name for f in schema.fields] == ["id", "v", "n", "rk"]
    assert schema.field_by_name("n") is not None and schema.field_by_name("n").id == 2  # type: ignore[union-attr]
    assert schema.field_by_id(3) is not None and schema.field_by_id(3).name == "rk"  # type: ignore[union-attr]
    assert schema.field_by_name("N") is None and schema.field_by_id(9) is None
    assert schema.is_primary_key_table and schema.trimmed_primary_keys == ("id",)
    assert schema.bucket == 2 and schema.merge_engine == "deduplicate"
    assert not schema.deletion_vectors_enabled and schema.file_format == "parquet"
    assert schema.sequence_fields == () and schema.partition_default_name == "__DEFAULT_PARTITION__"
    assert schema.partition_fields == ()
    # hashable (a cache key), equal to a schema parsed from the same JSON
    again = schema_from_json(PK_SCHEMA, "elsewhere")
    assert hash(schema) == hash(again) and schema == again


def test_trimmed_primary_keys_drop_partition_keys() -> None:
    obj = dict(PK_SCHEMA, partitionKeys=["v"], primaryKeys=["v", "id"])
    obj["options"] = {
        "merge-engine": "partial-update",
        "sequence.field": "n, rk",
        "deletion-vectors.enabled": "true",
    }
    schema = schema_from_json(obj, "s")
    assert schema.trimmed_primary_keys == ("id",)
    assert [f.name for f in schema.partition_fields] == ["v"]
    assert schema.bucket == -1 and schema.merge_engine == "partial-update"
    assert schema.sequence_fields == ("n", "rk") and schema.deletion_vectors_enabled
    # every key a partition key: Paimon keeps them all
    assert schema_from_json(dict(PK_SCHEMA, partitionKeys=["id"]), "s").trimmed_primary_keys == ("id",)


@pytest.mark.parametrize(
    "change",
    [
        {"fields": None},
        {"fields": [{"id": 0, "name": "id", "type": "BIGINT("}]},
        {"fields": [{"id": 0, "name": "id"}]},
        {"fields": [{"id": 0, "name": "a", "type": "INT"}, {"id": 1, "name": "a", "type": "INT"}]},
        {"id": "0"},
        {"primaryKeys": ["nope"]},
        {"options": {"bucket": "two"}},
        {"options": {"deletion-vectors.enabled": "yes"}},
    ],
)
def test_bad_schema_names_the_file(change: dict[str, object]) -> None:
    with pytest.raises(CorruptDataError, match="t/schema/schema-0"):
        schema_from_json(dict(PK_SCHEMA, **change), "t/schema/schema-0")


def test_snapshot() -> None:
    snap = snapshot_from_json(SNAPSHOT, "t/snapshot/snapshot-1")
    assert (snap.id, snap.schema_id, snap.commit_kind, snap.total_record_count) == (1, 0, "APPEND", 4)
    assert snap.base_manifest_list.endswith("-0") and snap.delta_manifest_list.endswith("-1")
    assert snap.index_manifest is None and snap.changelog_manifest_list is None
    assert snap.commit_identifier == 2**63 - 1 and snap.time_millis == 1795594975388


@pytest.mark.parametrize(
    "change", [{"id": None}, {"schemaId": "0"}, {"baseManifestList": 3}, {"commitKind": None}]
)
def test_bad_snapshot_names_the_file(change: dict[str, object]) -> None:
    with pytest.raises(CorruptDataError, match="t/snapshot/snapshot-1"):
        snapshot_from_json(dict(SNAPSHOT, **change), "t/snapshot/snapshot-1")


def test_iceberg_types() -> None:
    assert iceberg_type(parse_type("TINYINT")) == IntegerType()
    assert iceberg_type(parse_type("VARCHAR(3)")) == StringType()
    assert iceberg_type(parse_type("BINARY(3)")) == BinaryType()
    assert iceberg_type(parse_type("DECIMAL(20, 3)")) == DecimalType(20, 3)
    assert iceberg_type(parse_type("TIMESTAMP(3)")) == TimestampType()
    assert iceberg_type(parse_type("TIMESTAMP(9)")) == TimestampNanoType()
    assert iceberg_type(parse_type("TIMESTAMP_LTZ(6)")) == TimestamptzType()
    assert iceberg_type(parse_type("TIME(3)")) == TimeType()
    with pytest.raises(UnsupportedError, match="BLOB"):
        iceberg_type(parse_type("BLOB"))


def test_iceberg_schema_ids() -> None:
    obj = dict(PK_SCHEMA)
    obj["fields"] = PK_SCHEMA["fields"] + [  # type: ignore[operator]
        {
            "id": 4,
            "name": "r",
            "type": {
                "type": "ROW",
                "fields": [
                    {"id": 5, "name": "x", "type": {"type": "ARRAY", "element": "INT NOT NULL"}},
                    {
                        "id": 6,
                        "name": "y",
                        "type": {"type": "MAP", "key": "STRING NOT NULL", "value": "BIGINT"},
                    },
                ],
            },
        }
    ]
    obj["highestFieldId"] = 6
    schema = iceberg_schema(schema_from_json(obj, "s"))
    assert [(f.field_id, f.name, f.required) for f in schema.fields] == [
        (0, "id", True),
        (1, "v", False),
        (2, "n", False),
        (3, "rk", False),
        (4, "r", False),
    ]
    assert schema.identifier_field_ids == (0,)
    r = schema.fields[4].field_type
    assert isinstance(r, StructType)
    x, y = r.fields
    assert (x.field_id, y.field_id) == (7, 8)
    assert x.field_type == ListType(9, IntegerType(), True)
    assert y.field_type == MapType(10, StringType(), 11, LongType(), False)
    assert len(set(schema.field_ids())) == len(list(schema.field_ids()))


def test_iceberg_types_of_collections() -> None:
    multiset = iceberg_type(parse_type({"type": "MULTISET", "element": "STRING NOT NULL"}))
    # Paimon stores a multiset as a map from element to its count
    assert multiset == MapType(1, StringType(), 2, IntegerType(), True)
    vector = iceberg_type(parse_type({"type": "VECTOR NOT NULL", "element": "FLOAT NOT NULL", "length": 3}))
    assert isinstance(vector, ListType) and vector.element_required
    assert str(iceberg_type(parse_type("VARIANT"))) == "variant"
    with pytest.raises(UnsupportedError, match="precision"):
        iceberg_type(PaimonType("DECIMAL", precision=39, scale=0))
