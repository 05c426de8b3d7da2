"""Dates/times as ints and ISO text. Expected strings marked "Java" were produced by Iceberg
1.10.2's ``SingleValueParser``/``DateTimeUtil`` (run once with the Spark runtime jar)."""

import datetime as dt
import random

import pytest

from iceduck.errors import ValidationError
from iceduck.spec.datetimes import (
    civil_from_days,
    date_to_days,
    days_from_civil,
    days_to_date,
    days_to_iso,
    iso_time_to_micros,
    iso_timestamp_to_micros,
    iso_timestamp_to_nanos,
    iso_to_days,
    micros_to_iso_time,
    micros_to_iso_timestamp,
    micros_to_time,
    micros_to_timestamp,
    nanos_to_iso_timestamp,
    time_to_micros,
    timestamp_to_micros,
)

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def test_spec_examples():
    # Appendix D, JSON single-value serialization table
    assert days_to_iso(17486) == "2017-11-16"
    assert iso_to_days("2017-11-16") == 17486
    assert micros_to_iso_time(81068123456) == "22:31:08.123456"
    assert micros_to_iso_timestamp(1510871468123456) == "2017-11-16T22:31:08.123456"
    assert micros_to_iso_timestamp(1510871468123456, tz=True) == "2017-11-16T22:31:08.123456+00:00"
    assert nanos_to_iso_timestamp(1510871468123456789) == "2017-11-16T22:31:08.123456789"
    assert nanos_to_iso_timestamp(1510871468123456789, tz=True) == "2017-11-16T22:31:08.123456789+00:00"


def test_fixed_fraction_digits():
    """The spec asks for microsecond / nanosecond precision: the digits are always written."""
    assert micros_to_iso_time(0) == "00:00:00.000000"
    assert micros_to_iso_timestamp(0) == "1970-01-01T00:00:00.000000"
    assert nanos_to_iso_timestamp(1) == "1970-01-01T00:00:00.000000001"


def test_pre_epoch_and_extremes():
    assert micros_to_iso_timestamp(-1) == "1969-12-31T23:59:59.999999"
    assert nanos_to_iso_timestamp(-1) == "1969-12-31T23:59:59.999999999"
    assert days_to_iso(-1) == "1969-12-31"
    # Spark's range, 0001-01-01 .. 9999-12-31
    assert micros_to_iso_timestamp(-62135596800000000) == "0001-01-01T00:00:00.000000"
    assert iso_timestamp_to_micros("0001-01-01T00:00:00") == -62135596800000000
    assert iso_timestamp_to_micros("9999-12-31T23:59:59.999999") == 253402300799999999
    # beyond Python's datetime: Java's ISO_LOCAL_DATE_TIME forms
    assert days_to_iso(-719529) == "-0001-12-31"  # Java
    assert days_to_iso(2932897) == "+10000-01-01"  # Java
    assert micros_to_iso_timestamp(LONG_MAX) == "+294247-01-10T04:00:54.775807"  # Java (digits aside)
    assert micros_to_iso_timestamp(LONG_MIN) == "-290308-12-21T19:59:05.224192"  # Java
    assert iso_timestamp_to_micros("+294247-01-10T04:00:54.775807") == LONG_MAX
    assert iso_timestamp_to_micros("-290308-12-21T19:59:05.224192") == LONG_MIN
    assert nanos_to_iso_timestamp(LONG_MAX) == "2262-04-11T23:47:16.854775807"
    assert iso_timestamp_to_nanos("1677-09-21T00:12:43.145224192") == LONG_MIN


@pytest.mark.parametrize(
    ("text", "micros"),
    [  # what Iceberg Java's isoTimestamptzToMicros returned for each input
        ("2017-11-16T22:31:08Z", 1510871468000000),
        ("2017-11-16T22:31:08-00:00", 1510871468000000),
        ("2017-11-16t22:31z", 1510871460000000),
        ("2017-11-16T22:31:08.1+00:00", 1510871468100000),
        ("2017-11-16T22:31:08+00:00[UTC]", 1510871468000000),
        ("2017-11-16T22:31:08.123456789+00:00", 1510871468123456),
        ("1969-12-31T23:59:59.9999995+00:00", 0),  # truncated toward zero
        ("+10000-01-01T00:00+00:00", 253402300800000000),
        ("-0001-01-01T00:00+00:00", -62198755200000000),
        ("2017-11-16T22:31:08.+00:00", 1510871468000000),
    ],
)
def test_timestamptz_parsing_is_as_lenient_as_java(text, micros):
    assert iso_timestamp_to_micros(text, tz=True) == micros


@pytest.mark.parametrize(
    "text",
    [  # all rejected by Iceberg Java
        "2017-11-16T22:31:08+0000",
        "2017-11-16T22:31:08+00",
        "2017-11-16T22:31:60+00:00",
        "2017-11-16T24:00+00:00",
        "2017-02-29T00:00Z",
        "2017-11-16T22:31:08+01:00",  # offset must be +00:00
        "2017-11-16T22:31:08",  # offset required
        "2017-11-16 22:31:08+00:00",
    ],
)
def test_timestamptz_rejects(text):
    with pytest.raises(ValidationError):
        iso_timestamp_to_micros(text, tz=True)


def test_timestamp_without_zone_rejects_offset():
    with pytest.raises(ValidationError, match="must not include a zone offset"):
        iso_timestamp_to_micros("2017-11-16T22:31:08+00:00")
    assert iso_timestamp_to_nanos("2017-11-16T22:31:08.123456789") == 1510871468123456789
    assert iso_timestamp_to_nanos("2017-11-16T22:31:08.1") == 1510871468100000000


def test_time_parsing():
    # Java's ISO_LOCAL_TIME
    assert iso_time_to_micros("22:31") == 81060000000
    assert iso_time_to_micros("22:31:08.1") == 81068100000
    assert iso_time_to_micros("22:31:08.123456789") == 81068123456
    for bad in ("2:31", "22:31:08Z", "24:00", "22:60", "٢٢:31"):
        with pytest.raises(ValidationError):
            iso_time_to_micros(bad)
    with pytest.raises(ValidationError):
        micros_to_iso_time(86_400_000_000)


def test_date_parsing():
    assert iso_to_days("+10000-01-01") == 2932897
    assert iso_to_days("-0001-01-01") == -719893
    assert iso_to_days("2000-02-29") == 11016
    for bad in (
        "+2017-11-16",
        "20171116",
        "10000-01-01",
        "2017-1-16",
        "1900-02-29",
        "2017-13-01",
        "2017-11-00",
    ):
        with pytest.raises(ValidationError):
            iso_to_days(bad)


def test_civil_round_trip_against_python():
    rng = random.Random(7)
    for days in [*rng.sample(range(-719162, 2932896), 2000), -719162, 2932896, 0, -1]:
        expected = dt.date(1970, 1, 1) + dt.timedelta(days=days)
        assert civil_from_days(days) == (expected.year, expected.month, expected.day)
        assert days_from_civil(expected.year, expected.month, expected.day) == days
        assert days_to_iso(days) == expected.isoformat()
        assert iso_to_days(expected.isoformat()) == days
    for days in rng.sample(range(-(2**31), 2**31), 2000):
        assert days_from_civil(*civil_from_days(days)) == days
        assert iso_to_days(days_to_iso(days)) == days


def test_timestamp_round_trips():
    rng = random.Random(11)
    low, high = -62135596800000000, 253402300799999999  # 0001-01-01 .. 9999-12-31
    for micros in [*(rng.randint(low, high) for _ in range(2000)), low, high, -1, 0]:
        expected = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)
        assert micros_to_iso_timestamp(micros) == expected.isoformat(timespec="microseconds")
        assert iso_timestamp_to_micros(micros_to_iso_timestamp(micros)) == micros
        assert iso_timestamp_to_micros(micros_to_iso_timestamp(micros, True), True) == micros
        assert timestamp_to_micros(micros_to_timestamp(micros, tz=False)) == micros
        assert timestamp_to_micros(micros_to_timestamp(micros, tz=True)) == micros
    for value in (*(rng.randint(LONG_MIN, LONG_MAX) for _ in range(2000)), LONG_MIN, LONG_MAX):
        assert iso_timestamp_to_micros(micros_to_iso_timestamp(value)) == value
        assert iso_timestamp_to_nanos(nanos_to_iso_timestamp(value, True), True) == value
    for micros in (*(rng.randrange(86_400_000_000) for _ in range(500)), 0, 86_399_999_999):
        assert iso_time_to_micros(micros_to_iso_time(micros)) == micros
        assert time_to_micros(micros_to_time(micros)) == micros


def test_python_datetime_helpers():
    assert date_to_days(dt.date(2017, 11, 16)) == 17486
    assert date_to_days(dt.date(1, 1, 1)) == -719162
    assert days_to_date(-1) == dt.date(1969, 12, 31)
    with pytest.raises(ValidationError):
        days_to_date(2932897)
    pst = dt.timezone(dt.timedelta(hours=-8))
    # Appendix B: 2017-11-16T14:31:08-08:00 is the instant 2017-11-16T22:31:08 UTC
    assert timestamp_to_micros(dt.datetime(2017, 11, 16, 14, 31, 8, tzinfo=pst)) == 1510871468000000
    assert timestamp_to_micros(dt.datetime(2017, 11, 16, 22, 31, 8)) == 1510871468000000
    assert micros_to_timestamp(1510871468000000, tz=True) == dt.datetime(
        2017, 11, 16, 22, 31, 8, tzinfo=dt.UTC
    )
    assert micros_to_timestamp(-1, tz=False) == dt.datetime(1969, 12, 31, 23, 59, 59, 999999)
    assert time_to_micros(dt.time(22, 31, 8)) == 81068000000
    with pytest.raises(ValidationError):
        micros_to_timestamp(LONG_MAX, tz=False)
    with pytest.raises(ValidationError):
        micros_to_time(-1)
