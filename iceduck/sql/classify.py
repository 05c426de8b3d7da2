"""One statement's text -> what it is, read once: a query, a SHOW, or a write statement.

The session hands every statement it runs to :func:`classify`. The leading keyword
(:func:`iceduck.sql.parse.leading_word`, comments skipped) decides which one reader gets
the text, so each statement is parsed by exactly one parser:

* ``CREATE``, ``DROP``, ``ALTER``, ``INSERT``, ``DELETE``, ``UPDATE``, ``MERGE``...: the
  DDL/DML grammar of :mod:`iceduck.sql.ddl` (views': :mod:`iceduck.sql.ddl_views`), loaded
  on first use, so a session that only reads never loads it, giving a
  :mod:`iceduck.sql.statements` object;
* ``SHOW TABLES|VIEWS|NAMESPACES [IN ns]``: a :class:`Show` (these list the Iceberg catalog,
  not DuckDB's, and sqlglot's DuckDB dialect cannot parse ``SHOW TABLES IN x``);
  ``SHOW CREATE TABLE t`` / ``SHOW TBLPROPERTIES t``: a :class:`~iceduck.sql.show.ShowTable`;
  Spark's ``DESCRIBE EXTENDED t``, ``SHOW COLUMNS FROM t``, ``SHOW PARTITIONS t``: a
  :class:`~iceduck.sql.spark_describe.TableInfo`; any other SHOW is refused, naming those run;
* DuckDB's ``SHOW ALL TABLES`` and ``PRAGMA table_info('t')``: the queries DuckDB runs for
  them, a :class:`~iceduck.sql.parse.Statement` over its catalog views, which the session
  answers with the Iceberg tables too; ``PRAGMA show_tables`` (DuckDB's ``SHOW TABLES``): a
  :class:`~iceduck.sql.introspection.ShowTables` (:mod:`iceduck.sql.introspection`);
* ``USE [NAMESPACE|SCHEMA|DATABASE] [catalog.]ns``: a :class:`Use` (the session's current
  namespace, as in Spark and DuckDB);
* ``ATTACH '<path>' AS p (TYPE paimon)`` / ``DETACH p``: an :class:`~iceduck.sql.attach.Attach`
  or :class:`~iceduck.sql.attach.Detach` (Paimon warehouses beside the Iceberg catalog);
* ``BEGIN``, ``COMMIT``, ``ROLLBACK`` and their spellings: a
  :class:`~iceduck.sql.transaction.TransactionStatement` (the session opens and ends
  transactions before anything else reads the text);
* ``EXPLAIN INSERT|DELETE|UPDATE|MERGE ...``: an
  :class:`~iceduck.sql.statements.ExplainWrite` of the write statement, read as above;
* anything else: sqlglot (:func:`iceduck.sql.parse.parse_statement`), giving a
  :class:`~iceduck.sql.parse.Statement` -- a query, ``EXPLAIN`` of one, or ``DESCRIBE``
  (read by :func:`iceduck.sql.describe.parse_describe`, which knows a described table);
  other kinds are refused by name (``SET is not supported yet``).

The statements on a session's own objects (``CREATE TEMP TABLE``, ``CREATE VIEW``, ``SET``,
``COPY``...) are picked out before this, by :mod:`iceduck.sql.session_statements`; the
refusals here are for a text that reaches :func:`classify` directly.

A query inside a write statement (``INSERT ... SELECT``, the rows a DELETE matches) is
read by :func:`parse_query`, which accepts queries only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot.tokens import TokenType

from iceduck.errors import UserError
from iceduck.sql.attach import Attach, Detach, parse_attach
from iceduck.sql.call import CallStatement, parse_call
from iceduck.sql.introspection import ShowTables, parse_introspection
from iceduck.sql.parse import (
    QUERY_KINDS,
    Statement,
    leading_word,
    parse_statement,
    require_supported,
    tokenize,
)
from iceduck.sql.show import ShowTable, parse_show_table, unsupported_show
from iceduck.sql.spark_describe import TableInfo, parse_table_info
from iceduck.sql.statements import Delete, ExplainWrite, Insert, Merge, Update, WriteStatement
from iceduck.sql.syntax import unknown_statement
from iceduck.sql.transaction import TransactionStatement, parse_transaction

#: statement kinds a session runs through sqlglot: queries, plus DESCRIBE of a table or query
RUNNABLE_KINDS = QUERY_KINDS | {"DESCRIBE"}

#: leading keywords of the write statements :mod:`iceduck.sql.ddl` reads
WRITE_KEYWORDS = frozenset(
    {"CREATE", "REPLACE", "DROP", "ALTER", "INSERT", "DELETE", "UPDATE", "MERGE", "TRUNCATE"}
)


#: ``EXPLAIN`` of a row-level write (comments before it are skipped by ``leading_word``)
_EXPLAINED_WRITE = re.compile(
    r"\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*EXPLAIN\s+(?=(?P<kind>INSERT|DELETE|UPDATE|MERGE)\b)",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class Show:
    """``SHOW TABLES [IN ns]`` (``what`` ``TABLES``), ``SHOW VIEWS [IN ns]`` (``VIEWS``) or
    ``SHOW NAMESPACES|SCHEMAS|DATABASES
    [IN ns]`` (``what`` ``NAMESPACES``); ``namespace`` None lists everything."""

    what: str
    namespace: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Use:
    """``USE ns``: the namespace (maybe led by the catalog name) one-part names mean next."""

    name: tuple[str, ...]


#: what a statement the session runs is
Classified = (
    Statement | Show | ShowTable | Use | CallStatement | WriteStatement | TransactionStatement
    | Attach | Detach | ShowTables | TableInfo | ExplainWrite
)  # fmt: skip


def classify(text: str) -> Classified:
    """The statement ``text`` holds (one statement, no ``;`` separators), read by the one
    parser its leading keyword calls for (see the module docstring).

    Raises UserError for malformed statements and UnsupportedError, naming the statement
    or the feature, for ones iceduck does not run.
    """
    keyword = leading_word(text)
    unknown = unknown_statement(text, keyword)
    if unknown is not None:
        raise unknown
    if keyword == "CALL":
        return parse_call(text)
    attach = parse_attach(text)
    if attach is not None:
        return attach
    transaction = parse_transaction(text)
    if transaction is not None:
        return transaction
    if keyword in WRITE_KEYWORDS:
        from iceduck.sql.ddl import parse_write_statement  # the DDL/DML grammar loads on first use

        return parse_write_statement(text, keyword)
    explained = _EXPLAINED_WRITE.match(text) if keyword == "EXPLAIN" else None
    if explained is not None:
        from iceduck.sql.ddl import parse_write_statement

        inner = parse_write_statement(text[explained.end() :], explained["kind"].upper())
        assert isinstance(inner, Insert | Delete | Update | Merge)  # the grammar of each keyword
        return ExplainWrite(inner)
    if keyword == "WITH":
        from iceduck.sql.ddl import refuse_write_after_with

        refuse_write_after_with(text)
    elif keyword == "USE":
        return parse_use(text)
    if keyword in ("SHOW", "PRAGMA"):  # DuckDB's SHOW ALL TABLES, PRAGMA table_info / show_tables
        introspection = parse_introspection(text)
        if introspection is not None:
            return introspection
    if keyword in ("SHOW", "DESCRIBE", "DESC"):  # Spark's DESCRIBE EXTENDED, SHOW COLUMNS|PARTITIONS
        info = parse_table_info(text)
        if info is not None:
            return info
    if keyword == "SHOW":
        show = parse_show(text)
        if show is None:
            raise unsupported_show(text)
        return show
    if keyword in ("DESCRIBE", "DESC"):
        from iceduck.sql.describe import parse_describe

        statement = parse_describe(text)
    else:
        statement = parse_statement(text)
    require_supported(statement, RUNNABLE_KINDS)
    return statement


def parse_query(text: str) -> Statement:
    """A query that is part of a write statement; anything else is refused."""
    statement = parse_statement(text, of=" of the query")
    require_supported(statement, QUERY_KINDS)
    if statement.explain:
        raise UserError("EXPLAIN cannot be part of a write statement")
    return statement


_SHOW = re.compile(
    r"\s*SHOW\s+(?P<what>TABLES|VIEWS|NAMESPACES|SCHEMAS|DATABASES)(?:\s+(?:IN|FROM)\s+(?P<name>.+?))?\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)


def parse_show(sql: str) -> Show | ShowTable | None:
    """``SHOW TABLES [IN ns]`` -> ``Show("TABLES", ns)``; ``SHOW NAMESPACES [IN ns]`` (also
    ``SCHEMAS``/``DATABASES``) -> ``Show("NAMESPACES", ns)``; ``SHOW CREATE TABLE`` and
    ``SHOW TBLPROPERTIES`` -> a :class:`~iceduck.sql.show.ShowTable`; None for any other
    statement (which sqlglot then reads, and the session refuses by name)."""
    m = _SHOW.fullmatch(sql)
    if m is None:
        return parse_show_table(sql)
    what = m["what"].upper() if m["what"].upper() in ("TABLES", "VIEWS") else "NAMESPACES"
    if m["name"] is None:
        return Show(what)
    return Show(what, dotted_name(m["name"], f"SHOW {what} IN"))


_USE = re.compile(
    r"\s*USE(?:\s+(?:NAMESPACE|SCHEMA|DATABASE)(?=\s+\S))?(?:\s+(?P<name>.+?))?\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)


def parse_use(sql: str) -> Use:
    """``USE [NAMESPACE|SCHEMA|DATABASE] name`` -> ``Use(parts)``, Spark's and DuckDB's
    spellings (``NAMESPACE`` is a keyword only before a name: ``USE namespace`` names one)."""
    m = _USE.fullmatch(sql.strip().rstrip(";"))
    if m is None or m["name"] is None:
        raise UserError("USE takes a namespace: USE ns, or USE catalog.ns")
    return Use(dotted_name(m["name"], "USE"))


def dotted_name(text: str, what: str = "a namespace") -> tuple[str, ...]:
    """``a.b`` (or ``"a b".c``) as its parts; a UserError naming ``what`` otherwise."""
    tokens = tokenize(text.strip())
    names = [t.text for t in tokens if t.token_type is not TokenType.DOT]
    dots = [t for t in tokens if t.token_type is TokenType.DOT]
    well_formed = all(
        (t.token_type is TokenType.DOT) == (i % 2 == 1) and t.token_type is not TokenType.UNKNOWN
        for i, t in enumerate(tokens)
    )
    if not names or len(dots) != len(names) - 1 or not well_formed:
        raise UserError(f"{what} takes a namespace name, got {text.strip()!r}")
    return tuple(names)
