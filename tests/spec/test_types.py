import pytest

from iceduck.errors import UserError
from iceduck.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    UnknownType,
    can_promote,
    primitive_from_string,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int", IntegerType()),
        ("long", LongType()),
        ("timestamptz", TimestamptzType()),
        ("timestamp_ns", TimestampNanoType()),
        ("decimal(9,2)", DecimalType(9, 2)),
        ("decimal(9, 2)", DecimalType(9, 2)),
        ("fixed[16]", FixedType(16)),
        ("unknown", UnknownType()),
        ("geometry", GeometryType()),
        ("geometry(srid:4326)", GeometryType("srid:4326")),
        ("geography(srid:4326, spherical)", GeographyType("srid:4326", "spherical")),
        ("geography(srid:4326, karney)", GeographyType("srid:4326", "karney")),
    ],
)
def test_primitive_from_string(text: str, expected: object) -> None:
    assert primitive_from_string(text) == expected


@pytest.mark.parametrize("t", [IntegerType(), DecimalType(38, 10), FixedType(3), GeometryType("srid:3857")])
def test_string_form_round_trips(t: object) -> None:
    assert primitive_from_string(str(t)) == t


def test_unknown_type_name_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="unknown Iceberg type 'varchar'"):
        primitive_from_string("varchar")


def test_decimal_precision_limit() -> None:
    with pytest.raises(UserError, match="precision must be between 1 and 38"):
        DecimalType(39, 0)


@pytest.mark.parametrize(
    ("source", "target", "v2", "v3"),
    [
        (IntegerType(), LongType(), True, True),
        (FloatType(), DoubleType(), True, True),
        (DecimalType(9, 2), DecimalType(18, 2), True, True),
        (DecimalType(9, 2), DecimalType(18, 3), False, False),
        (DecimalType(18, 2), DecimalType(9, 2), False, False),
        (DateType(), TimestampType(), False, True),
        (DateType(), TimestampNanoType(), False, True),
        (DateType(), TimestamptzType(), False, False),
        (UnknownType(), StringType(), False, True),
        (LongType(), IntegerType(), False, False),
        (IntegerType(), StringType(), False, False),
        (BinaryType(), StringType(), False, False),
    ],
)
def test_promotions_follow_the_spec_table(source: object, target: object, v2: bool, v3: bool) -> None:
    assert can_promote(source, target, 2) is v2
    assert can_promote(source, target, 3) is v3


def test_nested_types_compare_by_value() -> None:
    def make() -> StructType:
        return StructType(
            (
                NestedField(1, "a", ListType(2, StringType(), True), required=True),
                NestedField(3, "m", MapType(4, StringType(), 5, DoubleType(), False)),
            )
        )

    assert make() == make()
    assert hash(make()) == hash(make())
    assert make().field(3).name == "m"
    assert str(make().field(1).field_type) == "list<string>"
