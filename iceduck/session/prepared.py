"""Repeated queries: what the second run of the same text with the same parameters reuses.

A dashboard or an ORM sends the same statements again and again (``cur.execute("SELECT ...
WHERE device_id = ? AND ts >= ?", params)`` in a loop). Between two such runs nothing of
steps 2-9 of the life of a query (:mod:`iceduck.session.session`) changes unless a table
got a new snapshot or the session changed: the classification, the references, the row
filters pushed down (which read the parameters' values: ``WHERE id = ?`` prunes like
``WHERE id = 5``), the scans planned and attached, the rewritten text, DuckDB's parse of it
and the columns its binding gave. A :class:`PreparedQuery` keeps all of that -- the DuckDB
cursor holding the scans' variables, DuckDB's parsed statement and the description -- and a
repeated run only checks that every table it read is still at the version planned, then
runs the parsed statement on that cursor.

What makes an entry valid, and so what it is keyed or checked by:

* the text and the parameters' values (the key): the values enter planning;
* the session's state (``generation``): a statement on the session's own objects (views,
  temporary tables, macros, ``SET``), ``USE``, ``ATTACH``/``DETACH`` and a change of the
  connection's registered objects start a new generation, which no older entry matches;
* each table read (checked at every run, never skipped): the reference is resolved again
  through the catalog exactly as a first run resolves it (:func:`resolve_source`: one
  ``load_table``, whose metadata file is cached by location), and its metadata location,
  snapshot id and schema id must be those planned. A snapshot committed since, by this
  connection or by any other writer of the table, moves the metadata location: the entry is
  dropped and the statement planned afresh.

Only plain queries over Iceberg tables are kept: no time travel (``TIMESTAMP AS OF now()``
moves), no metadata tables, no Python objects, no Paimon tables, nothing inside a
transaction (which sees its own uncommitted writes), no ``EXPLAIN`` or ``DESCRIBE``.

What a kept query holds is bounded: ``PREPARED_QUERIES`` queries, and ``KEPT_FILES`` data files
planned over all of them (a scan's file list lives on its cursor); a query planned over more
files than that alone is not kept (its run is long beside what keeping saves).
A DuckDB cursor has one result at a time and holds the scans' variables, so an entry lends
its cursor to one result at a time: a repeated run whose cursor is still lent (an earlier
result of the same statement is still open) runs the whole way on a cursor of its own.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iceduck.engine import connection as engine
from iceduck.engine.results import Running, StatementRows
from iceduck.errors import IceduckError
from iceduck.session.caller_scope import PythonScope
from iceduck.session.iceberg_sources import Lookup, Source, resolve_source
from iceduck.session.python_objects import shadows
from iceduck.session.result import Result

if TYPE_CHECKING:
    from iceduck.catalog.base import LoadedTable, TableIdentifier
    from iceduck.engine.connection import Duck
    from iceduck.sql.explain import ScanExplanation
    from iceduck.sql.references import TableRef

#: how many repeated queries a session keeps ready (each holds a DuckDB cursor)
PREPARED_QUERIES = 64
#: how many data files the kept queries' plans may list in all
KEPT_FILES = 20_000


@dataclass(frozen=True)
class TableVersion:
    """What a planned scan read of a table: the metadata file, the snapshot and the schema."""

    metadata_location: str
    snapshot_id: int | None
    schema_id: int


def version_of(source: Source) -> TableVersion:
    return TableVersion(
        source.loaded.metadata_location, source.target.snapshot_id, source.target.schema.schema_id
    )


def prepared_key(text: str, params: Any, is_table: Callable[[Any], bool]) -> Hashable | None:
    """The key of a query's plan: its text and parameters; None when a parameter is a
    table (``FROM ?``: registered per run) or cannot be part of a key."""
    values = params.values() if isinstance(params, dict) else params or ()
    if any(is_table(value) for value in values):
        return None
    found = parameters_key(params)
    return None if found is None else (text, found)


def parameters_key(params: Any) -> Hashable | None:
    """The parameters' values as part of a key (type, value and text: ``1`` and ``True`` and
    ``1.0`` differ, and so do values Python calls equal that DuckDB binds or prints otherwise:
    ``Decimal('1.0')`` and ``Decimal('1.00')`` (another scale), ``0.0`` and ``-0.0``, one
    instant in two time zones); None when a value cannot be a key (a list), so the query is
    not kept."""
    if params is None:
        return ()
    items = sorted(params.items()) if isinstance(params, dict) else list(enumerate(params))
    key = tuple((name, type(value), value, repr(value)) for name, value in items)
    try:
        hash(key)
    except TypeError:
        return None
    return key


@dataclass
class PreparedQuery:
    """One query as planned, attached and bound on its own DuckDB cursor."""

    duck: Duck
    #: DuckDB's parsed statement of the rewritten text, and the rewritten text
    statement: Any
    sql: str
    description: list[tuple[str, Any]]
    refs: tuple[TableRef, ...]
    versions: tuple[TableVersion, ...]
    scans: list[ScanExplanation]
    generation: Hashable
    #: the data files its scans list (what it holds, see :data:`KEPT_FILES`)
    files: int = 0
    #: the rows the cursor is lent to now (None, or dead: the cursor is free)
    lent: weakref.ref[StatementRows] | None = None
    #: dropped from the cache while lent: the cursor closes with the result
    dropped: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def lend(self, rows: StatementRows) -> bool:
        """Lend the cursor to ``rows`` unless an open result holds it; whether it was lent."""
        with self._lock:
            holder = None if self.lent is None else self.lent()
            if holder is not None and not holder.closed:
                return False
            if self.lent is not None:  # a result dropped unread may leave its rows pending
                engine.abort(self.duck)
            self.lent = weakref.ref(rows)
            return True

    def released(self) -> None:
        """The lent result closed: the cursor is free again (or closes, when dropped)."""
        with self._lock:
            self.lent = None
            if self.dropped:
                engine.close(self.duck)

    def drop(self) -> None:
        with self._lock:
            self.dropped = True
            holder = None if self.lent is None else self.lent()
            if holder is None or holder.closed:
                engine.close(self.duck)


class PreparedQueries:
    """A session's repeated queries, by (text, parameters); least recently used go first."""

    def __init__(self, max_entries: int = PREPARED_QUERIES, max_files: int = KEPT_FILES) -> None:
        self.max_entries = max_entries
        self.max_files = max_files
        self._entries: OrderedDict[Hashable, PreparedQuery] = OrderedDict()
        self._files = 0
        self._lock = threading.Lock()

    def keep(self, key: Hashable, query: PreparedQuery, rows: StatementRows) -> None:
        """Keep ``query`` under ``key``; ``rows``, the first run's, holds its cursor now."""
        if query.files > self.max_files:
            return
        query.lent = weakref.ref(rows)
        rows.release = query.released
        gone: list[PreparedQuery] = []
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                gone.append(old)
                self._files -= old.files
            self._entries[key] = query
            self._files += query.files
            while len(self._entries) > self.max_entries or self._files > self.max_files:
                evicted = self._entries.popitem(last=False)[1]
                self._files -= evicted.files
                gone.append(evicted)
        for dropped in gone:
            dropped.drop()

    def run(
        self,
        key: Hashable,
        generation: Hashable,
        lookup: Lookup,
        scope: PythonScope,
        params: Any,
        running: Callable[[Duck], Running],
    ) -> Result | None:
        """The result of the query kept under ``key`` run again with ``params``, if it is
        still valid (see the module docstring) and its cursor free; else None, and the
        statement runs the whole way."""
        with self._lock:
            query = self._entries.get(key)
            if query is not None:
                self._entries.move_to_end(key)
        if query is None:
            return None
        if query.generation != generation or not _unchanged(query, lookup, scope):
            self._forget(key, query)
            return None
        rows = StatementRows.pending(
            query.duck, query.statement, params, query.description, running(query.duck), query.released
        )
        if not query.lend(rows):
            return None
        return Result(rows, query.sql, list(query.scans))

    def _forget(self, key: Hashable, query: PreparedQuery) -> None:
        with self._lock:
            if self._entries.get(key) is query:
                del self._entries[key]
                self._files -= query.files
        query.drop()

    def clear(self) -> None:
        with self._lock:
            gone = list(self._entries.values())
            self._entries.clear()
            self._files = 0
        for query in gone:
            query.drop()


def _unchanged(query: PreparedQuery, lookup: Lookup, scope: PythonScope) -> bool:
    """Whether every table ``query`` read resolves, now, to the version it was planned on
    (one catalog load per table, as any run does), and no registered object took its name."""
    loaded: dict[TableIdentifier, LoadedTable] = {}
    try:
        for ref, version in zip(query.refs, query.versions, strict=True):
            if shadows(scope, ref):
                return False
            source = resolve_source(ref, loaded, lookup)
            if source is None or version_of(source) != version:
                return False
    except IceduckError:  # the table is gone, or its metadata unreadable: the full run says why
        return False
    return True


def keepable(
    sources: Sequence[Source], refs: Sequence[TableRef], python: Sequence[Any], paimon: Sequence[Any]
) -> bool:
    """Whether a query's plan may be kept: every reference an Iceberg table's data (no
    metadata table, no time travel), no Python object or Paimon table."""
    return (
        bool(sources)
        and len(sources) == len(refs)
        and not python
        and not paimon
        and all(s.metadata_table is None and s.ref.time_travel is None and not s.time_travel for s in sources)
    )
