"""CREATE/DROP of namespaces and tables, type names and statement routing (iceduck.sql.ddl)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from iceduck.errors import UnsupportedError, UserError, ValidationError
from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
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
)
from iceduck.sql.ddl import parse_write
from iceduck.sql.statements import (
    ColumnDef,
    CreateNamespace,
    CreateTable,
    DropNamespace,
    DropTable,
    PartitionTerm,
    SortTerm,
)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "  -- comment\n /* block */ select * from ns.t",
        "(SELECT 1)",
        "WITH c AS (SELECT 1) SELECT * FROM c",
        "FROM ns.t",
        "VALUES (1)",
        "EXPLAIN SELECT 1",
        "EXPLAIN ANALYZE SELECT 1",
        "SHOW TABLES IN ns",
        "DESCRIBE ns.t",
        "SET TimeZone = 'UTC'",
        "",
    ],
)
def test_reads_are_not_write_statements(sql: str) -> None:
    assert parse_write(sql) is None


def create(sql: str) -> CreateTable:
    statement = parse_write(sql)
    assert isinstance(statement, CreateTable)
    return statement


def column_types(sql: str) -> dict[str, object]:
    return {c.name: c.type for c in create(sql).columns}


def test_spark_create_table_with_every_clause() -> None:
    statement = create(
        "CREATE TABLE IF NOT EXISTS prod.db.sample (id bigint NOT NULL COMMENT 'unique id', data string, "
        "category string, ts timestamp) USING iceberg "
        "PARTITIONED BY (bucket(16, id), days(ts), truncate(4, data), category) "
        "LOCATION 's3://b/p' COMMENT 'the table' "
        "TBLPROPERTIES ('format-version'='3', write.parquet.compression-codec = 'zstd', "
        '"k" = "v", n = 5);'
    )
    assert statement.name == ("prod", "db", "sample")
    assert statement.if_not_exists and not statement.or_replace and not statement.replace
    assert statement.columns[0] == ColumnDef("id", LongType(), True, "unique id")
    assert statement.columns[3] == ColumnDef("ts", TimestamptzType())  # Spark's timestamp is an instant
    assert statement.partition_by == (
        PartitionTerm(BucketTransform(16), ("id",)),
        PartitionTerm(DayTransform(), ("ts",)),
        PartitionTerm(TruncateTransform(4), ("data",)),
        PartitionTerm(IdentityTransform(), ("category",)),
    )
    assert statement.location == "s3://b/p" and statement.comment == "the table"
    assert statement.properties == {
        "format-version": "3",
        "write.parquet.compression-codec": "zstd",
        "k": "v",
        "n": "5",
    }
    assert statement.as_query is None


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("years(ts)", PartitionTerm(YearTransform(), ("ts",))),
        ("year(ts)", PartitionTerm(YearTransform(), ("ts",))),
        ("months(ts)", PartitionTerm(MonthTransform(), ("ts",))),
        ("month(ts)", PartitionTerm(MonthTransform(), ("ts",))),
        ("days(ts)", PartitionTerm(DayTransform(), ("ts",))),
        ("date(ts)", PartitionTerm(DayTransform(), ("ts",))),
        ("hours(ts)", PartitionTerm(HourTransform(), ("ts",))),
        ("hour(ts)", PartitionTerm(HourTransform(), ("ts",))),
        ("identity(id)", PartitionTerm(IdentityTransform(), ("id",))),
        ("truncate(s, 4)", PartitionTerm(TruncateTransform(4), ("s",))),
        ("bucket(8, p.x) AS px", PartitionTerm(BucketTransform(8), ("p", "x"), "px")),
        ("`id`", PartitionTerm(IdentityTransform(), ("id",))),
    ],
)
def test_partition_transforms(term: str, expected: PartitionTerm) -> None:
    sql = f"CREATE TABLE ns.t (id int, ts timestamp, s string, p struct<x: int>) PARTITIONED BY ({term})"
    assert create(sql).partition_by == (expected,)


@pytest.mark.parametrize(
    ("term", "message"),
    [
        ("bucket(id)", "bucket takes two arguments"),
        ("bucket(16, id, s)", "bucket takes two arguments"),
        ("truncate(s)", "truncate takes two arguments"),
        ("days(ts, 3)", "days takes one argument"),
        ("days(1)", "days takes one argument"),
        ("zorder(id)", "unknown partition transform 'zorder'"),
        ("id int", "Hive-style partition columns"),
    ],
)
def test_bad_partition_terms(term: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_write(f"CREATE TABLE ns.t (id int, ts date, s string) PARTITIONED BY ({term})")


def test_bucket_count_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="positive"):
        parse_write("CREATE TABLE ns.t (id int) PARTITIONED BY (bucket(0, id))")


SPARK_TYPES = {
    "a": ("boolean", BooleanType()),
    "b": ("tinyint", IntegerType()),
    "c": ("smallint", IntegerType()),
    "d": ("int", IntegerType()),
    "e": ("bigint", LongType()),
    "f": ("float", FloatType()),
    "g": ("double", DoubleType()),
    "h": ("decimal(12, 3)", DecimalType(12, 3)),
    "i": ("decimal", DecimalType(10, 0)),
    "j": ("string", StringType()),
    "k": ("varchar(10)", StringType()),
    "l": ("char(3)", StringType()),
    "m": ("binary", BinaryType()),
    "n": ("date", DateType()),
    "o": ("timestamp", TimestamptzType()),
    "p": ("timestamp_ntz", TimestampType()),
    "q": ("timestamp_ltz", TimestamptzType()),
    "r": ("long", LongType()),
    "s": ("uuid", UUIDType()),
    "t": ("fixed(16)", FixedType(16)),
    "u": ("time", TimeType()),
    "v": ("timestamptz_ns", TimestamptzNanoType()),
}


def test_spark_type_names() -> None:
    columns = ", ".join(f"{name} {spelling}" for name, (spelling, _) in SPARK_TYPES.items())
    types = column_types(f"CREATE TABLE ns.t ({columns}) USING iceberg")
    assert types == {name: t for name, (_, t) in SPARK_TYPES.items()}


DUCKDB_TYPES = {
    "a": ("BOOLEAN", BooleanType()),
    "b": ("TINYINT", IntegerType()),
    "c": ("UTINYINT", IntegerType()),
    "d": ("INTEGER", IntegerType()),
    "e": ("UINTEGER", LongType()),
    "f": ("BIGINT", LongType()),
    "g": ("REAL", FloatType()),
    "h": ("DOUBLE PRECISION", DoubleType()),
    "i": ("DECIMAL", DecimalType(18, 3)),
    "j": ("NUMERIC(5)", DecimalType(5, 0)),
    "k": ("VARCHAR", StringType()),
    "l": ("TEXT", StringType()),
    "m": ("BLOB", BinaryType()),
    "n": ("TIMESTAMP", TimestampType()),
    "o": ("TIMESTAMPTZ", TimestamptzType()),
    "p": ("TIMESTAMP WITH TIME ZONE", TimestamptzType()),
    "q": ("TIMESTAMP WITHOUT TIME ZONE", TimestampType()),
    "r": ("TIMESTAMP_NS", TimestampNanoType()),
    "s": ("DATETIME", TimestampType()),
    "t": ("UUID", UUIDType()),
    "u": ("TIME", TimeType()),
    "v": ("BYTEA", BinaryType()),
    "w": ("CHARACTER VARYING(5)", StringType()),
}


def test_duckdb_type_names() -> None:
    columns = ", ".join(f"{name} {spelling}" for name, (spelling, _) in DUCKDB_TYPES.items())
    types = column_types(f"CREATE TABLE ns.t ({columns})")
    assert types == {name: t for name, (_, t) in DUCKDB_TYPES.items()}


@pytest.mark.parametrize(
    "marker",
    [
        "USING iceberg",
        "TBLPROPERTIES ('a' = 'b')",
        "PARTITIONED BY (x)",
    ],
)
def test_spark_markers_make_timestamp_an_instant(marker: str) -> None:
    assert column_types(f"CREATE TABLE ns.t (ts timestamp, x int) {marker}")["ts"] == TimestamptzType()


def test_backticks_and_angle_types_are_spark_markers() -> None:
    assert column_types("CREATE TABLE ns.`t` (ts timestamp)")["ts"] == TimestamptzType()
    assert column_types("CREATE TABLE ns.t (ts timestamp, l array<int>)")["ts"] == TimestamptzType()
    assert column_types("CREATE TABLE ns.t (ts timestamp, l INT[])")["ts"] == TimestampType()


def test_nested_types_get_placeholder_ids_in_parse_order() -> None:
    spark = column_types(
        "CREATE TABLE ns.t (s struct<a: int NOT NULL COMMENT 'x', b: array<map<string, array<bigint>>>>)"
    )
    assert spark["s"] == StructType(
        (
            NestedField(1, "a", IntegerType(), True, "x"),
            NestedField(
                2,
                "b",
                ListType(3, MapType(4, StringType(), 5, ListType(6, LongType()))),
            ),
        )
    )
    duck = column_types(
        "CREATE TABLE ns.t (s STRUCT(a INTEGER, b VARCHAR[]), m MAP(VARCHAR, DOUBLE), l INT[][])"
    )
    assert duck == {
        "s": StructType((NestedField(1, "a", IntegerType()), NestedField(2, "b", ListType(3, StringType())))),
        "m": MapType(4, StringType(), 5, DoubleType()),
        "l": ListType(7, ListType(6, IntegerType())),
    }


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("CREATE TABLE ns.t (a foo)", UserError, "unknown type 'foo'"),
        ("CREATE TABLE ns.t (a HUGEINT)", UnsupportedError, "HUGEINT has no Iceberg equivalent"),
        ("CREATE TABLE ns.t (a INTERVAL)", UnsupportedError, "INTERVAL has no Iceberg equivalent"),
        ("CREATE TABLE ns.t (a decimal(40, 2))", ValidationError, "decimal"),
        ("CREATE TABLE ns.t (a map<int>)", UserError, "expected ,"),
        ("CREATE TABLE ns.t (a struct<x: int, x: int>)", UserError, "duplicate field name"),
        ("CREATE TABLE ns.t (a int, A int)", UserError, "duplicate column name: a"),
        ("CREATE TABLE ns.t (a int) USING parquet", UnsupportedError, "USING parquet is not supported"),
        ("CREATE TABLE ns.t (a int) USING delta", UnsupportedError, "USING delta"),
        (
            "CREATE MATERIALIZED VIEW ns.v AS SELECT 1",
            UnsupportedError,
            "materialized views are not supported",
        ),
        ("CREATE VIEW ns.v SELECT 1", UserError, "expected COMMENT, TBLPROPERTIES or AS <query>"),
        ("CREATE OR REPLACE VIEW IF NOT EXISTS ns.v AS SELECT 1", UserError, "cannot also say IF NOT EXISTS"),
        (
            "CREATE VIEW ns.v (a, A) AS SELECT 1, 2",
            UserError,
            "duplicate column name in the view's column list: a",
        ),
        ("CREATE VIEW ns.v COMMENT 'a' COMMENT 'b' AS SELECT 1", UserError, "COMMENT is given twice"),
        ("ALTER VIEW ns.v DROP COLUMN a", UserError, "AS <query>, SET TBLPROPERTIES"),
        ("CREATE TEMP TABLE t (a int)", UnsupportedError, "temporary tables"),
        ("CREATE MACRO m(a) AS a", UnsupportedError, "CREATE MACRO is not supported"),
        ("CREATE TABLE ns.t (a int PRIMARY KEY)", UnsupportedError, "PRIMARY"),
        ("CREATE TABLE ns.t (a int, PRIMARY KEY (a))", UnsupportedError, "PRIMARY"),
        ("CREATE TABLE ns.t (a int) CLUSTERED BY (a) INTO 4 BUCKETS", UnsupportedError, "CLUSTERED BY"),
        (
            "CREATE TABLE ns.t (a int) TBLPROPERTIES ('format-version' = '4')",
            ValidationError,
            "format-version",
        ),
        ("CREATE TABLE ns.t (a int) COMMENT 'x' COMMENT 'y'", UserError, "COMMENT is given twice"),
        ("CREATE TABLE ns.t (a int) AS SELECT 1", UserError, "do not list them"),
        ("CREATE TABLE ns.t", UserError, "needs a column list or AS"),
        ("CREATE TABLE ns.t (a int", UserError, "syntax error"),
        ("CREATE TABLE ns.t (a int) garbage", UserError, "syntax error"),
        ("CREATE TABLE 'x' (a int)", UserError, "expected a table name"),
        ("CREATE OR REPLACE TABLE IF NOT EXISTS ns.t (a int)", UserError, "IF NOT EXISTS"),
        ("CREATE TABLE ns.t (a int) 'open", UserError, "unterminated quoted string at line 1, column 27"),
        ("CALL iceduck.system.expire_snapshots('ns.t')", UnsupportedError, "CALL procedures"),
        ("DROP FUNCTION f", UnsupportedError, "DROP FUNCTION is not supported"),
        ("DROP TABLE ns.t CASCADE", UserError, "expected the end"),
    ],
)
def test_errors(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_write(sql)


def test_ctas_rtas_and_replace() -> None:
    ctas = create("CREATE TABLE ns.t USING iceberg PARTITIONED BY (a) AS SELECT a, b FROM src WHERE x = ?")
    assert ctas.as_query == "SELECT a, b FROM src WHERE x = $1"
    assert ctas.partition_by == (PartitionTerm(IdentityTransform(), ("a",)),) and not ctas.columns
    rtas = create("CREATE OR REPLACE TABLE ns.t AS (SELECT 1 AS a)")
    assert rtas.or_replace and rtas.as_query == "(SELECT 1 AS a)"
    replace = create("REPLACE TABLE ns.t (a int) USING iceberg")
    assert replace.replace and not replace.or_replace and replace.columns == (ColumnDef("a", IntegerType()),)


def test_ordered_by_at_creation() -> None:
    statement = create("CREATE TABLE ns.t (a int, b string) ORDERED BY (a DESC, b NULLS LAST)")
    assert statement.sort_by == (
        SortTerm(IdentityTransform(), ("a",), SortDirection.DESC, NullOrder.NULLS_LAST),
        SortTerm(IdentityTransform(), ("b",), SortDirection.ASC, NullOrder.NULLS_LAST),
    )


def test_defaults_are_values_of_the_column_type() -> None:
    columns = create(
        "CREATE TABLE ns.t (a int DEFAULT -5, b decimal(5, 2) DEFAULT 1.5, c double DEFAULT 2, "
        "d date DEFAULT '2024-01-02', e timestamp_ntz DEFAULT TIMESTAMP '1970-01-01 00:00:01', "
        "f string DEFAULT 'x' NOT NULL COMMENT 'c', g boolean DEFAULT true, h int DEFAULT NULL, "
        "i uuid DEFAULT 'f79c3e09-677c-4bbd-a479-3f349cb785e7', j time DEFAULT '10:00:00', "
        "k timestamp DEFAULT '1970-01-01 00:00:00+01:00') USING iceberg"
    ).columns
    values = {c.name: (c.default, c.has_default) for c in columns}
    assert values["a"] == (-5, True)
    assert values["b"] == (Decimal("1.50"), True)
    assert values["c"] == (2.0, True) and isinstance(values["c"][0], float)
    assert values["d"] == (19724, True)
    assert values["e"] == (1_000_000, True)
    assert values["f"] == ("x", True) and columns[5].required and columns[5].comment == "c"
    assert values["g"] == (True, True)
    assert values["h"] == (None, True)
    assert str(values["i"][0]) == "f79c3e09-677c-4bbd-a479-3f349cb785e7"
    assert values["j"] == (36_000_000_000, True)
    assert values["k"] == (-3_600_000_000, True)


def test_decimal_defaults_keep_all_38_digits() -> None:
    """Python's default decimal context rounds at 28 digits; a decimal(38, s) default must not."""
    columns = create(
        f"CREATE TABLE ns.t (a decimal(38, 0) DEFAULT {'9' * 38}, b decimal(38, 10) DEFAULT -{'9' * 28}.5)"
    ).columns
    assert columns[0].default == Decimal("9" * 38)
    assert columns[1].default == Decimal(f"-{'9' * 28}.5000000000")


@pytest.mark.parametrize(
    ("column", "error", "message"),
    [
        ("a int DEFAULT 'x'", UserError, "does not fit column a of type int"),
        ("a int DEFAULT 3000000000", UserError, "does not fit"),
        ("a decimal(3, 2) DEFAULT 12.5", UserError, "does not fit"),
        ("a decimal(38, 0) DEFAULT " + "9" * 39, UserError, "does not fit"),
        ("a decimal(38, 10) DEFAULT " + "9" * 29, UserError, "does not fit"),
        ("a int DEFAULT 1.5e3", UserError, "does not fit"),
        ("a timestamp DEFAULT now()", UnsupportedError, "must be a literal"),
    ],
)
def test_bad_defaults(column: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_write(f"CREATE TABLE ns.t ({column})")


def test_namespaces() -> None:
    assert parse_write("CREATE NAMESPACE a.b") == CreateNamespace(("a", "b"))
    assert parse_write(
        "CREATE DATABASE IF NOT EXISTS db COMMENT 'c' LOCATION '/l' WITH DBPROPERTIES ('k' = 'v')"
    ) == CreateNamespace(("db",), True, {"comment": "c", "location": "/l", "k": "v"})
    assert parse_write("CREATE SCHEMA s WITH PROPERTIES (a = 1)") == CreateNamespace(
        ("s",), False, {"a": "1"}
    )
    assert parse_write("DROP NAMESPACE IF EXISTS a.b CASCADE") == DropNamespace(("a", "b"), True, True)
    assert parse_write("DROP SCHEMA s RESTRICT") == DropNamespace(("s",))
    assert parse_write("DROP DATABASE s") == DropNamespace(("s",))


def test_drop_table() -> None:
    assert parse_write("DROP TABLE ns.t") == DropTable(("ns", "t"))
    assert parse_write("DROP TABLE IF EXISTS `ns`.`my-t` PURGE;") == DropTable(("ns", "my-t"), True, True)


def test_quoted_names_keep_their_case_and_characters() -> None:
    statement = create('CREATE TABLE "Ns"."T x" ("Id" int, `we"ird` string)')
    assert statement.name == ("Ns", "T x")
    assert [c.name for c in statement.columns] == ["Id", 'we"ird']
