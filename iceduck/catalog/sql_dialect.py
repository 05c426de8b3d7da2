"""What differs between the databases that can hold the JDBC catalog layout.

Iceberg Java's ``JdbcCatalog`` runs the same statements on every database (the constants
of ``JdbcUtil``), so :class:`~iceduck.catalog.jdbc_store.JdbcStore` holds them once; what
differs is the driver around them, and that is all a :class:`SqlDialect` says: how
parameters are written, how a write transaction starts so that a check-then-write
sequence cannot interleave with another writer's (and how the one that creates the
layout starts, when there are no tables to lock yet), how the database lists its tables
and their columns, how the driver's errors map onto iceduck's error kinds, and which of
them mean the connection itself was lost (so a statement may have run without its answer
arriving, and the next call must reconnect).

Two spellings are deliberately not here. Java quotes no identifier (the table and column
names are fixed, lower-case and unreserved), and it never uses an upsert or ``CREATE
TABLE IF NOT EXISTS`` (it looks first, then creates or inserts, and treats a
unique-key violation as "already exists"), so neither does iceduck: a file written by
either reads the same to the other.

A dialect is a value: :data:`iceduck.catalog.sqlite.SQLITE`, and the PostgreSQL one of
:func:`iceduck.catalog.postgres.postgres_dialect` (``%s`` placeholders, ``BEGIN`` plus
``LOCK TABLE``, ``information_schema``, SQLSTATE 23505).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from iceduck.errors import IceduckError


class Cursor(Protocol):
    """The part of a DB-API cursor the store reads: rows, or how many rows changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """A DB-API connection in autocommit mode with the ``execute`` shortcut (``sqlite3``,
    psycopg 3): every statement commits on its own unless a transaction was begun."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any: ...

    def rollback(self) -> None:
        """End the open transaction; nothing when none is open (as sqlite3 and psycopg 3 do)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class SqlDialect:
    """How one database spells what the JDBC catalog layout needs (module docstring)."""

    #: the database's name, as messages show it
    name: str
    #: the parameter marker of the driver's paramstyle (``?`` for qmark, ``%s`` for format)
    placeholder: str
    #: the statements that open a write transaction holding the write lock up front
    begin_write: tuple[str, ...]
    #: the statements that open the transaction creating the layout's tables, which may not
    #: exist yet (so :attr:`begin_write` may be unable to lock them)
    begin_create: tuple[str, ...]
    #: a query whose rows are ``(table_name,)`` for every table the catalog could use
    table_names_sql: str
    #: a query with one parameter (a table name) whose rows are ``(column_name,)``
    column_names_sql: str
    #: the driver's base error class: what :attr:`translate` is asked about
    driver_error: type[Exception]
    #: the iceduck error for a driver error; the second argument names the database
    translate: Callable[[Exception, str], IceduckError]
    #: whether a driver error is a primary-key violation (the row was there already)
    is_unique_violation: Callable[[Exception], bool]
    #: whether a driver error means the connection was lost: the statement may have run
    #: (and committed) on the server without the answer arriving, and the connection is dead
    is_connection_lost: Callable[[Exception], bool]

    def sql(self, statement: str) -> str:
        """``statement``, written with ``?`` markers, in this driver's paramstyle. The
        layout's statements hold no ``?`` or ``%`` of their own, so a plain replacement is
        exact."""
        return statement if self.placeholder == "?" else statement.replace("?", self.placeholder)
