"""Reading a scenario's table with each engine, normalised, and comparing with the reference.

Rows are normalised with the step-2 acceptance test's rules (``norm_arrow`` / ``norm_spark``
of tests/interop/test_spark_select.py): timestamps as UTC epoch microseconds, integers and
decimals by value, floats with NaN and the sign of zero, bytes, structs as tuples, maps as
sorted pairs. Results are compared as multisets of rows, column names in order.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

import iceduck
from tests.interop.test_spark_select import norm_arrow, norm_spark
from tests.support.spark_session import CATALOG, CATALOG_DB

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: (column names, normalised rows sorted by repr)
Rows = tuple[list[str], list[tuple[Any, ...]]]


class ScenarioMismatch(AssertionError):
    """A reader disagreed with the reference, a step failed, or a bad statement did harm."""


def iceduck_rows(con: iceduck.Connection, sql: str) -> Rows:
    cur = con.cursor().execute(sql)
    assert cur.result is not None
    return arrow_rows(cur.result.to_arrow_table())


def duck_rows(con: duckdb.DuckDBPyConnection, sql: str) -> Rows:
    return arrow_rows(con.sql(sql).to_arrow_table())


def arrow_rows(table: Any) -> Rows:
    """Column names and normalised rows (sorted) of a ``pyarrow.Table``."""
    types = [f.type for f in table.schema]
    rows = [
        tuple(norm_arrow(v, t) for v, t in zip(r.values(), types, strict=True)) for r in table.to_pylist()
    ]
    return list(table.column_names), sorted(rows, key=repr)


def spark_rows(spark: SparkSession, sql: str) -> Rows:
    """Spark's answer to ``sql``, timestamps selected as epoch microseconds (the session is UTC)."""
    df = spark.sql(sql)
    converted = df.selectExpr(*_spark_columns(df))
    types = [f.dataType for f in converted.schema.fields]
    rows = [tuple(norm_spark(v, t) for v, t in zip(r, types, strict=True)) for r in converted.collect()]
    return [f.name for f in df.schema.fields], sorted(rows, key=repr)


def _spark_columns(df: Any) -> list[str]:
    """The select list of ``spark_select_list`` (test_spark_select.py) as separate expressions."""
    from pyspark.sql import types as T

    columns = []
    for f in df.schema.fields:
        name = "`" + f.name.replace("`", "``") + "`"
        if isinstance(f.dataType, T.TimestampType):
            columns.append(f"unix_micros({name}) AS {name}")
        elif isinstance(f.dataType, T.TimestampNTZType):
            columns.append(f"unix_micros(CAST({name} AS TIMESTAMP)) AS {name}")
        else:
            columns.append(name)
    return columns


def assert_same(what: str, got: Rows, expected: Rows) -> None:
    """Raise :class:`ScenarioMismatch` describing how ``got`` differs from the reference."""
    if got[0] != expected[0]:
        raise ScenarioMismatch(f"{what}: columns {got[0]}, the reference has {expected[0]}")
    extra = Counter(got[1]) - Counter(expected[1])
    missing = Counter(expected[1]) - Counter(got[1])
    if extra or missing:
        raise ScenarioMismatch(
            f"{what}: {len(got[1])} rows, the reference has {len(expected[1])}; "
            f"not in the reference: {list(extra.elements())[:5]}; missing: {list(missing.elements())[:5]}"
        )


# -- the catalog ---------------------------------------------------------------------------------


def metadata_location(warehouse: Path, table: str) -> str | None:
    """The catalog's current metadata file of ``<namespace>.<table>`` (read with sqlite3)."""
    namespace, name = table.rsplit(".", 1)
    with sqlite3.connect(warehouse / CATALOG_DB) as db:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            (CATALOG, namespace, name),
        ).fetchone()
    return row[0] if row else None


def table_state(warehouse: Path, table: str) -> tuple[str | None, frozenset[str]]:
    """(metadata location, every file under the table's location): what a failure must keep."""
    location = metadata_location(warehouse, table)
    if location is None:
        return None, frozenset()
    root = json.loads(Path(_local(location)).read_text())["location"]
    files = frozenset(str(p) for p in Path(_local(root)).rglob("*") if p.is_file())
    return location, files


def _local(location: str) -> str:
    return location.removeprefix("file:").removeprefix("//")
