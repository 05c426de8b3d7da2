"""A session: one catalog, one manifest cache, one DuckDB database; runs statements.

Life of a query -- what ``SELECT count(*) FROM ns.t WHERE id = 5`` passes through:

1. :meth:`Session.execute` splits the text into statements
   (:func:`iceduck.sql.parse.split_statements`) and runs each with :meth:`Session.run`,
   on a DuckDB cursor of its own (:func:`iceduck.engine.connection.open_cursor`).
2. :func:`iceduck.sql.classify.classify` reads the statement once, by the one parser its
   leading keyword calls for: a write statement goes to its table operation
   (:mod:`iceduck.ops.dispatch`), ``SHOW`` lists the catalog (one table, :data:`_BY_KIND`,
   names the handler of each kind of statement), and a query is parsed by
   :func:`iceduck.sql.parse.parse_statement`, which normalises the text (``?`` -> ``$1``,
   ``FOR SYSTEM_VERSION`` -> ``FOR VERSION``), parses it with sqlglot's DuckDB dialect and
   names its kind (other kinds are refused by name: ``PRAGMA is not supported yet``).
   Before that, :meth:`SessionObjects.route <iceduck.session.own_objects.SessionObjects.route>`
   takes the statements on the session's own objects (temporary tables, views, macros,
   ``SET``, ``COPY``, ``SUMMARIZE``, ``PIVOT``: :mod:`iceduck.session.own_objects`), and the
   session's views are expanded into the query's text (re-planned at each use).
3. :func:`iceduck.sql.references.table_refs` finds the references that may be Iceberg
   tables, with their time travel and their span in the text.
4. :func:`iceduck.session.iceberg_sources.resolve_source` resolves each one:
   :func:`iceduck.session.name_resolution.resolve_table_name` asks the catalog which reading
   of the dotted name exists (table, metadata table, ``branch_``/``tag_``; a one-part name in
   the current namespace, set by ``USE``),
   :meth:`Catalog.load_table` loads the metadata, and
   :func:`iceduck.scan.snapshots.resolve` picks the snapshot and the schema. A one-part
   name may instead read a DataFrame or Arrow object (registered, or a variable of the
   calling code), registered on the cursor (:mod:`iceduck.session.python_objects`).
   A name that is no table but a view of the catalog is replaced by the view's query,
   whose own tables go through steps 4-8 in turn (:mod:`iceduck.session.catalog_views`).
   DuckDB's catalog views and table functions (``information_schema.tables``,
   ``duckdb_columns()``...: :func:`iceduck.sql.introspection.system_refs`) read DuckDB's rows
   followed by the catalog's tables, registered as Arrow (:mod:`iceduck.session.introspection`).
5. :func:`iceduck.session.iceberg_sources.plan_sources` plans them: :func:`iceduck.sql.predicates.pushdown`
   turns the WHERE/ON clauses into an Iceberg row filter per table reference (only what is
   provably implied; the query keeps its WHERE).
6. :func:`iceduck.scan.planner.plan_scan` walks the manifest index with that filter (the
   session's :class:`~iceduck.scan.manifest_cache.ManifestCache` parses each manifest once)
   and returns a :class:`~iceduck.scan.tasks.ScanPlan`.
7. :func:`iceduck.engine.read.scan_sql` writes the DuckDB SELECT reading the plan's files
   with deletes applied (:func:`iceduck.engine.read.attach_scan` sets what it needs on the
   cursor); a metadata table is registered as an Arrow table.
8. :func:`iceduck.sql.rewrite.rewrite` splices those relations into the statement's text,
   each scan as a derived table ``(SELECT ...) AS t`` -- inlined rather than behind a
   view, which DuckDB would bind twice (a millisecond on a point query).
9. DuckDB binds the rewritten text with the parameters (:func:`iceduck.engine.queries.run`);
   the :class:`~iceduck.session.result.Result` reads its rows through the engine
   (:class:`~iceduck.engine.results.StatementRows`), which runs the query at the first
   fetch, as rows or as an Arrow stream. ``EXPLAIN`` instead returns
   :func:`iceduck.sql.explain.explain_scan` lines followed by DuckDB's plan, and
   ``DESCRIBE`` of a table the columns of its Iceberg schema (:mod:`iceduck.session.answers`).

Life of a write -- what ``DELETE FROM ns.t WHERE id = 5`` passes through:

1. :func:`iceduck.sql.classify.classify` reads the text, by the write grammar, into a typed
   statement (:mod:`iceduck.sql.statements`: DDL, INSERT, DELETE, UPDATE, MERGE, ALTER...); a
   DELETE's or UPDATE's condition keeps its parsed tree (:class:`iceduck.sql.condition.Condition`).
2. :func:`iceduck.ops.dispatch.execute` hands it to its table operation with an
   :class:`~iceduck.ops.context.OpContext`: the catalog, the manifest cache, the cursor, and
   ``prepare_query``, which plans and attaches the Iceberg tables a query inside the
   statement reads (steps 3-8 above).
3. The operation resolves its target table, lets DuckDB find the rows it changes
   (:mod:`iceduck.ops.rows`), writes data and delete files (:mod:`iceduck.engine.write`,
   :mod:`iceduck.engine.delete_write`) and commits one snapshot (:mod:`iceduck.txn`), or
   changes only metadata (DDL).
4. The :class:`~iceduck.session.result.Result` carries no rows, only the rows changed
   (``rowcount``) and a one-line message for the shell.

DuckDB's errors become iceduck's kinds at the statement's edge
(:func:`iceduck.engine.errors.duckdb_call`), with the names the user wrote. Registered
Arrow tables, variables and views live per DuckDB cursor, so a statement's objects vanish
with its result and several open results never see each other's. Parsed statements are
cached by text, so a repeated query (with new parameters) skips sqlglot; and a query run
again with the same text and parameters skips steps 2-9 (:mod:`iceduck.session.prepared`:
its plan, rewritten text, DuckDB parse and binding are kept on a cursor of its own), once
step 4's catalog load of each table it reads shows the version it was planned on.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, get_args

from iceduck.catalog.base import Catalog, LoadedTable, LoadedView, Namespace, TableIdentifier
from iceduck.catalog.metadata_files import MetadataCache
from iceduck.catalog.open import lake_warehouse, open_catalog
from iceduck.catalog.uri import redact
from iceduck.engine import connection as engine
from iceduck.engine import queries
from iceduck.engine.deletes import PositionCache
from iceduck.engine.errors import duckdb_call, is_binder_error, translate_duckdb_error
from iceduck.engine.layout import LayoutCache
from iceduck.engine.results import StatementRows
from iceduck.errors import (
    NotFoundError,
    UnsupportedError,
    UserError,
)
from iceduck.lru import LRUCache
from iceduck.ops import dispatch
from iceduck.ops.context import OpContext, OpResult
from iceduck.ops.transaction_rules import refusal_in_transaction
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.session import answers, paimon_attach
from iceduck.session.caller_scope import PythonScope, Registry, is_table_like
from iceduck.session.catalog_views import ViewUse, find_view, view_relation, view_use
from iceduck.session.iceberg_sources import (
    Lookup,
    Planning,
    Source,
    plan_sources,
    resolve_source,
)
from iceduck.session.name_resolution import (
    missing_relation,
    new_identifier,
    resolve_target,
    use_namespace,
)
from iceduck.session.own_objects import SessionObjects
from iceduck.session.paimon_sources import PaimonSource, is_paimon_ref, plan_paimon_sources, resolve_paimon
from iceduck.session.prepared import PreparedQueries, PreparedQuery, keepable, prepared_key, version_of
from iceduck.session.python_objects import StatementObjects
from iceduck.session.result import Result, statement_errors
from iceduck.sql.attach import Attach, Detach
from iceduck.sql.call import CallStatement
from iceduck.sql.classify import Classified, Show, Use, classify, dotted_name, parse_query
from iceduck.sql.derived import NO_OUTER, Outer, passed_down
from iceduck.sql.describe import described_table
from iceduck.sql.introspection import ShowTables, show_tables_query, system_refs
from iceduck.sql.item_names import unnamed_items
from iceduck.sql.parameters import parameters_left
from iceduck.sql.parse import Statement, require_valid_parameters, split_statements
from iceduck.sql.qualifiers import query_edits
from iceduck.sql.references import (
    TableRef,
    table_refs,
)
from iceduck.sql.rewrite import quote_identifier, rewrite
from iceduck.sql.session_statements import Setting, WrittenTable
from iceduck.sql.show import ShowTable
from iceduck.sql.spark_describe import TableInfo
from iceduck.sql.statements import ExplainWrite, WriteStatement
from iceduck.sql.table_parameters import bind_tables
from iceduck.sql.transaction import TransactionStatement
from iceduck.txn.transaction import Transaction

if TYPE_CHECKING:
    from iceduck.catalog.paimon_warehouse import PaimonWarehouse
    from iceduck.engine.connection import Duck

#: what a session's parsed-statement caches hold
_Parsed = TypeVar("_Parsed")
#: how many parsed statements a session keeps (by text)
PARSED_STATEMENTS = 256


class Session:
    """What a connection owns: the catalog, the DuckDB database and the caches of what its
    statements decoded (manifests, metadata files, Parquet footers, deleted positions, parsed
    statements), none shared with another connection.

    ``warehouse`` is the warehouse: a folder or a location URI (``s3://bucket/wh``), kept
    in :attr:`warehouse` as the catalog records it (:func:`~iceduck.catalog.open.warehouse_location`);
    ``catalog`` the catalog name (rows of a shared JDBC catalog are per name; Spark's default
    here is ``iceduck``); ``catalog_type`` is ``sql`` (``<warehouse>/catalog.db``, or the
    catalog ``catalog_uri`` names) or ``hadoop``; ``properties`` are the Iceberg catalog
    properties, for the catalog and the object stores (:func:`~iceduck.catalog.open.open_catalog`);
    ``manifest_cache_entries`` bounds the manifest cache (see :func:`iceduck.connect`);
    ``namespace`` is the current namespace to start with (as after ``USE``: a dotted name or
    its levels).
    """

    def __init__(
        self,
        warehouse: str | Path | None = "warehouse",
        catalog: str = "iceduck",
        *,
        catalog_type: str = "sql",
        read_only: bool = False,
        catalog_impl: Catalog | None = None,
        manifest_cache_entries: int | None = None,
        namespace: str | Sequence[str] | None = None,
        catalog_uri: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        #: the warehouse location: an absolute local path, or a location URI (``s3://b/wh``);
        #: for a REST catalog the warehouse identifier sent to the server ("" when none)
        self.warehouse = lake_warehouse(warehouse, catalog_uri)
        #: the catalog URI without its password (``None``: the embedded default), for display
        self.catalog_uri = None if catalog_uri is None else redact(catalog_uri)
        #: the catalog as opened; :attr:`catalog` is the open transaction in front of it
        self.base_catalog: Catalog = (
            catalog_impl
            if catalog_impl is not None
            else open_catalog(
                warehouse,
                catalog,
                catalog_type,
                read_only,
                catalog_uri=catalog_uri,
                properties=properties,
            )
        )
        self.manifests = (
            ManifestCache()
            if manifest_cache_entries is None
            else ManifestCache(max_entries=_positive(manifest_cache_entries, "manifest_cache_entries"))
        )
        self.metadata_files = MetadataCache()
        #: Parquet schemas and decoded deletes of the files this session's scans read
        self.layouts = LayoutCache()
        self.positions = PositionCache()
        #: objects ``register``-ed on the connection: readable by every later statement
        self.registry = Registry()
        self.database = engine.open_database()
        self.timezone = engine.time_zone(self.database)
        #: temporary tables, views, macros, settings (:mod:`iceduck.session.own_objects`)
        self.session_objects = SessionObjects()
        self._lock = threading.Lock()
        self._names = itertools.count(1)
        #: statements run, and queries inside write statements, parsed: by text
        self._statements: LRUCache[str, Classified] = LRUCache(PARSED_STATEMENTS)
        self._queries: LRUCache[str, Statement] = LRUCache(PARSED_STATEMENTS)
        #: the names DuckDB heads unaliased select items with, by the item's text
        self._item_names: LRUCache[str, tuple[str | None]] = LRUCache(PARSED_STATEMENTS)
        #: queries kept ready to run again (:mod:`iceduck.session.prepared`), and the count of
        #: the session's changes that no kept query outlives
        self.prepared = PreparedQueries()
        self._changes = 0
        #: the DuckDB cursors of statements running now: what :meth:`interrupt` stops
        self._running: set[Duck] = set()
        #: percent done that long operations report, by the cursor of their statement (None:
        #: an operation that has reported nothing yet -- see :func:`statement_progress`)
        self._reported: dict[Duck, float | None] = {}
        #: have DuckDB track each statement's progress, for :meth:`progress` (the shell's spinner)
        self.track_progress = False
        self.closed = False
        #: the open transaction (BEGIN ... COMMIT), or None: each statement commits on its own
        self.transaction: Transaction | None = None
        #: False: the first statement opens a transaction, which lasts until COMMIT or
        #: ROLLBACK (DB-API ``autocommit``)
        self.autocommit = True
        #: whether the open transaction was opened by ``autocommit = False`` (not BEGIN)
        self._implicit = False
        #: the current namespace (``USE``): where one-part table names are read and created
        self.namespace: Namespace = ()
        #: attached Paimon warehouses, by lower-case alias (``ATTACH ... (TYPE paimon)``)
        self.paimon: dict[str, PaimonWarehouse] = {}
        if namespace is not None:
            try:
                self.use(namespace)
            except BaseException:
                self.close()
                raise

    @property
    def catalog(self) -> Catalog:
        """Where statements find and commit tables: the open transaction, else the catalog."""
        return self.transaction if self.transaction is not None else self.base_catalog

    def use(self, namespace: str | Sequence[str]) -> Namespace:
        """Make ``namespace`` current, as ``USE`` does: a dotted name (``db``,
        ``iceduck.db``) or its levels; the namespace as the catalog spells it."""
        if isinstance(namespace, str):
            parts = dotted_name(namespace, "the namespace")
        else:
            parts = tuple(namespace)
            if not parts or not all(isinstance(p, str) and p for p in parts):
                raise UserError(f"a namespace is a dotted name or its levels, not {namespace!r}")
        if parts[0].lower() in self.paimon:
            raise UnsupportedError(
                f"USE {'.'.join(parts)}: {parts[0]} is an attached Paimon warehouse; USE picks a namespace "
                f"of the Iceberg catalog, so name Paimon tables in full ({parts[0]}.<database>.<table>)"
            )
        self.namespace = use_namespace(self.catalog, parts)
        self._changes += 1
        return self.namespace

    def attach_paimon(self, location: str | Path, alias: str = "paimon", if_not_exists: bool = False) -> None:
        """Attach the Paimon warehouse at ``location`` as ``alias``: its tables read as
        ``alias.<database>.<table>`` (``ATTACH 'location' AS alias (TYPE paimon)``)."""
        paimon_attach.attach(self.paimon, location, alias, if_not_exists, self.base_catalog.name)
        self._changes += 1

    def detach_paimon(self, alias: str, if_exists: bool = False) -> None:
        """Forget the Paimon warehouse attached as ``alias`` (``DETACH alias``)."""
        self._changes += 1
        paimon_attach.detach(self.paimon, alias, if_exists)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.registry.clear()
            self.prepared.clear()
            if self.transaction is not None:  # as sqlite3 and psycopg: closing rolls back
                self.rollback()
            engine.close(self.database)
            close = getattr(self.base_catalog, "close", None)
            if close is not None:
                close()

    # -- statements -----------------------------------------------------------------------------

    def execute(
        self,
        sql: str,
        parameters: Sequence[Any] | dict[str, Any] | None = None,
        scope: PythonScope | None = None,
    ) -> Result:
        """Run every statement of ``sql``; the result of the last one. ``scope`` is where
        one-part names may find Python objects besides the session's registry
        (:mod:`iceduck.session.python_objects`)."""
        if self.closed:
            raise UserError("the session is closed")
        with statement_errors():  # the last line: no raw OSError, RecursionError... escapes
            require_valid_parameters(parameters)
            statements = split_statements(sql)
            if not statements:
                raise UserError("no SQL statement given")
            result: Result | None = None
            for text in statements:
                if result is not None:
                    result.close()
                result = self.run(text, parameters, scope)
            assert result is not None
            return result

    def run(
        self,
        text: str,
        parameters: Sequence[Any] | dict[str, Any] | None = None,
        scope: PythonScope | None = None,
    ) -> Result:
        """Run one statement (see the module docstring); a query run before with the same
        text and parameters reuses what did not change (:mod:`iceduck.session.prepared`)."""
        scope = (scope or PythonScope()).with_registry(self.registry)
        key = self._prepared_key(text, parameters)
        if key is not None:
            running = lambda duck: lambda: self._working(duck)  # noqa: E731
            params = queries.duck_params(parameters)
            repeated = self.prepared.run(key, self._state(), self.lookup(), scope, params, running)
            if repeated is not None:
                return repeated
        duck = engine.open_cursor(self.database)
        objects = StatementObjects(duck, scope, self.unique_name)
        with self._lock:
            self._running.add(duck)
        try:
            if self.track_progress:
                engine.track_progress(duck)
            text, parameters, bound = bind_tables(text, parameters, is_table_like)
            objects.bind(bound)
            return duckdb_call(self._run, duck, text, parameters, objects, con=duck)
        except NotFoundError as e:
            engine.close(duck)
            # DuckDB's guess among its system tables ("Did you mean pg_prepared_statements?")
            # helps no one: say where Iceberg tables of that name are
            named = missing_relation(self.catalog, str(e), self.namespace)
            if named is None:
                raise
            raise NotFoundError(str(named) + objects.hint(str(e))) from e
        except BaseException:
            engine.close(duck)
            raise
        finally:
            with self._lock:
                self._running.discard(duck)
                self._reported.pop(duck, None)

    def interrupt(self) -> None:
        """Stop the statements running now (from another thread): each raises ``UserError``.

        A DuckDB interrupt reaches only the connection it is called on, and every statement
        runs on a cursor of its own, so the session keeps the running ones.
        """
        with self._lock:
            running = list(self._running)
        for duck in running:
            engine.interrupt(duck)

    def progress(self) -> float | None:
        """Percent done of the running statement: DuckDB's (``track_progress``) or what a
        procedure reports (``OpContext.report_progress``); None if unknown."""
        with self._lock:
            running = list(self._running)
            reported = dict(self._reported)
        done = []
        for duck in {*running, *reported}:
            ask_duckdb = functools.partial(engine.query_progress, duck)
            done.append(statement_progress(duck in reported, reported.get(duck), ask_duckdb))
        known = [value for value in done if value is not None]
        return max(known) if known else None

    def _report(self, duck: Duck, percent: float) -> None:
        """A long operation's own progress on ``duck`` (until the statement ends)."""
        with self._lock:
            self._reported[duck] = max(0.0, min(100.0, percent))

    # -- transactions ---------------------------------------------------------------------------

    def begin(self, implicit: bool = False) -> None:
        """Open a transaction (``BEGIN``): later statements commit into it
        (:mod:`iceduck.txn.transaction`). An ``implicit`` one (opened by the DB-API, not by
        ``BEGIN``) is committed first by a statement that commits by itself (DDL, CALL)."""
        if self.transaction is not None:
            raise UserError("cannot start a transaction within a transaction: COMMIT or ROLLBACK first")
        self.transaction = Transaction(self.base_catalog)
        self._implicit = implicit

    def commit(self) -> None:
        """Commit the open transaction: every table it changed at once, or none (the error
        says why). The transaction is over either way."""
        transaction = self._ending("commit")
        transaction.commit()

    def rollback(self) -> None:
        """Discard the open transaction and delete the files it wrote."""
        self._ending("rollback").rollback()

    def _ending(self, action: str) -> Transaction:
        transaction = self.transaction
        if transaction is None:
            raise UserError(f"cannot {action} - no transaction is active")
        self.transaction = None
        return transaction

    def _outside_transaction(self, text: str, statement: Classified) -> None:
        """Refuse, inside a ``BEGIN`` transaction, a statement that commits by itself (DDL,
        CALL: :mod:`iceduck.ops.transaction_rules`). In a transaction that ``autocommit =
        False`` opened, such a statement first commits the transaction and then runs on its
        own -- MySQL's implicit commit before DDL, and Python's sqlite3 before 3.6 -- so
        DB-API code mixing table DDL with its writes still runs."""
        refusal = refusal_in_transaction(text, statement)
        if refusal is None:
            return
        if not self._implicit:
            raise refusal
        self.commit()

    def _transaction_statement(self, duck: Duck, text: str, statement: TransactionStatement) -> Result:
        """BEGIN / COMMIT / ROLLBACK, with DuckDB's errors for one out of place."""
        if statement is TransactionStatement.BEGIN:
            self.begin()
        elif statement is TransactionStatement.COMMIT:
            self.commit()
        else:
            self.rollback()
        return Result(StatementRows(duck), text, written=OpResult(message=statement.value))

    def _run(self, duck: Duck, text: str, params: Any, objects: StatementObjects) -> Result:
        own = self.session_objects
        own.open(duck)
        routed = own.route(text, bool(self.namespace))
        if routed is not None:  # on a temporary table, a view, a macro, a setting
            self._changes += 1  # what a kept query resolved or planned may differ now
            resolve = lambda st, p, d, w: self._resolved(st, p, d, w, objects)  # noqa: E731
            result = own.run(duck, text, routed, params, resolve, lambda: self._working(duck))
            if isinstance(routed, Setting):  # SET TimeZone moves TIMESTAMP AS OF's zone too
                self.timezone = engine.time_zone(duck)
            if result.written is not None:
                objects.release()
            return result
        statement = self._parsed(self._statements, text, classify)
        if isinstance(statement, Statement) and own.views:
            expanded = own.expand(text)  # views: re-planned at each use
            if expanded != text:
                statement = self._parsed(self._statements, expanded, classify)
        return _handler(type(statement))(self, duck, text, statement, params, objects)

    # -- one handler per kind of statement (:data:`_BY_KIND`) --------------------------------

    def _show(self, duck: Duck, text: str, statement: Show, params: Any, objects: StatementObjects) -> Result:
        own_tables = [*self.session_objects.tables, *self.session_objects.views]
        lookup = self.lookup()
        own_views = list(self.session_objects.views)
        return answers.show(
            duck, text, statement.what, statement.namespace, lookup, own_tables, self.paimon, own_views
        )

    def _show_table(
        self, duck: Duck, text: str, statement: ShowTable, params: Any, objects: StatementObjects
    ) -> Result:
        return answers.show_table(duck, text, statement, self.lookup())

    def _table_info(
        self, duck: Duck, text: str, statement: TableInfo, params: Any, objects: StatementObjects
    ) -> Result:
        from iceduck.session import spark_answers  # partitions metadata: not on a cold SELECT's path

        return spark_answers.table_info(duck, text, statement, self.lookup(), self.manifests)

    def _show_duckdb_tables(
        self, duck: Duck, text: str, statement: ShowTables, params: Any, objects: StatementObjects
    ) -> Result:
        """``PRAGMA show_tables``: DuckDB's SHOW TABLES, with the current namespace's tables."""
        namespace = ".".join(self.namespace) if self.namespace else None
        query = self._parsed(self._queries, show_tables_query(self.catalog.name, namespace), parse_query)
        return self._query(duck, query, params, objects, prune_columns=True)

    def _use(self, duck: Duck, text: str, statement: Use, params: Any, objects: StatementObjects) -> Result:
        namespace = self.use(statement.name)
        shown = f"namespace {'.'.join(namespace)}" if namespace else "no namespace"
        return Result(StatementRows(duck), text, written=OpResult(message=f"using {shown}"))

    def _transaction(
        self, duck: Duck, text: str, statement: TransactionStatement, params: Any, objects: StatementObjects
    ) -> Result:
        return self._transaction_statement(duck, text, statement)

    def _call(
        self, duck: Duck, text: str, statement: CallStatement, params: Any, objects: StatementObjects
    ) -> Result:
        """Spark's ``CALL system.<procedure>(...)``."""
        # imported by the first CALL: the procedures build Arrow tables (pyarrow)
        from iceduck.ops.procedures.call import call as call_procedure

        self._enter_transaction(text, statement)
        with self._lock:  # its progress is its own, whatever DuckDB says of its steps
            self._reported.setdefault(duck, None)
        ctx = self.op_context(duck, params, objects)
        rows = call_procedure(ctx, statement)
        for name, query in ctx.session_views:  # Spark's createOrReplaceTempView
            self.run(f"CREATE OR REPLACE TEMP VIEW {quote_identifier(name)} AS {query}").close()
        working = lambda: self._working(duck)  # noqa: E731
        result = answers.arrow_rows(duck, text, rows, self.unique_name("call"), working)
        result.notice = "\n".join(ctx.notices) or None
        return result

    def _write_statement(
        self, duck: Duck, text: str, statement: WriteStatement, params: Any, objects: StatementObjects
    ) -> Result:
        self._enter_transaction(text, statement)
        written = self._write(duck, statement, params, objects)
        objects.release()  # the statement is done: keep no user object alive
        return Result(StatementRows(duck), text, written=written)

    def _explain_write(
        self, duck: Duck, text: str, statement: ExplainWrite, params: Any, objects: StatementObjects
    ) -> Result:
        """``EXPLAIN INSERT|DELETE|UPDATE|MERGE``: the write it would do (nothing is written)."""
        from iceduck.ops.explain_write import explain_write

        lines = explain_write(self.op_context(duck, params, objects), statement.statement)
        return answers.lines(duck, text, "explain", lines)

    def _query_statement(
        self, duck: Duck, text: str, statement: Statement, params: Any, objects: StatementObjects
    ) -> Result:
        self._enter_transaction(text, statement)
        keep = self._prepared_key(text, params)
        return self._query(duck, statement, params, objects, prune_columns=True, keep=keep)

    def _prepared_key(self, text: str, params: Any) -> Hashable | None:
        """The key a query's plan is kept under for its next run; None when it is not kept
        (inside a transaction, which sees its own writes: :func:`prepared_key`)."""
        if self.transaction is not None or not self.autocommit:
            return None
        return prepared_key(text, params, is_table_like)

    def _state(self) -> Hashable:
        """What a kept query's validity depends on in the session besides its tables."""
        return (self._changes, self.registry.version, self.track_progress)

    def _enter_transaction(self, text: str, statement: Classified) -> None:
        """Before a statement that may commit: refuse it in a ``BEGIN`` transaction if it
        commits by itself, or open the implicit transaction of DB-API ``autocommit = False``."""
        if self.transaction is not None:
            self._outside_transaction(text, statement)
        elif not self.autocommit and refusal_in_transaction(text, statement) is None:
            self.begin(implicit=True)  # DB-API autocommit off: the first statement opens one

    def _query(
        self,
        duck: Duck,
        statement: Statement,
        params: Any,
        objects: StatementObjects,
        prune_columns: bool,
        keep: Hashable | None = None,
    ) -> Result:
        """A query (or EXPLAIN, DESCRIBE) planned, rewritten and bound on ``duck``.

        A binder error over scans that output only the columns the query names is bound once
        more with every column: DuckDB then names the candidates of the user's table (a typo
        ``custmer`` suggests ``customer``), and should the pruned columns ever miss one the
        query uses, the answer still comes, the same as without pruning."""
        refs: list[TableRef] = []
        view_uses: list[ViewUse] = []
        sources, python, paimon = self._prepare(
            statement, params, duck, objects, prune_columns=prune_columns, refs=refs, views=view_uses
        )
        sql = self._rewrite(duck, statement, sources, python, paimon)
        if any(ref.time_travel is not None for ref in (*(s.ref for s in sources), *(s.ref for s in paimon))):
            params = parameters_left(statement.text, sql, params)
        try:
            if described_table(statement) is not None and len(sources) == 1 and not paimon:
                return answers.describe_table(duck, sql, sources[0])
            if described_table(statement) is not None and len(paimon) == 1 and not sources:
                return answers.describe_paimon(duck, sql, paimon[0])
            if described_table(statement) is not None and len(view_uses) == 1 and len(python) == 1:
                return answers.describe_view(duck, sql, view_uses[0].schema)
            if statement.explain:
                read = [*sources, *(s for use in view_uses for s in use.sources)]
                return answers.explain(duck, statement, sql, params, read, paimon)
            rows = queries.run(duck, sql, queries.duck_params(params), lambda: self._working(duck))
        except Exception as e:
            if prune_columns and sources and is_binder_error(e):
                return self._query(duck, statement, params, objects, prune_columns=False)
            views = {**objects.written, **_views(sources), **_views(paimon)}
            translated = translate_duckdb_error(e, views, bool(sources) or bool(paimon), con=duck)
            if translated is None:
                raise
            raise translated from e
        scans = answers.scans_of(sources)
        prepared = rows.prepared()
        if keep is not None and prepared is not None and keepable(sources, refs, python, paimon):
            parsed, described = prepared
            refs_read = tuple(s.ref for s in sources)
            versions = tuple(version_of(s) for s in sources)
            files = sum(len(s.plan.tasks) for s in sources if s.plan is not None)
            state = self._state()
            kept = PreparedQuery(duck, parsed, sql, described, refs_read, versions, scans, state, files)
            self.prepared.keep(keep, kept, rows)
        return Result(rows, sql, scans)

    def _attach(
        self, duck: Duck, text: str, statement: Attach | Detach, params: Any, objects: StatementObjects
    ) -> Result:
        if isinstance(statement, Attach):
            self.attach_paimon(statement.location, statement.alias, statement.if_not_exists)
            message = f"attached Paimon warehouse {statement.location} as {statement.alias}"
        else:
            self.detach_paimon(statement.alias, statement.if_exists)
            message = f"detached {statement.alias}"
        return Result(StatementRows(duck), text, written=OpResult(message=message))

    @contextmanager
    def _working(self, duck: Duck) -> Iterator[None]:
        """``duck`` counts as running for the block, so that :meth:`interrupt` and
        :meth:`progress` reach it: a query's result runs on its cursor when fetched."""
        with self._lock:
            self._running.add(duck)
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(duck)

    # -- writes ---------------------------------------------------------------------------------

    def op_context(self, duck: Duck, params: Any, objects: StatementObjects | None = None) -> OpContext:
        """What a table operation gets to run one write statement on ``duck``."""
        return OpContext(
            catalog=self.catalog,
            manifests=self.manifests,
            layouts=self.layouts,
            positions=self.positions,
            unique_name=self.unique_name,
            duck=duck,
            params=queries.duck_params(params),
            timezone=self.timezone,
            prepare_query=lambda text: self._prepare_query(duck, text, params, objects),
            prepare_view=lambda text, view: self._prepare_query(duck, text, params, objects, (view,)),
            resolve_target=lambda parts: resolve_target(self.catalog, self._writable(parts), self.namespace),
            new_identifier=lambda parts: new_identifier(
                self.catalog.name, self._writable(parts), self.namespace
            ),
            report_progress=lambda percent: self._report(duck, percent),
            wap=self.session_objects.wap,
            pruning=self.session_objects.pruning,
            namespace=self.namespace,
            session_object=self.session_objects.kind_of,
        )

    def _writable(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        """``parts``, the name a write statement targets, unless it names a Paimon table:
        iceduck reads Paimon tables and never writes them."""
        if len(parts) >= 2 and parts[0].lower() in self.paimon:
            raise UnsupportedError(
                f"{'.'.join(parts)} is in the Paimon warehouse attached as {parts[0]}: "
                "iceduck reads Paimon tables, it does not write them"
            )
        return parts

    def _write(
        self, duck: Duck, statement: WriteStatement, params: Any, objects: StatementObjects
    ) -> OpResult:
        """Run a write statement through its table operation (:mod:`iceduck.ops.dispatch`).
        DuckDB only ever runs text the operation built around the user's, so its errors
        are told in the user's terms (no excerpt of that text)."""
        try:
            return dispatch.execute(self.op_context(duck, params, objects), statement)
        except Exception as e:
            translated = translate_duckdb_error(e, objects.written, rewritten=True, con=duck)
            if translated is None:
                raise
            raise translated from e

    def _prepare_query(
        self,
        duck: Duck,
        text: str,
        params: Any,
        objects: StatementObjects | None,
        chain: tuple[TableIdentifier, ...] = (),
    ) -> str:
        """A query's text with its Iceberg tables replaced by scans attached to ``duck``
        (and its Python objects registered there); ``chain``: the catalog views the query is
        of (a view being made: reading itself is a cycle)."""
        statement = self._parsed(self._queries, self.session_objects.expand(text), parse_query)
        sources, python, paimon = self._prepare(statement, params, duck, objects, chain=chain)
        return self._rewrite(duck, statement, sources, python, paimon)

    def _resolved(
        self,
        statement: Statement,
        params: Any,
        duck: Duck,
        written: WrittenTable | None,
        objects: StatementObjects,
    ) -> tuple[str, dict[str, str]]:
        """A statement on session objects as DuckDB runs it: its Iceberg tables replaced
        by scans (and Python objects registered), except the table it writes; and
        {DuckDB object name: the reference it replaced}."""
        sources, python, paimon = self._prepare(statement, params, duck, objects, skip=written)
        names = {**objects.written, **_views(sources), **_views(paimon)}
        return self._rewrite(duck, statement, sources, python, paimon), names

    def _rewrite(
        self,
        duck: Duck,
        statement: Statement,
        sources: list[Source],
        python: Sequence[tuple[TableRef, str]] = (),
        paimon: Sequence[PaimonSource] = (),
    ) -> str:
        """The text DuckDB runs: each Iceberg or Paimon reference replaced by its relation,
        columns qualified by an unaliased table's full name pointed at its alias, and each
        unaliased select item around a reference named as DuckDB names the user's text
        (:mod:`iceduck.sql.item_names`)."""
        refs = [*(s.ref for s in sources), *(s.ref for s in paimon)]
        # catalog views (``ns.v``) are qualified like tables; a Python object has one part
        qualified_refs = [*refs, *(ref for ref, _ in python if len(ref.parts) > 1)]
        identifiers = {
            id(s.ref.node): (*s.loaded.identifier.namespace, s.loaded.identifier.name)
            for s in sources
            if s.metadata_table is None and len(s.ref.parts) == 1
        }
        more = query_edits(statement.tree, qualified_refs, self.catalog.name, identifiers)
        items = unnamed_items(statement, [*(r.span for r in refs), *(r.span for r, _ in python)])
        texts = [statement.text[a:b] for a, b in items]
        names = queries.item_names(duck, texts, self._item_names) if items else []
        more += [((b, b), f" AS {quote_identifier(n)}") for (_, b), n in zip(items, names, strict=True) if n]
        relations = [*((s.ref, s.relation) for s in sources), *((s.ref, s.relation) for s in paimon), *python]
        return rewrite(statement.text, relations, more)

    def _parsed(self, cache: LRUCache[str, _Parsed], text: str, parse: Callable[[str], _Parsed]) -> _Parsed:
        """``parse(text)``, memoised by text in ``cache`` (parsed statements are never
        modified), so a repeated statement, with new parameters, skips parsing."""
        statement = cache.get(text)
        if statement is None:
            statement = parse(text)
            cache.put(text, statement)
        return statement

    # -- resolving and planning ----------------------------------------------------------------

    def _prepare(
        self,
        statement: Statement,
        params: Any,
        duck: Duck,
        objects: StatementObjects | None = None,
        skip: WrittenTable | None = None,
        prune_columns: bool = True,
        refs: list[TableRef] | None = None,
        views: list[ViewUse] | None = None,
        chain: tuple[TableIdentifier, ...] = (),
        outer: Outer = NO_OUTER,
    ) -> tuple[list[Source], list[tuple[TableRef, str]], list[PaimonSource]]:
        """The Iceberg sources of ``statement``, planned and attached to ``duck``
        (:mod:`iceduck.session.iceberg_sources`), the relations of the Python objects it reads
        (:mod:`iceduck.session.python_objects`), and its Paimon sources, planned and attached
        (:mod:`iceduck.session.paimon_sources`); ``skip`` is the table a DuckDB write statement
        writes, never read as a source; ``refs`` collects every reference read, ``views`` the
        catalog views read (each replaced by its query: :mod:`iceduck.session.catalog_views`),
        ``chain`` the catalog views whose query ``statement`` is, outermost first; ``outer``
        the conditions on its output where it is used (a catalog view's query: pruning only,
        :mod:`iceduck.sql.derived`)."""
        loaded: dict[TableIdentifier, LoadedTable] = {}
        lookup = self.lookup()
        sources: list[Source] = []
        python: list[tuple[TableRef, str]] = []
        paimon: list[PaimonSource] = []
        system = system_refs(statement, params)  # information_schema.tables, duckdb_tables()...
        claimed = {id(s.ref.node) for s in system}
        for ref in table_refs(
            statement, self.timezone, params, lambda text: queries.epoch_ms(duck, text), bare_names=True
        ):
            if ref.node is skip or id(ref.node) in claimed:
                continue
            if refs is not None:
                refs.append(ref)
            if is_paimon_ref(ref, self.paimon):
                paimon.append(resolve_paimon(ref, self.paimon))
                continue
            relation = objects.registered(ref) if objects is not None else None
            temporary = len(ref.parts) == 1 and self.session_objects.is_table(ref.parts[0])
            source = None
            if relation is None and not temporary:
                within = (statement, outer)
                source, read_view = self._source_or_view(ref, loaded, lookup, duck, objects, chain, within)
                if read_view is not None:
                    python.append((ref, read_view[1]))
                    if views is not None:
                        views.append(read_view[0])
                    continue
            if source is not None:
                sources.append(source)
            elif relation is not None or (
                objects is not None
                and not self.session_objects.is_table(".".join(ref.parts))  # a table outranks a variable
                and (relation := objects.variable(ref))
            ):
                python.append((ref, relation))
        planning = Planning(
            self.manifests,
            self.layouts,
            self.positions,
            self.timezone,
            self.unique_name,
            self.session_objects.pruning,
            prune_columns and self.session_objects.pruning,  # the switch turns off all pruning
        )
        plan_sources(statement, sources, params, duck, planning, outer)
        if paimon:
            caches = (self.manifests, self.positions)
            plan_paimon_sources(
                statement,
                paimon,
                params,
                duck,
                self.timezone,
                self.unique_name,
                *caches,
                pruning=self.session_objects.pruning,
            )
        if system:  # answered with the catalog's tables too (:mod:`iceduck.session.introspection`)
            own = self.session_objects
            names, base = self.unique_name, self.base_catalog
            from iceduck.session.introspection import attach_system_sources  # Paimon too: lazy

            relations = attach_system_sources(
                duck, system, lookup, self.paimon, own.is_table, names, own.pruning, base
            )
            python.extend(relations)
        return sources, python, paimon

    def _source_or_view(
        self,
        ref: TableRef,
        loaded: dict[TableIdentifier, LoadedTable],
        lookup: Lookup,
        duck: Duck,
        objects: StatementObjects | None,
        chain: tuple[TableIdentifier, ...],
        within: tuple[Statement, Outer] | None = None,
    ) -> tuple[Source | None, tuple[ViewUse, str] | None]:
        """The Iceberg table ``ref`` reads, or else the relation of the catalog view it names
        (tables first: a name is never both); (None, None) for a name of neither. ``within``:
        the statement ``ref`` is in and the conditions on that statement's output."""
        try:
            source = resolve_source(ref, loaded, lookup)
        except NotFoundError:
            view = find_view(ref, lookup)
            if view is None:
                raise
            return None, self._view_relation(ref, view, duck, objects, chain, within)
        if source is None and len(ref.parts) == 1 and lookup.namespace and ref.path is None:
            view = find_view(ref, lookup)
            if view is not None:
                return None, self._view_relation(ref, view, duck, objects, chain, within)
        return source, None

    def _view_relation(
        self,
        ref: TableRef,
        view: LoadedView,
        duck: Duck,
        objects: StatementObjects | None,
        chain: tuple[TableIdentifier, ...],
        within: tuple[Statement, Outer] | None = None,
    ) -> tuple[ViewUse, str]:
        """The derived table reading catalog view ``view`` where ``ref`` names it: its query,
        whose own tables and views are resolved and planned now (at each use), pruned with
        the conditions of the query around ``ref`` (``within``) that reach the view."""
        use = view_use(ref, view, self.catalog.name, chain)
        statement = parse_query(use.body)
        nested: list[ViewUse] = []
        outer = NO_OUTER
        if within is not None and self.session_objects.pruning:
            fields = use.schema.fields
            conditions = passed_down(within[0].tree, ref.node, within[1])
            outer = Outer(conditions, tuple(f.name for f in fields), tuple(f.field_type for f in fields))
        try:
            views = (*chain, view.identifier)
            inner = self._prepare(statement, None, duck, objects, views=nested, chain=views, outer=outer)
        except NotFoundError as e:
            raise NotFoundError(f"view {view.identifier} reads what does not exist: {e}") from e
        use = dataclasses.replace(use, sources=(*inner[0], *(s for u in nested for s in u.sources)))
        return use, view_relation(use, self._rewrite(duck, statement, *inner))

    def lookup(self) -> Lookup:
        """Where this session resolves names now (the current namespace changes with USE)."""
        return Lookup(self.catalog, self.namespace, self.metadata_files, self.session_objects.wap.wap_branch)

    def unique_name(self, kind: str = "") -> str:
        """A DuckDB object name no other statement of this session uses (``kind`` says what
        it is for, ``__iceduck_<kind>_<n>``; scans are ``__iceduck_<n>``)."""
        with self._lock:
            n = next(self._names)
        return f"__iceduck_{kind}_{n}" if kind else f"__iceduck_{n}"


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{name} must be a positive integer, not {value!r}")
    return value


def _views(sources: Sequence[Source] | Sequence[PaimonSource]) -> dict[str, str]:
    """{DuckDB object name: the reference it replaced}, for DuckDB's errors in the user's terms."""
    return {s.view: s.ref.display for s in sources}


Handler: TypeAlias = "Callable[[Session, Duck, str, Any, Any, StatementObjects], Result]"
#: the one dispatch of a classified statement (:func:`iceduck.sql.classify.classify`), by its
#: kind: the first class of the statement's type (or of its bases) named here
_BY_KIND: dict[type, Handler] = {
    Show: Session._show,
    ShowTable: Session._show_table,
    ShowTables: Session._show_duckdb_tables,
    TableInfo: Session._table_info,
    Use: Session._use,
    Attach: Session._attach,
    Detach: Session._attach,
    TransactionStatement: Session._transaction,
    CallStatement: Session._call,
    ExplainWrite: Session._explain_write,
    **{kind: Session._write_statement for kind in get_args(WriteStatement)},
    Statement: Session._query_statement,
}


def _handler(kind: type) -> Handler:
    for cls in kind.__mro__:
        found = _BY_KIND.get(cls)
        if found is not None:
            return found
    raise UserError(f"internal: no handler for a statement of kind {kind.__name__}")


def statement_progress(
    operation: bool, reported: float | None, duckdb_percent: Callable[[], float | None]
) -> float | None:
    """Percent done of one running statement, or None (the shell then shows no bar).

    A query's is DuckDB's. An operation (a ``CALL``) runs many DuckDB statements on its
    cursor, each going from 0 to 100% (a ``COPY`` sits at 100% while it writes its files),
    so DuckDB's figure says nothing of the whole: only what the operation reports counts."""
    if operation:
        return reported
    return duckdb_percent()
