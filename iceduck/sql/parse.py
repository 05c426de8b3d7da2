"""From SQL text to parsed statements: splitting, normalising, parsing with sqlglot.

iceduck speaks DuckDB's SQL dialect (DuckDB runs every query) plus the Iceberg time-travel
clauses Spark 3.5 accepts after a table name::

    t VERSION AS OF 123                 t FOR VERSION AS OF 'tag_or_branch'
    t TIMESTAMP AS OF '2024-01-01'      t FOR SYSTEM_TIME AS OF '2024-01-01 00:00:00'
    t FOR SYSTEM_VERSION AS OF 123

sqlglot's DuckDB dialect parses all of these into ``exp.Table(version=exp.Version(...))``
except ``FOR SYSTEM_VERSION AS OF``, which is normalised to ``FOR VERSION AS OF`` first.

A statement keeps its own text because iceduck hands DuckDB the user's SQL *verbatim*,
only with Iceberg table references spliced out (:mod:`iceduck.sql.rewrite`): regenerating
SQL from sqlglot's tree could subtly change DuckDB-specific syntax. Spans in the text come
from the token stream, so the text a :class:`Statement` carries is the normalised one its
tree was parsed from.

Parameters: DuckDB takes ``?`` (positional), ``$1`` (numbered) and ``$name`` (named).
Each ``?`` is renumbered ``$1``, ``$2``, ... in text order, which means the same to DuckDB
and lets the predicate layer find a placeholder's value from the tree alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import ParseError, TokenError
from sqlglot.parser import SENTINEL_NONE
from sqlglot.parsers.duckdb import DuckDBParser
from sqlglot.tokens import Token, TokenType

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.syntax import parse_error, unterminated

DIALECT = DuckDB()


class _Parser(DuckDBParser):
    """DuckDB's parser, remembering where it failed: sqlglot's error says only a line and the
    column a token *ends* at, and cannot tell a failure at the last token from one after it."""

    failed: Token | None = None
    at_end: bool = False

    def raise_error(self, message: str, token: Token = SENTINEL_NONE) -> None:
        current = self._curr or None
        self.failed = token or current or self._prev or None
        self.at_end = not token and current is None
        super().raise_error(message, token)

    def _warn_unsupported(self) -> None:
        """sqlglot logs a warning when it reads a statement it does not know as a ``Command``;
        iceduck refuses such a statement by name (:func:`require_supported`), so the warning
        would only repeat the refusal on stderr."""


#: the first word after leading white space and comments
_LEADING_WORD = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*([A-Za-z_]+)", re.DOTALL)

#: sqlglot tokenizes EXPLAIN as a command swallowing the rest, so it is recognised textually
_EXPLAIN = re.compile(
    r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*EXPLAIN\b\s*(?P<analyze>ANALYZE\b\s*)?", re.IGNORECASE | re.DOTALL
)

#: statement kinds iceduck runs; everything else is refused by name (see :func:`statement_kind`)
QUERY_KINDS = frozenset({"SELECT"})

#: what a statement too deep for sqlglot's recursive-descent parser (Python's recursion
#: limit: some 40 nested parentheses) is told
NESTED_TOO_DEEPLY = (
    "the statement is nested too deeply to parse (too many nested parentheses, subqueries "
    "or expressions): simplify it or split it into several statements"
)


@dataclass(frozen=True)
class Statement:
    """One parsed statement.

    ``text`` is the normalised SQL of the statement (of the explained query for
    ``EXPLAIN``), ``tree`` its sqlglot tree and ``tokens`` its token stream, whose
    ``start``/``end`` offsets index ``text``.
    """

    text: str
    tree: exp.Expression
    tokens: tuple[Token, ...]
    kind: str
    explain: bool = False
    analyze: bool = False


def tokenize(sql: str) -> list[Token]:
    """sqlglot's DuckDB tokens of ``sql``; an unterminated string or comment is a UserError."""
    try:
        return DIALECT.tokenize(sql)
    except TokenError as e:
        raise UserError(unterminated(sql) or f"cannot read the SQL: {_clean(str(e))}") from e


def leading_word(text: str) -> str:
    """The statement's first word, upper-cased (comments skipped); ``""`` when it starts
    otherwise (``(SELECT ...)``). What kind of statement the text is starts here
    (:func:`iceduck.sql.classify.classify`)."""
    m = _LEADING_WORD.match(text)
    return m[1].upper() if m else ""


def require_valid_unicode(text: str, what: str = "the SQL text") -> None:
    """Refuse text that cannot be encoded as UTF-8: a lone surrogate (``'\\ud800'``) reaches
    Python strings from JSON or from decoding with ``surrogateescape``, and DuckDB would
    fail on it with ``std::bad_cast`` -- or a file name with a ``UnicodeEncodeError``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(text[e.start])
        raise UserError(
            f"{what} is not valid Unicode: unpaired surrogate U+{code:04X} at position {e.start}"
        ) from None


def require_valid_parameters(parameters: Any) -> None:
    """Every text among a statement's parameters (inside lists and dicts too) is valid
    Unicode (see :func:`require_valid_unicode`); the message names the parameter."""
    if parameters is None:
        return
    items = parameters.items() if isinstance(parameters, dict) else enumerate(parameters, start=1)
    for key, value in items:
        _require_valid_value(value, f"parameter {key}" if isinstance(key, int) else f"parameter ${key}")


def _require_valid_value(value: Any, what: str) -> None:
    if isinstance(value, str):
        require_valid_unicode(value, what)
    elif isinstance(value, list | tuple):
        for item in value:
            _require_valid_value(item, what)
    elif isinstance(value, dict):
        for key, item in value.items():
            _require_valid_value(key, what)
            _require_valid_value(item, what)


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql``, separated by ``;`` outside strings and comments; text
    that is not valid Unicode is refused first (:func:`require_valid_unicode`)."""
    require_valid_unicode(sql)
    if ";" not in sql:  # the common case needs no tokenizing here
        return [sql.strip()] if sql.strip() else []
    statements: list[str] = []
    start = 0
    for token in tokenize(sql):
        if token.token_type is TokenType.SEMICOLON:
            statements.append(sql[start : token.start])
            start = token.end + 1
    statements.append(sql[start:])
    return [s.strip() for s in statements if s.strip()]


def parse_statement(sql: str, of: str = "") -> Statement:
    """Parse one statement (no ``;`` separators) into a :class:`Statement`.

    ``EXPLAIN [ANALYZE] <query>`` is recognised here (sqlglot has no node for it) and
    parsed as its query. Syntax errors become :class:`UserError` saying where (``of`` names
    the part of a statement ``sql`` is, e.g. `` of the query``) and what was expected.
    """
    text = sql.strip().rstrip(";").strip()
    m = _EXPLAIN.match(text)
    if m:
        explain, analyze = True, bool(m["analyze"])
        if not text[m.end() :].strip():
            raise UserError("EXPLAIN needs a query to explain")
        try:
            return replace(_statement(text[m.end() :], of), explain=explain, analyze=analyze)
        except UserError:
            # the same error, at its place in the user's statement: EXPLAIN blanked out
            _statement(re.sub(r"[^\n]", " ", text[: m.end()]) + text[m.end() :], of)
            raise
    return _statement(text, of)


def _statement(text: str, of: str) -> Statement:
    """``text`` (one statement, no EXPLAIN) tokenized, normalised and parsed."""
    tokens = tokenize(text)
    normalised = _normalise(text, tokens)
    if normalised != text:
        text, tokens = normalised, tokenize(normalised)
    if not tokens:
        raise UserError("empty statement")
    tree = _parse(text, tokens, of)
    return Statement(text, tree, tuple(tokens), statement_kind(tree, tokens))


def parse(sql: str) -> list[Statement]:
    """Every statement of ``sql``, parsed."""
    statements = [parse_statement(s) for s in split_statements(sql)]
    if not statements:
        raise UserError("no SQL statement given")
    return statements


def normalise(text: str) -> str:
    """Rewrite the syntax sqlglot or DuckDB would misread, keeping everything else verbatim.

    * ``FOR SYSTEM_VERSION AS OF`` -> ``FOR VERSION AS OF`` (Spark accepts both);
    * each positional ``?`` -> ``$n`` (see the module docstring), also in ``?::INT``.
    """
    return _normalise(text, tokenize(text))


def _normalise(text: str, tokens: list[Token]) -> str:
    edits: list[tuple[int, int, str]] = []
    counter = 0
    for i, token in enumerate(tokens):
        if token.token_type is TokenType.PLACEHOLDER and token.text == "?":
            counter += 1
            edits.append((token.start, token.end + 1, f"${counter}"))
        elif token.token_type is TokenType.QDCOLON:  # ``?::INT``: sqlglot reads ``?::`` as one token
            counter += 1
            edits.append((token.start, token.end + 1, f"${counter}::"))
        elif (
            token.text.upper() == "SYSTEM_VERSION"
            and i > 0
            and tokens[i - 1].text.upper() == "FOR"
            and [t.text.upper() for t in tokens[i + 1 : i + 3]] == ["AS", "OF"]
        ):
            edits.append((token.start, token.end + 1, "VERSION"))
    numbered = any(t.token_type is TokenType.PARAMETER for t in tokens)
    if counter and numbered:
        raise UserError("cannot mix ? placeholders with $ parameters in one statement")
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end:]
    return text


def _parse(text: str, tokens: list[Token], of: str = "") -> exp.Expression:
    parser = _Parser(dialect=DIALECT)
    try:
        trees = parser.parse(tokens, text)
    except ParseError as e:
        raise UserError(_parse_error_message(e, text, tokens, parser, of)) from e
    except RecursionError:  # sqlglot parses recursively: deep nesting exhausts Python's stack
        raise UserError(NESTED_TOO_DEEPLY) from None
    found = [t for t in trees if isinstance(t, exp.Expression)]  # every parsed node is one; not None
    if len(found) != 1:
        raise UserError(f"expected one statement, found {len(found)}")
    return found[0]


def _parse_error_message(e: ParseError, text: str, tokens: list[Token], parser: _Parser, of: str) -> str:
    """sqlglot's first error, said in SQL terms (:func:`iceduck.sql.syntax.parse_error`)."""
    description = str(e.errors[0].get("description") or "") if e.errors else _clean(str(e))
    return parse_error(text, tokens, description, parser.failed, parser.at_end, of)


def _clean(message: str) -> str:
    """sqlglot underlines the culprit with ANSI escapes; a message must be plain text."""
    return message.replace("\x1b[4m", "").replace("\x1b[0m", "").strip()


_QUERIES = (exp.Select, exp.SetOperation, exp.Subquery, exp.Values)


def statement_kind(tree: exp.Expression, tokens: list[Token]) -> str:
    """What a statement is, as a user would name it: ``SELECT``, ``INSERT``, ``CREATE TABLE``...

    Every query form (``SELECT``, ``FROM t``, set operations, ``VALUES``, ``WITH``) is
    ``SELECT``.
    """
    if isinstance(tree, _QUERIES):
        return "SELECT"
    if isinstance(tree, exp.Describe):
        return "DESCRIBE"
    if isinstance(tree, exp.Show):
        return "SHOW"
    if isinstance(tree, exp.Create | exp.Drop):
        what = str(tree.args.get("kind") or "").upper()
        return f"{tree.key.upper()} {what}".strip()
    if isinstance(tree, exp.Command):
        return str(tree.this).upper()
    return tokens[0].text.upper() if tokens else tree.key.upper()


#: statement kinds that open or end a transaction: the session runs them, never as a query
TRANSACTION_KINDS = frozenset({"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT"})

#: what iceduck does run, for the refusal of everything else
RUNS = "iceduck runs queries (SELECT, EXPLAIN, DESCRIBE, SHOW), INSERT, UPDATE, DELETE, MERGE and table DDL"


def require_supported(statement: Statement, supported: frozenset[str]) -> None:
    """Refuse, by name, a statement kind iceduck does not run (yet)."""
    if statement.kind not in supported:
        if statement.explain:
            raise UnsupportedError(f"EXPLAIN {statement.kind} is not supported yet: only queries")
        if statement.kind in TRANSACTION_KINDS:
            raise UnsupportedError(f"{statement.kind} is not a query: it opens or ends a transaction")
        raise UnsupportedError(f"{statement.kind} is not supported yet: {RUNS}")
