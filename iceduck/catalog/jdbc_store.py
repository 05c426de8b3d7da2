"""The rows of one catalog in the table layout of Iceberg Java's ``JdbcCatalog``.

Iceberg Java's ``JdbcCatalog`` (schema version V1) and PyIceberg's ``SqlCatalog`` keep
every catalog in two tables, so Spark, PyIceberg and iceduck can share one database,
provided they use the same catalog name (stored in every row)::

    iceberg_tables(catalog_name, table_namespace, table_name,
                   metadata_location, previous_metadata_location, iceberg_type)
        PRIMARY KEY (catalog_name, table_namespace, table_name)
    iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)
        PRIMARY KEY (catalog_name, namespace, property_key)

Namespaces are dotted strings (:mod:`iceduck.catalog.names`). A namespace exists when a
table row or a property row names it or a namespace below it (Java's
``JdbcUtil.namespaceExists``); an empty namespace is recorded by the property
``exists`` = ``true``. Rows whose ``iceberg_type`` is ``'VIEW'`` are views; ``'TABLE'``
and NULL (rows written before V1 added the column) are tables. Only rows with this
catalog's own ``catalog_name`` are visible.

A :class:`JdbcStore` owns the connection to such a database, the lock that serialises
the threads using it, the statements (Java's, byte for byte, so a database changed by
iceduck reads the same to Spark and PyIceberg) and the compare-and-swap of a table's
metadata location; a :class:`~iceduck.catalog.sql_dialect.SqlDialect` supplies what differs
between databases. Meaning -- metadata files, what may be created where, what an
interrupted swap did -- is :class:`~iceduck.catalog.jdbc_catalog.JdbcCatalog`'s.

Creating the tables. A writable store creates what the database lacks with the very
statements Java runs (``JdbcUtil.V0_CREATE_CATALOG_SQL``, then ``V1_UPDATE_CATALOG_SQL``
adding ``iceberg_type``, and ``CREATE_NAMESPACE_PROPERTIES_TABLE_SQL``), so the schema
reads exactly as in a database Spark created; it does so inside one write transaction so
that two processes opening a new database at once cannot both create it. An existing
``iceberg_tables`` that predates ``iceberg_type`` (V0) is read as such and not migrated:
that is its owner's choice (Java and PyIceberg migrate only when configured to). A
read-only store never creates or changes anything.

Concurrency. Other engines write to the same database, so no transaction is held open
between calls: the connection is in autocommit mode and every query's rows are fetched at
once. Check-then-write sequences run inside :meth:`JdbcStore.transaction`, which takes
the write lock up front; a commit is one compare-and-swap statement
(:meth:`JdbcStore.swap`).

A lost connection. A database server may drop the connection (a restart, an idle
timeout, a network failure). The store then drops the connection and opens a new one,
so a long-lived catalog outlives a server restart. A query outside a transaction, and the
``BEGIN`` of one, are run again at once on the new connection (nothing was changed); any
other statement raises, and whether it ran is unknown (:meth:`JdbcStore.may_have_run`):
an ``UPDATE`` or ``COMMIT`` may have committed on the server with the answer lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, NamedTuple

from iceduck.catalog.base import Namespace, TableIdentifier
from iceduck.catalog.names import namespace_display, namespace_from_string, namespace_to_string
from iceduck.catalog.sql_dialect import Connection, SqlDialect
from iceduck.errors import AlreadyExistsError, IceduckError

TABLES = "iceberg_tables"
NAMESPACE_PROPERTIES = "iceberg_namespace_properties"
RECORD_TYPE = "iceberg_type"
TABLE_RECORD_TYPE = "TABLE"
VIEW_RECORD_TYPE = "VIEW"
#: the property that records an empty namespace (Java's ``NAMESPACE_EXISTS_PROPERTY``)
NAMESPACE_EXISTS_PROPERTY = "exists"

#: Java's ``JdbcUtil.V0_CREATE_CATALOG_SQL``, byte for byte
CREATE_TABLES_SQL = (
    f"CREATE TABLE {TABLES}("
    "catalog_name VARCHAR(255) NOT NULL,"
    "table_namespace VARCHAR(255) NOT NULL,"
    "table_name VARCHAR(255) NOT NULL,"
    "metadata_location VARCHAR(1000),"
    "previous_metadata_location VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, table_namespace, table_name))"
)
#: Java's ``JdbcUtil.V1_UPDATE_CATALOG_SQL``: V1 adds the record type by ALTER TABLE, also
#: on a new database, which is why SQLite shows ``, iceberg_type VARCHAR(5)`` spliced in
ADD_RECORD_TYPE_SQL = f"ALTER TABLE {TABLES} ADD COLUMN {RECORD_TYPE} VARCHAR(5)"
#: Java's ``JdbcUtil.CREATE_NAMESPACE_PROPERTIES_TABLE_SQL``, byte for byte
CREATE_NAMESPACE_PROPERTIES_SQL = (
    f"CREATE TABLE {NAMESPACE_PROPERTIES}("
    "catalog_name VARCHAR(255) NOT NULL,"
    "namespace VARCHAR(255) NOT NULL,"
    "property_key VARCHAR(255),"
    "property_value VARCHAR(1000),"
    "PRIMARY KEY (catalog_name, namespace, property_key))"
)
#: the key columns of a table's row, as every statement on one row names them
_TABLE_KEY = "catalog_name = ? AND table_namespace = ? AND table_name = ?"


@dataclass(frozen=True)
class Layout:
    """Which of the shared tables the database has (a read-only one may have none)."""

    tables: bool
    namespace_properties: bool
    record_type: bool  # iceberg_tables has iceberg_type (schema version V1)


class TableRow(NamedTuple):
    """What the ``iceberg_tables`` row of a name says."""

    metadata_location: str | None
    record_type: str | None

    @property
    def is_table(self) -> bool:
        """Java's V1 test: ``iceberg_type = 'TABLE' OR iceberg_type IS NULL``."""
        return self.record_type is None or self.record_type == TABLE_RECORD_TYPE

    @property
    def is_view(self) -> bool:
        return self.record_type == VIEW_RECORD_TYPE


class JdbcStore:
    """The rows of catalog ``catalog_name`` in the database ``connect`` opens.

    ``where`` names the database in error messages (a file path, a URI without its
    password). The store owns its connection: opened here (and again after a lost one),
    closed by :meth:`close`, or at once when the tables cannot be read or created.
    """

    def __init__(
        self,
        connect: Callable[[], Connection],
        dialect: SqlDialect,
        catalog_name: str,
        where: str,
        *,
        read_only: bool,
    ) -> None:
        self.dialect = dialect
        self.catalog_name = catalog_name
        self.where = where
        self._connect = connect
        self._conn: Connection | None = connect()
        self._lock = threading.RLock()
        self._in_transaction = False
        try:
            self._layout = self._inspect() if read_only else self._create_missing_tables()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def may_have_run(self, error: BaseException) -> bool:
        """Whether ``error``, raised by a statement of this store, leaves open that the
        statement ran on the server: the connection was lost while it was under way."""
        cause = error.__cause__ if isinstance(error, IceduckError) else error
        return isinstance(cause, self.dialect.driver_error) and self.dialect.is_connection_lost(cause)

    @contextmanager
    def transaction(self, *, creating: bool = False) -> Iterator[None]:
        """Begin .. ``COMMIT``, taking the write lock up front, so a check-then-write
        sequence cannot interleave with another writer's; rolled back on any exception.
        ``creating``: the transaction that creates the layout (``begin_create``)."""
        first, *rest = self.dialect.begin_create if creating else self.dialect.begin_write
        with self._lock:
            self._execute(first, retry=True)  # nothing has run yet: a dead connection is replaced
            self._in_transaction = True
            try:
                for statement in rest:
                    self._execute(statement)
                yield
                self._execute("COMMIT")
            except BaseException:
                if self._conn is not None:  # a lost connection took its transaction along
                    self._conn.rollback()
                raise
            finally:
                self._in_transaction = False

    # -- namespaces ----------------------------------------------------------------------------

    def namespace_exists(self, namespace: Namespace) -> bool:
        """Whether a row names ``namespace`` or a namespace below it; the root always exists."""
        if not namespace:
            return True
        name = namespace_to_string(namespace)
        prefix = name + "."
        for table, column, present in (
            (TABLES, "table_namespace", self._layout.tables),
            (NAMESPACE_PROPERTIES, "namespace", self._layout.namespace_properties),
        ):
            # substr, not LIKE: SQLite's LIKE ignores ASCII case, and names are case-sensitive
            sql = (
                f"SELECT 1 FROM {table} WHERE catalog_name = ? AND "
                f"({column} = ? OR substr({column}, 1, ?) = ?) LIMIT 1"
            )
            if present and self._query(sql, (self.catalog_name, name, len(prefix), prefix)):
                return True
        return False

    def namespaces(self) -> set[Namespace]:
        """Every namespace named by a table, view or property row of this catalog."""
        selects = []
        if self._layout.tables:
            selects.append(f"SELECT table_namespace FROM {TABLES} WHERE catalog_name = ?")
        if self._layout.namespace_properties:
            selects.append(f"SELECT namespace FROM {NAMESPACE_PROPERTIES} WHERE catalog_name = ?")
        if not selects:
            return set()
        rows = self._query(" UNION ".join(selects), (self.catalog_name,) * len(selects))
        return {namespace_from_string(ns) for (ns,) in rows if ns is not None}

    def namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """The property rows of ``namespace`` as stored (``exists`` included)."""
        if not self._layout.namespace_properties:
            return {}
        rows = self._query(
            f"SELECT property_key, property_value FROM {NAMESPACE_PROPERTIES} "
            "WHERE catalog_name = ? AND namespace = ?",
            (self.catalog_name, namespace_to_string(namespace)),
        )
        return {key: value for key, value in rows if key is not None and value is not None}

    def insert_namespace(self, namespace: Namespace, properties: Sequence[tuple[str, str]]) -> None:
        """One property row per ``(key, value)``; AlreadyExistsError when a key is taken."""
        name = namespace_to_string(namespace)
        for key, value in properties:
            self._execute(
                f"INSERT INTO {NAMESPACE_PROPERTIES} (catalog_name, namespace, property_key, property_value) "
                "VALUES (?, ?, ?, ?)",
                (self.catalog_name, name, key, value),
                duplicate=f"namespace '{namespace_display(namespace)}'",
            )

    def delete_namespace_properties(self, namespace: Namespace, keys: Sequence[str]) -> None:
        """Delete the property rows of ``keys`` (Java's ``JdbcCatalog.deleteProperties``)."""
        name = namespace_to_string(namespace)
        for key in keys:
            self._execute(
                f"DELETE FROM {NAMESPACE_PROPERTIES} "
                "WHERE catalog_name = ? AND namespace = ? AND property_key = ?",
                (self.catalog_name, name, key),
            )

    def delete_namespace(self, namespace: Namespace) -> None:
        """Delete the property rows of ``namespace`` (Java's ``dropNamespace``)."""
        self._execute(
            f"DELETE FROM {NAMESPACE_PROPERTIES} WHERE catalog_name = ? AND namespace = ?",
            (self.catalog_name, namespace_to_string(namespace)),
        )

    def count_tables(self, namespace: Namespace) -> int:
        """How many tables and views ``namespace`` holds directly."""
        (count,) = self._query(
            f"SELECT count(*) FROM {TABLES} WHERE catalog_name = ? AND table_namespace = ?",
            (self.catalog_name, namespace_to_string(namespace)),
        )[0]
        return int(count)

    # -- tables --------------------------------------------------------------------------------

    def table_names(self, namespace: Namespace) -> list[str]:
        """The names of the tables (not views) directly in ``namespace``, sorted."""
        if not self._layout.tables:
            return []
        rows = self._query(
            f"SELECT table_name FROM {TABLES} WHERE catalog_name = ? AND table_namespace = ?"
            f"{self._tables_only()} ORDER BY table_name",
            (self.catalog_name, namespace_to_string(namespace)),
        )
        return [name for (name,) in rows]

    def table_row(self, identifier: TableIdentifier) -> TableRow | None:
        """The row named ``identifier`` (a table or a view), or None."""
        if not self._layout.tables:
            return None
        record_type = RECORD_TYPE if self._layout.record_type else "NULL"
        rows = self._query(
            f"SELECT metadata_location, {record_type} FROM {TABLES} WHERE {_TABLE_KEY}",
            self._key(identifier),
        )
        return TableRow(rows[0][0], rows[0][1]) if rows else None

    def insert_table(self, identifier: TableIdentifier, metadata_location: str) -> None:
        """The row of a new table (Java's ``doCommit`` with no base): no previous location,
        ``iceberg_type`` = ``TABLE`` where the column exists; AlreadyExistsError when taken."""
        columns = "catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location"
        values: tuple[object, ...] = (*self._key(identifier), metadata_location, None)
        if self._layout.record_type:
            columns += f", {RECORD_TYPE}"
            values += (TABLE_RECORD_TYPE,)
        self._execute(
            f"INSERT INTO {TABLES} ({columns}) VALUES ({', '.join('?' * len(values))})",
            values,
            duplicate=f"table '{identifier}'",
        )

    def swap(self, identifier: TableIdentifier, base_location: str, new_location: str) -> bool:
        """The compare-and-swap of a commit: point the table's row at ``new_location`` if it
        still points at ``base_location``; whether it did (one row changed) or not (someone
        else committed first, or the table is gone)."""
        changed = self._execute(
            f"UPDATE {TABLES} SET metadata_location = ?, previous_metadata_location = ? "
            f"WHERE {_TABLE_KEY} AND metadata_location = ?{self._tables_only()}",
            (new_location, base_location, *self._key(identifier), base_location),
        )
        return changed == 1

    def delete_table(self, identifier: TableIdentifier) -> bool:
        """Delete the table's row (never a view's); whether there was one."""
        deleted = self._execute(
            f"DELETE FROM {TABLES} WHERE {_TABLE_KEY}{self._tables_only()}", self._key(identifier)
        )
        return deleted > 0

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        """Move the table's row to ``target``'s namespace and name (Java's ``renameTable``)."""
        self._execute(
            f"UPDATE {TABLES} SET table_namespace = ?, table_name = ? "
            f"WHERE {_TABLE_KEY}{self._tables_only()}",
            (namespace_to_string(target.namespace), target.name, *self._key(source)),
            duplicate=f"table '{target}'",
        )

    # -- views (schema version V1 only) ------------------------------------------------------

    @property
    def holds_views(self) -> bool:
        """Whether ``iceberg_tables`` has ``iceberg_type`` (V1), the only way to mark a view."""
        return self._layout.record_type

    def view_names(self, namespace: Namespace) -> list[str]:
        """The names of the views directly in ``namespace``, sorted (none in a V0 database)."""
        if not (self._layout.tables and self._layout.record_type):
            return []
        rows = self._query(
            f"SELECT table_name FROM {TABLES} WHERE catalog_name = ? AND table_namespace = ? "
            f"AND {RECORD_TYPE} = '{VIEW_RECORD_TYPE}' ORDER BY table_name",
            (self.catalog_name, namespace_to_string(namespace)),
        )
        return [name for (name,) in rows]

    def insert_view(self, identifier: TableIdentifier, metadata_location: str) -> None:
        """The row of a new view (Java's ``JdbcUtil.doCommitCreateView``): ``iceberg_type`` =
        ``VIEW``, no previous location; AlreadyExistsError when the name is taken."""
        self._execute(
            f"INSERT INTO {TABLES} (catalog_name, table_namespace, table_name, metadata_location, "
            f"previous_metadata_location, {RECORD_TYPE}) VALUES (?, ?, ?, ?, ?, ?)",
            (*self._key(identifier), metadata_location, None, VIEW_RECORD_TYPE),
            duplicate=f"view '{identifier}'",
        )

    def swap_view(self, identifier: TableIdentifier, base_location: str, new_location: str) -> bool:
        """:meth:`swap` for a view's row (Java's ``JdbcUtil.updateView``: the same ``UPDATE``
        with ``iceberg_type = 'VIEW'``)."""
        changed = self._execute(
            f"UPDATE {TABLES} SET metadata_location = ?, previous_metadata_location = ? "
            f"WHERE {_TABLE_KEY} AND metadata_location = ? AND {RECORD_TYPE} = '{VIEW_RECORD_TYPE}'",
            (new_location, base_location, *self._key(identifier), base_location),
        )
        return changed == 1

    def delete_view(self, identifier: TableIdentifier) -> bool:
        """Delete the view's row (never a table's); whether there was one."""
        deleted = self._execute(
            f"DELETE FROM {TABLES} WHERE {_TABLE_KEY} AND {RECORD_TYPE} = '{VIEW_RECORD_TYPE}'",
            self._key(identifier),
        )
        return deleted > 0

    def rename_view(self, source: TableIdentifier, target: TableIdentifier) -> int:
        """Move the view's row to ``target`` (Java's ``RENAME_VIEW_SQL``); rows changed."""
        return self._execute(
            f"UPDATE {TABLES} SET table_namespace = ?, table_name = ? "
            f"WHERE {_TABLE_KEY} AND {RECORD_TYPE} = '{VIEW_RECORD_TYPE}'",
            (namespace_to_string(target.namespace), target.name, *self._key(source)),
            duplicate=f"view '{target}'",
        )

    def _key(self, identifier: TableIdentifier) -> tuple[str, str, str]:
        return (self.catalog_name, namespace_to_string(identifier.namespace), identifier.name)

    def _tables_only(self) -> str:
        """The WHERE clause tail that keeps tables and drops views (Java's V1 queries)."""
        if not self._layout.record_type:
            return ""
        return f" AND ({RECORD_TYPE} = '{TABLE_RECORD_TYPE}' OR {RECORD_TYPE} IS NULL)"

    # -- statements ----------------------------------------------------------------------------

    def _connection(self) -> Connection:
        """The open connection; a new one when the last was lost (never inside a
        transaction: a lost connection ended it, and the caller has already raised)."""
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def _lost(self, error: Exception) -> bool:
        """Forget a connection the server dropped, so the next call opens a new one; whether
        ``error`` was that."""
        if self._conn is None or not self.dialect.is_connection_lost(error):
            return False
        conn, self._conn = self._conn, None
        with suppress(Exception):  # closing a dead connection may fail: it is dead anyway
            conn.close()
        return True

    def _run(self, sql: str, params: Sequence[Any], retry: bool) -> Any:
        """Run one statement; the driver's cursor. With ``retry``, once more on a new
        connection when the connection turns out to be lost (only for statements that
        change nothing, outside a transaction)."""
        with self._lock:
            try:
                return self._connection().execute(self.dialect.sql(sql), params)
            except self.dialect.driver_error as e:
                if not (self._lost(e) and retry):
                    raise
            return self._connection().execute(self.dialect.sql(sql), params)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and fetch all its rows (so no lock outlives the call)."""
        with self._lock:
            try:
                return list(self._run(sql, params, retry=not self._in_transaction).fetchall())
            except self.dialect.driver_error as e:
                self._lost(e)
                raise self.dialect.translate(e, self.where) from e

    def _execute(
        self, sql: str, params: Sequence[Any] = (), duplicate: str | None = None, *, retry: bool = False
    ) -> int:
        """Run one changing statement; the number of rows it changed. A primary-key
        violation is ``duplicate`` (what the row names) already existing, when given."""
        with self._lock:
            try:
                return int(self._run(sql, params, retry).rowcount)
            except self.dialect.driver_error as e:
                if duplicate is not None and self.dialect.is_unique_violation(e):
                    raise AlreadyExistsError(
                        f"{duplicate} already exists in catalog '{self.catalog_name}'"
                    ) from e
                self._lost(e)
                raise self.dialect.translate(e, self.where) from e

    def _inspect(self) -> Layout:
        rows = self._query(self.dialect.table_names_sql)
        names = {name.lower() for (name,) in rows if isinstance(name, str)}
        has_tables = TABLES in names
        columns = self._query(self.dialect.column_names_sql, (TABLES,)) if has_tables else []
        return Layout(
            tables=has_tables,
            namespace_properties=NAMESPACE_PROPERTIES in names,
            record_type=any(str(name).lower() == RECORD_TYPE for (name,) in columns),
        )

    def _create_missing_tables(self) -> Layout:
        """Create what a new (or half-made) database lacks, exactly as Java's ``JdbcCatalog``
        does with ``jdbc.schema-version=V1``; an existing V0 table is left as it is."""
        layout = self._inspect()
        if layout.tables and layout.namespace_properties:
            return layout
        with self.transaction(creating=True):
            layout = self._inspect()  # another process may have been first
            if not layout.tables:
                self._execute(CREATE_TABLES_SQL)
                self._execute(ADD_RECORD_TYPE_SQL)
            if not layout.namespace_properties:
                self._execute(CREATE_NAMESPACE_PROPERTIES_SQL)
        return self._inspect()
