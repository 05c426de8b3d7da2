"""Tab completion for the shell: keywords, namespaces, tables, columns, metadata tables, dot commands.

Names come from the connection's catalog and are cached: the namespace and table lists for
a few seconds (another process -- Spark -- may create tables meanwhile), columns per table
until a statement of this shell changes the catalog (:meth:`SqlCompleter.invalidate`).

What is offered depends on the word under the cursor:

* ``ns.`` -> the tables and child namespaces of ``ns``;
* ``ns.t.`` -> the table's metadata tables (``snapshots``, ``files``, ...) and columns;
* ``p.``, ``p.db.``, ``p.db.t.`` of an attached Paimon warehouse ``p`` -> its databases, their
  tables, a table's system tables;
* ``alias.`` -> the columns of the table ``alias`` names in the statement;
* a word after ``FROM``, ``JOIN``, ``INTO``, ``UPDATE``, ``TABLE``, ``DESCRIBE`` -> namespaces
  and tables only (no keyword or column can stand there);
* another plain word -> keywords, namespaces, tables as ``ns.t`` (matched on either part) and
  the columns of the tables the statement mentions.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from iceduck.catalog.base import Catalog, Namespace, TableIdentifier
from iceduck.catalog.paimon_warehouse import PaimonWarehouse
from iceduck.scan.paimon.metadata_tables import PAIMON_SYSTEM_TABLES
from iceduck.shell.commands import all_namespaces
from iceduck.sql.references import METADATA_TABLES

KEYWORDS = (
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "DISTINCT",
    "AS",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "LIKE",
    "ILIKE",
    "BETWEEN",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "JOIN",
    "LEFT JOIN",
    "RIGHT JOIN",
    "FULL JOIN",
    "INNER JOIN",
    "CROSS JOIN",
    "ON",
    "USING",
    "UNION",
    "UNION ALL",
    "EXCEPT",
    "INTERSECT",
    "WITH",
    "ASC",
    "DESC",
    "NULLS FIRST",
    "NULLS LAST",
    "CAST",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "EXPLAIN",
    "EXPLAIN ANALYZE",
    "DESCRIBE",
    "SHOW TABLES",
    "SHOW NAMESPACES",
    "SHOW COLUMNS FROM",
    "SHOW PARTITIONS",
    "DESCRIBE EXTENDED",
    "INSERT INTO",
    "INSERT OVERWRITE",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE FROM",
    "MERGE INTO",
    "WHEN MATCHED",
    "WHEN NOT MATCHED",
    "CREATE TABLE",
    "CREATE NAMESPACE",
    "CREATE OR REPLACE TABLE",
    "IF NOT EXISTS",
    "IF EXISTS",
    "DROP TABLE",
    "DROP NAMESPACE",
    "ALTER TABLE",
    "ADD COLUMN",
    "DROP COLUMN",
    "RENAME COLUMN",
    "RENAME TO",
    "PARTITIONED BY",
    "TBLPROPERTIES",
    "CREATE BRANCH",
    "CREATE TAG",
    "FOR VERSION AS OF",
    "FOR TIMESTAMP AS OF",
    "VERSION AS OF",
    "TIMESTAMP AS OF",
    "TRUE",
    "FALSE",
    "BIGINT",
    "INTEGER",
    "VARCHAR",
    "STRING",
    "DOUBLE",
    "DECIMAL",
    "BOOLEAN",
    "DATE",
    "TIMESTAMP",
    "TIMESTAMPTZ",
)
#: how long the namespace and table lists are trusted, in seconds
NAMES_TTL_S = 5.0
_WORD = re.compile(r'[\w."$]*$')
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: a dotted name and the alias after it: ``ns.t e``, ``ns.t AS e``
#: the keyword before a word that must name a table (``FROM sho`` -> ``shop.orders``)
_TABLE_CONTEXT = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE|DESCRIBE|USING|EXTENDED|FORMATTED|PARTITIONS)\s+$", re.IGNORECASE
)
_REFERENCE = re.compile(r'([\w"]+(?:\.[\w"]+)+)(?:\s+(?:AS\s+)?([A-Za-z_]\w*))?', re.IGNORECASE)


def quote(name: str) -> str:
    """``name`` as SQL spells it: quoted unless a plain identifier."""
    return name if _SIMPLE.fullmatch(name) else '"' + name.replace('"', '""') + '"'


@dataclass
class _Names:
    """The catalog's namespaces and tables at one moment."""

    namespaces: list[Namespace] = field(default_factory=list)
    tables: list[TableIdentifier] = field(default_factory=list)
    read_at: float = 0.0


class SqlCompleter(Completer):
    """A prompt_toolkit completer over one catalog."""

    def __init__(
        self,
        catalog: Catalog,
        dot_commands: Iterable[str] = (),
        paimon: Mapping[str, PaimonWarehouse] | None = None,
    ) -> None:
        self.catalog = catalog
        #: the session's attached Paimon warehouses by lower-case alias (ATTACH changes it)
        self.paimon = paimon if paimon is not None else {}
        self.dot_commands = sorted(dot_commands)
        self._names = _Names()
        self._columns: dict[TableIdentifier, list[str]] = {}

    def invalidate(self) -> None:
        """Forget cached names (after a statement that may have changed the catalog)."""
        self._names = _Names()
        self._columns.clear()

    # -- catalog names --------------------------------------------------------------------------

    def names(self) -> _Names:
        if time.monotonic() - self._names.read_at > NAMES_TTL_S:
            try:
                namespaces = all_namespaces(self.catalog)
                tables = [t for ns in namespaces for t in self.catalog.list_tables(ns)]
            except Exception:  # completion never fails the prompt: offer no names this time
                namespaces, tables = [], []
            self._names = _Names(namespaces, tables, time.monotonic())
        return self._names

    def columns(self, table: TableIdentifier) -> list[str]:
        if table not in self._columns:
            try:
                schema = self.catalog.load_table(table).metadata.schema()
                self._columns[table] = [f.name for f in schema.fields]
            except Exception:
                self._columns[table] = []
        return self._columns[table]

    def _table(self, parts: tuple[str, ...]) -> TableIdentifier | None:
        parts = self._strip_catalog(parts)
        if len(parts) < 2:
            return None
        wanted = (tuple(p.lower() for p in parts[:-1]), parts[-1].lower())
        for t in self.names().tables:
            if (tuple(p.lower() for p in t.namespace), t.name.lower()) == wanted:
                return t
        return None

    def _strip_catalog(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        if len(parts) >= 2 and parts[0].lower() == self.catalog.name.lower():
            return parts[1:]
        return parts

    def _referenced(self, text: str) -> dict[str, TableIdentifier]:
        """Tables the statement names, by their alias and their own name (lower case)."""
        found: dict[str, TableIdentifier] = {}
        for m in _REFERENCE.finditer(text):
            table = self._table(tuple(p.strip('"') for p in m[1].split(".")))
            if table is None:
                continue
            found[table.name.lower()] = table
            alias = m[2]
            if alias and alias.upper() not in _KEYWORD_WORDS:
                found[alias.lower()] = table
        return found

    # -- completion -----------------------------------------------------------------------------

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.lstrip().startswith(".") and " " not in before.strip():
            word = before.strip()
            for name in self.dot_commands:
                if name.startswith(word.lower()):
                    yield Completion(name, start_position=-len(word))
            return
        word = _WORD.search(before).group()  # type: ignore[union-attr]
        if "." in word:
            head, _, tail = word.rpartition(".")
            parts = tuple(p.strip('"') for p in head.split("."))
            yield from _matching(self._children(parts, document.text), tail)
            return
        if not word:
            return
        if _TABLE_CONTEXT.search(before[: len(before) - len(word)]):
            yield from _matching(self._tables(), word)
            return
        yield from _matching(self._words(document.text), word)

    def _children(self, parts: tuple[str, ...], text: str) -> list[tuple[str, str]]:
        """What may follow ``parts.``: (name, kind) pairs."""
        warehouse = self.paimon.get(parts[0].lower())
        if warehouse is not None:
            return _paimon_children(warehouse, parts[1:])
        names = self.names()
        inner = self._strip_catalog(parts)
        lowered = tuple(p.lower() for p in inner)
        out: list[tuple[str, str]] = []
        for ns in names.namespaces:
            if len(ns) == len(inner) + 1 and tuple(p.lower() for p in ns[:-1]) == lowered:
                out.append((quote(ns[-1]), "namespace"))
        out.extend(
            (quote(t.name), "table") for t in names.tables if tuple(p.lower() for p in t.namespace) == lowered
        )
        table = self._table(parts)
        if table is not None:
            out.extend((name, "metadata table") for name in sorted(METADATA_TABLES))
            out.extend((quote(c), "column") for c in self.columns(table))
        elif len(parts) == 1:
            aliased = self._referenced(text).get(parts[0].lower())
            if aliased is not None:
                out.extend((quote(c), "column") for c in self.columns(aliased))
        return out

    def _tables(self) -> list[tuple[str, str]]:
        """Top-level namespaces and every table as ``ns.t``."""
        names = self.names()
        out = [(quote(ns[0]), "namespace") for ns in names.namespaces if len(ns) == 1]
        out.extend((".".join(quote(p) for p in (*t.namespace, t.name)), "table") for t in names.tables)
        return out

    def _words(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for table in dict.fromkeys(self._referenced(text).values()):
            out.extend((quote(c), "column") for c in self.columns(table))
        out.extend(self._tables())
        out.extend((k, "keyword") for k in KEYWORDS)
        return out


_KEYWORD_WORDS = frozenset(w for k in KEYWORDS for w in k.split())


def _paimon_children(warehouse: PaimonWarehouse, parts: tuple[str, ...]) -> list[tuple[str, str]]:
    """What may follow ``alias.[db.[table.]]`` of an attached Paimon warehouse: its
    databases, a database's tables, a table's system tables; nothing if a name is missing."""
    try:
        if not parts:
            return [(quote(db), "database") for db in warehouse.databases()]
        if len(parts) == 1:
            return [(quote(t), "table") for t in warehouse.tables(parts[0])]
        if len(parts) == 2 and warehouse.table_location(parts[0], parts[1]):
            return [(name, "system table") for name in PAIMON_SYSTEM_TABLES]
    except Exception:  # completion never fails the prompt: offer nothing this time
        return []
    return []


def _matching(candidates: Iterable[tuple[str, str]], typed: str) -> Iterator[Completion]:
    """Completions of ``typed``: by prefix of the name or of its last dotted part (``ord`` ->
    ``shop.orders``); keywords in the case the user types."""
    lowered = typed.lower().strip('"')
    seen: set[str] = set()
    for name, kind in candidates:
        plain = name.lower().replace('"', "")
        if not (plain.startswith(lowered) or plain.rpartition(".")[2].startswith(lowered)):
            continue
        text = name.lower() if kind == "keyword" and typed.islower() else name
        if text in seen or text == typed:
            continue
        seen.add(text)
        yield Completion(text, start_position=-len(typed), display_meta=kind)
