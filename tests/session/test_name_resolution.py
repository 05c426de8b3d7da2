"""One-part table names: ``USE ns``, ``connect(namespace=)`` and what a missing name answers.

A warehouse with namespaces ``shop`` and ``archive`` (each with a table ``orders``) and
a nested ``deep.er`` (table ``nested``): every statement kind must read a one-part name in
the current namespace, a name as written must keep its meaning, CTEs and DuckDB's own
relations must keep theirs, and a name that means nothing must say where tables of that
name are, never suggest DuckDB's system tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import NotFoundError, UserError


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    with iceduck.connect(tmp_path / "wh") as c:
        for sql in (
            "CREATE NAMESPACE shop",
            "CREATE NAMESPACE archive",
            "CREATE NAMESPACE deep",
            "CREATE NAMESPACE deep.er",
            "CREATE TABLE shop.orders (id bigint, amount double)",
            "CREATE TABLE archive.orders (id bigint, amount double)",
            "CREATE TABLE deep.er.nested (x int)",
            "INSERT INTO shop.orders VALUES (1, 10.0), (2, 20.0)",
            "INSERT INTO archive.orders VALUES (7, 70.0)",
            "INSERT INTO deep.er.nested VALUES (42)",
        ):
            c.execute(sql)
        yield c


def rows(con: Connection, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    return con.execute(sql, params).fetchall()


def message(con: Connection, sql: str) -> str | None:
    cursor = con.execute(sql)
    assert cursor.result is not None
    return cursor.result.message


def missing(con: Connection, sql: str) -> str:
    """The message of the NotFoundError ``sql`` raises."""
    with pytest.raises(NotFoundError) as caught:
        con.execute(sql)
    return str(caught.value)


# -- without a current namespace -------------------------------------------------------------


def test_a_one_part_name_names_the_namespaces_that_have_such_a_table(con: Connection) -> None:
    with pytest.raises(iceduck.ProgrammingError) as caught:
        con.execute("SELECT * FROM orders")
    text = str(caught.value)
    assert isinstance(caught.value, NotFoundError)
    assert text == (
        "table orders does not exist (no namespace is in use: USE one, or write ns.orders); "
        "namespaces archive, shop have a table orders: write archive.orders, shop.orders or USE archive"
    )
    assert "pg_" not in text and "Did you mean" not in text


def test_a_name_no_namespace_has_says_only_that(con: Connection) -> None:
    assert missing(con, "SELECT * FROM nowhere") == (
        "table nowhere does not exist (no namespace is in use: USE one, or write ns.nowhere)"
    )


def test_a_misspelt_name_gets_the_close_iceberg_names(con: Connection) -> None:
    assert missing(con, "SELECT * FROM shop.ordres") == (
        "table shop.ordres not found in catalog 'iceduck'; did you mean archive.orders or shop.orders?"
    )
    con.execute("USE deep.er")
    assert missing(con, "SELECT * FROM nestd") == (
        "table nestd does not exist in namespace deep.er; did you mean deep.er.nested?"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "DESCRIBE orders",
        "SELECT * FROM orders VERSION AS OF 1",
        "INSERT INTO orders VALUES (3, 3.0)",
        "DELETE FROM orders WHERE id = 1",
        "UPDATE orders SET amount = 0",
        "DROP TABLE orders",
        "ALTER TABLE orders ADD COLUMN c int",
        "INSERT INTO shop.orders SELECT * FROM orders",  # the query inside a write too
    ],
)
def test_every_statement_kind_answers_in_the_catalogs_terms(con: Connection, sql: str) -> None:
    with pytest.raises(NotFoundError, match=r"namespaces archive, shop have a table orders"):
        con.execute(sql)


def test_a_one_part_create_needs_a_namespace(con: Connection) -> None:
    with pytest.raises(UserError, match=r"name the namespace of table t: write ns\.t, or USE ns first"):
        con.execute("CREATE TABLE t (a int)")


def test_a_name_with_a_missing_namespace_points_at_the_tables_of_that_name(con: Connection) -> None:
    assert missing(con, "SELECT * FROM orders.snapshots") == (
        "table orders.snapshots not found: catalog 'iceduck' has no namespace orders; namespaces "
        "archive, shop have a table orders: write archive.orders.snapshots, shop.orders.snapshots"
    )
    assert missing(con, "SELECT * FROM shop.missing") == "table shop.missing not found in catalog 'iceduck'"


def test_duckdb_relations_and_ctes_keep_their_meaning(con: Connection) -> None:
    assert rows(con, "SELECT count(*) FROM range(5) r(i)") == [(5,)]
    assert rows(con, "SELECT count(*) FROM sqlite_master") == [(0,)]
    assert rows(con, "WITH orders AS (SELECT 99 AS id) SELECT id FROM orders") == [(99,)]


# -- USE -------------------------------------------------------------------------------------


def test_use_makes_one_part_names_read_the_namespace(con: Connection) -> None:
    assert message(con, "USE shop") == "using namespace shop"
    assert con.namespace == "shop"
    assert rows(con, "SELECT id, amount FROM orders ORDER BY id") == [(1, 10.0), (2, 20.0)]
    assert rows(con, "SELECT o.id FROM orders AS o WHERE o.id = ?", [2]) == [(2,)]
    # columns qualified by the table's full names, as Spark resolves them
    assert rows(con, "SELECT shop.orders.id, iceduck.shop.orders.id, orders.id FROM orders WHERE id = 1") == [
        (1, 1, 1)
    ]
    # names as written keep their meaning
    assert rows(con, "SELECT id FROM archive.orders") == [(7,)]
    assert rows(con, "SELECT x FROM deep.er.nested") == [(42,)]
    assert rows(con, "SELECT count(*) FROM iceduck.shop.orders") == [(2,)]
    # matched without case, as DuckDB matches names
    assert rows(con, 'SELECT count(*) FROM "ORDERS"') == [(2,)]


def test_metadata_tables_time_travel_and_branches_in_the_namespace(con: Connection) -> None:
    con.execute("USE shop")
    [(snapshot,)] = rows(con, "SELECT snapshot_id FROM orders.snapshots")
    con.execute("INSERT INTO orders VALUES (3, 30.0)")
    assert rows(con, f"SELECT count(*) FROM orders VERSION AS OF {snapshot}") == [(2,)]
    assert rows(con, f"SELECT count(*) FROM orders FOR SYSTEM_VERSION AS OF {snapshot}") == [(2,)]
    assert rows(con, f"SELECT count(*) FROM orders.snapshot_id_{snapshot}") == [(2,)]
    assert rows(con, "SELECT count(*) FROM orders.history") == [(2,)]
    con.execute("ALTER TABLE orders CREATE BRANCH dev")
    con.execute("INSERT INTO orders.branch_dev VALUES (4, 40.0)")
    assert rows(con, "SELECT count(*) FROM orders.branch_dev") == [(4,)]
    assert rows(con, "SELECT count(*) FROM orders") == [(3,)]
    assert rows(con, "SELECT count(*) FROM orders VERSION AS OF 'dev'") == [(4,)]


def test_writes_and_ddl_in_the_namespace(con: Connection) -> None:
    con.execute("USE shop")
    assert message(con, "INSERT INTO orders VALUES (3, 30.0)") == "inserted 1 row into shop.orders"
    assert message(con, "UPDATE orders SET amount = 0 WHERE orders.id = 3") == "updated 1 row of shop.orders"
    assert message(con, "DELETE FROM orders WHERE id = 3") == "deleted 1 row from shop.orders"
    merged = message(
        con,
        "MERGE INTO orders t USING (SELECT 5 AS id, 5.0 AS amount) s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT *",
    )
    assert merged == "merged 1 row into shop.orders"
    assert message(con, "CREATE TABLE big AS SELECT * FROM orders WHERE amount > 5") == (
        "created table shop.big with 2 rows"
    )
    assert message(con, "CREATE TABLE empty (a int)") == "created table shop.empty"
    assert message(con, "ALTER TABLE empty ADD COLUMN b string") == "altered table shop.empty"
    assert message(con, "ALTER TABLE empty RENAME TO gone") == "renamed table shop.empty to shop.gone"
    assert message(con, "DROP TABLE gone") == "dropped table shop.gone"
    assert rows(con, "SHOW TABLES") == [("shop", "big"), ("shop", "orders")]
    # a two-part name is still the namespace as written
    assert message(con, "CREATE TABLE archive.more (a int)") == "created table archive.more"
    assert rows(con, "SHOW TABLES IN archive") == [("archive", "more"), ("archive", "orders")]
    assert rows(con, "SHOW TABLES IN iceduck.archive") == [("archive", "more"), ("archive", "orders")]


def test_describe_in_the_namespace(con: Connection) -> None:
    con.execute("USE shop")
    assert [r[0] for r in rows(con, "DESCRIBE orders")] == ["id", "amount"]


def test_ctes_and_duckdb_functions_still_win_over_the_namespace(con: Connection) -> None:
    con.execute("USE shop")
    assert rows(con, "WITH orders AS (SELECT 99 AS id) SELECT id FROM orders") == [(99,)]
    assert rows(con, "SELECT id FROM (WITH orders AS (SELECT 98 AS id) SELECT * FROM orders)") == [(98,)]
    assert rows(con, "WITH o AS (SELECT id FROM orders) SELECT count(*) FROM o") == [(2,)]
    assert rows(con, "SELECT count(*) FROM range(3)") == [(3,)]
    assert rows(con, "SELECT count(*) FROM sqlite_master") == [(0,)]


def test_a_missing_name_in_the_namespace_says_where_it_looked(con: Connection) -> None:
    con.execute("USE archive")
    assert missing(con, "SELECT * FROM nested") == (
        "table nested does not exist in namespace archive; namespace deep.er has a table nested: "
        "write deep.er.nested"
    )
    inserted = missing(con, "INSERT INTO nowhere VALUES (1)")
    assert inserted == "table nowhere does not exist in namespace archive"


def test_use_spellings(con: Connection) -> None:
    assert message(con, "USE NAMESPACE archive;") == "using namespace archive"
    assert message(con, "use iceduck.shop") == "using namespace shop"  # the session's catalog name
    assert message(con, "USE SCHEMA deep.er") == "using namespace deep.er"
    assert rows(con, "SELECT x FROM nested") == [(42,)]
    assert message(con, 'USE DATABASE "SHOP"') == "using namespace shop"  # spelled as the catalog does
    assert con.namespace == "shop"
    assert message(con, "USE iceduck") == "using no namespace"  # the catalog alone: none in use
    assert con.namespace is None
    with pytest.raises(NotFoundError, match="no namespace is in use"):
        con.execute("SELECT * FROM orders")


def test_use_of_a_missing_namespace_or_another_catalog_is_refused(con: Connection) -> None:
    con.execute("USE shop")
    with pytest.raises(iceduck.ProgrammingError) as caught:
        con.execute("USE nope")
    assert isinstance(caught.value, NotFoundError)
    assert str(caught.value) == (
        "namespace nope does not exist in catalog 'iceduck' (its namespaces: archive, deep, shop)"
    )
    with pytest.raises(NotFoundError, match=r"namespace iceduck\.nope does not exist in catalog 'iceduck'"):
        con.execute("USE iceduck.nope")
    with pytest.raises(NotFoundError, match=r"spark_catalog is not this session's catalog \('iceduck'"):
        con.execute("USE spark_catalog.shop")
    with pytest.raises(UserError, match="USE takes a namespace"):
        con.execute("USE")
    with pytest.raises(UserError, match="USE takes a namespace name, got 'a b'"):
        con.execute("USE a b")
    assert con.namespace == "shop"  # a failed USE changes nothing
    assert rows(con, "SELECT count(*) FROM orders") == [(2,)]


def test_a_dropped_current_namespace_is_named(con: Connection) -> None:
    con.execute("CREATE NAMESPACE tmp")
    con.execute("USE tmp")
    con.execute("DROP NAMESPACE tmp")
    with pytest.raises(NotFoundError, match=r"in namespace tmp \(namespace tmp no longer exists\)"):
        con.execute("SELECT * FROM t")


# -- connect(namespace=) ---------------------------------------------------------------------


def test_connect_with_a_namespace(con: Connection, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    with iceduck.connect(warehouse, namespace="shop") as c:
        assert c.namespace == "shop"
        assert c.execute("SELECT count(*) FROM orders").fetchall() == [(2,)]
    with iceduck.connect(warehouse, namespace="iceduck.deep.er") as c:
        assert c.execute("SELECT x FROM nested").fetchall() == [(42,)]
    with iceduck.connect(warehouse, namespace=("deep", "er")) as c:
        assert c.namespace == "deep.er"
    with pytest.raises(iceduck.ProgrammingError, match="namespace nope does not exist"):
        iceduck.connect(warehouse, namespace="nope")
    with pytest.raises(iceduck.ProgrammingError, match="a namespace is a dotted name or its levels"):
        iceduck.connect(warehouse, namespace=())
