"""The grammar of Spark's view DDL (:mod:`iceduck.sql.view_statements`), on the DDL cursor.

Spark's syntax (``CreateViewStatement`` / ``AlterViewAs`` of its SQL grammar):

* ``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(col [COMMENT 'c'], ...)]
  [COMMENT 'c'] [TBLPROPERTIES (...)] AS query`` (the clauses in any order, each once);
* ``ALTER VIEW name AS query``, ``ALTER VIEW name SET TBLPROPERTIES (...)``,
  ``ALTER VIEW name UNSET TBLPROPERTIES [IF EXISTS] (...)``, ``ALTER VIEW name RENAME TO n``;
* ``DROP VIEW [IF EXISTS] name``.

The query is kept as the text written after ``AS``: it is the view's ``duckdb``
representation.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.ddl_terms import properties, property_keys
from iceduck.sql.ddl_tokens import Cursor
from iceduck.sql.view_statements import (
    AlterViewAs,
    CreateView,
    DropCatalogView,
    RenameView,
    SetViewProperties,
    UnsetViewProperties,
    ViewColumn,
    ViewStatement,
)


def create_view(c: Cursor, or_replace: bool) -> CreateView:
    """After ``CREATE [OR REPLACE] VIEW``."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    if if_not_exists and or_replace:
        raise UserError("CREATE OR REPLACE VIEW cannot also say IF NOT EXISTS")
    name = c.name("a view name")
    columns = _columns(c) if c.at_type(TokenType.L_PAREN) else ()
    comment: str | None = None
    props: dict[str, str] | None = None
    while not c.accept("AS"):
        if c.done():
            raise c.error(f"AS and a query in CREATE VIEW {'.'.join(name)}")
        if c.accept("COMMENT"):
            if comment is not None:
                raise UserError("COMMENT is given twice")
            comment = c.string("the view comment")
        elif c.accept("TBLPROPERTIES"):
            if props is not None:
                raise UserError("TBLPROPERTIES is given twice")
            props = properties(c)
        elif c.at("PARTITIONED", "ON") or c.at("SCHEMA", "BINDING") or c.at("WITH", "SCHEMA"):
            raise UnsupportedError(f"{c.word()} {c.word(1)} is not supported in CREATE VIEW")
        else:
            raise c.error("COMMENT, TBLPROPERTIES or AS <query>")
    query = c.rest("a query after AS")
    return CreateView(name, query, columns, comment, props or {}, or_replace, if_not_exists)


def _columns(c: Cursor) -> tuple[ViewColumn, ...]:
    """``(name [COMMENT 'c'], ...)``: names only, as Spark's view column list (no types)."""
    c.expect_type(TokenType.L_PAREN, "(")
    columns: list[ViewColumn] = []
    while True:
        name = c.identifier("a column name")
        comment = c.string("the column comment") if c.accept("COMMENT") else None
        columns.append(ViewColumn(name, comment))
        if not c.accept_type(TokenType.COMMA):
            break
    c.expect_type(
        TokenType.R_PAREN, ", or ) in the view's column list (names, each with an optional COMMENT)"
    )
    names = [column.name.lower() for column in columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"duplicate column name in the view's column list: {', '.join(duplicates)}")
    return tuple(columns)


def alter_view(c: Cursor) -> ViewStatement:
    """After ``ALTER VIEW``."""
    name = c.name("a view name")
    if c.accept("AS"):
        return AlterViewAs(name, c.rest("a query after AS"))
    if c.accept("SET", "TBLPROPERTIES"):
        return SetViewProperties(name, properties(c))
    if c.accept("UNSET", "TBLPROPERTIES"):
        if_exists = c.accept("IF", "EXISTS")
        return UnsetViewProperties(name, property_keys(c), if_exists)
    if c.accept("RENAME", "TO"):
        return RenameView(name, c.name("the new view name"))
    raise c.error("AS <query>, SET TBLPROPERTIES, UNSET TBLPROPERTIES or RENAME TO after ALTER VIEW name")


def drop_view(c: Cursor) -> DropCatalogView:
    """After ``DROP VIEW``."""
    if_exists = c.accept("IF", "EXISTS")
    return DropCatalogView(c.name("a view name"), if_exists)
