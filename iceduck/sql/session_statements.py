"""Reading the statements that make, change and use a session's own objects.

A session keeps objects of its own next to the Iceberg catalog, as a DuckDB or Spark
session does: temporary tables, views, macros, settings. These statements run in DuckDB
(views are kept by the session), not through the Iceberg write grammar, so
:func:`session_statement` picks them out before :func:`iceduck.sql.classify.classify`:

* ``CREATE [OR REPLACE] TEMP|TEMPORARY TABLE ...`` and ``CREATE [OR REPLACE] [TEMP] MACRO``
  (``FUNCTION``): a :class:`DuckStatement`, the ``TEMP`` keyword taken out (a DuckDB
  TEMP object lives in one DuckDB connection, and every statement runs on a cursor of
  its own: the session's objects live in its in-memory database's ``main`` schema,
  which no other iceduck connection sees);
* ``INSERT``/``UPDATE``/``DELETE``/``MERGE``/``TRUNCATE``/``ALTER TABLE``/``DROP TABLE`` and
  ``COPY ... FROM`` whose target is one of the session's tables (``tables``);
  ``DROP MACRO [TABLE]``; ``COPY (query) TO`` and ``COPY t TO`` (read as
  ``COPY (SELECT * FROM t) TO``); ``SUMMARIZE``; top-level ``PIVOT`` / ``UNPIVOT``;
* ``CREATE [OR REPLACE] [[GLOBAL] TEMP] VIEW [IF NOT EXISTS] v [(cols)] AS query`` and
  ``DROP VIEW [IF EXISTS] v``: a :class:`ViewDefinition` / :class:`DropView`;
* ``SET [GLOBAL|SESSION|LOCAL] name = value`` (or ``TO``), ``RESET [...] name`` and
  ``SET VARIABLE name = expr``: a :class:`Setting`. A name may be dotted
  (``SET iceduck.wap_id = 'x'``, Spark's ``spark.wap.id``): the session keeps those itself.

A one-part name is the only kind a session object has: ``ns.t`` always names an
Iceberg table or view. ``CREATE VIEW v`` makes a session view only while no namespace is in
use (else the catalog's view ``ns.v``, as a table's one-part name means), and ``CREATE
TEMPORARY VIEW`` always (:mod:`iceduck.sql.view_statements`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.parse import Statement, leading_word, parse_statement, tokenize
from iceduck.sql.references import TableRef, table_refs

#: the table node a DuckDB write statement writes (:func:`written_table`), for layers
#: above that hold it without importing sqlglot
WrittenTable: TypeAlias = exp.Table


@dataclass(frozen=True)
class DuckStatement:
    """A statement DuckDB runs on the session's database once its Iceberg references are
    replaced by scans. ``kind`` names it for messages (``INSERT``, ``CREATE TABLE``...);
    ``target`` is the session object it writes (lower case), if any; ``rows`` says it
    answers rows (SUMMARIZE, PIVOT) rather than a count; ``pure`` says it must read no
    Iceberg table (a macro is stored in DuckDB and could not re-plan its scans), ``body``
    being what it reads when sqlglot cannot read the whole statement (a macro's
    ``b := 1`` default): ``statement`` is then a command, run as written."""

    statement: Statement
    kind: str
    target: str | None = None
    rows: bool = False
    pure: bool = False
    body: Statement | None = None


@dataclass(frozen=True)
class ViewDefinition:
    """``CREATE VIEW``: the session keeps ``query`` and expands it where ``name`` is used."""

    name: str
    query: str
    columns: tuple[str, ...] = ()
    replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropView:
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class Setting:
    """``SET name = value`` (``value`` is its SQL text), ``RESET name`` (``value`` None) or
    ``SET VARIABLE name = value`` (``variable``)."""

    name: str
    value: str | None
    variable: bool = False


#: what :func:`session_statement` reads a statement as
SessionStatement = DuckStatement | ViewDefinition | DropView | Setting

#: leading keywords a session statement may start with
KEYWORDS = frozenset(
    {"CREATE", "DROP", "INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE", "ALTER", "COPY", "SET", "RESET",
     "SUMMARIZE", "PIVOT", "UNPIVOT"}
)  # fmt: skip

#: the optional word groups before a write statement's target name, by leading keyword
_TARGET_WORDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "INSERT": (("OR", "REPLACE"), ("OR", "IGNORE"), ("INTO",)),
    "DELETE": (("FROM",),),
    "UPDATE": (),
    "MERGE": (("INTO",),),
    "TRUNCATE": (("TABLE",),),
    "ALTER": (("TABLE",), ("IF", "EXISTS")),
    "DROP": (("TABLE",), ("IF", "EXISTS")),
    "COPY": (),
}

_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)


def session_statement(
    text: str, tables: frozenset[str], views: frozenset[str] = frozenset(), namespace_in_use: bool = False
) -> SessionStatement | None:
    """What ``text`` (one statement) does to or with the session's objects; None when it is
    no session statement (an Iceberg write, a query: :func:`iceduck.sql.classify.classify`
    reads it). ``tables`` and ``views`` are the (lower-case) names of the session's tables
    and views; ``namespace_in_use``: a one-part name in ``CREATE VIEW`` / ``DROP VIEW``
    then names a view of the current namespace, as it names a table
    (:mod:`iceduck.sql.view_statements`), unless it is ``TEMPORARY`` or (dropped) one of
    ``views``. Only the statements that may be session statements are tokenized here."""
    keyword = leading_word(text)
    if keyword not in KEYWORDS:
        return None
    if keyword in ("SET", "RESET"):
        return _setting(text, keyword)
    if keyword in ("SUMMARIZE", "PIVOT", "UNPIVOT"):
        return _duck(_summarized(text) if keyword == "SUMMARIZE" else text, keyword, rows=True)
    if keyword == "CREATE" and not _CREATES_SESSION_OBJECT.match(text):
        return None  # CREATE TABLE ns.t: an Iceberg table
    if keyword == "DROP" and not (tables or _DROPS_SESSION_OBJECT.match(text)):
        return None
    if keyword not in ("CREATE", "DROP", "COPY") and not tables:
        return None
    words = _words(tokenize(text))
    if keyword == "CREATE":
        return _create(text, words, namespace_in_use)
    if keyword == "DROP" and len(words) > 1 and words[1][0] in ("VIEW", "MACRO", "FUNCTION"):
        return _drop(text, words, views, namespace_in_use)
    if keyword == "COPY":
        return _copy(text, words, tables)
    target = _target(words, keyword)
    if target is None or target not in tables:
        return None
    kind = "DROP TABLE" if keyword == "DROP" else keyword
    return _duck(text, kind, target)


_COMMENTS = r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_CREATES_SESSION_OBJECT = re.compile(
    _COMMENTS + r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:GLOBAL\s+)?(?:TEMP|TEMPORARY|VIEW|MACRO|FUNCTION)\b",
    re.IGNORECASE | re.DOTALL,
)
_DROPS_SESSION_OBJECT = re.compile(_COMMENTS + r"DROP\s+(?:VIEW|MACRO|FUNCTION)\b", re.IGNORECASE | re.DOTALL)


def _words(tokens: list[Token]) -> list[tuple[str, Token]]:
    """Each token with its upper-cased text (a quoted name keeps its case in the token)."""
    return [(t.text.upper(), t) for t in tokens]


def _name_at(words: list[tuple[str, Token]], i: int) -> tuple[str, int] | None:
    """The one-part name starting at word ``i`` (lower case) and the index after it; None
    when no name is there or it has several parts."""
    if i >= len(words) or words[i][1].token_type not in (*_NAME_TOKENS, *_KEYWORD_NAMES):
        return None
    if i + 1 < len(words) and words[i + 1][1].token_type is TokenType.DOT:
        return None
    token = words[i][1]
    return (token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()), i + 1


#: words sqlglot tokenizes as keywords but DuckDB accepts as table names
_KEYWORD_NAMES = (TokenType.TEMPORARY, TokenType.VIEW, TokenType.FILTER, TokenType.FORMAT)


def _skip(words: list[tuple[str, Token]], i: int, optional: tuple[tuple[str, ...], ...]) -> int:
    """The index after the optional word groups at ``i`` (each taken at most once, in order)."""
    for group in optional:
        if tuple(w for w, _ in words[i : i + len(group)]) == group:
            i += len(group)
    return i


def _target(words: list[tuple[str, Token]], keyword: str) -> str | None:
    """The one-part name a write statement writes (lower case), or None."""
    if keyword in ("ALTER", "DROP") and (len(words) < 2 or words[1][0] != "TABLE"):
        return None
    named = _name_at(words, _skip(words, 1, _TARGET_WORDS[keyword]))
    return None if named is None else named[0].lower()


def _duck(
    text: str, kind: str, target: str | None = None, rows: bool = False, pure: bool = False
) -> DuckStatement:
    statement = parse_statement(text)
    if statement.explain:
        raise UnsupportedError(f"EXPLAIN {statement.kind} is not supported yet: only queries")
    return DuckStatement(statement, kind, target, rows, pure)


_SUMMARIZED_NAME = re.compile(
    r"\s*SUMMARIZE\s+(?!SELECT\b|FROM\b|WITH\b|VALUES\b|\()(?P<name>[^\s;(]+)\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)


def _summarized(text: str) -> str:
    """``SUMMARIZE t`` as ``SUMMARIZE SELECT * FROM t``, which reads an Iceberg table by its scan."""
    m = _SUMMARIZED_NAME.fullmatch(text)
    return text if m is None else f"SUMMARIZE SELECT * FROM {m['name']}"


def _create(
    text: str, words: list[tuple[str, Token]], namespace_in_use: bool = False
) -> SessionStatement | None:
    i = _skip(words, 1, (("OR", "REPLACE"),))
    replace = i > 1
    temporary = None
    if i < len(words) and words[i][0] == "GLOBAL":
        i += 1
    if i < len(words) and words[i][0] in ("TEMP", "TEMPORARY"):
        temporary = words[i][1]
        i += 1
    what = words[i][0] if i < len(words) else ""
    if what == "VIEW":
        if temporary is None and _catalog_view(words, i + 1, namespace_in_use):
            return None  # an Iceberg view (:mod:`iceduck.sql.ddl_views`)
        return _view(text, words, i + 1, replace)
    if what in ("MACRO", "FUNCTION"):
        return _macro(_without(text, temporary), _created(words, i + 1, "macro"))
    if what == "TABLE" and temporary is not None:
        return _duck(_without(text, temporary), "CREATE TABLE", _created(words, i + 1, "temporary table"))
    return None


def _macro(text: str, name: str) -> DuckStatement:
    """``CREATE MACRO``: parsed whole when sqlglot can, else run as a command whose body
    (after the argument list's ``) AS [TABLE]``) is parsed for the tables it reads."""
    try:
        return _duck(text, "CREATE MACRO", name, pure=True)
    except UserError:
        pass
    words = _words(tokenize(text))
    k = next((i for i, (_, t) in enumerate(words) if t.token_type is TokenType.L_PAREN), len(words))
    depth = 0
    while k < len(words):
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(words[k][1].token_type, 0)
        if depth == 0:
            break
        k += 1
    if k + 2 >= len(words) or words[k + 1][0] != "AS":
        raise UserError(f"CREATE MACRO {name}: expected (arguments) AS expression, or AS TABLE query")
    table = words[k + 2][0] == "TABLE"
    start = words[k + 3 if table else k + 2][1].start
    body = parse_statement(("" if table else "SELECT ") + text[start:].strip().rstrip(";"))
    command = Statement(
        text.strip().rstrip(";"), exp.Command(this="CREATE"), tuple(tokenize(text)), "CREATE MACRO"
    )
    return DuckStatement(command, "CREATE MACRO", name, pure=True, body=body)


def _without(text: str, token: Token | None) -> str:
    """``text`` without ``token`` (the TEMP keyword): see the module docstring."""
    return text if token is None else text[: token.start] + text[token.end + 1 :].lstrip()


def _created(words: list[tuple[str, Token]], i: int, what: str) -> str:
    named = _name_at(words, _skip(words, i, (("IF", "NOT", "EXISTS"),)))
    if named is None:
        raise UserError(f"a {what} has a one-part name (it belongs to the session, not to a namespace)")
    return named[0].lower()


def _catalog_view(words: list[tuple[str, Token]], i: int, namespace_in_use: bool) -> bool:
    """Whether the view named at word ``i`` (after ``VIEW [IF NOT EXISTS]``) is a catalog
    view: a dotted name, or any name while a namespace is in use."""
    j = _skip(words, i, (("IF", "NOT", "EXISTS"),))
    return namespace_in_use or _name_at(words, j) is None


def _view(text: str, words: list[tuple[str, Token]], i: int, replace: bool) -> ViewDefinition:
    j = _skip(words, i, (("IF", "NOT", "EXISTS"),))
    if_not_exists = j > i
    named = _name_at(words, j)
    if named is None:
        raise UnsupportedError(
            "CREATE TEMPORARY VIEW takes a one-part name: a temporary view belongs to the session "
            "(CREATE VIEW ns.v makes an Iceberg view in namespace ns)"
        )
    name, j = named
    columns: list[str] = []
    if j < len(words) and words[j][1].token_type is TokenType.L_PAREN:
        j += 1
        while True:
            column = _name_at(words, j)
            closing = (
                words[column[1]][1].token_type if column is not None and column[1] < len(words) else None
            )
            if column is None or closing not in (TokenType.COMMA, TokenType.R_PAREN):
                raise UserError(f"CREATE VIEW {name} (...): expected a list of column names")
            columns.append(column[0])
            j = column[1] + 1
            if closing is TokenType.R_PAREN:
                break
    if j >= len(words) or words[j][0] != "AS" or j + 1 >= len(words):
        raise UserError(f"CREATE VIEW {name}: expected AS and a query")
    query = text[words[j + 1][1].start :].strip().rstrip(";").strip()
    if replace and if_not_exists:
        raise UserError("CREATE OR REPLACE VIEW cannot also say IF NOT EXISTS")
    return ViewDefinition(name, query, tuple(columns), replace, if_not_exists)


def _drop(
    text: str,
    words: list[tuple[str, Token]],
    views: frozenset[str] = frozenset(),
    namespace_in_use: bool = False,
) -> SessionStatement | None:
    what = words[1][0]
    i = 2
    if what != "VIEW" and i < len(words) and words[i][0] == "TABLE":
        i += 1
    j = _skip(words, i, (("IF", "EXISTS"),))
    named = _name_at(words, j)
    if what == "VIEW" and (named is None or (namespace_in_use and named[0].lower() not in views)):
        return None  # an Iceberg view (:mod:`iceduck.sql.ddl_views`)
    if named is None:
        raise UserError(f"DROP {what} takes the one-part name of a session {what.lower()}")
    if what == "VIEW":
        return DropView(named[0], j > i)
    # sqlglot cannot read DROP MACRO TABLE, and a DROP reads no table: kept as a command
    tokens = tuple(tokenize(text))
    command = Statement(text.strip().rstrip(";"), exp.Command(this="DROP"), tokens, "DROP MACRO")
    return DuckStatement(command, "DROP MACRO", named[0].lower())


def _copy(text: str, words: list[tuple[str, Token]], tables: frozenset[str]) -> DuckStatement:
    """``COPY (query) TO``, ``COPY t [(cols)] TO`` and ``COPY session_table FROM``."""
    if len(words) > 1 and words[1][1].token_type is TokenType.L_PAREN:
        return _duck(text, "COPY", rows=False)
    i = 1
    while i + 1 < len(words) and words[i + 1][1].token_type is TokenType.DOT:
        i += 2
    if i >= len(words) or words[i][1].token_type not in (*_NAME_TOKENS, *_KEYWORD_NAMES):
        raise UserError("COPY takes a table name or a parenthesised query: COPY (SELECT ...) TO 'file'")
    name_end = words[i][1].end + 1
    name_text = text[words[1][1].start : name_end]
    columns_end = name_end
    j = i + 1
    if j < len(words) and words[j][1].token_type is TokenType.L_PAREN:
        while j < len(words) and words[j][1].token_type is not TokenType.R_PAREN:
            j += 1
        if j >= len(words):
            raise UserError("COPY t (columns): expected )")
        columns_end = words[j][1].end + 1
        j += 1
    direction = words[j][0] if j < len(words) else ""
    one_part = i == 1
    if direction == "FROM":
        named = _name_at(words, 1) if one_part else None
        if named is not None and named[0].lower() in tables:
            return _duck(text, "COPY", named[0].lower())
        raise UnsupportedError(
            f"COPY {name_text} FROM: COPY loads only the session's temporary tables; load a file into an "
            f"Iceberg table with INSERT INTO {name_text} SELECT * FROM read_csv('file.csv') (or read_parquet)"
        )
    if direction != "TO":
        raise UserError(f"COPY {name_text}: expected TO or FROM")
    columns = text[name_end:columns_end].strip()[1:-1].strip() if columns_end > name_end else "*"
    query = f"COPY (SELECT {columns or '*'} FROM {name_text}) {text[columns_end:].lstrip()}"
    return _duck(query, "COPY")


_SET = re.compile(
    r"\s*SET\s+(?:(?P<variable>VARIABLE)\s+|(?:GLOBAL|SESSION|LOCAL)\s+)?(?P<name>\"(?:[^\"]|\"\")+\"|[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)"
    r"\s*(?:=|\bTO\b)\s*(?P<value>.+?)\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)
_RESET = re.compile(
    r"\s*RESET\s+(?:(?P<variable>VARIABLE)\s+|(?:GLOBAL|SESSION|LOCAL)\s+)?(?P<name>\"(?:[^\"]|\"\")+\"|[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)


def _setting(text: str, keyword: str) -> Setting:
    """``SET``/``RESET``: every scope means the session (see :mod:`iceduck.session.own_objects`)."""
    m = (_SET if keyword == "SET" else _RESET).fullmatch(text)
    if m is None:
        usage = "SET name = value, SET name TO value or SET VARIABLE name = expression"
        raise UserError(f"{keyword}: expected {usage if keyword == 'SET' else 'RESET name'}")
    name = m["name"]
    name = name[1:-1].replace('""', '"') if name.startswith('"') else name
    value = m.groupdict().get("value")
    parameters = (TokenType.PLACEHOLDER, TokenType.PARAMETER)
    if value is not None and any(t.token_type in parameters for t in tokenize(value)):
        raise UnsupportedError(f"SET {name}: a setting's value is written in the statement, not a parameter")
    return Setting(name, value, bool(m["variable"]))


# -- views ---------------------------------------------------------------------------------------


def view_uses(statement: Statement, views: Callable[[str], bool]) -> list[TableRef]:
    """The one-part table names in ``statement`` that name a session view (``views`` says
    which lower-case names do); a CTE of that name in scope wins, as it does over a table."""
    found = []
    for ref in table_refs(statement, bare_names=True):
        if ref.path is not None or len(ref.parts) != 1 or not views(ref.parts[0].lower()):
            continue
        if ref.time_travel is not None:
            raise UserError(f"{ref.parts[0]} is a session view: {ref.time_travel} reads Iceberg tables only")
        found.append(ref)
    return found


def written_table(statement: Statement) -> exp.Table | None:
    """The table a DuckDB write statement creates or writes (never an Iceberg read)."""
    tree = statement.tree
    target = tree.this if isinstance(tree, exp.Create | exp.Insert | exp.Update | exp.Delete | exp.Drop
                                      | exp.Alter | exp.Merge | exp.Copy) else None  # fmt: skip
    if isinstance(tree, exp.TruncateTable) and tree.expressions:
        target = tree.expressions[0]
    if isinstance(tree, exp.Drop) and tree.args.get("tables"):
        target = tree.args["tables"][0]
    if isinstance(target, exp.Schema):
        target = target.this
    return target if isinstance(target, exp.Table) else None
