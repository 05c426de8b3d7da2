"""A session's own objects: temporary tables, views, macros, settings and variables.

What DuckDB and Spark users reach for next to the catalog's tables, scoped to one iceduck
connection (each has its own in-memory DuckDB database):

* temporary tables and macros are DuckDB objects of that database (see
  :mod:`iceduck.engine.duckdb_objects`); statements on them run in DuckDB, with the
  Iceberg tables their queries read replaced by scans, as a query's are;
* views are kept here as text and expanded where they are used, as Spark expands a
  view: the Iceberg tables inside are resolved and planned at each use, so a view sees
  the snapshots committed after it was made. A view may use another view;
* ``SET`` applies to the whole session; ``SET TimeZone`` also moves the zone
  ``TIMESTAMP AS OF`` and pushed-down literals are read in (the session reads it back);
  the write-audit-publish settings (``iceduck.wap_id``, ``iceduck.wap_branch``, Spark's
  ``spark.wap.id``, ``spark.wap.branch``) are kept here and handed to writes and reads;
  ``SET iceduck.pruning = false`` turns filter pushdown off for the session's later
  statements (a debugging switch: every file is read and DuckDB alone applies the WHERE,
  so an answer that changes with it is a pruning bug; ``RESET iceduck.pruning`` restores it);
* a macro is stored in DuckDB and cannot re-plan an Iceberg scan at each use, so one
  that reads an Iceberg table is refused (a view does that).

A one-part name is looked up among the session's objects before the catalog: a CTE of
that name first, then a view, then a temporary table, then an Iceberg table of the current
namespace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from iceduck.engine import duckdb_objects as duck_objects
from iceduck.engine import queries
from iceduck.engine.errors import translate_duckdb_error
from iceduck.engine.results import Running, StatementRows
from iceduck.errors import NotFoundError, UnsupportedError, UserError
from iceduck.ops import wap
from iceduck.ops.context import OpResult, WapSettings
from iceduck.ops.context import rows as row_count
from iceduck.session.result import Result
from iceduck.sql.classify import parse_query
from iceduck.sql.parse import Statement, parse_statement
from iceduck.sql.rewrite import quote_identifier, replacement, splice
from iceduck.sql.session_statements import (
    DropView,
    DuckStatement,
    SessionStatement,
    Setting,
    ViewDefinition,
    WrittenTable,
    session_statement,
    view_uses,
    written_table,
)

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: how the session resolves a statement's Iceberg references for DuckDB: the statement,
#: its parameters, the cursor and the table it writes (never read as Iceberg) -> the text
#: DuckDB runs and {scan object name: the reference it replaced}
Resolve = Callable[[Statement, Any, "Duck", WrittenTable | None], tuple[str, dict[str, str]]]

#: how deep views may nest (a view using itself is caught before)
MAX_VIEW_DEPTH = 64

_DONE = {
    "CREATE TABLE": "created temporary table {target}",
    "INSERT": "inserted {rows} into {target}",
    "UPDATE": "updated {rows} of {target}",
    "DELETE": "deleted {rows} from {target}",
    "MERGE": "merged {rows} into {target}",
    "TRUNCATE": "truncated {target}",
    "ALTER": "altered temporary table {target}",
    "DROP TABLE": "dropped temporary table {target}",
    "CREATE MACRO": "created macro {target}",
    "DROP MACRO": "dropped macro {target}",
    "COPY": "copied {rows}",
}


#: the session setting that turns filter pushdown (pruning) off: see the module docstring
PRUNING = "iceduck.pruning"


def boolean_setting(name: str, sql: str) -> bool:
    """``true``/``false`` (or ``on``/``off``, quoted or not) as a ``SET`` of ``name`` gives it."""
    text = sql.strip().strip("'").lower()
    if text in ("true", "on"):
        return True
    if text in ("false", "off"):
        return False
    raise UserError(f"SET {name}: expected true or false, not {sql}")


class SessionObjects:
    """The objects of one session and how statements on them run (module docstring)."""

    def __init__(self) -> None:
        self.views: dict[str, ViewDefinition] = {}
        #: the session's tables and macros in DuckDB (lower case), listed after each change
        self.tables: frozenset[str] = frozenset()
        self.macros: frozenset[str] = frozenset()
        #: per-connection settings and variables, by (lower-case name, is a variable)
        self.replayed: dict[tuple[str, bool], duck_objects.Replayed] = {}
        #: write-audit-publish settings (``SET iceduck.wap_id``...: :mod:`iceduck.ops.wap`)
        self.wap = WapSettings()
        #: ``SET iceduck.pruning``: whether planning prunes with pushed-down filters
        self.pruning = True
        self._lock = threading.Lock()

    def is_table(self, name: str) -> bool:
        """Whether a one-part name is one of the session's temporary tables."""
        return name.lower() in self.tables

    def kind_of(self, name: str) -> str | None:
        """What of the session's objects a one-part name is: "view", "temporary table", or None."""
        if name.lower() in self.views:
            return "view"
        return "temporary table" if self.is_table(name) else None

    def route(self, text: str, namespace_in_use: bool = False) -> SessionStatement | None:
        """The session statement ``text`` is, or None (an Iceberg statement or a query);
        ``namespace_in_use``: a one-part view name names a view of the current namespace
        (see :func:`~iceduck.sql.session_statements.session_statement`)."""
        return session_statement(text, self.tables, frozenset(self.views), namespace_in_use)

    def open(self, duck: Duck) -> None:
        """Prepare a statement's new cursor: the per-connection settings and variables."""
        if self.replayed:
            duck_objects.replay(duck, list(self.replayed.values()))

    # -- views ----------------------------------------------------------------------------------

    def expand(self, text: str, chain: tuple[str, ...] = (), writes: bool = False) -> str:
        """``text`` with each use of a session view replaced by the view's query (expanded
        too), as a derived table named like the view; ``text`` itself when it uses none.
        ``writes``: ``text`` is a DuckDB write statement, whose target is no view."""
        if not self.views or not any(name in text.lower() for name in self.views):
            return text
        statement = parse_statement(text)
        target = written_table(statement) if writes else None
        uses = [r for r in view_uses(statement, lambda name: name in self.views) if r.node is not target]
        if not uses:
            return text
        if len(chain) >= MAX_VIEW_DEPTH:
            raise UserError(f"views nest more than {MAX_VIEW_DEPTH} deep: {' -> '.join(chain)}")
        edits = []
        for ref in uses:
            name = ref.parts[0].lower()
            if name in chain:
                raise UserError(f"view {name} refers to itself: {' -> '.join((*chain, name))}")
            view = self.views[name]
            body = self.expand(view.query, (*chain, name))
            relation = f"({body})"
            if view.columns:
                columns = ", ".join(quote_identifier(c) for c in view.columns)
                relation = f"(SELECT * FROM ({body}) AS {quote_identifier(name)}({columns}))"
            edits.append((ref.span, replacement(ref, relation)))
        expanded = splice(statement.text, edits)
        if statement.explain:
            expanded = ("EXPLAIN ANALYZE " if statement.analyze else "EXPLAIN ") + expanded
        return expanded

    # -- running --------------------------------------------------------------------------------

    def run(
        self,
        duck: Duck,
        text: str,
        statement: SessionStatement,
        params: Any,
        resolve: Resolve,
        running: Running = nullcontext,
    ) -> Result:
        """Run session statement ``text`` (read as ``statement``) on ``duck`` (``resolve``:
        see :data:`Resolve`; ``running``: what the reads of its rows run inside, see
        :mod:`iceduck.engine.results`)."""
        if isinstance(statement, DuckStatement):
            return self._duck(duck, statement, params, resolve, running)
        if isinstance(statement, ViewDefinition):
            done = self._create_view(duck, statement, params, resolve)
        elif isinstance(statement, DropView):
            done = self._drop_view(statement)
        else:
            done = self._set(duck, statement, resolve)
        return Result(StatementRows(duck), text, written=done)

    def _duck(
        self, duck: Duck, command: DuckStatement, params: Any, resolve: Resolve, running: Running
    ) -> Result:
        statement = command.statement
        if command.kind == "CREATE TABLE" and command.target in self.views:
            raise UserError(f"{command.target} is a view of this session: drop it or pick another name")
        commanded = command.kind == "DROP MACRO" or command.body is not None  # not sqlglot's to read
        expanded = statement.text if commanded else self.expand(statement.text, writes=True)
        if expanded != statement.text:
            statement = parse_statement(expanded)
        sql, scans = resolve(statement, params, duck, written_table(statement))
        if command.body is not None:
            _, scans = resolve(command.body, params, duck, None)
        if command.pure and scans:
            raise UnsupportedError(
                f"macro {command.target} reads the Iceberg table {next(iter(scans.values()))}: a macro is "
                "kept by DuckDB and would not see the table's new snapshots; use a view (CREATE VIEW) instead"
            )
        try:
            if command.rows:  # bound now, run at the first fetch (as a query's rows)
                return Result(queries.run(duck, sql, queries.duck_params(params), running), sql)
            count = duck_objects.run_counted(duck, sql, queries.duck_params(params))
        except Exception as e:
            translated = translate_duckdb_error(e, scans, bool(scans), con=duck)
            if translated is None:
                raise
            raise translated from e
        if command.kind in ("CREATE TABLE", "ALTER", "DROP TABLE", "CREATE MACRO", "DROP MACRO"):
            self.tables, self.macros = duck_objects.session_names(duck)
        counted = command.kind in ("CREATE TABLE", "INSERT", "UPDATE", "DELETE", "MERGE", "COPY")
        message = _DONE[command.kind].format(rows=row_count(max(count, 0)), target=command.target)
        return Result(StatementRows(duck), sql, written=OpResult(count if counted else -1, message))

    def _create_view(self, duck: Duck, view: ViewDefinition, params: Any, resolve: Resolve) -> OpResult:
        name = view.name.lower()
        if name in self.tables:
            raise UserError(f"{view.name} is a temporary table of this session: drop it or pick another name")
        if name in self.views and not view.replace:
            if view.if_not_exists:
                return OpResult(message=f"view {view.name} already exists")
            raise UserError(f"view {view.name} already exists (CREATE OR REPLACE VIEW replaces it)")
        query = parse_query(view.query)
        if any(t.token_type.name in ("PLACEHOLDER", "PARAMETER") for t in query.tokens):
            raise UserError(f"view {view.name}: a view's query cannot take parameters")
        # the query must run now (as Spark checks a view when it is made), its columns named
        pending = SessionObjects()
        pending.views = {**self.views, name: view}
        body = pending.expand(view.query, (name,))
        statement = parse_statement(f"SELECT * FROM ({body}) AS {quote_identifier(name)} LIMIT 0")
        sql, scans = resolve(statement, params, duck, None)
        try:
            columns = queries.describe(duck, sql)
        except Exception as e:
            translated = translate_duckdb_error(e, scans, bool(scans), con=duck)
            if translated is None:
                raise
            raise translated from e
        if view.columns and len(columns) != len(view.columns):
            raise UserError(
                f"view {view.name} names {len(view.columns)} columns but its query has {len(columns)}"
            )
        with self._lock:
            replaced = name in self.views
            self.views[name] = view
        return OpResult(message=f"{'replaced' if replaced else 'created'} view {view.name}")

    def _drop_view(self, drop: DropView) -> OpResult:
        name = drop.name.lower()
        with self._lock:
            if self.views.pop(name, None) is not None:
                return OpResult(message=f"dropped view {drop.name}")
        if drop.if_exists:
            return OpResult(message=f"no view {drop.name} to drop")
        if name in self.tables:
            raise UserError(f"{drop.name} is a temporary table, not a view: DROP TABLE {drop.name}")
        raise NotFoundError(f"view {drop.name} does not exist")

    def _set(self, duck: Duck, setting: Setting, resolve: Resolve) -> OpResult:
        if setting.name.lower() == PRUNING and not setting.variable:
            self.pruning = True if setting.value is None else boolean_setting(setting.name, setting.value)
            return OpResult(message=f"{'reset' if setting.value is None else 'set'} {setting.name}")
        field = wap.SETTINGS.get(setting.name.lower())
        if field is not None and not setting.variable:  # kept here, handed to writes
            value = None if setting.value is None else wap.setting_value(setting.name, setting.value)
            self.wap = replace(self.wap, **{field: value})
            return OpResult(message=f"{'reset' if value is None else 'set'} {setting.name}")
        key = (setting.name.lower(), setting.variable)
        word = "variable " if setting.variable else ""
        if setting.value is None:
            if setting.variable:
                duck_objects.reset_variable(duck, setting.name)
            else:
                duck_objects.reset_setting(duck, setting.name)
            self.replayed.pop(key, None)
            return OpResult(message=f"reset {word}{setting.name}")
        if setting.variable:  # a value may read Iceberg tables: SET VARIABLE top = (SELECT max(x) FROM ns.t)
            # read as a select item with an alias, which the rewrite leaves as written (an
            # unaliased one would be given the name DuckDB heads its column with)
            select, alias = "SELECT ", " AS value"
            text = select + self.expand(setting.value) + alias
            value, _ = resolve(parse_statement(text), None, duck, None)
            replayed: duck_objects.Replayed | None = duck_objects.set_variable(
                duck, setting.name, value[len(select) : -len(alias)]
            )
        else:
            replayed = duck_objects.apply_setting(duck, setting.name, setting.value)
        if replayed is not None:
            self.replayed[key] = replayed
        return OpResult(message=f"set {word}{setting.name}")
