"""What tools see of the catalog's Iceberg views: DuckDB's catalog sources list them as a
plain DuckDB connection lists a native view of the same columns and query
(:mod:`iceduck.session.introspection`); oids aside, row for row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

import iceduck

OIDS = {"database_oid", "schema_oid", "table_oid", "view_oid", "oid", "estimated_size"}


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[iceduck.Connection]:
    path = tmp_path_factory.mktemp("view_introspection")
    connection = iceduck.connect(str(path))
    connection.execute("CREATE NAMESPACE sales")
    connection.execute("CREATE TABLE sales.t (id bigint, s string, p decimal(10, 2))")
    connection.execute(
        "CREATE VIEW sales.v (order_id COMMENT 'the order', who) COMMENT 'orders over 6' "
        "AS SELECT id, s FROM sales.t WHERE p > 6"
    )
    connection.execute("CREATE VIEW sales.w AS SELECT s, count(*) AS n FROM sales.t GROUP BY s")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def oracle() -> Iterator[duckdb.DuckDBPyConnection]:
    db = duckdb.connect()
    db.execute("ATTACH ':memory:' AS iceduck")
    db.execute("CREATE SCHEMA iceduck.sales")
    db.execute("CREATE TABLE iceduck.sales.t (id BIGINT, s VARCHAR, p DECIMAL(10, 2))")
    db.execute("USE iceduck.sales")  # the views' names as the Iceberg views' queries name them
    db.execute("CREATE VIEW iceduck.sales.v (order_id, who) AS SELECT id, s FROM sales.t WHERE p > 6")
    db.execute("CREATE VIEW iceduck.sales.w AS SELECT s, count(*) AS n FROM sales.t GROUP BY s")
    db.execute("COMMENT ON VIEW iceduck.sales.v IS 'orders over 6'")
    db.execute("COMMENT ON COLUMN iceduck.sales.v.order_id IS 'the order'")
    db.execute("USE memory.main")
    yield db
    db.close()


def answer(cursor: Any, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    result = cursor.execute(sql)
    names = [str(d[0]) for d in result.description]
    keep = [i for i, name in enumerate(names) if name not in OIDS]
    return names, [tuple(row[i] for i in keep) for row in result.fetchall()]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM information_schema.tables WHERE table_catalog = 'iceduck' ORDER BY ALL",
        "SELECT * FROM information_schema.views WHERE table_catalog = 'iceduck' ORDER BY ALL",
        "SELECT * FROM information_schema.columns WHERE table_catalog = 'iceduck' "
        "ORDER BY table_name, ordinal_position",
        "SELECT * FROM duckdb_views() WHERE database_name = 'iceduck' ORDER BY view_name",
        "SELECT * FROM duckdb_columns() WHERE database_name = 'iceduck' ORDER BY table_name, column_index",
        "SELECT * FROM duckdb_tables() WHERE database_name = 'iceduck'",
        "SELECT * FROM pragma_table_info('iceduck.sales.v')",
        "SELECT * FROM information_schema.views WHERE table_schema = 'sales' AND table_name IN ('w')",
        "SELECT view_name, column_count FROM duckdb_views WHERE view_name = 'v'",
    ],
)
def test_a_catalog_view_is_listed_as_duckdb_lists_its_own(
    con: iceduck.Connection, oracle: duckdb.DuckDBPyConnection, sql: str
) -> None:
    ours = answer(con, sql)
    assert ours == answer(oracle, sql), sql
    assert ours[1]


def test_show_all_tables_lists_the_views(con: iceduck.Connection, oracle: duckdb.DuckDBPyConnection) -> None:
    ours = [r for r in con.execute("SHOW ALL TABLES").fetchall() if r[0] == "iceduck"]
    assert ours == [r for r in oracle.execute("SHOW ALL TABLES").fetchall() if r[0] == "iceduck"]
    assert ("iceduck", "sales", "v", ["order_id", "who"], ["BIGINT", "VARCHAR"], False) in ours


def test_a_names_only_listing_loads_no_views_metadata(tmp_path: Path) -> None:
    with iceduck.connect(str(tmp_path)) as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.t (a int)")
        con.execute("CREATE VIEW ns.v AS SELECT a FROM ns.t")
        views = [p for p in tmp_path.rglob("*.metadata.json") if "/v/" in str(p)]
        assert views
        for file in views:
            file.rename(file.with_suffix(".hidden"))
        names = "SELECT table_name, table_type FROM information_schema.tables ORDER BY ALL"
        assert con.execute(names).fetchall() == [("t", "BASE TABLE"), ("v", "VIEW")]
        assert con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall() == [("v",)]
        with pytest.raises(iceduck.Error):  # the control: the definition needs the metadata
            con.execute("SELECT view_definition FROM information_schema.views").fetchall()
