"""The embedded default catalog: ``<warehouse>/catalog.db``, shared with Spark and PyIceberg.

The file uses the exact table layout of Iceberg Java's ``JdbcCatalog`` (schema version V1)
and PyIceberg's ``SqlCatalog``, so Spark (``type=jdbc``, ``uri=jdbc:sqlite:<file>``),
PyIceberg (``uri=sqlite:///<file>``) and iceduck can all open one file at once, provided
they use the same catalog name (stored in every row; iceduck's default is ``iceduck``)::

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

Creating the file. A writable catalog (the default, as behind ``iceduck.connect``) creates
the warehouse folder and ``catalog.db`` when missing, with the very statements Java runs
(``JdbcUtil.V0_CREATE_CATALOG_SQL``, then ``V1_UPDATE_CATALOG_SQL`` adding ``iceberg_type``,
and ``CREATE_NAMESPACE_PROPERTIES_TABLE_SQL``), so ``sqlite_master`` reads exactly as in a
file Spark created; it does so inside one ``BEGIN IMMEDIATE`` transaction so that two
processes opening a new warehouse at once cannot both create it. An existing file whose
``iceberg_tables`` predates ``iceberg_type`` (V0) is read as such and not migrated: that
is its owner's choice (Java and PyIceberg migrate only when configured to). With
``read_only=True`` nothing is ever created or changed, and a missing file is an error.

Concurrency. Spark, PyIceberg and other iceduck processes write to the same file, so
iceduck never holds a transaction open between statements: the connection is in
autocommit mode and every query's rows are fetched at once, so a reader holds SQLite's
shared lock only for the microseconds of one ``SELECT``. A locked database is waited for
up to :data:`BUSY_TIMEOUT_S`. The journal mode is left as the file has it: switching to
WAL would be a persistent change of a file other engines own.

Writes (namespaces, create, compare-and-swap commits, drop, rename) are Java's statements,
in :mod:`iceduck.catalog.sqlite_writes`. Beware a Spark session started on an existing
``catalog.db`` without ``jdbc.init-catalog-tables=false``: Iceberg 1.10's
``JdbcCatalog.atomicCreateTable`` leaves a statement open that holds a shared lock for the
whole session, and every other writer (iceduck, PyIceberg) then times out.
"""

from __future__ import annotations

import errno
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iceduck.catalog import sqlite_writes
from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.metadata_files import MetadataCache
from iceduck.catalog.names import children, namespace_display, namespace_from_string, namespace_to_string
from iceduck.errors import (
    CommitConflictError,
    CorruptDataError,
    IceduckError,
    NotFoundError,
    StorageError,
    UnsupportedError,
    UserError,
)
from iceduck.io.fileio import MissingFileError, storage_problem
from iceduck.spec.table_metadata import TableMetadata

CATALOG_DB = "catalog.db"
DEFAULT_CATALOG_NAME = "iceduck"
#: how long a statement waits for another process's lock before giving up
BUSY_TIMEOUT_S = 30.0

TABLES = "iceberg_tables"
NAMESPACE_PROPERTIES = "iceberg_namespace_properties"
RECORD_TYPE = "iceberg_type"
TABLE_RECORD_TYPE = "TABLE"
VIEW_RECORD_TYPE = "VIEW"
#: the property that records an empty namespace (Java's ``NAMESPACE_EXISTS_PROPERTY``)
NAMESPACE_EXISTS_PROPERTY = "exists"
NAMESPACE_LOCATION_PROPERTY = "location"

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
#: on a new file, which is why SQLite shows ``, iceberg_type VARCHAR(5)`` spliced in
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


@dataclass(frozen=True)
class _Layout:
    """Which of the shared tables the file has (a read-only file may have none)."""

    tables: bool
    namespace_properties: bool
    record_type: bool  # iceberg_tables has iceberg_type (schema version V1)


class SqliteCatalog:
    """The JDBC/SQL catalog layout on a local SQLite file; see the module docstring."""

    def __init__(
        self,
        warehouse: str | Path,
        name: str = DEFAULT_CATALOG_NAME,
        db_path: Path | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        if not name:
            raise UserError("a catalog name must not be empty")
        self.name = name
        self.warehouse = Path(warehouse).absolute()  # table locations must not depend on the cwd
        self.db_path = Path(db_path) if db_path is not None else self.warehouse / CATALOG_DB
        self.read_only = read_only
        self._lock = threading.RLock()
        self._metadata = MetadataCache()
        self._conn = self._connect()
        try:
            self._layout = self._inspect() if read_only else self._create_missing_tables()
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        mode = ", read-only" if self.read_only else ""
        return f"SqliteCatalog({self.name!r}, {str(self.db_path)!r}{mode})"

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- namespaces --------------------------------------------------------------------

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]:
        """The namespaces one level below ``parent`` (the top level for ``()``), sorted.

        Like Java's ``JdbcCatalog.listNamespaces``, a namespace known only through a deeper
        one (``deep`` of ``deep.er``) is listed too.
        """
        if parent and not self.namespace_exists(parent):
            raise self._namespace_not_found(parent)
        return children(self._all_namespaces(), parent)

    def namespace_exists(self, namespace: Namespace) -> bool:
        if not namespace:
            return True  # the root always exists
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
            if present and self._query(sql, (self.name, name, len(prefix), prefix)):
                return True
        return False

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """A namespace's properties as Java's ``loadNamespaceMetadata`` returns them: the
        stored ones without the reserved ``exists``, plus a default ``location``
        (``<warehouse>/<level>/<level>``) when none is stored."""
        if not namespace or not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        properties: dict[str, str] = {}
        if self._layout.namespace_properties:
            rows = self._query(
                f"SELECT property_key, property_value FROM {NAMESPACE_PROPERTIES} "
                "WHERE catalog_name = ? AND namespace = ?",
                (self.name, namespace_to_string(namespace)),
            )
            properties = {key: value for key, value in rows if key is not None and value is not None}
        properties.pop(NAMESPACE_EXISTS_PROPERTY, None)
        properties.setdefault(NAMESPACE_LOCATION_PROPERTY, str(self.warehouse.joinpath(*namespace)))
        return properties

    # -- tables ------------------------------------------------------------------------

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]:
        """The tables (not views) directly in ``namespace``, sorted by name."""
        if not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        if not self._layout.tables:
            return []
        rows = self._query(
            f"SELECT table_name FROM {TABLES} WHERE catalog_name = ? AND table_namespace = ?"
            f"{self._tables_only()} ORDER BY table_name",
            (self.name, namespace_to_string(namespace)),
        )
        return [TableIdentifier(namespace, name) for (name,) in rows]

    def table_exists(self, identifier: TableIdentifier) -> bool:
        row = self._table_row(identifier)
        return row is not None and _is_table(row[1])

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """The table's current metadata, read from the location its catalog row holds.

        An unknown table is a :class:`NotFoundError` naming the table and the catalog; a
        row pointing at a missing file is a :class:`MissingFileError` naming that file.
        """
        row = self._table_row(identifier)
        if row is not None and row[1] == VIEW_RECORD_TYPE:
            raise UnsupportedError(
                f"'{identifier}' in catalog '{self.name}' is a view, not a table; "
                "iceduck does not read Iceberg views"
            )
        if row is None or not _is_table(row[1]):
            raise NotFoundError(f"table '{identifier}' not found in catalog '{self.name}'")
        location = row[0]
        if not location:
            raise CorruptDataError(
                f"catalog row of table '{identifier}' (catalog '{self.name}') has no metadata_location",
                str(self.db_path),
            )
        try:
            metadata = self._metadata.load(location)
        except MissingFileError:
            raise MissingFileError(
                f"metadata file of table '{identifier}' (catalog '{self.name}') does not exist", location
            ) from None
        return LoadedTable(identifier, location, metadata)

    # -- writes (iceduck.catalog.sqlite_writes) -----------------------------------------

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        sqlite_writes.create_namespace(self, namespace, properties)

    def drop_namespace(self, namespace: Namespace) -> None:
        sqlite_writes.drop_namespace(self, namespace)

    def default_table_location(self, identifier: TableIdentifier) -> str:
        return sqlite_writes.default_table_location(self, identifier)

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        return sqlite_writes.create_table(self, identifier, metadata)

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        return sqlite_writes.commit_table(self, base, metadata)

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        sqlite_writes.drop_table(self, identifier, purge)

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        sqlite_writes.rename_table(self, source, target)

    # -- rows --------------------------------------------------------------------------

    def _table_row(self, identifier: TableIdentifier) -> tuple[str | None, str | None] | None:
        """(metadata_location, iceberg_type) of the row named ``identifier``, or None."""
        if not self._layout.tables:
            return None
        record_type = RECORD_TYPE if self._layout.record_type else "NULL"
        rows = self._query(
            f"SELECT metadata_location, {record_type} FROM {TABLES} "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            (self.name, namespace_to_string(identifier.namespace), identifier.name),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    def _tables_only(self) -> str:
        """The WHERE clause tail that keeps tables and drops views (Java's V1 queries)."""
        if not self._layout.record_type:
            return ""
        return f" AND ({RECORD_TYPE} = '{TABLE_RECORD_TYPE}' OR {RECORD_TYPE} IS NULL)"

    def _all_namespaces(self) -> set[Namespace]:
        """Every namespace named by a table, view or property row of this catalog."""
        selects = []
        if self._layout.tables:
            selects.append(f"SELECT table_namespace FROM {TABLES} WHERE catalog_name = ?")
        if self._layout.namespace_properties:
            selects.append(f"SELECT namespace FROM {NAMESPACE_PROPERTIES} WHERE catalog_name = ?")
        if not selects:
            return set()
        rows = self._query(" UNION ".join(selects), (self.name,) * len(selects))
        return {namespace_from_string(ns) for (ns,) in rows if ns is not None}

    def _namespace_not_found(self, namespace: Namespace) -> NotFoundError:
        return NotFoundError(f"namespace '{namespace_display(namespace)}' not found in catalog '{self.name}'")

    # -- SQLite ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """Autocommit (``isolation_level=None``): no transaction outlives a statement."""
        if self.read_only:
            if not self.db_path.is_file():
                raise NotFoundError(f"no catalog database at {self.db_path}")
            target, uri = f"{self.db_path.resolve().as_uri()}?mode=ro", True
        else:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            target, uri = str(self.db_path), False
        try:
            return sqlite3.connect(
                target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=uri
            )
        except sqlite3.Error as e:
            raise self._error(e) from e

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and fetch all its rows (so no lock outlives the call)."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                raise self._error(e) from e

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one changing statement; the number of rows it changed (a compare-and-swap
        commit succeeds only when that is 1)."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).rowcount
            except sqlite3.Error as e:
                raise self._error(e) from e

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` .. ``COMMIT``: takes the write lock up front, so a
        check-then-write sequence cannot interleave with another process's."""
        with self._lock:
            self._execute("BEGIN IMMEDIATE")
            try:
                yield
                self._execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.rollback()
                raise

    def _inspect(self) -> _Layout:
        names = {
            name.lower()
            for (name,) in self._query("SELECT name FROM sqlite_master WHERE type = 'table'")
            if isinstance(name, str)
        }
        has_tables = TABLES in names
        columns = self._query(f"PRAGMA table_info({TABLES})") if has_tables else []
        return _Layout(
            tables=has_tables,
            namespace_properties=NAMESPACE_PROPERTIES in names,
            record_type=any(str(c[1]).lower() == RECORD_TYPE for c in columns),
        )

    def _create_missing_tables(self) -> _Layout:
        """Create what a new (or half-made) file lacks, exactly as Java's ``JdbcCatalog``
        does with ``jdbc.schema-version=V1``; an existing V0 table is left as it is."""
        layout = self._inspect()
        if layout.tables and layout.namespace_properties:
            return layout
        with self._transaction():
            layout = self._inspect()  # another process may have been first
            if not layout.tables:
                self._execute(CREATE_TABLES_SQL)
                self._execute(ADD_RECORD_TYPE_SQL)
            if not layout.namespace_properties:
                self._execute(CREATE_NAMESPACE_PROPERTIES_SQL)
        return self._inspect()

    def _error(self, e: sqlite3.Error) -> IceduckError:
        """One of iceduck's error kinds for a SQLite error, naming the database file."""
        message = str(e)
        if isinstance(e, sqlite3.OperationalError):
            if "locked" in message or "busy" in message:
                return CommitConflictError(
                    f"catalog database {self.db_path} stayed locked by another process "
                    f"for {BUSY_TIMEOUT_S:g} s: {message}"
                )
            storage = _SQLITE_STORAGE.get(getattr(e, "sqlite_errorcode", 0) & 0xFF)
            if storage is not None:  # the disk refused: full, read-only, no permission
                return StorageError(f"catalog database: {message}: {storage}", str(self.db_path))
            return UserError(f"cannot use catalog database {self.db_path}: {message}")
        return CorruptDataError(f"not a usable SQLite catalog database: {message}", str(self.db_path))


#: SQLite's primary result codes meaning the storage refused, and what to do about it
_SQLITE_STORAGE = {
    13: storage_problem(errno.ENOSPC, None, ""),  # SQLITE_FULL
    8: "make the file and its folder writable, or open the warehouse with read_only=True",  # READONLY
    3: storage_problem(errno.EACCES, None, ""),  # SQLITE_PERM
    10: storage_problem(errno.EIO, None, ""),  # SQLITE_IOERR
    14: "cannot open it: check that its folder exists and is writable",  # SQLITE_CANTOPEN
}


def _is_table(record_type: str | None) -> bool:
    """Java's V1 test: ``iceberg_type = 'TABLE' OR iceberg_type IS NULL``."""
    return record_type is None or record_type == TABLE_RECORD_TYPE
