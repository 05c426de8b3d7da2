"""A view's SQL between dialects (:mod:`iceduck.sql.view_sql`): the Spark text written only
when it means what the DuckDB text does, Spark's and Trino's read as DuckDB's, names
qualified as the view's version says."""

from __future__ import annotations

import duckdb
import pytest

from iceduck.errors import UnsupportedError
from iceduck.sql.view_sql import duckdb_text, qualified, spark_representation


@pytest.mark.parametrize(
    ("query", "spark"),
    [
        (
            "SELECT id, amount * 2 AS a FROM ns.t WHERE x > 1",
            "SELECT id, amount * 2 AS a FROM ns.t WHERE x > 1",
        ),
        ("SELECT a FROM t ORDER BY a", "SELECT a FROM t ORDER BY a NULLS LAST"),  # DuckDB's default order
        ("SELECT [1, 2][1] AS x", "SELECT ARRAY(1, 2)[0] AS x"),  # 1-based in DuckDB, 0-based in Spark
        ("SELECT a // b, coalesce(a, b) FROM t", "SELECT a DIV b, COALESCE(a, b) FROM t"),
        (
            "SELECT CAST(round(a) AS INT), substring(s, 1, 2) FROM t",
            "SELECT CAST(ROUND(a) AS INT), SUBSTRING(s, 1, 2) FROM t",
        ),
    ],
)
def test_faithful_queries_are_written_for_spark(query: str, spark: str) -> None:
    assert spark_representation(query, "ns.v") == spark


@pytest.mark.parametrize(
    ("query", "construct"),
    [
        ("SELECT string_agg(s, ',') FROM t", "string_agg / group_concat"),
        ("SELECT list(x) FROM t", "list / array_agg"),
        ("SELECT arg_max(a, b) FROM t", "arg_max / max_by"),
        ("SELECT len(tags) FROM t", "length / len"),
        ("SELECT epoch_ms(ts) FROM t", "epoch_ms"),
        ("SELECT date_diff('day', a, b) FROM t", "date_diff"),
        ("SELECT my_macro(a) FROM t", "function my_macro()"),
        ("SELECT list_sum([1, 2])", "function list_sum()"),
        ("SELECT * EXCLUDE (a) FROM t", "EXCLUDE / REPLACE"),
        ("SELECT a FROM t QUALIFY row_number() OVER () = 1", "QUALIFY"),
        ("SELECT * FROM t USING SAMPLE 10%", "USING SAMPLE"),
        ("SELECT a::HUGEINT FROM t", "INT128"),
        ("SELECT a::TIMESTAMP FROM t", "TIMESTAMP"),
        ("SELECT CAST(amount AS INT) FROM t", "rounds a fraction in DuckDB and truncates it in Spark"),
        ("SELECT substring(s, 0, 2) FROM t", "substring"),
    ],
)
def test_a_query_spark_reads_otherwise_is_refused_naming_the_construct(query: str, construct: str) -> None:
    with pytest.raises(UnsupportedError) as refused:
        spark_representation(query, "ns.v")
    message = str(refused.value)
    assert message.startswith("view ns.v: ") and construct in message
    assert "TBLPROPERTIES ('iceduck.spark-representation' = 'false')" in message


def test_the_spark_text_casts_each_column_to_the_schema_type() -> None:
    assert spark_representation("SELECT avg(a) AS m, s FROM t", "v", [("m", "DOUBLE"), ("s", None)]) == (
        "SELECT CAST(`_c0` AS DOUBLE) AS `m`, `_c1` AS `s` "
        "FROM (SELECT AVG(a) AS m, s FROM t) AS `q`(`_c0`, `_c1`)"
    )


def test_spark_text_is_read_as_spark_computes_it() -> None:
    duck = duckdb.connect()
    duck.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, NULL), (1, NULL), (2, 5)) v(g, x)")
    text = duckdb_text("SELECT g, collect_list(x) AS l, collect_set(x) AS s FROM t GROUP BY g", "spark", "v")
    assert sorted(duck.execute(text).fetchall()) == [(1, [], []), (2, [5], [5])]  # Spark: [] for no values
    text = duckdb_text("SELECT months_between(DATE '2024-03-17', DATE '2024-01-30') AS m", "spark", "v")
    assert duck.execute(text).fetchone() == (1.58064516,)  # 2 - 13/31, rounded to 8 digits as Spark does
    assert (
        duckdb_text("SELECT count_if(g > 1) AS n FROM t", "trino", "v")
        == "SELECT COUNT_IF(g > 1) AS n FROM t"
    )


def test_what_cannot_be_translated_is_named_with_its_dialect() -> None:
    with pytest.raises(UnsupportedError, match=r"view v: the function frobnicate\(\) of its spark SQL"):
        duckdb_text("SELECT frobnicate(a) FROM t", "spark", "v")
    with pytest.raises(UnsupportedError, match="reads views written in duckdb, spark, trino, not hive"):
        duckdb_text("SELECT 1", "hive", "v")
    assert duckdb_text("SELECT anything_goes(1)", "duckdb", "v") == "SELECT anything_goes(1)"  # as written


def test_a_name_led_by_the_catalog_is_read_in_it() -> None:
    assert qualified("SELECT * FROM lake.ns.t", "lake", ("x",), []) == 'SELECT * FROM "lake"."ns"."t"'


def test_names_are_qualified_by_the_default_namespace_and_catalog() -> None:
    text = (
        "WITH c AS (SELECT 1 AS a) SELECT * FROM c JOIN t USING (a) JOIN spark_catalog.x.y ON true "
        "JOIN other.p FOR VERSION AS OF 3 ON true"
    )
    assert qualified(text, "lake", ("ns",), ["spark_catalog"]) == (
        'WITH c AS (SELECT 1 AS a) SELECT * FROM c JOIN "lake"."ns"."t" USING (a) '
        'JOIN "lake"."x"."y" ON true JOIN "lake"."other"."p" FOR VERSION AS OF 3 ON true'
    )


def test_spark_functions_sqlglot_spells_otherwise_are_read_as_spark_computes_them() -> None:
    duck = duckdb.connect()
    query = (
        "SELECT substring('ann', 0, 2) AS a, min_by(x, y) AS m, 'a-3' AS f, "
        "get_json_object('not json', '$.a') AS j, get_json_object('{\"a\": 1}', '$.a') AS k, "
        "trunc(DATE '2024-03-17', 'MM') AS t FROM (SELECT NULL AS x, 1 AS y UNION ALL SELECT 'n2', 2)"
    )
    (row,) = duck.execute(duckdb_text(query, "spark", "v")).fetchall()
    assert row[:5] == ("an", None, "a-3", None, "1")  # Spark: 'an', NULL (min_by keeps it), NULL on bad JSON
    assert str(row[5])[:10] == "2024-03-01"


def test_a_spark_cast_to_text_writes_a_zoned_timestamp_as_its_local_time() -> None:
    """Spark's ``CAST(ts AS STRING)`` is ``2024-01-01 10:00:00.5``; DuckDB's cast of a
    TIMESTAMPTZ appends ``+00``. Other types cast as written, the operand translated too."""
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.execute(
        "CREATE TABLE t AS SELECT TIMESTAMPTZ '2024-01-01 10:00:00.5+00' AS tz, 7 AS i, [1, 2] AS l, "
        "DATE '2024-01-02' AS d, 10.75 AS x"
    )
    query = (
        "SELECT CAST(tz AS STRING), CAST(i AS STRING), CAST(l AS STRING), CAST(d AS STRING), "
        "CAST(CAST(x AS INT) AS STRING) FROM t"
    )
    assert duck.execute(duckdb_text(query, "spark", "v")).fetchall() == [
        ("2024-01-01 10:00:00.5", "7", "[1, 2]", "2024-01-02", "10")
    ]
    assert duckdb_text("SELECT CAST('a' AS STRING)", "spark", "v") == "SELECT TRY_CAST('a' AS TEXT)"


def test_a_spark_cast_to_an_integer_truncates_as_spark_does() -> None:
    query = (
        "SELECT CAST(d AS INT), CAST(s AS INT), CAST(f AS BIGINT), CAST(b AS INT), CAST('x' AS INT) "
        "FROM (SELECT CAST(10.50 AS DECIMAL(10, 2)) AS d, '10.5' AS s, CAST(-10.7 AS DOUBLE) AS f, true AS b)"
    )
    assert duckdb.connect().execute(duckdb_text(query, "spark", "v")).fetchall() == [(10, 10, -10, 1, None)]


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        ("SELECT explode_outer(arr) FROM t", "explode_outer"),
        ("SELECT id, e FROM t LATERAL VIEW OUTER explode(arr) x AS e", "LATERAL VIEW OUTER"),
        ("SELECT split(s, ',', 2) FROM t", "split with a limit"),
        ("SELECT array_distinct(a) FROM t", "array_distinct"),
        ("SELECT format_string('%s-%d', s, i) FROM t", "format_string"),
        ("SELECT unix_timestamp(ts) FROM t", "unix_timestamp"),
        ("SELECT trunc(d, 'XX') FROM t", "trunc / date_trunc to 'XX'"),
    ],
)
def test_spark_constructs_without_a_duckdb_spelling_are_refused(sql: str, construct: str) -> None:
    with pytest.raises(UnsupportedError) as refused:
        duckdb_text(sql, "spark", "ns.v")
    prefix = "view ns.v: its spark SQL cannot be translated to DuckDB's: "
    assert str(refused.value).startswith(prefix + construct)
