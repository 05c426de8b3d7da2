"""The engine reads every Spark-written fixture table exactly as Spark does.

For every table of the fixture warehouse (``tests/support/spark_warehouse``), and for
every ref and every snapshot of it, the plan from :func:`iceduck.scan.planner.plan_scan`
executed by :func:`iceduck.engine.read.scan_to_arrow` must hold the same rows as Spark's
``SELECT * ... VERSION AS OF`` -- deletes of every kind, schema and partition evolution,
defaults and all Spark-writable types included.

Values are compared after :func:`norm`: floats by ``repr`` (exact, NaN and -0.0 kept
apart), decimals by value, timestamps as microseconds from the epoch (Spark's are
selected with ``unix_micros``: PySpark would convert them in the Python process's zone),
binary as bytes, uuids as text (Spark shows Iceberg's uuid as a string), structs by
field order, maps as sorted pairs.
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.engine.connection import open_database
from iceduck.engine.read import scan_to_arrow
from iceduck.scan.planner import plan_scan
from iceduck.scan.snapshots import resolve
from iceduck.spec.datetimes import timestamp_to_micros
from tests.support.spark_warehouse import SparkWarehouse

pytestmark = pytest.mark.spark


class ArrowMap(list):  # type: ignore[type-arg]
    """An Arrow map value: a list of (key, value) pairs, told apart from a list."""


def norm(value: Any) -> Any:
    """A comparable, hashable, repr-sortable form of a value from either engine."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, Decimal):
        return ("decimal", str(value.normalize()) if value else "0")
    if isinstance(value, bytes | bytearray | memoryview):
        return ("bytes", bytes(value))
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime):
        return timestamp_to_micros(value)
    if isinstance(value, dt.date):
        return ("date", value.isoformat())
    if isinstance(value, dict | ArrowMap):
        pairs = value.items() if isinstance(value, dict) else value
        return ("map", tuple(sorted(((norm(k), norm(v)) for k, v in pairs), key=repr)))
    if isinstance(value, list):
        return ("list", tuple(norm(v) for v in value))
    if isinstance(value, tuple):
        return ("struct", tuple(norm(v) for v in value))
    raise TypeError(f"cannot normalise {type(value).__name__} {value!r}")


def _struct(value: Any) -> Any:
    """Arrow structs arrive as dicts, Spark's as Rows: both become field-ordered tuples."""
    if hasattr(value, "asDict"):
        return tuple(_struct(v) for v in value)
    if isinstance(value, dict):
        return {k: _struct(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_struct(v) for v in value]
    return value


def _arrow_rows(table: Any) -> list[Any]:
    """Rows of an Arrow table; structs as tuples, maps as :class:`ArrowMap`."""
    import pyarrow as pa

    def convert(array: Any) -> list[Any]:
        t = array.type
        valid = array.is_valid().to_pylist()
        if pa.types.is_struct(t):
            children = [convert(child) for child in array.flatten()]  # flatten() honours slicing
            return [tuple(c[j] for c in children) if ok else None for j, ok in enumerate(valid)]
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
            # .values/.keys/.items are the whole child arrays; .offsets index into them
            offsets = array.offsets.to_pylist()
            bounds = [(offsets[j], offsets[j + 1]) for j in range(len(array))]
            if pa.types.is_map(t):
                keys, items = convert(array.keys), convert(array.items)
                return [
                    ArrowMap(zip(keys[a:b], items[a:b], strict=True)) if ok else None
                    for (a, b), ok in zip(bounds, valid, strict=True)
                ]
            values = convert(array.values)
            return [values[a:b] if ok else None for (a, b), ok in zip(bounds, valid, strict=True)]
        return array.to_pylist()

    columns = [convert(column.combine_chunks()) for column in table.columns]
    return [tuple(c[j] for c in columns) for j in range(table.num_rows)]


def _spark_select(spark: Any, name: str, selector: str | None) -> tuple[list[str], list[Any]]:
    from pyspark.sql.types import TimestampNTZType, TimestampType

    df = spark.sql(f"SELECT * FROM {name}" + (f" VERSION AS OF {selector}" if selector else ""))
    columns = []
    for f in df.schema.fields:
        quoted = f"`{f.name}`"
        if isinstance(f.dataType, TimestampType):
            columns.append(f"unix_micros({quoted}) AS {quoted}")
        elif isinstance(f.dataType, TimestampNTZType):  # the session is in UTC: wall clock = micros
            columns.append(f"unix_micros(CAST({quoted} AS TIMESTAMP)) AS {quoted}")
        else:
            columns.append(quoted)
    df = df.selectExpr(*columns)
    return df.columns, [tuple(_struct(v) for v in row) for row in df.collect()]


def _sorted(rows: list[Any]) -> list[Any]:
    return sorted((tuple(norm(v) for v in row) for row in rows), key=repr)


def test_every_table_ref_and_snapshot_reads_as_spark(spark: Any, spark_warehouse: SparkWarehouse) -> None:
    catalog = SqliteCatalog(spark_warehouse.path, read_only=True)
    con = open_database()
    failures: list[str] = []
    checked = 0
    try:
        for info in sorted(spark_warehouse.tables.values(), key=lambda i: i.name):
            loaded = catalog.load_table(TableIdentifier(tuple(info.namespace.split(".")), info.table))
            md = loaded.metadata
            selectors: dict[str | None, Any] = {None: {}}  # the current snapshot of main
            selectors.update({f"'{ref}'": {"ref": ref} for ref in md.refs})
            selectors.update({str(s.snapshot_id): {"snapshot_id": s.snapshot_id} for s in md.snapshots})
            for selector, how in selectors.items():
                target = resolve(md, **how)
                plan = plan_scan(md, snapshot=target.snapshot, schema=target.schema)
                table = scan_to_arrow(con, plan)
                names, spark_rows = _spark_select(spark, info.name, selector)
                ours = _sorted(_arrow_rows(table))
                theirs = _sorted(spark_rows)
                checked += 1
                if table.column_names != names:
                    failures.append(
                        f"{info.name} @ {selector}: columns {table.column_names} != Spark's {names}"
                    )
                elif ours != theirs:
                    extra = [r for r in ours if r not in theirs][:3]
                    missing = [r for r in theirs if r not in ours][:3]
                    failures.append(
                        f"{info.name} @ {selector}: {len(ours)} rows vs Spark's {len(theirs)}; "
                        f"only ours: {extra}; only Spark's: {missing}"
                    )
    finally:
        con.close()
        catalog.close()
    assert checked > len(spark_warehouse.tables)
    assert not failures, "\n".join(failures)
