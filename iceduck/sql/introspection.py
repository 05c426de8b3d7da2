"""DuckDB's catalog views and table functions in a query, and its statements that list
tables, so the session can answer them with the Iceberg tables too.

Tools find tables the way DuckDB offers (DBeaver and DataGrip read ``information_schema``,
jupysql and Superset ``duckdb_tables()`` / ``SHOW ALL TABLES``); in an iceduck session
DuckDB's own catalog holds only the connection's temporary tables, so these sources are
found here (:func:`system_refs`) and the session replaces each by DuckDB's rows followed by
the Iceberg catalog's (:mod:`iceduck.session.introspection`):

* views ``information_schema.tables|columns|schemata|views`` (also led by ``system.``);
* table functions ``duckdb_databases()``, ``duckdb_schemas()``, ``duckdb_tables()``,
  ``duckdb_views()``, ``duckdb_columns()`` (also
  written without parentheses, as DuckDB allows) and ``pragma_table_info('name')``;
* statements ``SHOW ALL TABLES`` and ``PRAGMA table_info('name')`` -- the queries DuckDB
  expands them to, over the sources above (:func:`parse_introspection`) -- and
  ``PRAGMA show_tables`` (DuckDB's ``SHOW TABLES``: the current schema's, here the current
  namespace's, so the session writes that query: :func:`show_tables_query`). iceduck's own
  ``SHOW TABLES`` keeps Spark's meaning (namespace and name).

Listing names is cheap (catalog calls); a column's type needs the table's metadata. Which
of a source's columns need metadata is :data:`METADATA_COLUMNS`; a query that names none
of them (and has no ``*`` over the source) loads no table. A ``WHERE`` on the schema or
table name (``=``, ``IN``) is read as a filter on what is listed (:class:`NameFilter`):
only an optimisation, the query keeps its WHERE.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from iceduck.errors import UserError
from iceduck.sql.columns import columns_used
from iceduck.sql.literals import Kind, literal_of
from iceduck.sql.parse import Statement, parse_statement, tokenize
from iceduck.sql.references import TableRef, _call_end, _is_cte

TABLES = "tables"
COLUMNS = "columns"
SCHEMATA = "schemata"
DUCKDB_TABLES = "duckdb_tables"
DUCKDB_COLUMNS = "duckdb_columns"
DUCKDB_SCHEMAS = "duckdb_schemas"
DUCKDB_DATABASES = "duckdb_databases"
VIEWS = "views"
DUCKDB_VIEWS = "duckdb_views"
TABLE_INFO = "pragma_table_info"

#: ``information_schema.<view>`` -> kind
_VIEWS = {TABLES: TABLES, COLUMNS: COLUMNS, SCHEMATA: SCHEMATA, VIEWS: VIEWS}
#: table functions -> kind
_FUNCTIONS = frozenset(
    {DUCKDB_TABLES, DUCKDB_VIEWS, DUCKDB_COLUMNS, DUCKDB_SCHEMAS, DUCKDB_DATABASES, TABLE_INFO}
)

#: the columns (lower case) whose values need a table's metadata, by kind: every row of a
#: column listing is a column, so all of them; a table's comment, size, column count and
#: definition (a view's too); nothing of a schema
METADATA_COLUMNS: dict[str, frozenset[str] | None] = {
    TABLES: frozenset({"table_comment"}),
    VIEWS: frozenset({"view_definition"}),
    DUCKDB_VIEWS: frozenset({"comment", "column_count", "sql"}),
    SCHEMATA: frozenset(),
    DUCKDB_SCHEMAS: frozenset(),
    DUCKDB_DATABASES: frozenset(),
    DUCKDB_TABLES: frozenset({"comment", "estimated_size", "column_count", "sql"}),
    COLUMNS: None,
    DUCKDB_COLUMNS: None,
    TABLE_INFO: None,
}

#: the column holding the schema name / table name, by kind (what a WHERE may filter on)
_SCHEMA_COLUMN = {
    TABLES: "table_schema",
    COLUMNS: "table_schema",
    SCHEMATA: "schema_name",
    DUCKDB_TABLES: "schema_name",
    DUCKDB_COLUMNS: "schema_name",
    DUCKDB_SCHEMAS: "schema_name",
    VIEWS: "table_schema",
    DUCKDB_VIEWS: "schema_name",
}
_TABLE_COLUMN = {
    **dict.fromkeys((TABLES, COLUMNS, DUCKDB_TABLES, DUCKDB_COLUMNS, VIEWS), "table_name"),
    DUCKDB_VIEWS: "view_name",
}


#: what the text of a statement reading one of the sources holds
_WORDS = ("information_schema", "duckdb_", TABLE_INFO)


@dataclass(frozen=True)
class NameFilter:
    """The schema and table names a query can keep (None: any), read from its WHERE."""

    schemas: frozenset[str] | None = None
    tables: frozenset[str] | None = None

    def keeps_schema(self, name: str) -> bool:
        return self.schemas is None or name in self.schemas

    def keeps_table(self, name: str) -> bool:
        return self.tables is None or name in self.tables


@dataclass(frozen=True)
class SystemRef:
    """One reference to a DuckDB catalog source: which ``kind``, where (``ref``: the span the
    rewrite replaces), the name ``pragma_table_info`` was given, whether the query uses a
    column that needs the tables' metadata, and the names its WHERE keeps."""

    kind: str
    ref: TableRef
    own: str
    argument: str | None = None
    needs_metadata: bool = True
    filter: NameFilter = NameFilter()


def system_refs(statement: Statement, params: object = None) -> list[SystemRef]:
    """The DuckDB catalog sources ``statement`` reads (none in a DESCRIBE, which shows
    DuckDB's columns of the view as they are)."""
    if statement.kind == "DESCRIBE" or not any(word in statement.text.lower() for word in _WORDS):
        return []  # most statements are answered by the text, without a walk of the tree
    found: list[tuple[str, exp.Table, TableRef, str, str | None]] = []
    for node in statement.tree.find_all(exp.Table):
        located = _locate(statement, node)
        if located is not None:
            found.append((located[0], node, *located[1:]))
    if not found:
        return []
    used = columns_used(statement.tree, {id(node) for _, node, *_ in found})
    refs = []
    for kind, node, ref, own, argument in found:
        needed = METADATA_COLUMNS[kind]
        whole = used.names is None or id(node) in used.whole
        needs = needed is None or (bool(needed) and (whole or bool(needed & (used.names or frozenset()))))
        refs.append(SystemRef(kind, ref, own, argument, needs, _name_filter(kind, node, ref, params)))
    return sorted(refs, key=lambda r: r.ref.span[0])


def _locate(statement: Statement, node: exp.Table) -> tuple[str, TableRef, str, str | None] | None:
    """(kind, reference, DuckDB's own text of the source, ``pragma_table_info``'s argument)."""
    alias = node.alias or None
    if node.args.get("version") is not None:
        return None
    if isinstance(node.this, exp.Anonymous):
        name = node.this.name.lower()
        if name not in _FUNCTIONS or node.args.get("db"):
            return None
        start = node.this.meta["start"]
        end = _call_end(statement.tokens, start)
        argument = _argument(node.this) if name == TABLE_INFO else None
        ref = TableRef(node, (), alias, (start, end), function=name)
        return name, ref, statement.text[start:end], argument
    parts = node.parts
    if not parts or not all(isinstance(p, exp.Identifier) for p in parts):
        return None
    names = tuple(p.name.lower() for p in parts)
    if len(names) == 1 and names[0] in _FUNCTIONS - {TABLE_INFO} and not _is_cte(node):
        kind = names[0]
    elif names[-2:-1] == ("information_schema",) and names[-1] in _VIEWS and names[:-2] in ((), ("system",)):
        kind = _VIEWS[names[-1]]
    else:
        return None
    start, end = parts[0].meta["start"], parts[-1].meta["end"] + 1
    ref = TableRef(node, tuple(p.name for p in parts), alias, (start, end), function=kind)
    return kind, ref, statement.text[start:end], None


def _argument(call: exp.Anonymous) -> str:
    args = call.expressions
    if len(args) != 1 or not (isinstance(args[0], exp.Literal) and args[0].is_string):
        raise UserError("pragma_table_info() takes one string: the name of a table")
    return str(args[0].this)


def _name_filter(kind: str, node: exp.Table, ref: TableRef, params: object) -> NameFilter:
    """The schema and table names the WHERE of the SELECT reading ``node`` (alone in its
    FROM) keeps: conjuncts ``col = 'x'`` and ``col IN ('x', ...)`` on the name columns."""
    select = node.parent.parent if isinstance(node.parent, exp.From) else None
    if not isinstance(select, exp.Select) or select.args.get("joins"):
        return NameFilter()
    where = select.args.get("where")
    if where is None:
        return NameFilter()
    names = {ref.alias.lower() if ref.alias else (ref.parts[-1] if ref.parts else ref.function).lower()}
    wanted: dict[str, frozenset[str] | None] = {"schema": None, "table": None}
    columns = {_SCHEMA_COLUMN.get(kind): "schema", _TABLE_COLUMN.get(kind): "table"}
    for conjunct in _conjuncts(where.this):
        found = _name_values(conjunct, names, params)
        if found is None or found[0] not in columns:
            continue
        which = columns[found[0]]
        previous = wanted[which]
        wanted[which] = found[1] if previous is None else previous & found[1]
    return NameFilter(wanted["schema"], wanted["table"])


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    return [node]


def _name_values(node: exp.Expr, tables: set[str], params: object) -> tuple[str, frozenset[str]] | None:
    """(column, the strings it must equal) of ``col = 'x'`` / ``col IN ('x', ...)``."""
    if isinstance(node, exp.EQ):
        column, values = node.this, [node.expression]
        if not isinstance(column, exp.Column):
            column, values = node.expression, [node.this]
    elif isinstance(node, exp.In) and not node.args.get("query") and not node.args.get("unnest"):
        column, values = node.this, list(node.expressions)
    else:
        return None
    if not isinstance(column, exp.Column) or (column.table and column.table.lower() not in tables):
        return None
    strings = []
    for value in values:
        literal = literal_of(value, params)
        if literal is None or literal.kind is not Kind.STRING:
            return None
        strings.append(str(literal.value))
    return column.name.lower(), frozenset(strings)


# -- statements -----------------------------------------------------------------------------------

#: DuckDB's ``SHOW ALL TABLES`` (its ``PragmaShowTablesExpanded``): its tables, then its
#: views but the internal ones (DuckDB 2.0 lists views there too; a session's own views are
#: iceduck's, expanded where used, not DuckDB's, but the catalog's views are listed)
SHOW_ALL_TABLES = """SELECT t.database_name AS "database", t.schema_name AS "schema", t.table_name AS "name",
  list(c.column_name ORDER BY c.column_index) AS column_names,
  list(c.data_type ORDER BY c.column_index) AS column_types,
  first(t."temporary") AS "temporary"
FROM duckdb_tables() AS t JOIN duckdb_columns() AS c USING (table_oid)
GROUP BY t.database_name, t.schema_name, t.table_name, t.table_oid
UNION ALL
SELECT v.database_name, v.schema_name, v.view_name,
  list(c.column_name ORDER BY c.column_index),
  list(c.data_type ORDER BY c.column_index),
  first(v."temporary")
FROM duckdb_views() AS v JOIN duckdb_columns() AS c ON v.view_oid = c.table_oid
WHERE NOT v.internal
GROUP BY v.database_name, v.schema_name, v.view_name, v.view_oid
ORDER BY "database", "schema", "name\""""


@dataclass(frozen=True)
class ShowTables:
    """``PRAGMA show_tables``: DuckDB's ``SHOW TABLES``, the tables of the current schema
    (the session writes the query: :func:`show_tables_query`)."""


def parse_introspection(text: str) -> Statement | ShowTables | None:
    """``SHOW ALL TABLES`` and ``PRAGMA table_info('t')`` as the queries DuckDB runs for
    them, ``PRAGMA show_tables`` as :class:`ShowTables`; None for any other statement."""
    words = [t.text for t in tokenize(text.strip().rstrip(";").strip())]
    upper = [w.upper() for w in words]
    if upper == ["SHOW", "ALL", "TABLES"]:
        return parse_statement(SHOW_ALL_TABLES)
    if upper[:1] != ["PRAGMA"] or len(upper) < 2:
        return None
    if upper[1:] == ["SHOW_TABLES"]:
        return ShowTables()
    if upper[1] == "TABLE_INFO":
        body = text.strip().rstrip(";").strip()[len("PRAGMA") :].strip()
        return parse_statement(f"SELECT * FROM pragma_{body}")
    return None


def show_tables_query(catalog: str, namespace: str | None) -> str:
    """DuckDB's ``SHOW TABLES`` (``PRAGMA show_tables``: the names of the tables in the
    search path, sorted), with the current namespace's Iceberg tables when one is set."""
    current = "in_search_path(database_name, schema_name)"
    if namespace is not None:
        current += f" OR (database_name = {_string(catalog)} AND schema_name = {_string(namespace)})"
    return f'SELECT table_name AS "name" FROM duckdb_tables() WHERE {current} ORDER BY "name"'


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
