"""Superset's table list on an iceduck database, by the SQLAlchemy Inspector calls Superset 6.1.0
makes (Superset itself, with its Flask app and a hundred dependencies, is not installed here).

Where each call is made, in apache_superset-6.1.0's wheel:

* schemas: ``superset/models/core.py:991-999`` ``Database.get_all_schema_names`` ->
  ``db_engine_specs/base.py:1697-1704`` ``inspector.get_schema_names()``
* tables: ``models/core.py:872-901`` ``get_all_table_names_in_schema`` -> ``base.py:1707-1730``
  ``inspector.get_table_names(schema)``; views: ``models/core.py:907-934`` -> ``base.py:1735-1758``
  ``inspector.get_view_names(schema)``
* the inspector: ``models/core.py:978-984`` ``sqla.inspect(engine)``; the default schema
  ``base.py:911-916`` ``inspector.default_schema_name``
* a table's metadata (SQL Lab's table preview, dataset creation): ``base.py:1837``
  ``inspector.get_columns(table, schema)``, ``base.py:1806`` ``get_table_comment``,
  ``base.py:1790`` ``get_indexes``, ``models/core.py:1118`` ``get_pk_constraint``,
  ``models/core.py:1133`` ``get_foreign_keys``, ``models/core.py:1188-1190`` ``has_table``
"""

from __future__ import annotations

import sqlalchemy as sa


def test_superset_lists_schemas_tables_and_views(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)  # models/core.py:984
    assert inspector.default_schema_name == "main"
    schemas = set(inspector.get_schema_names())
    assert schemas == {"sales", "sales.archive"}
    listed = {
        (table, schema, None) for schema in sorted(schemas) for table in inspector.get_table_names(schema)
    }
    assert listed == {("orders", "sales", None), ("orders_2023", "sales.archive", None)}
    assert {view for schema in schemas for view in inspector.get_view_names(schema)} == set()


def test_superset_reads_a_tables_metadata(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)
    assert inspector.has_table("orders", "sales")
    assert inspector.has_table("orders".lower(), "sales")
    columns = inspector.get_columns("orders", "sales")
    assert [(c["name"], str(c["type"].compile(engine.dialect))) for c in columns][:4] == [
        ("id", "BIGINT"),
        ("customer", "VARCHAR"),
        ("amount", "NUMERIC(10, 2)"),
        ("ts", "TIMESTAMP WITH TIME ZONE"),  # Spark's TIMESTAMP is Iceberg's timestamptz
    ]
    assert inspector.get_table_comment("orders", "sales") == {"text": "one row per order"}
    assert inspector.get_indexes("orders", "sales") == []
    assert inspector.get_pk_constraint("orders", "sales") == {"constrained_columns": [], "name": None}
    assert inspector.get_foreign_keys("orders", "sales") == []


def test_superset_previews_a_table(engine: sa.Engine) -> None:
    """SQL Lab's preview: ``SELECT * FROM schema.table LIMIT n`` as Superset's query builder
    writes it, the schema quoted by the dialect's preparer."""
    table = sa.Table("orders", sa.MetaData(), schema="sales", autoload_with=engine)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(table).order_by(table.c.id).limit(1)).all()
    assert [row[:2] for row in rows] == [(1, "ann")]
