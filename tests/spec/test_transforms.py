"""Partition transforms: spec tables, Java 1.10.2 vectors and a PyIceberg second opinion.

Values marked "Java" were computed with ``org.apache.iceberg.transforms.Transforms`` from
the iceberg-spark-runtime-3.5 1.10.2 jar (the implementation Spark uses).
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

from iceduck.errors import UnsupportedError, UserError, ValidationError
from iceduck.spec.hashing import hash_value
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
    human_string,
    java_float_string,
    parse_transform,
)
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
    VariantType,
)

TS_2017 = 1510871468000001  # 2017-11-16T22:31:08.000001 UTC
DAY_2017 = 17486  # 2017-11-16

# -- parsing and printing ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("identity", IdentityTransform()),
        ("bucket[16]", BucketTransform(16)),
        ("truncate[4]", TruncateTransform(4)),
        ("year", YearTransform()),
        ("month", MonthTransform()),
        ("day", DayTransform()),
        ("hour", HourTransform()),
        ("void", VoidTransform()),
        ("zorder", UnknownTransform("zorder")),
        ("geo_hash[7]", UnknownTransform("geo_hash[7]")),
    ],
)
def test_parse_and_str_round_trip(text, expected):
    t = parse_transform(text)
    assert t == expected
    assert isinstance(t, Transform)
    assert str(t) == text
    assert parse_transform(str(t)) == t


def test_names_are_case_insensitive_and_printed_canonically():
    """Java ``Transforms.fromString`` uses equalsIgnoreCase."""
    assert parse_transform("BUCKET[16]") == BucketTransform(16)
    assert str(parse_transform("BUCKET[16]")) == "bucket[16]"
    assert parse_transform("Day") == DayTransform()
    assert parse_transform("Truncate[3]") == TruncateTransform(3)


@pytest.mark.parametrize("text", ["bucket[x]", "identity ", "bucket[-1]", "bucket[16", "", "bucket[١٢]"])
def test_anything_unrecognised_is_kept_verbatim(text):
    t = parse_transform(text)
    assert t == UnknownTransform(text)
    assert str(t) == text
    assert t.is_unknown


@pytest.mark.parametrize("text", ["bucket[0]", "truncate[0]", "bucket[99999999999]"])
def test_invalid_parameters_are_rejected(text):
    with pytest.raises(ValidationError):
        parse_transform(text)


def test_transforms_are_values():
    assert BucketTransform(16) == parse_transform("bucket[16]")
    assert BucketTransform(16) != BucketTransform(8)
    assert BucketTransform(4) != TruncateTransform(4)
    assert len({DayTransform(), parse_transform("day"), YearTransform()}) == 2
    with pytest.raises(AttributeError):
        BucketTransform(16).num_buckets = 8  # type: ignore[misc]


# -- bucket ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "value", "expected"),
    [
        (IntegerType(), 34, 379),  # Java
        (LongType(), -1, 712),  # Java
        (TimestampType(), -1, 712),  # Java
        (TimestampNanoType(), -1, 712),  # Java: nanos are floored to micros first
    ],
)
def test_bucket_1000_matches_java(source, value, expected):
    assert BucketTransform(1000).apply(source)(value) == expected


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (IntegerType(), 34),
        (LongType(), 34),
        (DecimalType(4, 2), Decimal("14.20")),
        (DateType(), DAY_2017),
        (TimeType(), 81068000000),
        (TimestampType(), TS_2017),
        (TimestamptzNanoType(), TS_2017 * 1000 + 1),
        (StringType(), "iceberg"),
        (UUIDType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
        (FixedType(4), bytes([0, 1, 2, 3])),
        (BinaryType(), bytes([0, 1, 2, 3])),
    ],
)
def test_bucket_is_hash_without_sign_bit_mod_n(source, value):
    """Spec: "(murmur3_x86_32_hash(x) & Integer.MAX_VALUE) % N"."""
    for n in (1, 7, 16, 1000):
        result = BucketTransform(n).apply(source)(value)
        assert result == (hash_value(source, value) & 0x7FFFFFFF) % n
        assert 0 <= result < n


def test_bucket_of_negative_hash_is_non_negative():
    # "iceberg" hashes positive, 00 01 02 03 negative (-188683207)
    assert BucketTransform(16).apply(BinaryType())(bytes([0, 1, 2, 3])) == (-188683207 & 0x7FFFFFFF) % 16


def test_int_and_long_share_buckets():
    for v in (-5, 0, 34, 2**31 - 1):
        assert BucketTransform(16).apply(IntegerType())(v) == BucketTransform(16).apply(LongType())(v)


@pytest.mark.parametrize(
    "source", [BooleanType(), FloatType(), DoubleType(), VariantType(), GeometryType(), UnknownType()]
)
def test_bucket_rejects_unhashable_sources(source):
    t = BucketTransform(16)
    assert not t.can_transform(source)
    with pytest.raises(UserError, match=r"bucket\[16\].*" + str(source)):
        t.apply(source)
    with pytest.raises(UserError):
        t.result_type(source)


# -- truncate -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "width", "value", "expected"),
    [
        # spec, "Truncate Transform Details" examples
        (IntegerType(), 10, 1, 0),
        (IntegerType(), 10, -1, -10),
        (LongType(), 10, 1, 0),
        (LongType(), 10, -1, -10),
        (DecimalType(9, 2), 50, Decimal("10.65"), Decimal("10.50")),
        (StringType(), 3, "iceberg", "ice"),
        (BinaryType(), 3, b"\x01\x02\x03\x04\x05", b"\x01\x02\x03"),
        # Java
        (LongType(), 10, -10, -10),
        (LongType(), 10, -11, -20),
        (DecimalType(9, 2), 50, Decimal("-10.65"), Decimal("-11.00")),
        (StringType(), 3, "a\U0001f600bcd", "a\U0001f600b"),
        # more
        (IntegerType(), 10, 0, 0),
        (IntegerType(), 10, 10, 10),
        (StringType(), 10, "short", "short"),
        (StringType(), 2, "\U0001f600\U0001f601\U0001f602", "\U0001f600\U0001f601"),
        (BinaryType(), 10, b"\x00", b"\x00"),
    ],
)
def test_truncate(source, width, value, expected):
    result = TruncateTransform(width).apply(source)(value)
    assert result == expected
    assert type(result) is type(expected)


def test_truncate_string_counts_code_points_not_utf16_units():
    """Spec: "Strings are truncated to a valid UTF-8 string with no more than L code points"."""
    out = TruncateTransform(1).apply(StringType())("\U0001f600x")
    assert out == "\U0001f600"
    out.encode("utf-8")  # valid UTF-8: no half of a surrogate pair


def test_truncate_decimal_keeps_the_column_scale():
    """Spec: "The width ... is applied using the scale of the decimal column"."""
    fn = TruncateTransform(50).apply(DecimalType(9, 2))
    assert fn(Decimal("10.6")).as_tuple() == Decimal("10.50").as_tuple()
    assert fn(Decimal("10")).as_tuple() == Decimal("10.00").as_tuple()
    assert fn(Decimal("0.49")).as_tuple() == Decimal("0.00").as_tuple()
    big = Decimal("12345678901234567890123456789012345.678")
    assert TruncateTransform(10).apply(DecimalType(38, 3))(big) == Decimal(
        "12345678901234567890123456789012345.670"
    )


@pytest.mark.parametrize("source", [FixedType(4), DateType(), UUIDType(), BooleanType(), TimestampType()])
def test_truncate_rejects_other_sources(source):
    assert not TruncateTransform(4).can_transform(source)
    with pytest.raises(UserError, match=r"truncate\[4\]"):
        TruncateTransform(4).apply(source)


# -- temporal -------------------------------------------------------------------

# (micros, year, month, day, hour), all from Java
TIMESTAMP_CASES = [
    (-1, -1, -1, -1, -1),
    (0, 0, 0, 0, 0),
    (-86400000000, -1, -1, -1, -24),
    (-86400000001, -1, -1, -2, -25),
    (-31536000000000, -1, -12, -365, -8760),
    (-31536000000001, -2, -13, -366, -8761),
    (TS_2017, 47, 574, 17486, 419686),
    (-2208988800000000, -70, -840, -25567, -613608),
    (-62135596800000000, -1969, -23628, -719162, -17259888),
    (253402300799999999, 8029, 96359, 2932896, 70389527),
]

# (nanos, year, month, day, hour), all from Java
NANO_CASES = [
    (-1, -1, -1, -1, -1),
    (-86400000000000, -1, -1, -1, -24),
    (-86400000000001, -1, -1, -2, -25),
    (TS_2017 * 1000 + 1, 47, 574, 17486, 419686),
    (-3600000000001, -1, -1, -1, -2),
]

# (days, year, month), all from Java
DATE_CASES = [
    (-1, -1, -1),
    (0, 0, 0),
    (-365, -1, -12),
    (-366, -2, -13),
    (-31, -1, -1),
    (-32, -1, -2),
    (DAY_2017, 47, 574),
    (-719528, -1970, -23640),
    (-719529, -1971, -23641),
    (2932896, 8029, 96359),
]


@pytest.mark.parametrize(("ts", "year", "month", "day", "hour"), TIMESTAMP_CASES)
@pytest.mark.parametrize("source", [TimestampType(), TimestamptzType()])
def test_temporal_from_micros(source, ts, year, month, day, hour):
    assert YearTransform().apply(source)(ts) == year
    assert MonthTransform().apply(source)(ts) == month
    assert DayTransform().apply(source)(ts) == day
    assert HourTransform().apply(source)(ts) == hour


@pytest.mark.parametrize(("ts", "year", "month", "day", "hour"), NANO_CASES)
@pytest.mark.parametrize("source", [TimestampNanoType(), TimestamptzNanoType()])
def test_temporal_from_nanos(source, ts, year, month, day, hour):
    assert YearTransform().apply(source)(ts) == year
    assert MonthTransform().apply(source)(ts) == month
    assert DayTransform().apply(source)(ts) == day
    assert HourTransform().apply(source)(ts) == hour


@pytest.mark.parametrize(("days", "year", "month"), DATE_CASES)
def test_temporal_from_dates(days, year, month):
    assert YearTransform().apply(DateType())(days) == year
    assert MonthTransform().apply(DateType())(days) == month
    assert DayTransform().apply(DateType())(days) == days


def test_year_and_month_of_dates_agree_with_datetime():
    epoch = dt.date(1970, 1, 1)
    year, month = YearTransform().apply(DateType()), MonthTransform().apply(DateType())
    for days in [*range(-719_162, 2_932_897, 997), -719_162, 2_932_896]:
        d = epoch + dt.timedelta(days=days)
        assert year(days) == d.year - 1970
        assert month(days) == (d.year - 1970) * 12 + d.month - 1


def test_hour_rejects_dates():
    assert not HourTransform().can_transform(DateType())
    with pytest.raises(UserError, match=r"hour.*date"):
        HourTransform().apply(DateType())


@pytest.mark.parametrize("t", [YearTransform(), MonthTransform(), DayTransform(), HourTransform()])
@pytest.mark.parametrize("source", [TimeType(), LongType(), StringType()])
def test_temporal_rejects_non_temporal_sources(t, source):
    with pytest.raises(UserError, match=str(t)):
        t.apply(source)


# -- result types ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "source", "expected"),
    [
        (IdentityTransform(), StringType(), StringType()),
        (IdentityTransform(), DecimalType(9, 2), DecimalType(9, 2)),
        (BucketTransform(8), StringType(), IntegerType()),
        (TruncateTransform(4), LongType(), LongType()),
        (TruncateTransform(4), DecimalType(9, 2), DecimalType(9, 2)),
        (YearTransform(), DateType(), IntegerType()),
        (MonthTransform(), TimestampType(), IntegerType()),
        (DayTransform(), DateType(), DateType()),  # Java: Days.getResultType is DateType
        (DayTransform(), TimestamptzType(), DateType()),
        (DayTransform(), TimestampNanoType(), DateType()),
        (HourTransform(), TimestamptzNanoType(), IntegerType()),
        (VoidTransform(), StringType(), StringType()),  # Java: the source type
        (UnknownTransform("zorder"), LongType(), StringType()),  # Java: StringType
    ],
)
def test_result_types(t, source, expected):
    assert t.result_type(source) == expected


# -- identity, void, unknown, nulls ---------------------------------------------


def test_identity_accepts_primitives_except_variant_and_geo():
    t = IdentityTransform()
    for source in (BooleanType(), FloatType(), UUIDType(), FixedType(3), TimeType(), UnknownType()):
        assert t.can_transform(source)
        assert t.apply(source)("x") == "x"
    struct = StructType((NestedField(1, "a", IntegerType()),))
    for source in (VariantType(), GeometryType(), GeographyType(), struct):
        assert not t.can_transform(source)
        with pytest.raises(UserError, match="identity"):
            t.apply(source)


def test_void_always_produces_null_for_any_type():
    t = VoidTransform()
    for source, value in ((StringType(), "a"), (IntegerType(), 1), (VariantType(), b"\x01")):
        assert t.can_transform(source)
        assert t.apply(source)(value) is None
    assert t.is_void and not t.is_identity


def test_unknown_transform_cannot_be_applied():
    t = UnknownTransform("zorder")
    assert t.can_transform(LongType())
    with pytest.raises(UnsupportedError, match="zorder"):
        t.apply(LongType())


@pytest.mark.parametrize(
    ("t", "source"),
    [
        (IdentityTransform(), StringType()),
        (BucketTransform(16), StringType()),
        (TruncateTransform(3), StringType()),
        (TruncateTransform(3), DecimalType(9, 2)),
        (YearTransform(), DateType()),
        (MonthTransform(), TimestampType()),
        (DayTransform(), TimestampNanoType()),
        (HourTransform(), TimestamptzType()),
        (VoidTransform(), StringType()),
    ],
)
def test_null_maps_to_null(t, source):
    """Spec: "All transforms must return null for a null input value"."""
    assert t.apply(source)(None) is None


# -- order and dedup properties (Java values) -------------------------------------


def test_order_properties():
    assert IdentityTransform().preserves_order
    assert TruncateTransform(10).preserves_order
    assert all(
        t.preserves_order for t in (YearTransform(), MonthTransform(), DayTransform(), HourTransform())
    )
    assert not BucketTransform(16).preserves_order
    assert not VoidTransform().preserves_order
    assert not UnknownTransform("x").preserves_order


def test_satisfies_order_of():
    assert HourTransform().satisfies_order_of(DayTransform())
    assert DayTransform().satisfies_order_of(MonthTransform())
    assert MonthTransform().satisfies_order_of(YearTransform())
    assert not DayTransform().satisfies_order_of(HourTransform())
    assert not YearTransform().satisfies_order_of(MonthTransform())
    assert IdentityTransform().satisfies_order_of(DayTransform())
    assert not IdentityTransform().satisfies_order_of(BucketTransform(16))
    assert BucketTransform(16).satisfies_order_of(BucketTransform(16))
    assert not BucketTransform(16).satisfies_order_of(BucketTransform(8))
    assert not DayTransform().satisfies_order_of(IdentityTransform())


def test_truncate_satisfies_order_depends_on_the_source_type():
    # A longer prefix orders the shorter prefixes...
    assert TruncateTransform(10).satisfies_order_of(TruncateTransform(5), StringType())
    assert not TruncateTransform(5).satisfies_order_of(TruncateTransform(10), StringType())
    # ...but a number floored to 10 is not ordered by its floor to 5 (12, 15, 11 -> 10 10 10).
    assert TruncateTransform(5).satisfies_order_of(TruncateTransform(10), IntegerType())
    assert not TruncateTransform(10).satisfies_order_of(TruncateTransform(5), LongType())
    assert not TruncateTransform(3).satisfies_order_of(TruncateTransform(10), LongType())
    assert TruncateTransform(5).satisfies_order_of(TruncateTransform(5))
    assert not TruncateTransform(10).satisfies_order_of(TruncateTransform(5))


def test_dedup_name():
    assert {t.dedup_name for t in (YearTransform(), MonthTransform(), DayTransform(), HourTransform())} == {
        "time"
    }
    assert BucketTransform(1000).dedup_name == "bucket[1000]"
    assert IdentityTransform().dedup_name == "identity"


# -- human strings (Java values) --------------------------------------------------


@pytest.mark.parametrize(
    ("t", "result_type", "value", "expected"),
    [
        (YearTransform(), IntegerType(), 47, "2017"),
        (MonthTransform(), IntegerType(), 574, "2017-11"),
        (DayTransform(), DateType(), DAY_2017, "2017-11-16"),
        (HourTransform(), IntegerType(), 419686, "2017-11-16-22"),
        (YearTransform(), IntegerType(), -1, "1969"),
        (MonthTransform(), IntegerType(), -1, "1969-12"),
        (MonthTransform(), IntegerType(), -13, "1968-12"),
        (DayTransform(), DateType(), -1, "1969-12-31"),
        (HourTransform(), IntegerType(), -1, "1969-12-31-23"),
        (YearTransform(), IntegerType(), None, "null"),
        (BucketTransform(1000), IntegerType(), 7, "7"),
        (VoidTransform(), StringType(), None, "null"),
        (IdentityTransform(), StringType(), None, "null"),
        (IdentityTransform(), DateType(), DAY_2017, "2017-11-16"),
        (IdentityTransform(), TimestampType(), TS_2017, "2017-11-16T22:31:08.000001"),
        (IdentityTransform(), TimestampType(), -1, "1969-12-31T23:59:59.999999"),
        (IdentityTransform(), TimestampType(), 1510871460000000, "2017-11-16T22:31:00"),
        (IdentityTransform(), TimestamptzType(), 1510871468100000, "2017-11-16T22:31:08.1+00:00"),
        (
            IdentityTransform(),
            TimestamptzNanoType(),
            TS_2017 * 1000 + 1,
            "2017-11-16T22:31:08.000001001+00:00",
        ),
        (IdentityTransform(), TimestampNanoType(), TS_2017 * 1000 + 1, "2017-11-16T22:31:08.000001001"),
        (IdentityTransform(), TimeType(), 81068000000, "22:31:08"),
        (IdentityTransform(), TimeType(), 81068000001, "22:31:08.000001"),
        (IdentityTransform(), TimeType(), 81060000000, "22:31"),
        (IdentityTransform(), TimeType(), 81068100000, "22:31:08.100"),
        (IdentityTransform(), TimeType(), 0, "00:00"),
        (IdentityTransform(), BinaryType(), bytes([0, 1, 2, 3]), "AAECAw=="),
        (IdentityTransform(), FixedType(4), bytes([0, 1, 2, 3]), "AAECAw=="),
        (IdentityTransform(), DecimalType(9, 2), Decimal("14.20"), "14.20"),
        (IdentityTransform(), BooleanType(), True, "true"),
        (IdentityTransform(), FloatType(), 0.10000000149011612, "0.1"),
        (IdentityTransform(), DoubleType(), 1e10, "1.0E10"),
        (
            IdentityTransform(),
            UUIDType(),
            uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
            "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        ),
        (IdentityTransform(), IntegerType(), -34, "-34"),
        (IdentityTransform(), StringType(), "a/b", "a/b"),
        (TruncateTransform(3), StringType(), "ice", "ice"),
    ],
)
def test_to_human_string(t, result_type, value, expected):
    assert t.to_human_string(result_type, value) == expected


def test_human_string_far_dates_follow_java_time():
    """Java: ISO formatting prints ``+`` past 9999 and four digits after ``-``."""
    assert human_string(TimestampType(), 1000000 * 86400 * 365 * 10000) == "+11963-05-13T00:00:00"
    assert human_string(TimestampType(), -1000000 * 86400 * 365 * 2000) == "-0029-05-01T00:00:00"
    assert human_string(DateType(), -719529) == "-001-12-31"  # humanDay's %04d


@pytest.mark.parametrize(
    ("value", "single", "expected"),
    [  # Java Double.toString / Float.toString
        (1e7, False, "1.0E7"),
        (1e-3, False, "0.001"),
        (9.99e-4, False, "9.99E-4"),
        (123456.789, False, "123456.789"),
        (-0.0, False, "-0.0"),
        (float("nan"), False, "NaN"),
        (float("-inf"), False, "-Infinity"),
        (1e21, False, "1.0E21"),
        (1e-300, False, "1.0E-300"),
        (3.4028234663852886e38, True, "3.4028235E38"),
        (1.401298464324817e-45, True, "1.4E-45"),
        (100.0, False, "100.0"),
        (-1.5, False, "-1.5"),
        (5e-324, False, "4.9E-324"),
        (0.0020000000949949026, True, "0.002"),
        (2.0, False, "2.0"),
        (0.30000001192092896, True, "0.3"),
    ],
)
def test_java_float_string(value, single, expected):
    assert java_float_string(value, single) == expected


# -- second opinion: PyIceberg ----------------------------------------------------


def _pyiceberg():
    return pytest.importorskip("pyiceberg.transforms"), pytest.importorskip("pyiceberg.types")


@pytest.mark.parametrize(
    ("ours", "theirs", "value"),
    [
        (IntegerType(), "IntegerType", 34),
        (LongType(), "LongType", -9876543210),
        (StringType(), "StringType", "iceberg"),
        (DateType(), "DateType", DAY_2017),
        (TimestampType(), "TimestampType", TS_2017),
        (TimestamptzType(), "TimestamptzType", -TS_2017),
        (BinaryType(), "BinaryType", b"\x00\x01\x02\x03"),
    ],
)
def test_bucket_agrees_with_pyiceberg(ours, theirs, value):
    pt, ptypes = _pyiceberg()
    for n in (3, 16, 1000):
        expected = pt.BucketTransform(n).transform(getattr(ptypes, theirs)())(value)
        assert BucketTransform(n).apply(ours)(value) == expected


def test_bucket_decimal_agrees_with_pyiceberg():
    pt, ptypes = _pyiceberg()
    for value in (Decimal("14.20"), Decimal("-1.28"), Decimal("0.00")):
        expected = pt.BucketTransform(16).transform(ptypes.DecimalType(9, 2))(value)
        assert BucketTransform(16).apply(DecimalType(9, 2))(value) == expected


def test_truncate_agrees_with_pyiceberg():
    pt, ptypes = _pyiceberg()
    cases = [
        (IntegerType(), ptypes.IntegerType(), 10, -1),
        (LongType(), ptypes.LongType(), 7, -123456789),
        (DecimalType(9, 2), ptypes.DecimalType(9, 2), 50, Decimal("-10.65")),
        (StringType(), ptypes.StringType(), 2, "a\U0001f600bc"),
        (BinaryType(), ptypes.BinaryType(), 2, b"\x01\x02\x03"),
    ]
    for ours, theirs, width, value in cases:
        expected = pt.TruncateTransform(width).transform(theirs)(value)
        assert TruncateTransform(width).apply(ours)(value) == expected


@pytest.mark.parametrize("ts", [-1, 0, -86400000001, -31536000000001, TS_2017, -2208988800000000])
def test_temporal_agrees_with_pyiceberg(ts):
    pt, ptypes = _pyiceberg()
    pairs = [
        (YearTransform(), pt.YearTransform()),
        (MonthTransform(), pt.MonthTransform()),
        (DayTransform(), pt.DayTransform()),
        (HourTransform(), pt.HourTransform()),
    ]
    for ours, theirs in pairs:
        assert ours.apply(TimestampType())(ts) == theirs.transform(ptypes.TimestampType())(ts)
    for ours, theirs in pairs[:3]:
        days = ts // 86400000000
        assert ours.apply(DateType())(days) == theirs.transform(ptypes.DateType())(days)
