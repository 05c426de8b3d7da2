"""The JDBC catalog layout in a PostgreSQL database, shared with Spark's ``JdbcCatalog``.

Iceberg Java's ``JdbcCatalog`` (``type=jdbc``, ``uri=jdbc:postgresql://host:port/db``)
keeps its rows in the tables of :mod:`iceduck.catalog.jdbc_store`; this module is what is
particular to PostgreSQL -- how the database is named and reached, and
:func:`postgres_dialect` -- so iceduck, Spark and PyIceberg share one database, provided
they use the same catalog name (iceduck's default is ``iceduck``). The driver is psycopg 3.

Naming the database. ``uri`` is libpq's ``postgresql://user:password@host:port/db`` (or
``postgres://``, with libpq's query parameters such as ``?sslmode=require``), or the form
Spark's catalog setting holds, ``jdbc:postgresql://host:port/db?user=..&password=..``.
User and password may also come from Iceberg's catalog properties ``jdbc.user`` and
``jdbc.password`` (what Java hands the driver), and otherwise from libpq's own sources
(``PGUSER``, ``PGPASSWORD``, ``~/.pgpass``); a credential in the URI wins over a property.
The driver properties of PostgreSQL's JDBC driver that have a libpq equivalent
(``sslmode``, ``ssl``, ``sslrootcert``, ``sslcert``, ``sslkey``, ``currentSchema``,
``ApplicationName``, ``connectTimeout``, ``options``) are taken in a ``jdbc:`` URI's query
and as ``jdbc.<name>`` properties; any other is refused by name rather than dropped -- a
dropped ``ssl=true`` would connect in the clear. Messages name the database as
``postgresql://user@host:port/db``: never with its password.

Locking. A check-then-write sequence (create a namespace or table, rename, drop a
namespace) runs in ``BEGIN`` + ``LOCK TABLE iceberg_tables, iceberg_namespace_properties IN
SHARE ROW EXCLUSIVE MODE``. That mode conflicts with itself and with the ``ROW
EXCLUSIVE`` lock every ``INSERT``, ``UPDATE`` and ``DELETE`` takes, so it excludes every
other writer -- Spark's and PyIceberg's statements too, which know nothing of iceduck --
while readers (``ACCESS SHARE``) go on: the same guarantee SQLite's ``BEGIN IMMEDIATE``
gives. An advisory lock would serialise iceduck's writers only. The layout's tables are
created under ``pg_advisory_xact_lock`` instead (there is nothing to lock yet), so two
processes opening a new database at once create them once. A commit is one
compare-and-swap ``UPDATE`` in autocommit mode, as Java's. Lock waits end after
:data:`LOCK_TIMEOUT_S` (``lock_timeout``) as a :class:`~iceduck.errors.CommitConflictError`.

Tables are found where the unqualified statements find them: in ``current_schema()``
(the first schema of the ``search_path``; ``currentSchema`` sets it), as Java's do.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.jdbc_store import NAMESPACE_PROPERTIES, TABLES
from iceduck.catalog.sql_dialect import SqlDialect
from iceduck.errors import (
    CommitConflictError,
    IceduckError,
    NotFoundError,
    StorageError,
    UserError,
)

if TYPE_CHECKING:
    import psycopg

DEFAULT_CATALOG_NAME = "iceduck"
#: how long a statement waits for another writer's lock before giving up
LOCK_TIMEOUT_S = 30
#: how long connecting may take, unless the URI says otherwise (libpq's ``connect_timeout``)
CONNECT_TIMEOUT_S = 10
#: the key of the advisory lock held while the layout's tables are created (any constant
#: no other application uses: "iceduck" in ASCII)
CREATE_LOCK_KEY = 0x6963656475636B
INSTALL_HINT = "pip install 'iceduck[postgres]' (or: pip install 'psycopg[binary]')"

#: PostgreSQL JDBC driver properties -> libpq connection parameters with the same meaning
_JDBC_TO_LIBPQ = {
    "user": "user",
    "password": "password",
    "sslmode": "sslmode",
    "sslrootcert": "sslrootcert",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "applicationname": "application_name",
    "connecttimeout": "connect_timeout",
    "logintimeout": "connect_timeout",
    "options": "options",
}
#: the PostgreSQL JDBC driver properties iceduck takes, as the driver spells them
SUPPORTED_DRIVER_PROPERTIES = (
    "user", "password", "ssl", "sslmode", "sslrootcert", "sslcert", "sslkey", "currentSchema",
    "ApplicationName", "connectTimeout", "loginTimeout", "options",
)  # fmt: skip
#: Iceberg's own ``jdbc.*`` catalog properties: for the catalog, not for the driver
_CATALOG_PROPERTIES = frozenset({"schema-version", "init-catalog-tables", "strict-mode"})


def _psycopg() -> Any:
    """The driver, imported when a PostgreSQL catalog is opened (``import iceduck`` stays light)."""
    try:
        import psycopg
    except ImportError as e:
        raise UserError(f"the PostgreSQL catalog needs the psycopg driver ({e}): {INSTALL_HINT}") from None
    return psycopg


# -- naming the database -----------------------------------------------------------------------


def _jdbc_parameter(name: str, value: str, params: dict[str, str], origin: str) -> None:
    """Put a PostgreSQL JDBC driver property into libpq's ``params``, or refuse it by name."""
    key = name.lower()
    if key == "ssl":
        if value.lower() == "true":
            params.setdefault("sslmode", "require")
        elif value.lower() == "false":
            params.setdefault("sslmode", "disable")
        else:
            raise UserError(f"the driver property ssl={value!r} ({origin}) must be true or false")
        return
    if key == "currentschema":
        params["options"] = f"{params.get('options', '')} -c search_path={value}".strip()
        return
    libpq = _JDBC_TO_LIBPQ.get(key)
    if libpq is None:
        raise UserError(
            f"the PostgreSQL catalog does not support the driver property {name!r} ({origin}): "
            f"supported are {', '.join(SUPPORTED_DRIVER_PROPERTIES)}"
        )
    params[libpq] = value


def connection_parameters(uri: str, properties: Mapping[str, str] | None = None) -> dict[str, str]:
    """libpq's connection parameters for ``uri`` and the ``jdbc.*`` ``properties``
    (module docstring); UserError naming what is wrong with them."""
    psycopg = _psycopg()
    params: dict[str, str] = {}
    if uri.startswith("jdbc:postgresql:"):
        rest = uri[len("jdbc:") :]
        if not rest.startswith("postgresql://"):  # jdbc:postgresql:db means localhost:5432/db
            rest = "postgresql://localhost/" + rest[len("postgresql:") :]
        parts = urlsplit(rest)
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            _jdbc_parameter(name, value, params, "in the jdbc: URI")
        libpq_uri = parts._replace(query="").geturl()
    elif uri.startswith(("postgresql://", "postgres://")):
        libpq_uri = uri
    else:
        raise UserError(
            f"not a PostgreSQL catalog URI: {_shown(uri)!r}: use postgresql://user@host:port/db "
            "or jdbc:postgresql://host:port/db"
        )
    try:
        params = {**psycopg.conninfo.conninfo_to_dict(libpq_uri), **params}
    except psycopg.Error as e:
        raise UserError(f"invalid PostgreSQL catalog URI {_shown(uri)!r}: {e}") from None
    for key, value in (properties or {}).items():
        if key.startswith("jdbc.") and key[len("jdbc.") :] not in _CATALOG_PROPERTIES:
            driver: dict[str, str] = {}
            _jdbc_parameter(key[len("jdbc.") :], value, driver, f"catalog property {key!r}")
            for name, setting in driver.items():
                params.setdefault(name, setting)  # what the URI says wins
    version = (properties or {}).get("jdbc.schema-version", "V1").upper()
    if version != "V1":
        raise UserError(
            f"jdbc.schema-version={version}: iceduck keeps the JDBC catalog in schema version V1 "
            "(with iceberg_type), as Spark with jdbc.schema-version=V1 does"
        )
    return params


def database_name(params: Mapping[str, str]) -> str:
    """The database as messages name it: ``postgresql://user@host:port/db``, no password."""
    user = params.get("user") or os.environ.get("PGUSER")
    host = params.get("host") or params.get("hostaddr") or "localhost"
    port = params.get("port")
    db = params.get("dbname") or user or ""
    return f"postgresql://{user + '@' if user else ''}{host}{':' + port if port else ''}/{db}"


def _shown(uri: str) -> str:
    """``uri`` with any password cut out, for a message about a URI that did not parse."""
    parts = urlsplit(uri[len("jdbc:") :] if uri.startswith("jdbc:") else uri)
    netloc = parts.netloc
    if "@" in netloc and ":" in netloc.split("@", 1)[0]:
        netloc = netloc.split(":", 1)[0] + ":***@" + netloc.split("@", 1)[1]
    query = "&".join(
        f"{k}=***" if k.lower() == "password" else f"{k}={v}"
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    )
    shown = parts._replace(netloc=netloc, query=query).geturl()
    return "jdbc:" + shown if uri.startswith("jdbc:") else shown


# -- errors ------------------------------------------------------------------------------------


def _connect_error(e: Exception, where: str) -> IceduckError:
    """The error of a connection that could not be made: refused, unreachable, bad
    credentials, no such database. libpq's message names host, port and user, never the
    password."""
    message = str(e).strip().replace("\n\t", " ").replace("\n", " ")
    if "password authentication failed" in message or "no password supplied" in message:
        return UserError(
            f"cannot log in to catalog database {where}: {message}: check the user and password "
            "(in the URI, the jdbc.user/jdbc.password properties, PGPASSWORD or ~/.pgpass)"
        )
    if "does not exist" in message and "database" in message:
        return NotFoundError(
            f"catalog database {where} does not exist: {message}: create it first (CREATE DATABASE)"
        )
    return StorageError(
        f"cannot connect to the catalog database: {message}: is PostgreSQL running there?", where
    )


def _is_connection_lost(e: Exception) -> bool:
    psycopg = _psycopg()
    state = getattr(e, "sqlstate", None)
    return isinstance(e, psycopg.OperationalError) and (
        state is None or state[:2] == "08" or state[:3] == "57P"
    )


def postgres_error(e: Exception, where: str) -> IceduckError:
    """One of iceduck's error kinds for a psycopg error, naming the database (no password)."""
    state = getattr(e, "sqlstate", None) or ""
    message = str(e).strip()
    if state == "55P03":  # lock_not_available: lock_timeout ran out
        return CommitConflictError(
            f"catalog database {where} stayed locked by another writer for {LOCK_TIMEOUT_S} s: {message}"
        )
    if state in ("40001", "40P01"):  # serialization failure, deadlock detected: retry
        return CommitConflictError(f"catalog database {where}: {message}")
    if _is_connection_lost(e):
        return StorageError(f"lost the connection to the catalog database: {message}", where)
    if state == "42501":  # insufficient_privilege
        return UserError(f"not allowed in catalog database {where}: {message}: grant the user access")
    if state == "25006":  # read_only_sql_transaction (a standby, or a read-only user)
        return UserError(f"catalog database {where} is read-only: {message}: open the catalog read-only")
    return UserError(f"cannot use catalog database {where}: {message}")


def _is_unique_violation(e: Exception) -> bool:
    return getattr(e, "sqlstate", None) == "23505"


@functools.cache
def postgres_dialect() -> SqlDialect:
    """PostgreSQL as the JDBC layout needs it: ``%s`` parameters, ``BEGIN`` + ``LOCK TABLE``
    (module docstring), the schema from ``information_schema``, SQLSTATE 23505."""
    return SqlDialect(
        name="PostgreSQL",
        placeholder="%s",
        begin_write=(
            "BEGIN",
            f"LOCK TABLE {TABLES}, {NAMESPACE_PROPERTIES} IN SHARE ROW EXCLUSIVE MODE",
        ),
        begin_create=("BEGIN", f"SELECT pg_advisory_xact_lock({CREATE_LOCK_KEY})"),
        table_names_sql=(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ),
        column_names_sql=(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s"
        ),
        driver_error=_psycopg().Error,
        translate=postgres_error,
        is_unique_violation=_is_unique_violation,
        is_connection_lost=_is_connection_lost,
    )


def connect_postgres(params: Mapping[str, str], where: str, read_only: bool) -> psycopg.Connection[Any]:
    """A psycopg connection in autocommit mode (no transaction outlives a statement), with
    ``lock_timeout`` set; a read-only catalog's session refuses every change on the server too."""
    psycopg = _psycopg()
    settings = {"connect_timeout": str(CONNECT_TIMEOUT_S), "application_name": "iceduck", **params}
    try:
        conn = psycopg.connect(**settings, autocommit=True)
    except psycopg.Error as e:
        raise _connect_error(e, where) from None
    try:
        conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT_S}s'")
        if read_only:
            conn.execute("SET default_transaction_read_only = on")
    except psycopg.Error as e:
        conn.close()
        raise postgres_error(e, where) from e
    return conn


class PostgresCatalog(JdbcCatalog):
    """Catalog ``name`` in the JDBC layout of the PostgreSQL database ``uri`` names; new
    tables go under ``warehouse`` (a folder or a URI such as ``s3://bucket/wh``). See the
    module docstring for the URI forms, ``properties`` and locking."""

    def __init__(
        self,
        uri: str,
        warehouse: str | Path,
        name: str = DEFAULT_CATALOG_NAME,
        *,
        properties: Mapping[str, str] | None = None,
        read_only: bool = False,
    ) -> None:
        params = connection_parameters(uri, properties)
        self.database = database_name(params)
        super().__init__(
            name,
            warehouse,
            lambda: connect_postgres(params, self.database, read_only),
            postgres_dialect(),
            self.database,
            read_only=read_only,
        )

    def __repr__(self) -> str:
        mode = ", read-only" if self.read_only else ""
        return f"PostgresCatalog({self.name!r}, {self.database!r}{mode})"
