"""What the catalog holds, asked in the SQL iceduck answers, so the dialect reflects through
any iceduck connection (a folder, SQLite, PostgreSQL, REST, Glue or Hive catalog alike).

Names are cheap: ``SHOW NAMESPACES [IN ns]`` and ``SHOW TABLES IN ns`` list the catalog and
load no table metadata. A table's columns come from ``DESCRIBE ns.t`` -- its current schema,
read from the table metadata, with the field's doc as the comment and ``required`` as NOT
NULL -- and its comment from ``information_schema.tables`` filtered to that one table (the
``comment`` table property; iceduck loads only the table the filter names). The primary key
is the schema's identifier fields, which ``SHOW TBLPROPERTIES`` reports as Iceberg's Spark
tables do (``identifier-fields`` = ``[id,region]``). Iceberg has no foreign keys, indexes or
check constraints; the dialect reports none.

The session's own objects (temporary tables and views, which ``SHOW TABLES`` lists with an
empty namespace) are the default schema ``main``'s, as in DuckDB.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.sql.compiler import IdentifierPreparer

from iceduck.sqlalchemy.types import sqlalchemy_type

#: the schema of the session's own objects, as DuckDB names it
SESSION_SCHEMA = "main"


def quote_name(preparer: IdentifierPreparer, schema: str | None, name: str | None = None) -> str:
    """``ns1.ns2.t`` with each part quoted where needed: a nested namespace is written dotted
    (as ``SHOW NAMESPACES`` shows it), one identifier per level."""
    parts = (schema.split(".") if schema else []) + ([name] if name is not None else [])
    return ".".join(preparer.quote(part) for part in parts)


def namespaces(connection: Connection, preparer: IdentifierPreparer) -> list[str]:
    """Every namespace, nested ones dotted (``db``, ``db.inner``), parents first."""
    found: list[str] = []
    pending: list[str | None] = [None]
    while pending:
        parent = pending.pop(0)
        sql = "SHOW NAMESPACES" if parent is None else f"SHOW NAMESPACES IN {quote_name(preparer, parent)}"
        children = [row[0] for row in connection.exec_driver_sql(sql)]
        found.extend(children)
        pending.extend(children)
    return found


def catalog_tables(connection: Connection, preparer: IdentifierPreparer, namespace: str) -> list[str]:
    """The tables of ``namespace`` itself (not of the namespaces nested in it)."""
    rows = connection.exec_driver_sql(f"SHOW TABLES IN {quote_name(preparer, namespace)}")
    return [name for ns, name in rows if ns == namespace]


def catalog_views(connection: Connection, preparer: IdentifierPreparer, namespace: str) -> list[str]:
    """The Iceberg views of ``namespace`` itself (``SHOW VIEWS`` lists the session's too, with
    an empty namespace)."""
    rows = connection.exec_driver_sql(f"SHOW VIEWS IN {quote_name(preparer, namespace)}")
    return [name for ns, name, _ in rows if ns == namespace]


def view_definition(connection: Connection, preparer: IdentifierPreparer, namespace: str, view: str) -> str:
    """An Iceberg view's query, as ``SHOW CREATE TABLE`` ends with it (after ``AS``)."""
    shown = f"SHOW CREATE TABLE {quote_name(preparer, namespace, view)}"
    statement = connection.exec_driver_sql(shown).scalar()
    return str(statement).split("\nAS\n", 1)[1].rstrip("\n")


def session_objects(connection: Connection) -> tuple[list[str], list[str]]:
    """The session's own temporary tables and views: ``SHOW TABLES`` lists both with an empty
    namespace, ``information_schema.tables`` only the tables (in schema ``main``)."""
    objects = [name for ns, name in connection.exec_driver_sql("SHOW TABLES") if ns == ""]
    tables = {
        row[0]
        for row in connection.exec_driver_sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ?", (SESSION_SCHEMA,)
        )
    }
    return [n for n in objects if n in tables], [n for n in objects if n not in tables]


def columns(
    connection: Connection, preparer: IdentifierPreparer, schema: str | None, table: str
) -> list[dict[str, Any]]:
    """The columns of one table or view as SQLAlchemy's ``ReflectedColumn`` dicts."""
    result = connection.exec_driver_sql(f"DESCRIBE {quote_name(preparer, schema, table)}")
    heading = [d[0] for d in result.cursor.description] if result.cursor and result.cursor.description else []
    reflected = []
    for row in result:
        values = dict(zip(heading, row, strict=True))
        reflected.append(
            {
                "name": values["column_name"],
                "type": sqlalchemy_type(values["column_type"]),
                "nullable": values["null"] != "NO",
                "default": values.get("default"),
                "comment": values.get("comment"),
            }
        )
    return reflected


def table_comment(connection: Connection, schema: str, table: str) -> str | None:
    """The table's ``comment`` property (Spark's ``COMMENT``), None without one."""
    row = connection.exec_driver_sql(
        "SELECT TABLE_COMMENT FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        (schema, table),
    ).first()
    return row[0] if row is not None and row[0] else None


def identifier_fields(
    connection: Connection, preparer: IdentifierPreparer, schema: str, table: str
) -> list[str]:
    """The table's identifier fields when all are top-level columns, else none. Spec,
    "Identifier Field IDs": "the set of primitive fields that identify rows in a table";
    "Identifier fields may be nested in structs" -- and a nested field is no column a
    primary key could name. Iceberg does not enforce uniqueness; neither does a reflected key."""
    rows = connection.exec_driver_sql(f"SHOW TBLPROPERTIES {quote_name(preparer, schema, table)}")
    listed = {str(row[0]): row[1] for row in rows}.get("identifier-fields")
    if not listed or not listed.startswith("[") or not listed.endswith("]"):
        return []
    names = [name.strip() for name in listed[1:-1].split(",") if name.strip()]
    return [] if any("." in name for name in names) else names
