"""The embedded default catalog: ``<warehouse>/catalog.db``, shared with Spark and PyIceberg.

The file holds the JDBC catalog layout (:mod:`iceduck.catalog.jdbc_store`), so Spark
(``type=jdbc``, ``uri=jdbc:sqlite:<file>``), PyIceberg (``uri=sqlite:///<file>``) and
iceduck can all open one file at once, provided they use the same catalog name (iceduck's
default is ``iceduck``). This module is what is particular to SQLite: where the file is,
how it is opened, and :data:`SQLITE`, the dialect.

Creating the file. A writable catalog (the default, as behind ``iceduck.connect``) creates
the warehouse folder and ``catalog.db`` when missing, and the layout's tables inside one
``BEGIN IMMEDIATE`` transaction, so ``sqlite_master`` reads exactly as in a file Spark
created. With ``read_only=True`` nothing is ever created or changed, and a missing file is
an error.

Concurrency. The connection is in autocommit mode and every query's rows are fetched at
once, so a reader holds SQLite's shared lock only for the microseconds of one ``SELECT``;
``BEGIN IMMEDIATE`` takes the write lock before a check-then-write sequence. A locked
database is waited for up to :data:`BUSY_TIMEOUT_S`. The journal mode is left as the file
has it: switching to WAL would be a persistent change of a file other engines own.

Beware a Spark session started on an existing ``catalog.db`` without
``jdbc.init-catalog-tables=false``: Iceberg 1.10's ``JdbcCatalog.atomicCreateTable`` leaves
a statement open that holds a shared lock for the whole session, and every other writer
(iceduck, PyIceberg) then times out.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable
from pathlib import Path

from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.sql_dialect import Connection, SqlDialect
from iceduck.errors import (
    CommitConflictError,
    CorruptDataError,
    IceduckError,
    NotFoundError,
    StorageError,
    UserError,
)
from iceduck.io.fileio import storage_problem

CATALOG_DB = "catalog.db"
DEFAULT_CATALOG_NAME = "iceduck"
#: how long a statement waits for another process's lock before giving up
BUSY_TIMEOUT_S = 30.0

#: SQLite's primary result codes meaning the storage refused, and what to do about it
_SQLITE_STORAGE = {
    13: storage_problem(errno.ENOSPC, None, ""),  # SQLITE_FULL
    8: "make the file and its folder writable, or open the warehouse with read_only=True",  # READONLY
    3: storage_problem(errno.EACCES, None, ""),  # SQLITE_PERM
    10: storage_problem(errno.EIO, None, ""),  # SQLITE_IOERR
    14: "cannot open it: check that its folder exists and is writable",  # SQLITE_CANTOPEN
}


def sqlite_error(e: Exception, db_path: str) -> IceduckError:
    """One of iceduck's error kinds for a SQLite error, naming the database file."""
    message = str(e)
    if isinstance(e, sqlite3.OperationalError):
        if "locked" in message or "busy" in message:
            return CommitConflictError(
                f"catalog database {db_path} stayed locked by another process "
                f"for {BUSY_TIMEOUT_S:g} s: {message}"
            )
        storage = _SQLITE_STORAGE.get(getattr(e, "sqlite_errorcode", 0) & 0xFF)
        if storage is not None:  # the disk refused: full, read-only, no permission
            return StorageError(f"catalog database: {message}: {storage}", db_path)
        return UserError(f"cannot use catalog database {db_path}: {message}")
    return CorruptDataError(f"not a usable SQLite catalog database: {message}", db_path)


def _is_unique_violation(e: Exception) -> bool:
    return isinstance(e, sqlite3.IntegrityError) and "UNIQUE" in str(e)


#: SQLite as the JDBC layout needs it: qmark parameters, ``BEGIN IMMEDIATE`` (the write
#: lock at once, not at the first write), the schema from ``sqlite_master``
SQLITE = SqlDialect(
    name="SQLite",
    placeholder="?",
    begin_write=("BEGIN IMMEDIATE",),
    begin_create=("BEGIN IMMEDIATE",),
    table_names_sql="SELECT name FROM sqlite_master WHERE type = 'table'",
    column_names_sql="SELECT name FROM pragma_table_info(?)",
    driver_error=sqlite3.Error,
    translate=sqlite_error,
    is_unique_violation=_is_unique_violation,
    is_connection_lost=lambda e: False,  # a file: no connection to lose
)


def connect_sqlite(db_path: Path, read_only: bool) -> sqlite3.Connection:
    """Open ``db_path`` in autocommit mode (``isolation_level=None``: no transaction
    outlives a statement), creating its folder unless ``read_only``."""
    if read_only:
        if not db_path.is_file():
            raise NotFoundError(f"no catalog database at {db_path}")
        target, uri = f"{db_path.resolve().as_uri()}?mode=ro", True
    else:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        target, uri = str(db_path), False
    try:
        return sqlite3.connect(
            target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=uri
        )
    except sqlite3.Error as e:
        raise sqlite_error(e, str(db_path)) from e


class SqliteCatalog(JdbcCatalog):
    """The JDBC catalog layout in a local SQLite file, ``<warehouse>/catalog.db`` unless
    ``db_path`` says otherwise; see the module docstring.

    ``connect`` opens the file (:func:`connect_sqlite`); passing another one wraps the
    connection, to trace or to inject faults into its statements.
    """

    def __init__(
        self,
        warehouse: str | Path,
        name: str = DEFAULT_CATALOG_NAME,
        db_path: Path | None = None,
        *,
        read_only: bool = False,
        connect: Callable[[Path, bool], Connection] = connect_sqlite,
    ) -> None:
        absolute = Path(warehouse).absolute()  # table locations must not depend on the cwd
        self.db_path = Path(db_path) if db_path is not None else absolute / CATALOG_DB
        super().__init__(
            name,
            absolute,
            lambda: connect(self.db_path, read_only),
            SQLITE,
            str(self.db_path),
            read_only=read_only,
        )

    def __repr__(self) -> str:
        mode = ", read-only" if self.read_only else ""
        return f"SqliteCatalog({self.name!r}, {str(self.db_path)!r}{mode})"
