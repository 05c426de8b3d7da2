"""Avro records (logical types not applied) as typed Arrow columns."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from iceduck.errors import UnsupportedError
from iceduck.formats.avro_arrow import avro_table

SCHEMA = {
    "type": "record",
    "name": "r",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "d", "type": ["null", {"type": "int", "logicalType": "date"}]},
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
        {"name": "local", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]},
        {
            "name": "dec",
            "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}],
        },
        {"name": "fx", "type": {"type": "fixed", "name": "f", "size": 2}},
        {"name": "arr", "type": ["null", {"type": "array", "items": "int"}]},
        {"name": "m", "type": ["null", {"type": "map", "values": "string"}]},
        {
            "name": "st",
            "type": [
                "null",
                {"type": "record", "name": "s", "fields": [{"name": "a", "type": ["null", "double"]}]},
            ],
        },
    ],
}


def test_logical_types_and_nesting() -> None:
    records = [
        {
            "id": 1,
            "d": 19724,
            "ts": 1704070923456,
            "local": 1704070923456789,
            "dec": (-1234).to_bytes(2, "big", signed=True),
            "fx": b"\x00\x01",
            "arr": [1, 2],
            "m": {"k": "v"},
            "st": {"a": 1.5},
        },
        {"id": 2, "fx": b"ab"} | dict.fromkeys(("d", "ts", "local", "dec", "arr", "m", "st")),
    ]
    table = avro_table(SCHEMA, records, "f.avro")
    assert table.schema.field("d").type == pa.date32()
    assert table.schema.field("ts").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("local").type == pa.timestamp("us")
    assert table.schema.field("dec").type == pa.decimal128(10, 2)
    first = table.to_pylist()[0]
    assert first["d"] == dt.date(2024, 1, 2)
    assert first["ts"] == dt.datetime(2024, 1, 1, 1, 2, 3, 456000, tzinfo=dt.UTC)
    assert first["local"] == dt.datetime(2024, 1, 1, 1, 2, 3, 456789)
    assert first["dec"] == Decimal("-12.34")
    assert first["arr"] == [1, 2] and first["m"] == [("k", "v")] and first["st"] == {"a": 1.5}
    assert table.to_pylist()[1]["dec"] is None


def test_a_union_of_two_types_is_refused_naming_the_file() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "x", "type": ["int", "string"]}]}
    with pytest.raises(UnsupportedError, match=r"union.*f\.avro"):
        avro_table(schema, [{"x": 1}], "f.avro")
