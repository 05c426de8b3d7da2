"""Iceberg views made and changed through SQL (:mod:`iceduck.ops.views`): the metadata
written (representations, schema, properties), ALTER / RENAME / DROP, and the names tables
and views share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.errors import AlreadyExistsError, NotFoundError, UnsupportedError, UserError
from iceduck.spec.view_metadata import ViewMetadata, ViewRepresentation, add_view_version


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    with iceduck.connect(tmp_path / "wh") as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.orders (id bigint, customer string, amount decimal(10, 2))")
        con.execute("INSERT INTO ns.orders VALUES (1, 'ann', 10.50), (2, 'bob', 20.00), (3, 'ann', 5.25)")
        yield con


def view(con: Connection, name: str) -> ViewMetadata:
    return con.session.catalog.load_view(TableIdentifier(("ns",), name)).metadata


def test_a_view_is_made_with_both_representations_and_read_with_its_column_names(con: Connection) -> None:
    con.execute(
        "CREATE VIEW ns.big (order_id COMMENT 'the order', who) COMMENT 'large orders' "
        "TBLPROPERTIES ('owner.team' = 'sales') AS SELECT id, customer FROM ns.orders WHERE amount > 6"
    )
    assert con.execute("SELECT * FROM ns.big ORDER BY order_id").fetchall() == [(1, "ann"), (2, "bob")]
    assert [d[0] for d in con.execute("SELECT * FROM ns.big").description] == ["order_id", "who"]
    md = view(con, "big")
    version = md.current_version
    assert {r.dialect: r.sql for r in version.representations} == {
        "duckdb": "SELECT id, customer FROM ns.orders WHERE amount > 6",
        # cast to the schema's types, so Spark's UpCast to the view's schema always succeeds
        "spark": "SELECT CAST(`_c0` AS BIGINT) AS `id`, CAST(`_c1` AS STRING) AS `customer` "
        "FROM (SELECT id, customer FROM ns.orders WHERE amount > 6) AS `q`(`_c0`, `_c1`)",
    }
    assert version.default_namespace == ("ns",)  # no namespace in use: the view's own
    assert version.default_catalog is None  # as Spark: the catalog holding the view
    assert version.summary["engine-name"] == "iceduck"
    schema = md.schema
    assert [(f.field_id, f.name, f.doc) for f in schema.fields] == [
        (0, "order_id", "the order"),
        (1, "who", None),
    ]  # ids from 0, as Spark numbers a view's fields
    assert md.properties == {
        "owner.team": "sales",
        "comment": "large orders",
        "spark.query-column-names": "id,customer",
        "replace.drop-dialect.allowed": "true",  # so Spark (writing only spark) may replace it
    }


def test_spark_may_replace_a_view_iceduck_made_unless_told_not_to(con: Connection) -> None:
    catalog = con.session.catalog
    con.execute("CREATE VIEW ns.open AS SELECT 1 AS n")
    kept = "TBLPROPERTIES ('replace.drop-dialect.allowed' = 'false')"
    con.execute(f"CREATE VIEW ns.kept {kept} AS SELECT 1 AS n")
    for name in ("open", "kept"):
        base = catalog.load_view(TableIdentifier(("ns",), name))
        spark_only = [ViewRepresentation("SELECT 2 AS n", "spark")]  # what Spark's CREATE OR REPLACE writes
        if name == "kept":
            with pytest.raises(Exception, match="drop"):
                add_view_version(base.metadata, base.metadata.schema, spark_only, ("ns",))
            continue
        catalog.commit_view(base, add_view_version(base.metadata, base.metadata.schema, spark_only, ("ns",)))
    assert con.execute("SELECT n FROM ns.open").fetchone() == (2,)  # the spark text, translated
    assert con.execute("SELECT n FROM ns.kept").fetchone() == (1,)


def test_a_view_cannot_read_the_sessions_own_objects(con: Connection) -> None:
    con.execute("CREATE TEMP TABLE tmp AS SELECT 1 AS a")
    with pytest.raises(UserError, match=r"view ns.v reads tmp, a temporary table of this session"):
        con.execute("CREATE VIEW ns.v AS SELECT * FROM tmp")


def test_alter_rename_and_drop(con: Connection) -> None:
    con.execute("CREATE VIEW ns.v (a COMMENT 'c') AS SELECT id FROM ns.orders")
    con.execute("ALTER VIEW ns.v SET TBLPROPERTIES ('k' = 'v', 'k2' = 'v2')")
    con.execute("ALTER VIEW ns.v UNSET TBLPROPERTIES ('k2')")
    with pytest.raises(UserError, match="has no property nope"):
        con.execute("ALTER VIEW ns.v UNSET TBLPROPERTIES ('nope')")
    con.execute("ALTER VIEW ns.v UNSET TBLPROPERTIES IF EXISTS ('nope')")
    con.execute("ALTER VIEW ns.v AS SELECT customer FROM ns.orders WHERE id = 2")
    md = view(con, "v")
    assert md.properties["k"] == "v" and "k2" not in md.properties
    assert [v.version_id for v in md.versions] == [1, 2]
    assert [f.name for f in md.schema.fields] == ["customer"]
    assert con.execute("SELECT * FROM ns.v").fetchall() == [("bob",)]
    con.execute("ALTER VIEW ns.v RENAME TO w")  # a one-part new name stays in the namespace
    assert con.execute("SELECT * FROM ns.w").fetchall() == [("bob",)]
    con.execute("DROP VIEW ns.w")
    con.execute("DROP VIEW IF EXISTS ns.w")
    with pytest.raises(NotFoundError, match=r"view ns.w not found"):
        con.execute("DROP VIEW ns.w")


def test_tables_and_views_share_one_namespace_of_names(con: Connection) -> None:
    con.execute("CREATE VIEW ns.v AS SELECT 1 AS a")
    with pytest.raises(AlreadyExistsError, match=r"View with same name already exists: ns.v"):
        con.execute("CREATE TABLE ns.v (a int)")
    with pytest.raises(AlreadyExistsError, match="a table of that name exists"):
        con.execute("CREATE VIEW ns.orders AS SELECT 1 AS a")
    with pytest.raises(UserError, match=r"ns.v is a view, not a table"):
        con.execute("INSERT INTO ns.v VALUES (2)")
    with pytest.raises(UserError, match=r"ns.v is a view, not a table"):
        con.execute("DROP TABLE ns.v")
    with pytest.raises(UserError, match=r"ns.orders is a table, not a view: DROP TABLE ns.orders"):
        con.execute("DROP VIEW ns.orders")
    with pytest.raises(AlreadyExistsError, match=r"view ns.v already exists"):
        con.execute("CREATE VIEW ns.v AS SELECT 2 AS a")
    con.execute("CREATE VIEW IF NOT EXISTS ns.v AS SELECT 2 AS a")
    assert con.execute("SELECT a FROM ns.v").fetchone() == (1,)


def test_a_query_spark_would_read_otherwise_is_refused_unless_duckdb_only(con: Connection) -> None:
    query = "SELECT string_agg(customer, ',' ORDER BY customer) AS who FROM ns.orders"
    with pytest.raises(
        UnsupportedError, match=r"view ns.v: DuckDB's string_agg / group_concat reads otherwise"
    ):
        con.execute(f"CREATE VIEW ns.v AS {query}")
    con.execute(f"CREATE VIEW ns.v TBLPROPERTIES ('iceduck.spark-representation' = 'false') AS {query}")
    assert con.execute("SELECT who FROM ns.v").fetchone() == ("ann,ann,bob",)
    assert [r.dialect for r in view(con, "v").current_version.representations] == ["duckdb"]
