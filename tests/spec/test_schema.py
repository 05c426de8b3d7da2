import pytest

from iceduck.errors import NotFoundError
from iceduck.spec.schema import Schema
from iceduck.spec.types import IntegerType, ListType, MapType, NestedField, StringType, StructType

SCHEMA = Schema(
    (
        NestedField(1, "id", IntegerType(), required=True),
        NestedField(
            2,
            "location",
            StructType((NestedField(3, "lat", IntegerType()), NestedField(4, "Long", IntegerType()))),
        ),
        NestedField(5, "tags", ListType(6, StringType(), True)),
        NestedField(
            7, "props", MapType(8, StringType(), 9, StructType((NestedField(10, "v", StringType()),)))
        ),
    ),
    schema_id=3,
    identifier_field_ids=(1,),
)


def test_lookup_by_id_and_dotted_name() -> None:
    assert SCHEMA.find_field(4).name == "Long"
    assert SCHEMA.find_field("location.lat").field_id == 3
    assert SCHEMA.find_field("tags.element").field_id == 6
    assert SCHEMA.find_field("props.value.v").field_id == 10
    assert SCHEMA.find_field("LOCATION.long", case_sensitive=False).field_id == 4
    assert SCHEMA.highest_field_id == 10
    assert SCHEMA.column_name(10) == "props.value.v"


def test_missing_field_names_the_field() -> None:
    with pytest.raises(NotFoundError, match=r"no field 'location\.alt' in schema 3"):
        SCHEMA.find_field("location.alt")
    assert SCHEMA.find_field_or_none("LOCATION.lat") is None


def test_parents_and_list_map_membership() -> None:
    assert SCHEMA.parent_id(3) == 2
    assert SCHEMA.parent_id(1) is None
    assert not SCHEMA.is_in_list_or_map(3)
    assert SCHEMA.is_in_list_or_map(6)
    assert SCHEMA.is_in_list_or_map(10)
