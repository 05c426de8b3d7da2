"""DDL and DML text -> :mod:`iceduck.sql.statements` (the write path's parser).

:func:`iceduck.sql.classify.classify` sends a statement here when its leading keyword
(:data:`STATEMENTS`) starts a write statement; queries, EXPLAIN, SHOW, DESCRIBE... never
reach this module. A write statement is read by a small recursive-descent grammar over
sqlglot's DuckDB tokens (:mod:`iceduck.sql.ddl_tokens`), because the forms users copy
from Spark pipelines -- ``USING iceberg``, ``PARTITIONED BY (bucket(16, id))``, the
Iceberg SQL extensions (``ADD PARTITION FIELD``, ``WRITE ORDERED BY``, ``CREATE
BRANCH``...) -- are outside any one sqlglot dialect, and the parts DuckDB later runs
(queries, conditions, values) must stay the user's text verbatim.

Statement forms (Spark/Iceberg and DuckDB spellings; ``[...]`` optional):

* ``CREATE (NAMESPACE|SCHEMA|DATABASE) [IF NOT EXISTS] ns [COMMENT 'c'] [LOCATION 'l']
  [WITH (DBPROPERTIES|PROPERTIES) (k = v, ...)]`` -- comment/location become the
  ``comment``/``location`` properties, as Spark's ``SupportsNamespaces`` does;
* ``DROP (NAMESPACE|SCHEMA|DATABASE) [IF EXISTS] ns [RESTRICT|CASCADE]``;
* ``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t [(col type [NOT NULL] [DEFAULT lit]
  [COMMENT 'c'], ...)] [USING iceberg] [PARTITIONED BY (terms)] [ORDERED BY (terms)]
  [COMMENT 'c'] [LOCATION 'l'] [TBLPROPERTIES (k = v, ...)] [AS query]`` and
  ``REPLACE TABLE ...`` (clauses in any order, as Spark allows; ``ORDERED BY`` is
  iceduck's way to give a sort order at creation);
* ``DROP TABLE [IF EXISTS] t [PURGE]``; ``ALTER TABLE ...`` (:mod:`iceduck.sql.ddl_alter`);
* ``INSERT``, ``DELETE``, ``UPDATE``, ``MERGE INTO``, ``TRUNCATE`` (:mod:`iceduck.sql.dml`).

Type names and the meaning of ``timestamp`` are described in :mod:`iceduck.sql.ddl_types`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot.tokens import TokenType

from iceduck.errors import UnsupportedError, UserError, ValidationError
from iceduck.sql import ddl_alter, ddl_views, dml
from iceduck.sql.ddl_terms import column_def, partition_terms, properties, sort_terms
from iceduck.sql.ddl_tokens import Cursor, prepare, split_fused
from iceduck.sql.parse import leading_word, tokenize
from iceduck.sql.statements import (
    ColumnDef,
    CreateNamespace,
    CreateTable,
    DropNamespace,
    DropTable,
    WriteStatement,
)

_WRITE_WORD = re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
_NAMESPACE_WORDS = frozenset({"NAMESPACE", "SCHEMA", "DATABASE"})
FORMAT_VERSIONS = frozenset({"1", "2", "3"})


def parse_write(text: str) -> WriteStatement | None:
    """The write statement ``text`` holds, or None for a query/EXPLAIN/SHOW/DESCRIBE/...

    Raises UserError for malformed statements and UnsupportedError naming the feature
    for valid but unsupported ones (views, other table providers, procedures...).
    """
    keyword = leading_word(text)
    if keyword == "CALL":
        raise UnsupportedError("CALL procedures are not supported")
    if keyword == "WITH":
        refuse_write_after_with(text)
    if keyword not in STATEMENTS:
        return None
    return parse_write_statement(text, keyword)


def parse_write_statement(text: str, keyword: str) -> WriteStatement:
    """The write statement ``text`` holds, whose leading keyword (one of :data:`STATEMENTS`)
    the caller has read already."""
    normalised, backticks = prepare(text)
    tokens = split_fused(tokenize(normalised), normalised)
    c = Cursor(normalised, tokens, spark=backticks or is_spark_flavoured(Cursor(normalised, tokens)))
    c.next()
    statement = STATEMENTS[keyword](c)
    c.end()
    return statement


def refuse_write_after_with(text: str) -> None:
    """Refuse ``WITH c AS (...) INSERT ...`` (a statement starting with ``WITH``): DuckDB's
    CTE-before-DML form has no statement here. A query mentioning the words passes."""
    if _WRITE_WORD.search(text):
        _refuse_leading_with(text)


def _refuse_leading_with(text: str) -> None:
    """``WITH c AS (...) INSERT ...``: DuckDB's CTE-before-DML form has no statement here."""
    normalised, _ = prepare(text)
    c = Cursor.of(normalised)
    depth = 0
    for k in range(len(c.tokens)):
        token_type = c.tokens[k].token_type
        depth += token_type is TokenType.L_PAREN
        depth -= token_type is TokenType.R_PAREN
        word = c.word(k)
        after_cte = k > 0 and c.tokens[k - 1].token_type is TokenType.R_PAREN
        if depth == 0 and after_cte and word in ("INSERT", "UPDATE", "DELETE", "MERGE"):
            raise UnsupportedError(
                f"WITH before {word} is not supported: put the WITH inside the query "
                "(INSERT INTO t WITH c AS (...) SELECT ...) or use a subquery"
            )


def is_spark_flavoured(c: Cursor) -> bool:
    """Whether the statement uses Spark-only syntax (see :mod:`iceduck.sql.ddl_types`)."""
    for k in range(len(c.tokens)):
        word = c.word(k)
        if word in ("USING", "TBLPROPERTIES") or (word == "PARTITIONED" and c.word(k + 1) == "BY"):
            return True
        if word in ("STRUCT", "ARRAY", "MAP", "LIST") and c.at_type(TokenType.LT, k + 1):
            return True
        if word == "ADD" and c.word(k + 1) == "COLUMNS":
            return True
    return False


# -- CREATE / DROP ------------------------------------------------------------------------


def _create(c: Cursor) -> WriteStatement:
    or_replace = c.accept("OR", "REPLACE")
    if c.word() in ("TEMP", "TEMPORARY"):
        raise UnsupportedError("temporary tables are not supported: iceduck creates Iceberg tables")
    if c.at("EXTERNAL"):
        raise UnsupportedError("CREATE EXTERNAL TABLE is not supported: iceduck creates Iceberg tables")
    if c.accept("VIEW"):
        return ddl_views.create_view(c, or_replace)
    if c.at("MATERIALIZED", "VIEW"):
        raise UnsupportedError("materialized views are not supported: CREATE VIEW makes an Iceberg view")
    if c.word() in _NAMESPACE_WORDS:
        if or_replace:
            raise UserError(f"CREATE OR REPLACE {c.word()} is not valid")
        c.next()
        return _create_namespace(c)
    if c.accept("TABLE"):
        return _create_table(c, or_replace=or_replace, replace=False)
    if not c.word():
        raise c.error("TABLE, NAMESPACE or SCHEMA after CREATE")
    raise UnsupportedError(f"CREATE {c.word()} is not supported: only namespaces, tables and views")


def _replace(c: Cursor) -> WriteStatement:
    c.expect("TABLE")
    return _create_table(c, or_replace=False, replace=True)


def _create_namespace(c: Cursor) -> CreateNamespace:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    namespace = c.name("a namespace name")
    props: dict[str, str] = {}
    while not c.done():
        if c.accept("COMMENT"):
            props["comment"] = c.string("the comment")
        elif c.accept("LOCATION"):
            props["location"] = c.string("the location")
        elif c.accept("WITH", "DBPROPERTIES") or c.accept("WITH", "PROPERTIES"):
            props.update(properties(c))
        else:
            raise c.error("COMMENT, LOCATION or WITH DBPROPERTIES")
    return CreateNamespace(namespace, if_not_exists, props)


def _create_table(c: Cursor, *, or_replace: bool, replace: bool) -> CreateTable:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    if if_not_exists and (or_replace or replace):
        raise UserError("IF NOT EXISTS cannot be combined with REPLACE")
    name = c.name()
    columns = _columns(c) if c.at_type(TokenType.L_PAREN) else ()
    clauses: dict[str, object] = {}
    as_query: str | None = None
    while not c.done():
        if c.accept("AS"):
            as_query = c.rest("a query after AS")
            break
        key, value = _table_clause(c)
        if key in clauses:
            raise UserError(f"{key} is given twice")
        clauses[key] = value
    if as_query is not None and columns:
        raise UserError("CREATE TABLE ... AS <query> takes its columns from the query: do not list them")
    if as_query is None and not columns:
        raise UserError(f"CREATE TABLE {'.'.join(name)} needs a column list or AS <query>")
    props = clauses.get("TBLPROPERTIES", {})
    assert isinstance(props, dict)
    version = props.get("format-version")
    if version is not None and version not in FORMAT_VERSIONS:
        raise ValidationError(f"unsupported format-version {version!r}: use 1, 2 or 3")
    return CreateTable(
        name=name,
        columns=columns,
        partition_by=clauses.get("PARTITIONED BY", ()),  # type: ignore[arg-type]
        sort_by=clauses.get("ORDERED BY", ()),  # type: ignore[arg-type]
        properties=props,
        comment=clauses.get("COMMENT"),  # type: ignore[arg-type]
        location=clauses.get("LOCATION"),  # type: ignore[arg-type]
        if_not_exists=if_not_exists,
        or_replace=or_replace,
        replace=replace,
        as_query=as_query,
    )


def _table_clause(c: Cursor) -> tuple[str, object]:
    if c.accept("USING"):
        provider = c.identifier("a table provider")
        if provider.lower() != "iceberg":
            raise UnsupportedError(f"USING {provider} is not supported: iceduck creates Iceberg tables")
        return "USING", provider
    if c.accept("PARTITIONED", "BY"):
        return "PARTITIONED BY", partition_terms(c)
    if c.accept("ORDERED", "BY"):
        return "ORDERED BY", sort_terms(c)
    if c.accept("COMMENT"):
        return "COMMENT", c.string("the table comment")
    if c.accept("LOCATION"):
        return "LOCATION", c.string("the table location")
    if c.accept("TBLPROPERTIES"):
        return "TBLPROPERTIES", properties(c)
    for words in (("CLUSTERED", "BY"), ("STORED", "AS"), ("ROW", "FORMAT"), ("OPTIONS",), ("SORTED", "BY")):
        if c.at(*words):
            raise UnsupportedError(f"{' '.join(words)} is not supported in CREATE TABLE of an Iceberg table")
    raise c.error("USING, PARTITIONED BY, COMMENT, LOCATION, TBLPROPERTIES or AS <query>")


def _columns(c: Cursor) -> tuple[ColumnDef, ...]:
    c.expect_type(TokenType.L_PAREN, "(")
    columns: list[ColumnDef] = []
    while True:
        if c.word() in ("PRIMARY", "UNIQUE", "CONSTRAINT", "CHECK", "FOREIGN"):
            raise UnsupportedError(f"table constraint {c.word()} is not supported")
        columns.append(column_def(c, c.identifier("a column name")))
        if not c.accept_type(TokenType.COMMA):
            break
    c.expect_type(TokenType.R_PAREN, ", or ) in the column list")
    names = [col.name.lower() for col in columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"duplicate column name: {', '.join(duplicates)}")
    return tuple(columns)


def _drop(c: Cursor) -> WriteStatement:
    if c.accept("TABLE"):
        if_exists = c.accept("IF", "EXISTS")
        name = c.name()
        purge = c.accept("PURGE")
        return DropTable(name, if_exists, purge)
    if c.word() in _NAMESPACE_WORDS:
        c.next()
        if_exists = c.accept("IF", "EXISTS")
        namespace = c.name("a namespace name")
        cascade = c.accept("CASCADE")
        if not cascade:
            c.accept("RESTRICT")
        return DropNamespace(namespace, if_exists, cascade)
    if c.accept("VIEW"):
        return ddl_views.drop_view(c)
    if c.at("MATERIALIZED", "VIEW"):
        raise UnsupportedError("materialized views are not supported")
    if not c.word():
        raise c.error("TABLE, NAMESPACE or SCHEMA after DROP")
    raise UnsupportedError(f"DROP {c.word()} is not supported: only namespaces, tables and views")


def _alter(c: Cursor) -> WriteStatement:
    if c.accept("TABLE"):
        return ddl_alter.alter_table(c)
    if c.accept("VIEW"):
        return ddl_views.alter_view(c)
    if not c.word():
        raise c.error("TABLE or VIEW after ALTER")
    raise UnsupportedError(f"ALTER {c.word()} is not supported: only ALTER TABLE and ALTER VIEW")


#: leading keyword of a write statement -> its parser
STATEMENTS: dict[str, Callable[[Cursor], WriteStatement]] = {
    "CREATE": _create,
    "REPLACE": _replace,
    "DROP": _drop,
    "ALTER": _alter,
    "INSERT": dml.insert,
    "DELETE": dml.delete,
    "UPDATE": dml.update,
    "MERGE": dml.merge,
    "TRUNCATE": dml.truncate,
}
