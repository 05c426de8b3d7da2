"""Appendix C JSON of types, schemas, partition specs and sort orders.

Expected key orders are the ones Iceberg Java 1.10 (``SchemaParser``,
``PartitionSpecParser``, ``SortOrderParser``) writes.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from iceduck.errors import CorruptDataError
from iceduck.formats.schema_json import (
    field_to_json,
    partition_fields_from_json,
    partition_fields_to_json,
    partition_spec_from_json,
    partition_spec_to_json,
    schema_from_json,
    schema_to_json,
    sort_order_from_json,
    sort_order_to_json,
    type_from_json,
    type_to_json,
)
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import NullOrder, SortDirection, SortField, SortOrder
from iceduck.spec.transforms import BucketTransform, DayTransform, IdentityTransform, UnknownTransform
from iceduck.spec.types import (
    DecimalType,
    DoubleType,
    FixedType,
    GeometryType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzNanoType,
    UUIDType,
)

# The spec's examples (Appendix C), in Java's key order.
SPEC_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "identifier-field-ids": [1],
    "fields": [
        {
            "id": 1,
            "name": "id",
            "required": True,
            "type": "uuid",
            "initial-default": "0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb",
            "write-default": "ec5911be-b0a7-458c-8438-c9a3e53cffae",
        },
        {
            "id": 2,
            "name": "tags",
            "required": False,
            "type": {"type": "list", "element-id": 3, "element": "string", "element-required": True},
            "doc": "free-form labels",
        },
        {
            "id": 6,
            "name": "scores",
            "required": False,
            "type": {
                "type": "map",
                "key-id": 4,
                "key": "string",
                "value-id": 5,
                "value": "double",
                "value-required": False,
            },
        },
        {
            "id": 7,
            "name": "point",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [
                    {
                        "id": 8,
                        "name": "x",
                        "required": False,
                        "type": "int",
                        "initial-default": 0,
                        "write-default": 0,
                    },
                    {
                        "id": 9,
                        "name": "y",
                        "required": False,
                        "type": "int",
                        "initial-default": 0,
                        "write-default": 0,
                    },
                ],
            },
            "initial-default": {},
            "write-default": {},
        },
        {"id": 10, "name": "price", "required": False, "type": "decimal(9, 2)", "write-default": "14.20"},
    ],
}

SPEC_PARTITION_SPEC = {
    "spec-id": 0,
    "fields": [
        {"name": "ts_day", "transform": "day", "source-id": 4, "field-id": 1000},
        {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1001},
    ],
}

SPEC_SORT_ORDER = {
    "order-id": 1,
    "fields": [
        {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"},
    ],
}


# -- types --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "unknown",
        "boolean",
        "int",
        "long",
        "float",
        "double",
        "date",
        "time",
        "timestamp",
        "timestamptz",
        "timestamp_ns",
        "timestamptz_ns",
        "string",
        "uuid",
        "fixed[16]",
        "binary",
        "decimal(38, 10)",
        "variant",
        "geometry",
        "geometry(srid:4326)",
        "geography",
        "geography(srid:4326)",
    ],
)
def test_primitive_type_names_round_trip(text):
    assert type_to_json(type_from_json(text)) == text


def test_decimal_is_read_with_or_without_space_and_written_as_java_does():
    assert type_from_json("decimal(9,2)") == DecimalType(9, 2)
    assert type_from_json("decimal(9, 2)") == DecimalType(9, 2)
    assert type_to_json(DecimalType(9, 2)) == "decimal(9, 2)"


def test_type_names_are_case_insensitive_like_java():
    assert type_from_json("LONG") == LongType()
    assert type_from_json("Fixed[4]") == FixedType(4)


def test_nested_types_in_java_key_order():
    t = ListType(3, MapType(4, StringType(), 5, DoubleType(), value_required=True), element_required=False)
    js = type_to_json(t)
    assert list(js) == ["type", "element-id", "element", "element-required"]
    assert list(js["element"]) == ["type", "key-id", "key", "value-id", "value", "value-required"]
    assert js["element"]["value-required"] is True
    assert type_from_json(js) == t


def test_field_key_order_and_optional_keys():
    f = NestedField(1, "a", IntegerType(), required=True, doc="d", initial_default=1, write_default=2)
    assert list(field_to_json(f)) == [
        "id",
        "name",
        "required",
        "type",
        "doc",
        "initial-default",
        "write-default",
    ]
    assert list(field_to_json(NestedField(2, "b", IntegerType()))) == ["id", "name", "required", "type"]


# -- schemas ------------------------------------------------------------------------------


def test_spec_schema_example_parses_into_the_model():
    schema = schema_from_json(SPEC_SCHEMA)
    assert schema.schema_id == 0
    assert schema.identifier_field_ids == (1,)
    id_field = schema.find_field(1)
    assert id_field.field_type == UUIDType() and id_field.required
    assert id_field.initial_default == uuid.UUID("0db3e2a8-9d1d-42b9-aa7b-74ebe558dceb")
    assert id_field.write_default == uuid.UUID("ec5911be-b0a7-458c-8438-c9a3e53cffae")
    assert schema.find_type("tags") == ListType(3, StringType(), element_required=True)
    assert schema.find_field("tags").doc == "free-form labels"
    assert schema.find_type("scores") == MapType(4, StringType(), 5, DoubleType(), value_required=False)
    point = schema.find_field("point")
    assert isinstance(point.field_type, StructType)
    assert schema.find_field("point.x").initial_default == 0
    assert schema.find_field("price").write_default == Decimal("14.20")
    assert schema.find_field("price").initial_default is None


def test_spec_schema_example_round_trips_exactly():
    js = schema_to_json(schema_from_json(SPEC_SCHEMA))
    assert js == SPEC_SCHEMA
    assert list(js) == list(SPEC_SCHEMA)


def test_schema_without_id_or_identifiers_v1():
    obj = {"type": "struct", "fields": [{"id": 1, "name": "x", "required": False, "type": "long"}]}
    schema = schema_from_json(obj)
    assert schema.schema_id == 0 and schema.identifier_field_ids == ()
    # Java always writes schema-id and omits empty identifier-field-ids
    assert schema_to_json(schema) == {"type": "struct", "schema-id": 0, **{"fields": obj["fields"]}}
    assert list(schema_to_json(schema)) == ["type", "schema-id", "fields"]


def test_null_default_is_no_default():
    obj = {
        "type": "struct",
        "fields": [{"id": 1, "name": "x", "required": False, "type": "long", "initial-default": None}],
    }
    assert schema_from_json(obj).find_field(1).initial_default is None
    assert "initial-default" not in schema_to_json(schema_from_json(obj))["fields"][0]


def test_timestamp_ns_default_round_trip():
    f = NestedField(1, "t", TimestamptzNanoType(), initial_default=1510871468123456789)
    js = field_to_json(f)
    assert js["initial-default"] == "2017-11-16T22:31:08.123456789+00:00"
    assert schema_from_json({"type": "struct", "fields": [js]}).find_field(1) == f


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        ({"type": "struct", "fields": [{"id": 1, "required": True, "type": "int"}]}, "'name'"),
        ({"type": "struct", "fields": [{"id": "1", "name": "a", "required": True, "type": "int"}]}, "'id'"),
        (
            {"type": "struct", "fields": [{"id": 1, "name": "a", "required": "yes", "type": "int"}]},
            "'required'",
        ),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "strng"}]}, "strng"),
        ({"type": "struct", "fields": [{"id": 1, "name": "a", "required": True}]}, "'type'"),
        ({"type": "struct", "fields": {}}, "'fields'"),
        ({"type": "list", "fields": []}, "'struct'"),
        (
            {
                "type": "struct",
                "fields": [{"id": 1, "name": "a", "required": True, "type": {"type": "list"}}],
            },
            "element",
        ),
        (
            {
                "type": "struct",
                "fields": [{"id": 1, "name": "a", "required": True, "type": "int", "write-default": "x"}],
            },
            "write-default",
        ),
        (
            {"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "decimal(0, 0)"}]},
            "decimal",
        ),
        ([], "JSON object"),
    ],
)
def test_malformed_schema_names_the_problem(obj, needle):
    with pytest.raises(CorruptDataError) as info:
        schema_from_json(obj)
    assert needle in str(info.value)


def test_schema_errors_name_the_file_when_given():
    with pytest.raises(CorruptDataError) as info:
        schema_from_json({"type": "struct"}, path="s3://b/m.avro")
    assert info.value.path == "s3://b/m.avro"
    assert "'fields'" in info.value.problem


def test_int_out_of_range_is_corrupt():
    obj = {"type": "struct", "fields": [{"id": 2**31, "name": "a", "required": True, "type": "int"}]}
    with pytest.raises(CorruptDataError, match="out of range"):
        schema_from_json(obj)


# -- partition specs ----------------------------------------------------------------------


def test_spec_partition_example():
    spec = partition_spec_from_json(SPEC_PARTITION_SPEC)
    assert spec == PartitionSpec(
        0,
        (
            PartitionField(4, 1000, "ts_day", DayTransform()),
            PartitionField(1, 1001, "id_bucket", BucketTransform(16)),
        ),
    )
    js = partition_spec_to_json(spec)
    assert js == SPEC_PARTITION_SPEC
    assert [list(f) for f in js["fields"]] == [["name", "transform", "source-id", "field-id"]] * 2
    assert partition_fields_to_json(spec) == SPEC_PARTITION_SPEC["fields"]


def test_v1_partition_fields_without_ids_get_ids_from_1000():
    fields = [
        {"name": "ts_day", "transform": "day", "source-id": 4},
        {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1},
    ]
    spec = partition_fields_from_json(fields, 3)
    assert spec.spec_id == 3
    assert [f.field_id for f in spec.fields] == [1000, 1001]


def test_partition_fields_mixing_ids_are_corrupt():
    fields = [
        {"name": "a", "transform": "identity", "source-id": 1, "field-id": 1000},
        {"name": "b", "transform": "identity", "source-id": 2},
    ]
    with pytest.raises(CorruptDataError, match="field-id"):
        partition_fields_from_json(fields, 0)


def test_multi_argument_transform_uses_source_ids():
    obj = {
        "spec-id": 1,
        "fields": [{"name": "z", "transform": "zorder[2]", "source-ids": [1, 2], "field-id": 1000}],
    }
    spec = partition_spec_from_json(obj)
    field = spec.fields[0]
    assert field.transform == UnknownTransform("zorder[2]")
    assert field.source_ids == (1, 2) and field.source_id == 1
    js = partition_spec_to_json(spec)
    assert js == obj
    assert "source-id" not in js["fields"][0]


def test_single_source_in_source_ids_is_written_as_source_id():
    obj = {
        "spec-id": 0,
        "fields": [{"name": "a", "transform": "identity", "source-ids": [7], "field-id": 1000}],
    }
    spec = partition_spec_from_json(obj)
    assert spec.fields[0].source_id == 7 and spec.fields[0].source_ids is None
    assert partition_spec_to_json(spec)["fields"][0]["source-id"] == 7


def test_unknown_partition_transform_is_kept_verbatim():
    obj = {"spec-id": 0, "fields": [{"name": "a", "transform": "magic[3]", "source-id": 1, "field-id": 1000}]}
    assert partition_spec_to_json(partition_spec_from_json(obj)) == obj


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        ({"fields": []}, "'spec-id'"),
        ({"spec-id": 0, "fields": [{"name": "a", "transform": "identity"}]}, "'source-id'"),
        ({"spec-id": 0, "fields": [{"name": "a", "source-id": 1}]}, "'transform'"),
        ({"spec-id": 0, "fields": [{"transform": "identity", "source-id": 1}]}, "'name'"),
        ({"spec-id": 0, "fields": [{"name": "a", "transform": "bucket[0]", "source-id": 1}]}, "bucket[0]"),
        ({"spec-id": 0, "fields": [{"name": "a", "transform": "identity", "source-ids": []}]}, "source-ids"),
        ({"spec-id": 0, "fields": "x"}, "'fields'"),
    ],
)
def test_malformed_partition_spec(obj, needle):
    with pytest.raises(CorruptDataError) as info:
        partition_spec_from_json(obj, path="f.json")
    assert needle in str(info.value)
    assert info.value.path == "f.json"


# -- sort orders --------------------------------------------------------------------------


def test_spec_sort_order_example():
    order = sort_order_from_json(SPEC_SORT_ORDER)
    assert order == SortOrder(
        1,
        (
            SortField(2, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
            SortField(3, BucketTransform(4), SortDirection.DESC, NullOrder.NULLS_LAST),
        ),
    )
    js = sort_order_to_json(order)
    assert js == SPEC_SORT_ORDER
    assert [list(f) for f in js["fields"]] == [["transform", "source-id", "direction", "null-order"]] * 2


def test_unsorted_order():
    assert sort_order_to_json(SortOrder()) == {"order-id": 0, "fields": []}
    assert sort_order_from_json({"order-id": 0, "fields": []}).is_unsorted


def test_sort_order_multi_argument_transform():
    obj = {
        "order-id": 2,
        "fields": [
            {"transform": "zorder", "source-ids": [1, 2], "direction": "asc", "null-order": "nulls-last"}
        ],
    }
    order = sort_order_from_json(obj)
    assert order.fields[0].source_ids == (1, 2)
    assert sort_order_to_json(order) == obj


def test_sort_direction_case_is_accepted_like_java():
    obj = {
        "order-id": 1,
        "fields": [
            {"transform": "identity", "source-id": 1, "direction": "DESC", "null-order": "NULLS-LAST"}
        ],
    }
    field = sort_order_from_json(obj).fields[0]
    assert field.direction is SortDirection.DESC and field.null_order is NullOrder.NULLS_LAST


@pytest.mark.parametrize(
    ("field", "needle"),
    [
        (
            {"transform": "identity", "source-id": 1, "direction": "up", "null-order": "nulls-last"},
            "'direction'",
        ),
        ({"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "last"}, "'null-order'"),
        ({"transform": "identity", "source-id": 1, "null-order": "nulls-last"}, "'direction'"),
        ({"source-id": 1, "direction": "asc", "null-order": "nulls-last"}, "'transform'"),
    ],
)
def test_malformed_sort_order(field, needle):
    with pytest.raises(CorruptDataError) as info:
        sort_order_from_json({"order-id": 1, "fields": [field]})
    assert needle in str(info.value)


def test_geometry_type_round_trip_in_schema():
    schema = Schema((NestedField(1, "g", GeometryType("srid:4326")),), schema_id=3)
    assert schema_from_json(schema_to_json(schema)) == schema
