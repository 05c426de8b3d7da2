"""Avro data files as Arrow tables: the records of :func:`iceduck.formats.avro_files.read_avro`
(logical types not applied: dates as int days, timestamps as int units, decimals as
two's-complement bytes) turned into typed Arrow columns by their Avro schema.

Used for data files in Avro (Paimon's ``file.format = avro``), which DuckDB cannot read
without its Avro extension. The Avro specification's types map one to one:

* ``boolean``, ``int``, ``long``, ``float``, ``double``, ``string``, ``bytes``, ``fixed``,
  ``enum`` (as its symbol);
* logical types: ``date`` (int days), ``time-millis``/``time-micros``,
  ``timestamp-millis``/``-micros``/``-nanos`` (UTC instants) and their ``local-timestamp-*``
  forms (wall-clock times, no zone), ``decimal`` on ``bytes`` or ``fixed`` ("the two's-complement
  representation of the unscaled integer value in big-endian byte order");
* ``array``, ``map`` (string keys), ``record`` (a struct), and a union of ``null`` with one
  other type (a nullable column). Other unions are refused by name.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa

from iceduck.errors import UnsupportedError

Convert = Callable[[Any], Any]

_TIMESTAMPS = {
    "timestamp-millis": ("ms", "UTC"),
    "timestamp-micros": ("us", "UTC"),
    "timestamp-nanos": ("ns", "UTC"),
    "local-timestamp-millis": ("ms", None),
    "local-timestamp-micros": ("us", None),
    "local-timestamp-nanos": ("ns", None),
}
_PRIMITIVES = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
    "null": pa.null(),
}


def avro_table(schema: dict[str, Any], records: list[dict[str, Any]], path: str) -> pa.Table:
    """The records of a container file whose writer schema is the record ``schema``."""
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise UnsupportedError(f"an Avro data file must hold records, not {schema!r}: {path}")
    columns: dict[str, pa.Array] = {}
    for f in schema["fields"]:
        arrow, convert = arrow_type(f["type"], path)
        name = f["name"]
        columns[name] = pa.array([convert(r.get(name)) for r in records], type=arrow)
    return pa.table(columns) if columns else pa.table({}).append_column("_", pa.nulls(len(records)))


def arrow_type(avro: Any, path: str) -> tuple[pa.DataType, Convert]:
    """The Arrow type of an Avro type, and how a value decoded without logical types becomes
    a value ``pyarrow.array`` takes for it."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise UnsupportedError(f"Avro union {avro!r} is not supported (only a nullable type): {path}")
        return arrow_type(branches[0], path)
    if isinstance(avro, str):
        if avro in _PRIMITIVES:
            return _PRIMITIVES[avro], _same
        raise UnsupportedError(f"Avro type {avro!r} (a named type) is not supported: {path}")
    kind = avro.get("type")
    logical = avro.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        precision, scale = int(avro["precision"]), int(avro.get("scale", 0))
        decimal = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
        return decimal, lambda v: None if v is None else _decimal(v, scale)
    if logical == "date" and kind == "int":
        return pa.date32(), _same
    if logical == "time-millis" and kind == "int":
        return pa.time32("ms"), _same
    if logical == "time-micros" and kind == "long":
        return pa.time64("us"), _same
    if logical in _TIMESTAMPS and kind == "long":
        unit, zone = _TIMESTAMPS[logical]
        return pa.timestamp(unit, tz=zone), _same
    if kind == "array":
        element, convert = arrow_type(avro["items"], path)
        return pa.list_(element), lambda v: None if v is None else [convert(x) for x in v]
    if kind == "map":
        value, convert = arrow_type(avro["values"], path)
        return pa.map_(pa.string(), value), lambda v: None if v is None else [
            (k, convert(x)) for k, x in v.items()
        ]
    if kind == "record":
        fields = [(f["name"], *arrow_type(f["type"], path)) for f in avro["fields"]]
        struct = pa.struct([(name, t) for name, t, _ in fields])
        return struct, lambda v: None if v is None else {n: c(v.get(n)) for n, _, c in fields}
    if kind == "fixed":
        return pa.binary(int(avro["size"])), _same
    if kind == "enum":
        return pa.string(), _same
    return arrow_type(kind, path)


def _same(value: Any) -> Any:
    return value


def _decimal(data: bytes, scale: int) -> Decimal:
    return Decimal(int.from_bytes(data, "big", signed=True)).scaleb(-scale)
