"""The iceduck dialect: a warehouse listed, reflected and queried through SQLAlchemy."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

import iceduck


def test_lists_reflects_and_queries_tables(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)
    assert inspector.get_schema_names() == ["sales", "sales.archive"]
    assert inspector.get_table_names("sales") == ["orders"]
    assert inspector.get_table_names("sales.archive") == ["orders_2023"]
    assert inspector.has_table("orders", "sales")
    assert not inspector.has_table("orders_2023", "sales")
    assert not inspector.has_table("orders", "nowhere")

    orders = sa.Table("orders", sa.MetaData(), schema="sales", autoload_with=engine)
    assert [(c.name, type(c.type), c.nullable, c.comment) for c in orders.columns] == [
        ("id", sa.BigInteger, False, "order number"),
        ("customer", sa.String, True, None),
        ("amount", sa.Numeric, True, None),
        ("ts", sa.DateTime, True, None),
        ("tags", sa.ARRAY, True, None),
    ]
    assert (orders.c.amount.type.precision, orders.c.amount.type.scale) == (10, 2)
    assert orders.comment == "one row per order"
    assert inspector.get_pk_constraint("orders", "sales")["constrained_columns"] == []
    assert inspector.get_foreign_keys("orders", "sales") == []
    assert inspector.get_indexes("orders", "sales") == []

    query = sa.select(orders.c.customer, orders.c.amount).where(orders.c.id == 2)
    with engine.connect() as conn:
        assert conn.execute(query).all() == [("bob", pytest.approx(20))]


def test_metadata_reflects_a_nested_namespace(engine: sa.Engine) -> None:
    metadata = sa.MetaData()
    metadata.reflect(engine, schema="sales.archive")
    assert list(metadata.tables) == ["sales.archive.orders_2023"]
    table = metadata.tables["sales.archive.orders_2023"]
    with engine.begin() as conn:
        conn.execute(table.insert(), [{"id": 7}])
        assert conn.execute(sa.select(table.c.id)).scalars().all() == [7]


def test_the_primary_key_is_the_identifier_fields(engine: sa.Engine, warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE TABLE sales.customers (region STRING NOT NULL, id BIGINT NOT NULL, name STRING)")
        con.execute("ALTER TABLE sales.customers SET IDENTIFIER FIELDS region, id")
    customers = sa.Table("customers", sa.MetaData(), schema="sales", autoload_with=engine)
    assert [c.name for c in customers.primary_key] == ["region", "id"]
    assert sa.inspect(engine).get_pk_constraint("orders", "sales")["constrained_columns"] == []


def test_a_missing_table_is_no_such_table(engine: sa.Engine) -> None:
    with pytest.raises(sa.exc.NoSuchTableError):
        sa.Table("missing", sa.MetaData(), schema="sales", autoload_with=engine)


def test_session_objects_are_the_default_schema(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        conn.exec_driver_sql("CREATE TEMP TABLE scratch (x INT)")
        conn.exec_driver_sql("CREATE TEMP VIEW recent AS SELECT id FROM sales.orders")
        inspector = sa.inspect(conn)
        assert inspector.default_schema_name == "main"
        assert inspector.get_table_names() == ["scratch"]
        assert inspector.get_view_names() == ["recent"]
        assert [c["name"] for c in inspector.get_columns("recent")] == ["id"]
        assert inspector.get_view_names("sales") == []


def test_iceberg_views_are_reflected_in_their_namespace(engine: sa.Engine, warehouse: Path) -> None:
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE VIEW sales.named (order_id) AS SELECT id FROM sales.orders")
    inspector = sa.inspect(engine)
    assert inspector.get_view_names("sales") == ["named"]
    assert "named" not in inspector.get_table_names("sales")
    assert [c["name"] for c in inspector.get_columns("named", "sales")] == ["order_id"]
    assert inspector.get_view_definition("named", "sales") == "SELECT id FROM sales.orders"
    view = sa.Table("named", sa.MetaData(), schema="sales", autoload_with=engine)
    with engine.connect() as conn:
        assert sorted(conn.execute(sa.select(view.c.order_id)).scalars().all()) == [1, 2]


def test_the_namespace_argument_is_the_default_schema(warehouse: Path) -> None:
    engine = sa.create_engine(f"iceduck:///{warehouse}?namespace=sales")
    assert sa.inspect(engine).default_schema_name == "sales"
    assert sa.inspect(engine).get_table_names() == ["orders"]
    pd.DataFrame({"x": [1, 2]}).to_sql("unqualified", engine, index=False)
    assert sa.inspect(engine).get_table_names("sales") == ["orders", "unqualified"]
    assert pd.read_sql_table("unqualified", engine)["x"].tolist() == [1, 2]
    engine.dispose()


def test_read_sql_with_an_engine_and_a_connection_warns_nothing(engine: sa.Engine) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = pd.read_sql("SELECT id, customer FROM sales.orders ORDER BY id", engine)
        with engine.connect() as conn:
            counted = pd.read_sql(
                sa.text("SELECT count(*) AS n FROM sales.orders WHERE id > :low"), conn, params={"low": 1}
            )
        table = pd.read_sql_table("orders", engine, schema="sales")
    assert frame.to_dict("list") == {"id": [1, 2], "customer": ["ann", "bob"]}
    assert counted["n"].tolist() == [1]
    assert sorted(table["id"]) == [1, 2]


def test_to_sql_creates_an_iceberg_table_and_appends_in_one_commit(
    engine: sa.Engine, warehouse: Path
) -> None:
    frame = pd.DataFrame(
        {
            "n": range(500),
            "label": [f"row {i}" if i % 7 else None for i in range(500)],
            "ratio": [i / 4 for i in range(500)],
            "at": pd.date_range("2024-01-01", periods=500, freq="h"),
            "even": [i % 2 == 0 for i in range(500)],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame.to_sql("events", engine, schema="sales", index=False)
        with pytest.raises(ValueError, match="already exists"):
            frame.to_sql("events", engine, schema="sales", index=False, if_exists="fail")
        frame.head(3).to_sql("events", engine, schema="sales", index=False, if_exists="append")
    with iceduck.connect(warehouse) as con:
        assert con.execute("SELECT count(*) FROM sales.events").fetchone() == (503,)
        assert con.execute("SELECT count(*) FROM sales.events.snapshots").fetchone() == (2,)
        assert con.execute("DESCRIBE sales.events").fetchall() == [
            ("n", "BIGINT", "YES", None, None, None, None),
            ("label", "VARCHAR", "YES", None, None, None, None),
            ("ratio", "DOUBLE", "YES", None, None, None, None),
            ("at", "TIMESTAMP", "YES", None, None, None, None),
            ("even", "BOOLEAN", "YES", None, None, None, None),
        ]
    frame.head(2).to_sql("events", engine, schema="sales", index=False, if_exists="replace")
    back = pd.read_sql_table("events", engine, schema="sales")
    assert back.equals(frame.head(2))


def test_to_sql_with_multirow_values(engine: sa.Engine) -> None:
    frame = pd.DataFrame({"x": [1, 2, 3], "y": ["a", "b", "c"]})
    frame.to_sql("multi", engine, schema="sales", index=False, method="multi")
    assert pd.read_sql("SELECT * FROM sales.multi ORDER BY x", engine).equals(frame)


def test_float_types_keep_their_width(engine: sa.Engine) -> None:
    metadata = sa.MetaData()
    sa.Table(
        "widths",
        metadata,
        sa.Column("single", sa.REAL),
        sa.Column("double", sa.Float),
        sa.Column("t", sa.Time),
        schema="sales",
    )
    metadata.create_all(engine)
    columns = sa.inspect(engine).get_columns("widths", "sales")
    assert [type(c["type"]) for c in columns] == [sa.Float, sa.Double, sa.Time]
