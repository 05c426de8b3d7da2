"""The ``iceduck`` SQLAlchemy dialect: ``create_engine("iceduck:///warehouse")``.

Built as DuckDB's own dialect (duckdb_engine) is: iceduck speaks DuckDB's SQL, which is
close to PostgreSQL's, so the dialect subclasses SQLAlchemy's PostgreSQL dialect for its
compilers and types, takes :mod:`iceduck` itself as the DB-API module (``?`` markers), and
replaces what PostgreSQL finds in ``pg_catalog``: reflection asks the Iceberg catalog
(:mod:`iceduck.sqlalchemy.reflection`), server version and isolation level questions are
not asked, and nothing uses RETURNING.

An ``executemany`` of one INSERT (``DataFrame.to_sql``, ``conn.execute(table.insert(),
rows)``) reaches iceduck as one ``cursor.executemany``, which writes all rows in one
Iceberg commit (:mod:`iceduck.session.batch_insert`); SQLAlchemy's multi-row VALUES
rewriting ("insertmanyvalues") is off so that it does.

Connections keep iceduck's autocommit: each statement commits on its own, so SQLAlchemy's
``commit()`` has nothing left to do and ``rollback()`` cannot undo a statement already run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal, TypeVar

from sqlalchemy import exc
from sqlalchemy.dialects.postgresql.base import PGDialect, PGIdentifierPreparer
from sqlalchemy.engine import Connection
from sqlalchemy.engine.default import DefaultDialect
from sqlalchemy.engine.url import URL

from iceduck.sqlalchemy import reflection as catalog
from iceduck.sqlalchemy.types import IceduckTypeCompiler
from iceduck.sqlalchemy.url import connect_arguments

T = TypeVar("T")


def _cached(method: Callable[..., T]) -> Callable[..., T]:
    """SQLAlchemy's ``reflection.cache``: an answer kept in the Inspector's ``info_cache`` for
    the Inspector's life. Written out because 1.4's decorator cannot rebuild a method whose
    annotations are strings (``from __future__ import annotations``)."""

    @functools.wraps(method)
    def cached(self: Any, connection: Connection, *args: Any, **kw: Any) -> T:
        info_cache = kw.get("info_cache")
        if info_cache is None:
            return method(self, connection, *args, **kw)
        options = tuple(sorted((k, v) for k, v in kw.items() if isinstance(v, str | int | None)))
        key = (method.__name__, args, options)
        if key not in info_cache:
            info_cache[key] = method(self, connection, *args, **kw)
        return info_cache[key]

    return cached


class IceduckIdentifierPreparer(PGIdentifierPreparer):
    """A schema is a namespace, nested levels dotted: each level is one identifier."""

    def format_schema(self, name: str) -> str:
        return catalog.quote_name(self, name)

    def quote_schema(self, schema: str, force: Any = None) -> str:
        return catalog.quote_name(self, schema)


class IceduckDialect(PGDialect):
    name = "iceduck"
    driver = "iceduck"
    default_paramstyle = "qmark"
    supports_statement_cache = True
    supports_comments = True
    supports_sane_rowcount = False
    supports_sane_multi_rowcount = False
    supports_server_side_cursors = False
    supports_native_decimal = True  # DECIMAL columns come back as Decimal
    postfetch_lastrowid = False
    implicit_returning = False
    insert_returning = False
    update_returning = False
    delete_returning = False
    use_insertmanyvalues = False
    supports_multivalues_insert = True
    supports_sequences = False
    supports_native_enum = False
    preparer = IceduckIdentifierPreparer
    type_compiler_cls = IceduckTypeCompiler
    type_compiler = IceduckTypeCompiler  # SQLAlchemy 1.4's name

    @classmethod
    def import_dbapi(cls) -> ModuleType:
        import iceduck

        return iceduck

    @classmethod
    def dbapi(cls) -> ModuleType:  # type: ignore[override]
        """SQLAlchemy 1.4's name of :meth:`import_dbapi` (2.x calls the latter when defined)."""
        return cls.import_dbapi()

    def create_connect_args(self, url: URL) -> tuple[list[Any], dict[str, Any]]:
        return [], connect_arguments(url.database, url.query)

    def initialize(self, connection: Connection) -> None:
        # PostgreSQL's initialize asks the server about itself (standard_conforming_strings...)
        DefaultDialect.initialize(self, connection)

    def _get_server_version_info(self, connection: Connection) -> tuple[int, ...]:
        return (9, 6)  # the PostgreSQL features iceduck's SQL shares (no pg_catalog queries follow)

    def _get_default_schema_name(self, connection: Connection) -> str:
        raw: Any = connection.connection  # SQLAlchemy's wrapper (2.x), or iceduck's own (1.4, initialize)
        namespace = getattr(raw, "dbapi_connection", raw).namespace
        return str(namespace) if namespace else catalog.SESSION_SCHEMA

    def get_default_isolation_level(self, dbapi_conn: Any) -> Literal["AUTOCOMMIT"]:
        return "AUTOCOMMIT"

    def get_isolation_level(self, dbapi_connection: Any) -> Literal["AUTOCOMMIT"]:
        return "AUTOCOMMIT"

    def set_isolation_level(self, dbapi_connection: Any, level: Any) -> None:
        if level != "AUTOCOMMIT":
            raise exc.ArgumentError(
                f"iceduck connections commit each statement; isolation level {level!r} is not offered"
            )

    def do_begin(self, dbapi_connection: Any) -> None:
        pass

    # -- reflection: the catalog, not pg_catalog ------------------------------------------

    def _schema(self, connection: Connection, schema: str | None) -> str:
        return schema if schema is not None else str(self._get_default_schema_name(connection))

    @_cached
    def get_schema_names(self, connection: Connection, **kw: Any) -> list[str]:
        return catalog.namespaces(connection, self.identifier_preparer)

    def has_schema(self, connection: Connection, schema_name: str, **kw: Any) -> bool:  # type: ignore[override]
        # SQLAlchemy's Dialect names the argument schema_name, PGDialect schema: both are positional
        return schema_name in self.get_schema_names(connection, **kw)

    @_cached
    def get_table_names(self, connection: Connection, schema: str | None = None, **kw: Any) -> list[str]:
        schema = self._schema(connection, schema)
        if schema == catalog.SESSION_SCHEMA:
            return catalog.session_objects(connection)[0]
        return catalog.catalog_tables(connection, self.identifier_preparer, schema)

    @_cached
    def get_view_names(self, connection: Connection, schema: str | None = None, **kw: Any) -> list[str]:
        schema = self._schema(connection, schema)
        if schema == catalog.SESSION_SCHEMA:
            return catalog.session_objects(connection)[1]
        return catalog.catalog_views(connection, self.identifier_preparer, schema)

    def get_temp_table_names(self, connection: Connection, schema: str | None = None, **kw: Any) -> list[str]:
        return catalog.session_objects(connection)[0]

    def get_temp_view_names(self, connection: Connection, schema: str | None = None, **kw: Any) -> list[str]:
        return catalog.session_objects(connection)[1]

    def get_materialized_view_names(
        self, connection: Connection, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def get_sequence_names(self, connection: Connection, schema: str | None = None, **kw: Any) -> list[str]:
        return []

    def has_sequence(
        self, connection: Connection, sequence_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        return False

    def has_table(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        schema = self._schema(connection, schema)
        if schema != catalog.SESSION_SCHEMA and not self.has_schema(connection, schema, **kw):
            return False
        names = self.get_table_names(connection, schema, **kw) + self.get_view_names(connection, schema, **kw)
        return table_name in names

    @_cached
    def get_columns(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        if not self.has_table(connection, table_name, schema, **kw):
            raise exc.NoSuchTableError(f"{schema}.{table_name}" if schema else table_name)
        schema = self._schema(connection, schema)
        return catalog.columns(
            connection,
            self.identifier_preparer,
            None if schema == catalog.SESSION_SCHEMA else schema,
            table_name,
        )

    def get_table_comment(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        schema = self._schema(connection, schema)
        if schema == catalog.SESSION_SCHEMA:
            return {"text": None}
        return {"text": catalog.table_comment(connection, schema, table_name)}

    @_cached
    def get_pk_constraint(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        schema = self._schema(connection, schema)
        if schema == catalog.SESSION_SCHEMA:
            return {"constrained_columns": [], "name": None}
        fields = catalog.identifier_fields(connection, self.identifier_preparer, schema, table_name)
        return {"constrained_columns": fields, "name": None}

    def get_foreign_keys(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_indexes(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_unique_constraints(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_check_constraints(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_view_definition(
        self, connection: Connection, view_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        schema = self._schema(connection, schema)
        if schema == catalog.SESSION_SCHEMA:
            raise NotImplementedError("iceduck does not show a session view's definition")
        return catalog.view_definition(connection, self.identifier_preparer, schema, view_name)

    def get_table_options(
        self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        return {}

    # SQLAlchemy's own loops over the per-table methods above (PostgreSQL's query pg_catalog);
    # the Inspector calls them with keywords only, which PGDialect's stubs spell positionally.
    # SQLAlchemy 1.4 (which Superset 6.1 pins) has none and calls the per-table methods.
    get_multi_columns = getattr(DefaultDialect, "get_multi_columns", None)  # type: ignore[assignment]
    get_multi_pk_constraint = getattr(DefaultDialect, "get_multi_pk_constraint", None)  # type: ignore[assignment]
    get_multi_foreign_keys = getattr(DefaultDialect, "get_multi_foreign_keys", None)  # type: ignore[assignment]
    get_multi_indexes = getattr(DefaultDialect, "get_multi_indexes", None)  # type: ignore[assignment]
    get_multi_unique_constraints = getattr(DefaultDialect, "get_multi_unique_constraints", None)  # type: ignore[assignment]
    get_multi_check_constraints = getattr(DefaultDialect, "get_multi_check_constraints", None)  # type: ignore[assignment]
    get_multi_table_options = getattr(DefaultDialect, "get_multi_table_options", None)  # type: ignore[assignment]
    get_multi_table_comment = getattr(DefaultDialect, "get_multi_table_comment", None)  # type: ignore[assignment]


dialect = IceduckDialect
