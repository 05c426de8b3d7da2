"""Running SQL on a statement's DuckDB cursor: the calls the session and the table
operations make, so that only the engine calls DuckDB.

The session binds a query (:func:`run`: its rows are computed when first fetched), runs
its ``EXPLAIN`` (:func:`explain`), the rows of ``SHOW`` and of EXPLAIN's text
(:func:`select_lists`), the time of a
``TIMESTAMP AS OF`` expression (:func:`epoch_ms`) and registers metadata tables
(:func:`register_arrow`). Table operations ask for a query's rows (:func:`rows`,
:func:`arrow_rows`), its columns (:func:`describe`: one ``LIMIT 0`` probe, which binds
the query without computing a row), an Arrow table registered for a while
(:func:`registered`) and temporary tables (:func:`temp_table`).

Parameters are passed as DuckDB takes them (:func:`duck_params`); a piece of a statement
gets only the parameters it names, which the caller picks (DuckDB refuses unused ones).
Every other result is fetched to the end: DuckDB refuses more work on a cursor whose last
result is unfinished.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import duckdb

from iceduck.engine.errors import duckdb_call
from iceduck.engine.results import Running, StatementRows
from iceduck.engine.types import quote_identifier
from iceduck.lru import LRUCache

if TYPE_CHECKING:
    import pyarrow as pa

    from iceduck.engine.connection import Duck

#: the alias of a query probed for its columns
_PROBED = "__iceduck_q"


def duck_params(params: Any) -> Any:
    """Parameters as DuckDB takes them (``$1`` numbering keeps positional lists as they are)."""
    if params is None:
        return None
    if isinstance(params, dict):
        return params
    return list(params)


def run(duck: Duck, sql: str, params: Any = None, running: Running = nullcontext) -> StatementRows:
    """Bind query ``sql`` on ``duck`` (its catalog and binder errors raise here); the rows,
    which the first fetch computes in the form it asks for (see :mod:`iceduck.engine.results`),
    each read inside ``running()``."""
    return StatementRows.bind(duck, sql, params, running)


def rows(duck: Duck, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    """The rows of ``sql``, all fetched."""
    return duck.execute(sql, params).fetchall()


def arrow_rows(duck: Duck, sql: str, params: Any = None) -> pa.Table:
    """The rows of ``sql`` as a ``pyarrow.Table``."""
    return duck.sql(sql, params=params).to_arrow_table()


def describe(duck: Duck, query: str, params: Any = None) -> list[tuple[str, Any]]:
    """(name, DuckDB type) of each column ``query`` yields, without computing a row.

    Duplicate names come back renamed as DuckDB names them (``a``, ``a_1``): the query is
    read as a derived table.
    """
    cursor = duck.execute(f"SELECT * FROM ({query}) AS {_PROBED} LIMIT 0", params)
    described = [(d[0], d[1]) for d in cursor.description or ()]
    cursor.fetchall()  # leave no unfinished result on the cursor
    return described


def item_names(
    duck: Duck, items: Sequence[str], known: LRUCache[str, tuple[str | None]] | None = None
) -> list[str | None]:
    """The name DuckDB heads each unaliased select item of ``items`` (SQL text) with: the
    item parsed and printed back (``(SELECT max(id) FROM shop.orders)``, ``count_star()``),
    which needs no binding, so the tables it names need not exist. None for text DuckDB's
    parser refuses (the statement's own run then says why).

    ``known`` keeps the names found, by item text: a name is DuckDB's parser's print of the
    text alone (nothing it names is looked up), so it holds as long as the text is the same,
    and a statement run again with new parameters asks DuckDB nothing (0.1 ms an item)."""
    names: list[str | None] = []
    for item in items:
        found = None if known is None else known.get(item)
        if found is not None:
            names.append(found[0])
            continue
        names.append(_item_name(duck, item))
        if known is not None:
            known.put(item, (names[-1],))
    return names


def _item_name(duck: Duck, item: str) -> str | None:
    """:func:`item_names` of one item, asked of DuckDB."""
    printed = "SELECT json_deserialize_sql(json_serialize_sql($1))"
    try:
        row = duck.execute(printed, [f"SELECT {item}"]).fetchone()
    except duckdb.Error:
        return None
    text = str(row[0]) if row else ""
    return text[len("SELECT ") :] if text.startswith("SELECT ") else None


def explain(duck: Duck, sql: str, params: Any = None) -> list[str]:
    """DuckDB's plan text of ``sql`` (an ``EXPLAIN [ANALYZE] ...`` statement), one string
    per plan it prints."""
    return [str(plan) for _, plan in duck.execute(sql, params).fetchall()]


def select_lists(duck: Duck, columns: Mapping[str, Sequence[str | None]]) -> None:
    """Run a query whose rows are ``columns`` (name -> text values or None for NULL, all
    the same length), leaving them on ``duck`` as a statement's rows: how SHOW, EXPLAIN and
    DESCRIBE of a table answer."""
    items = ", ".join(
        f"unnest(${n}::VARCHAR[]) AS {quote_identifier(name)}" for n, name in enumerate(columns, 1)
    )
    duck.execute(f"SELECT {items}", [list(values) for values in columns.values()])


def epoch_ms(duck: Duck, expression: str, params: Any = None) -> int | None:
    """Epoch millis of a timestamp expression, computed by DuckDB (``TIMESTAMP AS OF now()``;
    ``$1`` with ``params`` for a Python ``datetime``, a naive one read in the session's zone)."""
    # fetchall: the cursor must be left with no unfinished result for the statement's next query
    sql = f"SELECT epoch_ms(CAST(({expression}) AS TIMESTAMPTZ))"
    rows = duckdb_call(duck.execute, sql, params).fetchall()
    return None if not rows or rows[0][0] is None else int(rows[0][0])


def register_arrow(duck: Duck, name: str, table: pa.Table) -> None:
    """Make ``table`` readable as ``name`` on ``duck`` (until the cursor closes)."""
    duck.register(name, table)


@contextmanager
def registered(duck: Duck, name: str, table: pa.Table) -> Iterator[str]:
    """``table`` readable as ``name`` on ``duck`` for the block; yields the quoted name."""
    duck.register(name, table)
    try:
        yield quote_identifier(name)
    finally:
        duck.unregister(name)


def create_temp_table(duck: Duck, name: str, query: str, params: Any = None) -> str:
    """Store the rows of ``query`` as temporary table ``name``; its quoted name."""
    table = quote_identifier(name)
    rows(duck, f"CREATE TEMP TABLE {table} AS {query}", params)
    return table


def empty_table(duck: Duck, name: str, relation: str, not_null: Sequence[str]) -> str:
    """An empty temporary table ``name`` with the columns of ``relation``, those named in
    ``not_null`` declared NOT NULL; its quoted name. DESCRIBE of a query reads tables
    through these: DuckDB then reports a column taken straight from a required one as
    ``null = NO``, as it does over its own tables (a view's columns are all nullable)."""
    table = create_temp_table(duck, name, f"SELECT * FROM {relation} LIMIT 0")
    for column in not_null:
        rows(duck, f"ALTER TABLE {table} ALTER COLUMN {quote_identifier(column)} SET NOT NULL")
    return table


def drop_temp_table(duck: Duck, name: str) -> None:
    rows(duck, f"DROP TABLE IF EXISTS {quote_identifier(name)}")


@contextmanager
def temp_table(duck: Duck, name: str, query: str, params: Any = None) -> Iterator[str]:
    """The rows of ``query`` as temporary table ``name`` for the block (dropped after it,
    whatever happens); yields the quoted name."""
    table = create_temp_table(duck, name, query, params)
    try:
        yield table
    finally:
        drop_temp_table(duck, name)


def printed_query(duck: Duck, query: str) -> str:
    """A SELECT as DuckDB prints it back (its parse serialized and deserialized: DuckDB's own
    spelling, as ``duckdb_views().sql`` shows a view's query); the text as given when DuckDB
    cannot (a statement it cannot serialize)."""
    try:
        found = duck.execute("SELECT json_deserialize_sql(json_serialize_sql(?))", [query]).fetchone()
    except duckdb.Error:
        return query
    return query if found is None or found[0] is None else str(found[0])
