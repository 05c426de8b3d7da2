"""``SHOW CREATE TABLE t`` and ``SHOW TBLPROPERTIES t [(key)]``: one table's definition, as
Spark 3.5 shows an Iceberg table's.

* ``SHOW CREATE TABLE t``: one row, column ``createtab_stmt``, the statement of
  :func:`iceduck.sql.create_statement.create_table_sql` (Spark's ``AS SERDE`` form is
  Hive's and is refused);
* ``SHOW TBLPROPERTIES t``: columns ``key`` and ``value``, a row per property Spark lists
  (:func:`iceduck.sql.create_statement.shown_properties`), sorted by key; with
  ``(key)`` the one row of that key, a missing one valued
  ``Table <name> does not have property: <key>`` as in Spark.

The table name is resolved as a query's (``t`` in the current namespace, a leading
catalog name); a metadata table, branch, tag or snapshot is no table here.
"""

from __future__ import annotations

from dataclasses import dataclass

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import UnsupportedError
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.view_metadata import ViewMetadata
from iceduck.sql.create_statement import create_table_sql, create_view_sql, shown_properties
from iceduck.sql.parse import tokenize

CREATE = "CREATE TABLE"
TBLPROPERTIES = "TBLPROPERTIES"


@dataclass(frozen=True)
class ShowTable:
    """``SHOW CREATE TABLE name`` or ``SHOW TBLPROPERTIES name [(key)]`` (``what`` is
    :data:`CREATE` or :data:`TBLPROPERTIES`)."""

    what: str
    name: tuple[str, ...]
    key: str | None = None


def parse_show_table(text: str) -> ShowTable | None:
    """The statement, or None when ``text`` is another SHOW."""
    from sqlglot.tokens import TokenType

    from iceduck.sql.ddl_terms import property_key  # the DDL grammar loads on first use
    from iceduck.sql.ddl_tokens import Cursor, prepare

    body, backticks = prepare(text)
    c = Cursor.of(body, spark=backticks)
    if not c.accept("SHOW"):
        return None
    if c.accept("CREATE", "TABLE"):
        name = c.name()
        if c.accept("AS", "SERDE"):
            raise UnsupportedError("SHOW CREATE TABLE ... AS SERDE shows a Hive table: use SHOW CREATE TABLE")
        c.end()
        return ShowTable(CREATE, name)
    if c.accept("TBLPROPERTIES"):
        name = c.name()
        key = None
        if c.accept_type(TokenType.L_PAREN):
            key = property_key(c)
            c.expect_type(TokenType.R_PAREN, ") after the property key (SHOW TBLPROPERTIES shows one)")
        c.end()
        return ShowTable(TBLPROPERTIES, name, key)
    return None


def show_table_columns(
    show: ShowTable, catalog: str, identifier: TableIdentifier, metadata: TableMetadata
) -> dict[str, list[str | None]]:
    """The result's columns (name -> values), for the session to return as rows."""
    if show.what == CREATE:
        return {"createtab_stmt": [create_table_sql(catalog, identifier, metadata)]}
    properties = shown_properties(metadata)
    if show.key is None:
        return {"key": list(properties), "value": list(properties.values())}
    missing = f"Table {catalog}.{identifier} does not have property: {show.key}"
    return {"key": [show.key], "value": [properties.get(show.key, missing)]}


def show_view_columns(
    show: ShowTable, catalog: str, identifier: TableIdentifier, metadata: ViewMetadata
) -> dict[str, list[str | None]]:
    """The result's columns of ``SHOW CREATE TABLE`` / ``SHOW TBLPROPERTIES`` of a view: its
    statement (:func:`~iceduck.sql.create_statement.create_view_sql`), or its properties."""
    if show.what == CREATE:
        return {"createtab_stmt": [create_view_sql(catalog, identifier, metadata)]}
    properties = dict(sorted(metadata.properties.items()))
    if show.key is None:
        return {"key": list(properties), "value": list(properties.values())}
    missing = f"View {catalog}.{identifier} does not have property: {show.key}"
    return {"key": [show.key], "value": [properties.get(show.key, missing)]}


#: the SHOW statements iceduck runs, named when it refuses another
SHOW_STATEMENTS = (
    "SHOW TABLES, SHOW VIEWS, SHOW NAMESPACES, SHOW CREATE TABLE, SHOW TBLPROPERTIES, SHOW COLUMNS, "
    "SHOW PARTITIONS and DuckDB's SHOW ALL TABLES"
)


def unsupported_show(text: str) -> UnsupportedError:
    """The refusal of a SHOW iceduck does not run, naming it and those it runs."""
    words = [t.text.upper() for t in tokenize(text.strip().rstrip(";"))[1:3]]
    shown = " ".join(["SHOW", *words[:1]])
    return UnsupportedError(f"{shown} is not supported: iceduck runs {SHOW_STATEMENTS}")
