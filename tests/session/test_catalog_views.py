"""Iceberg views through SQL: made, changed and read by iceduck, and Spark's read as Spark
answered them (the views of ``tests/fixtures/views``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UnsupportedError, UserError
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField
from iceduck.spec.view_metadata import ViewRepresentation, new_view

FIXTURES = Path(__file__).parents[1] / "fixtures" / "views"


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.orders (id bigint, customer string, amount decimal(10, 2))")
        con.execute("INSERT INTO ns.orders VALUES (1, 'ann', 10.50), (2, 'bob', 20.00), (3, 'ann', 5.25)")
        yield con


def view(con: Connection, name: str) -> object:
    return con.session.catalog.load_view(TableIdentifier(("ns",), name)).metadata


def test_a_query_ending_in_a_comment_is_read(con: Connection) -> None:
    _register_view(con, "c", "duckdb", "SELECT 1 AS n -- another engine's text may end so")
    assert con.execute("SELECT n + 1 FROM ns.c").fetchone() == (2,)


def test_each_use_reads_the_tables_current_snapshot(con: Connection) -> None:
    con.execute("CREATE VIEW ns.n AS SELECT count(*) AS n FROM ns.orders")
    query = "SELECT n FROM ns.n"
    assert con.execute(query).fetchone() == (3,)
    con.execute("INSERT INTO ns.orders VALUES (4, 'cy', 1.00)")
    assert con.execute(query).fetchone() == (4,)
    con.execute("CREATE OR REPLACE VIEW ns.n AS SELECT count(*) * 10 AS n FROM ns.orders")
    assert con.execute(query).fetchone() == (40,)  # the same text again: the new version


def test_one_part_names_follow_the_rule_of_tables(con: Connection) -> None:
    con.execute("CREATE VIEW v AS SELECT 1 AS a")  # no namespace in use: the session's view
    assert con.execute("SHOW VIEWS").fetchall() == [("", "v", "true")]
    con.execute("USE ns")
    con.execute("CREATE VIEW mine AS SELECT id FROM orders WHERE id < 3")  # the catalog's ns.mine
    con.execute("CREATE TEMP VIEW scratch AS SELECT 2 AS b")  # TEMPORARY: the session's
    assert con.execute("SHOW VIEWS").fetchall() == [
        ("ns", "mine", "false"),
        ("", "scratch", "true"),
        ("", "v", "true"),
    ]
    assert con.execute("SELECT count(*) FROM mine").fetchone() == (2,)
    assert view(con, "mine").current_version.default_namespace == ("ns",)  # type: ignore[attr-defined]
    con.execute("DROP VIEW v")  # the session's, though a namespace is in use
    con.execute("DROP VIEW mine")
    assert con.execute("SHOW VIEWS IN ns").fetchall() == [("", "scratch", "true")]  # as Spark: temporary too


def test_names_inside_resolve_against_the_default_namespace(con: Connection) -> None:
    con.execute("CREATE NAMESPACE other")
    con.execute("CREATE TABLE other.orders (id bigint)")
    con.execute("INSERT INTO other.orders VALUES (99)")
    con.execute("USE ns")
    con.execute("CREATE VIEW other.v AS SELECT max(id) AS m FROM orders")  # ns.orders: the namespace in use
    con.execute("USE other")
    assert con.execute("SELECT m FROM other.v").fetchone() == (3,)  # still ns.orders
    con.execute("CREATE TEMP TABLE orders AS SELECT 1000 AS id")  # never captures a view's name
    assert con.execute("SELECT m FROM other.v").fetchone() == (3,)


def test_views_of_views_cycles_and_missing_tables(con: Connection) -> None:
    con.execute("CREATE VIEW ns.a AS SELECT id FROM ns.orders")
    con.execute("CREATE VIEW ns.b AS SELECT id * 2 AS twice FROM ns.a")
    assert sorted(con.execute("SELECT * FROM ns.b").fetchall()) == [(2,), (4,), (6,)]
    with pytest.raises(UserError, match=r"view ns.a refers to itself: ns.a -> ns.b -> ns.a"):
        con.execute("CREATE OR REPLACE VIEW ns.a AS SELECT twice AS id FROM ns.b")
    con.execute("CREATE TABLE ns.gone (id bigint)")
    con.execute("CREATE OR REPLACE VIEW ns.a AS SELECT id FROM ns.gone")
    con.execute("DROP TABLE ns.gone")
    with pytest.raises(
        NotFoundError, match=r"view ns.b reads .*view ns.a reads .*table iceduck.ns.gone not found"
    ):
        con.execute("SELECT * FROM ns.b")


def test_time_travel_picks_a_version(con: Connection) -> None:
    con.execute("CREATE VIEW ns.v AS SELECT 1 AS x")
    con.execute("CREATE OR REPLACE VIEW ns.v AS SELECT 2 AS x")
    assert con.execute("SELECT x FROM ns.v").fetchone() == (2,)
    assert con.execute("SELECT x FROM ns.v FOR VERSION AS OF 1").fetchone() == (1,)
    assert con.execute("SELECT x FROM ns.v VERSION AS OF 2").fetchone() == (2,)
    first = view(con, "v").version_log[0].timestamp_ms  # type: ignore[attr-defined]
    stamp = f"epoch_ms({first})"
    assert con.execute(f"SELECT x FROM ns.v FOR TIMESTAMP AS OF {stamp}").fetchone() == (1,)
    with pytest.raises(NotFoundError, match="no version 9"):
        con.execute("SELECT x FROM ns.v FOR VERSION AS OF 9")


def test_show_create_table_describe_and_tblproperties(con: Connection) -> None:
    con.execute(
        "CREATE VIEW ns.v (i COMMENT 'the id', c) COMMENT 'some' TBLPROPERTIES ('k' = 'v') "
        "AS SELECT id, customer FROM ns.orders"
    )
    (statement,) = con.execute("SHOW CREATE TABLE ns.v").fetchone()  # type: ignore[misc]
    assert statement == (
        "CREATE VIEW iceduck.ns.v (\n  i COMMENT 'the id',\n  c)\nCOMMENT 'some'\n"
        "TBLPROPERTIES (\n  'k' = 'v',\n  'replace.drop-dialect.allowed' = 'true')\n"
        "AS\nSELECT id, customer FROM ns.orders\n"
    )
    con.execute("DROP VIEW ns.v")
    con.execute(statement)  # runs again as shown
    assert con.execute("DESCRIBE ns.v").fetchall() == [
        ("i", "BIGINT", "YES", None, None, None, "the id"),
        ("c", "VARCHAR", "YES", None, None, None, None),
    ]
    assert ("k", "v") in con.execute("SHOW TBLPROPERTIES ns.v").fetchall()


def _register_view(con: Connection, name: str, dialect: str, sql: str) -> None:
    """A view written by another engine: one representation of ``dialect``."""
    catalog = con.session.catalog
    identifier = TableIdentifier(("ns",), name)
    schema = Schema((NestedField(0, "n", LongType()),))
    rep = ViewRepresentation(sql, dialect)
    catalog.create_view(
        identifier, new_view(catalog.default_view_location(identifier), schema, [rep], ("ns",))
    )


def test_spark_and_trino_sql_is_transpiled_and_an_unknown_function_named(con: Connection) -> None:
    _register_view(con, "s", "spark", "SELECT nvl(max(id), 0) AS n FROM orders")
    _register_view(con, "t", "trino", "SELECT count_if(id > 1) AS n FROM orders")
    assert con.execute("SELECT n FROM ns.s").fetchone() == (3,)
    assert con.execute("SELECT n FROM ns.t").fetchone() == (2,)
    _register_view(con, "bad", "spark", "SELECT no_such_function(id) AS n FROM orders")
    with pytest.raises(
        UnsupportedError, match=r"view ns.bad: the function no_such_function\(\) of its spark SQL"
    ):
        con.execute("SELECT * FROM ns.bad")


def test_a_cycle_another_engine_left_is_refused_naming_it(con: Connection) -> None:
    _register_view(con, "x", "spark", "SELECT n FROM y")
    _register_view(con, "y", "spark", "SELECT n FROM x")
    with pytest.raises(UserError, match=r"view ns.x refers to itself: ns.x -> ns.y -> ns.x"):
        con.execute("SELECT * FROM ns.x")


def test_views_spark_made_read_as_spark_answered(tmp_path: Path) -> None:
    """Each view of ``tests/fixtures/views`` (Spark 3.5 + Iceberg 1.10.2), registered over
    tables holding the rows Spark's did, answers Spark's rows."""
    record = json.loads((FIXTURES / "catalog_rows.json").read_text())
    with iceduck.connect(tmp_path / "wh") as con:
        for sql in (
            "CREATE NAMESPACE ns",
            "CREATE NAMESPACE other",
            "CREATE TABLE ns.orders (id bigint, customer string, amount decimal(10, 2), day date)",
            "INSERT INTO ns.orders VALUES (1, 'ann', 10.50, DATE '2024-01-01'), "
            "(2, 'bob', 20.00, DATE '2024-01-02'), (3, 'ann', 5.25, DATE '2024-01-02')",
            "CREATE TABLE other.customers (name string, city string)",
            "INSERT INTO other.customers VALUES ('ann', 'Oslo'), ('bob', 'Lima')",
        ):
            con.execute(sql)
        for name, answer in record["answers"].items():
            latest = sorted((FIXTURES / "ns" / name / "metadata").glob("*.metadata.json"))[-1]
            con.session.catalog.register_view(TableIdentifier(("ns",), name), str(latest))
            rows = con.execute(f"SELECT * FROM ns.{name}").fetchall()
            assert sorted([_spark_str(v) for v in row] for row in rows) == answer, name


def _spark_str(value: object) -> str:
    """A value as Spark's ``str(Row field)`` shows it (the fixtures' answers)."""
    if isinstance(value, list):
        return "[" + ", ".join(_spark_str(v) for v in value) + "]"
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    return str(value)


def test_views_read_anywhere_a_query_reads_tables(con: Connection) -> None:
    con.execute("CREATE VIEW ns.ann AS SELECT id, amount FROM ns.orders WHERE customer = 'ann'")
    assert con.execute("SELECT id FROM NS.ANN WHERE amount > ? ORDER BY id", [6]).fetchall() == [(1,)]
    assert con.execute("SELECT ns.ann.id FROM ns.ann WHERE ns.ann.amount > 6").fetchall() == [(1,)]
    con.execute("CREATE VIEW mine AS SELECT count(*) AS n FROM ns.ann")  # a session view over it
    assert con.execute("SELECT n FROM mine").fetchone() == (2,)
    con.execute("CREATE TABLE ns.copy AS SELECT * FROM ns.ann")  # CTAS
    con.execute("INSERT INTO ns.copy SELECT id + 10, amount FROM ns.ann")
    assert con.execute("SELECT count(*) FROM ns.copy").fetchone() == (4,)
    con.execute("BEGIN")
    con.execute("INSERT INTO ns.orders VALUES (7, 'ann', 1.00)")
    assert con.execute("SELECT count(*) FROM ns.ann").fetchone() == (3,)  # the transaction's own write
    with pytest.raises(UnsupportedError, match="DROP VIEW cannot run inside a transaction"):
        con.execute("DROP VIEW ns.ann")
    con.execute("ROLLBACK")
