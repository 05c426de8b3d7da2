"""The facts of a column that DuckDB's catalog gives, for every type an Iceberg type is read
as, checked against DuckDB's own catalog (iceduck.engine.introspection)."""

from __future__ import annotations

import duckdb
import pytest

from iceduck.engine.introspection import (
    ListedTable,
    attach_rows,
    keywords,
    oid,
    printed_name,
    spelled_types,
    type_facts,
)
from iceduck.engine.types import duckdb_type, quote_identifier
from iceduck.spec.schema import Schema
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
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VariantType,
)

TYPES: list[IcebergType] = [
    BooleanType(),
    IntegerType(),
    LongType(),
    FloatType(),
    DoubleType(),
    DecimalType(9, 0),
    DecimalType(38, 10),
    DateType(),
    TimeType(),
    TimestampType(),
    TimestamptzType(),
    TimestampNanoType(),
    TimestamptzNanoType(),
    StringType(),
    UUIDType(),
    FixedType(16),
    BinaryType(),
    GeometryType(),
    GeographyType(),
    VariantType(),
    StructType((NestedField(1, "a", IntegerType()), NestedField(2, "select", StringType()))),
    StructType((NestedField(3, "Odd Name", DecimalType(5, 2)),)),
    ListType(4, MapType(5, StringType(), 6, DoubleType())),
    MapType(7, LongType(), 8, StructType((NestedField(9, "x", ListType(10, DateType())),))),
]


@pytest.fixture
def duck() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    columns = ", ".join(f"c{i} {duckdb_type(t)}" for i, t in enumerate(TYPES))
    con.execute(f"CREATE TABLE t ({columns})")
    return con


def test_type_ids_precision_and_spelling_are_duckdbs(duck: duckdb.DuckDBPyConnection) -> None:
    theirs = duck.execute(
        "SELECT data_type, data_type_id, numeric_precision, numeric_precision_radix, numeric_scale "
        "FROM duckdb_columns() WHERE table_name = 't' ORDER BY column_index"
    ).fetchall()
    schema = Schema(tuple(NestedField(100 + i, f"c{i}", t) for i, t in enumerate(TYPES)))
    spelled = spelled_types(duck, [ListedTable("c", "s", "t", schema)])
    ours = []
    for t in TYPES:
        type_id, numeric = type_facts(t)
        ours.append((spelled[duckdb_type(t)], type_id, *(numeric or (None, None, None))))
    assert ours == theirs


def test_a_name_is_printed_as_duckdb_prints_it_in_a_definition(duck: duckdb.DuckDBPyConnection) -> None:
    names = ["plain", "Up", "dec", "select", "type", "1a", "a b", 'q"t', "_x9"]
    duck.execute(f"CREATE TABLE nm ({', '.join(f'{quote_identifier(n)} INTEGER' for n in names)})")
    (sql,) = duck.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'nm'").fetchone() or ("",)
    reserved = keywords(duck)
    assert sql == f"CREATE TABLE nm({', '.join(f'{printed_name(n, reserved)} INTEGER' for n in names)});"


def test_oids_are_stable_and_apart_from_duckdbs() -> None:
    assert oid("iceduck", "ns", "t") == oid("iceduck", "ns", "t")
    assert oid("iceduck", "ns", "t") != oid("iceduck", "n", "st")
    assert 2**62 <= oid("x") < 2**63


def test_the_rows_follow_duckdbs_own_and_hide_iceducks_objects(duck: duckdb.DuckDBPyConnection) -> None:
    duck.register("__iceduck_7", duck.sql("SELECT 1 AS x"))
    ours = [{"table_name": "mine", "TABLE_COMMENT": "c"}]
    relation = attach_rows(duck, "information_schema.tables", ours, "__iceduck_rows")
    rows = duck.execute(f"SELECT table_name, TABLE_COMMENT FROM {relation} AS r").fetchall()
    assert rows == [("t", None), ("mine", "c")]
