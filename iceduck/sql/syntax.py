"""Syntax errors in the user's terms: where (line, column, the token there) and what was expected.

Both parsers iceduck uses report through here, so a user sees one style whatever statement
they typed: sqlglot for queries (:mod:`iceduck.sql.parse`, whose own messages name Python
classes and internal keys such as ``Required keyword: 'this' missing for <class ...Where>``)
and the hand-written write grammar (:mod:`iceduck.sql.ddl_tokens`). The wording follows
PostgreSQL and DuckDB, which users already know::

    syntax error at end of input: expected a condition after WHERE
    syntax error at or near "FORM" (line 1, column 10): did you mean FROM?
    syntax error at or near "FROM" (line 1, column 15): expected ) to close the ( at line 1, column 8
    syntax error: unterminated quoted string at line 1, column 8: 'abc FROM t
"""

from __future__ import annotations

import difflib
import re

from sqlglot.tokens import Token, TokenType

from iceduck.errors import UserError

#: words that start a statement in DuckDB, Spark or PostgreSQL: any other first word is a
#: syntax error (a typo), while these are statements iceduck runs or refuses by name
STATEMENT_WORDS = frozenset(
    {
        "ABORT", "ALTER", "ANALYZE", "ATTACH", "BEGIN", "CACHE", "CALL", "CHECKPOINT", "CLEAR",
        "COMMENT", "COMMIT", "COPY", "CREATE", "DEALLOCATE", "DECLARE", "DELETE", "DESC", "DESCRIBE",
        "DETACH", "DROP", "END", "EXECUTE", "EXPLAIN", "EXPORT", "FORCE", "FROM", "GRANT", "IMPORT",
        "INSERT", "INSTALL", "LIST", "LOAD", "LOCK", "MERGE", "MSCK", "PIVOT", "PRAGMA", "PREPARE",
        "REFRESH", "REPLACE", "RESET", "REVOKE", "ROLLBACK", "SELECT", "SET", "SHOW", "START",
        "SUMMARIZE", "TABLE", "TRUNCATE", "UNCACHE", "UNPIVOT", "UPDATE", "USE", "VACUUM", "VALUES",
        "WITH",
    }
)  # fmt: skip

#: clause keywords a misspelt word in the middle of a query is compared with
_CLAUSE_WORDS = (
    "SELECT", "FROM", "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "OFFSET", "JOIN", "INNER",
    "LEFT", "RIGHT", "OUTER", "CROSS", "UNION", "INTERSECT", "EXCEPT", "DISTINCT", "BETWEEN",
    "QUALIFY", "WINDOW", "PARTITION", "VALUES", "USING", "NATURAL",
)  # fmt: skip

#: words after which a word is a name (of a table, an alias), never a misspelt keyword
_NAME_BEFORE = frozenset({"FROM", "JOIN", "AS", "INTO", "UPDATE", "TABLE", "USING"})

#: what a sqlglot node left without its operand stands for, by class name
_MISSING = {
    "Where": "a condition",
    "Having": "a condition",
    "Qualify": "a condition",
    "And": "a condition",
    "Or": "a condition",
    "Not": "a condition",
    "Join": "a table",
    "Limit": "a number",
    "Offset": "a number",
    "Fetch": "a number",
    "Cast": "a type",
    "Table": "a table name",
    "From": "a table name",
}
#: white space and comments before a statement's first word
_BLANKS = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_REQUIRED = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]*?(\w+)'>")
_OPENERS = {TokenType.L_PAREN: ")", TokenType.L_BRACKET: "]", TokenType.L_BRACE: "}"}
_CLOSERS = {TokenType.R_PAREN: "(", TokenType.R_BRACKET: "[", TokenType.R_BRACE: "{"}


def position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def where(text: str, token: Token | None, of: str = "") -> str:
    """``at end of input``, or ``at or near "X" (line L, column C)`` for a token of ``text``;
    ``of`` names the part of a statement ``text`` is (``the query``), whose lines count."""
    if token is None:
        return "at end of input"
    line, column = position(text, token.start)
    return f'at or near "{text[token.start : token.end + 1]}" (line {line}, column {column}{of})'


def syntax_error(text: str, token: Token | None, expected: str = "", of: str = "") -> UserError:
    """The error for ``token`` of ``text`` (None: the statement ended), with what was
    expected there when known."""
    return UserError(f"syntax error {where(text, token, of)}" + (f": {expected}" if expected else ""))


def unknown_statement(text: str, word: str) -> UserError | None:
    """The error for a statement starting with a word no SQL statement starts with (``SELEC``);
    None for a known first word or none (``(SELECT ...)``)."""
    if not word or word in STATEMENT_WORDS:
        return None
    start = _BLANKS.match(text).end()  # type: ignore[union-attr]  # matches the empty string too
    close = difflib.get_close_matches(word, sorted(STATEMENT_WORDS), n=1, cutoff=0.75)
    line, column = position(text, start)
    shown = text[start : start + len(word)]
    hint = f": did you mean {close[0]}?" if close else ": not the start of a SQL statement"
    return UserError(f'syntax error at or near "{shown}" (line {line}, column {column}){hint}')


def unterminated(text: str) -> str | None:
    """What is left open at the end of ``text`` (a quoted string or name, a block comment),
    and where it starts, for a tokenizer that gave up on it; None when nothing is."""
    i, n = 0, len(text)
    while i < n:
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return _open_at(text, i, "/* comment")
            i = end + 2
            continue
        quote = text[i]
        if quote in "'\"":
            j = i + 1
            while True:
                j = text.find(quote, j)
                if j < 0:
                    return _open_at(text, i, "quoted string" if quote == "'" else "quoted name")
                if text.startswith(quote * 2, j):
                    j += 2
                    continue
                break
            i = j + 1
            continue
        i += 1
    return None


def _open_at(text: str, offset: int, what: str) -> str:
    line, column = position(text, offset)
    excerpt = text[offset:].split("\n")[0]
    excerpt = excerpt if len(excerpt) <= 30 else excerpt[:30] + "..."
    return f"syntax error: unterminated {what} at line {line}, column {column}: {excerpt}"


def parse_error(
    text: str, tokens: list[Token], description: str, failed: Token | None, at_end: bool, of: str = ""
) -> str:
    """sqlglot's ``description`` of a failure at token ``failed`` (or after the last token,
    ``at_end``) in SQL terms: what was expected after which word, which bracket is left open,
    which word looks misspelt. Never a class name or an internal key. ``of`` as for
    :func:`where`."""
    index = _index(tokens, failed)
    token = None if at_end or index is None else tokens[index]
    before = tokens[index] if at_end and index is not None else tokens[index - 1] if index else None
    misspelt = _misspelt(tokens, len(tokens) if token is None or index is None else index)
    if misspelt is not None:
        word, keyword = misspelt
        return str(syntax_error(text, word, f"did you mean {keyword}?", of))
    expected = ""
    required = _REQUIRED.match(description)
    if required is not None:
        thing = _MISSING.get(required[1], "an expression")
        expected = f"expected {thing}" + (f" after {before.text.upper()}" if before is not None else "")
    elif description.startswith("Expected table name"):
        expected = "expected a table name" + (f" after {before.text.upper()}" if before is not None else "")
    elif description.startswith("Expecting ") and len(description) == len("Expecting )"):
        closing = description[-1]
        expected = f"expected {closing}"
        opened = _unclosed(tokens, len(tokens) if token is None or index is None else index, closing)
        if opened is not None:
            line, column = position(text, opened.start)
            expected += f" to close the {opened.text} at line {line}, column {column}{of}"
    elif token is not None and token.token_type in _CLOSERS and not _opened_before(tokens, index or 0):
        expected = f"this {token.text} has no matching {_CLOSERS[token.token_type]}"
    elif description.startswith("Expected") and "<" not in description:
        expected = "expected" + description[len("Expected") :]
    return str(syntax_error(text, token, expected, of))


def _index(tokens: list[Token], token: Token | None) -> int | None:
    if token is None:
        return None
    for i, candidate in enumerate(tokens):
        if candidate.start == token.start and candidate.end == token.end:
            return i
    return None


def _misspelt(tokens: list[Token], stop: int) -> tuple[Token, str] | None:
    """A plain word among the three tokens up to ``stop`` (inclusive) that is close to a
    clause keyword but is none: ``FORM`` read as an alias makes sqlglot fail a token later.
    Words in the places of names (after FROM, AS, a dot; before a dot or a parenthesis) and
    words extending a keyword (``orders``) are names, not typos."""
    for k in range(max(0, stop - 2), min(stop + 1, len(tokens))):
        token = tokens[k]
        word = token.text.upper()
        if token.token_type is not TokenType.VAR or len(word) < 4 or not word.isalpha():
            continue
        before = tokens[k - 1] if k > 0 else None
        after = tokens[k + 1] if k + 1 < len(tokens) else None
        if before is not None and (before.token_type is TokenType.DOT or before.text.upper() in _NAME_BEFORE):
            continue
        if after is not None and after.token_type in (TokenType.DOT, TokenType.L_PAREN):
            continue
        close = difflib.get_close_matches(word, _CLAUSE_WORDS, n=1, cutoff=0.75)
        if close and not word.startswith(close[0]):
            return token, close[0]
    return None


def _unclosed(tokens: list[Token], stop: int, closing: str) -> Token | None:
    """The innermost bracket opened before token ``stop`` that ``closing`` would close."""
    stack: list[Token] = []
    for token in tokens[:stop]:
        if token.token_type in _OPENERS:
            stack.append(token)
        elif token.token_type in _CLOSERS and stack:
            stack.pop()
    for token in reversed(stack):
        if _OPENERS[token.token_type] == closing:
            return token
    return None


def _opened_before(tokens: list[Token], stop: int) -> bool:
    """Whether a closing bracket at ``stop`` has an opening one before it."""
    depth = 0
    for token in tokens[:stop]:
        if token.token_type in _OPENERS:
            depth += 1
        elif token.token_type in _CLOSERS:
            depth -= 1
    return depth > 0
