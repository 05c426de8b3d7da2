"""A token cursor for the hand-written DDL/DML grammar of :mod:`iceduck.sql.ddl`.

sqlglot's DuckDB dialect tokenizes the statement; this module walks the tokens
(recursive descent lives in the ``ddl*``/``dml`` modules) and slices the *user's text*
for the parts DuckDB evaluates later (a WHERE condition, a query), so those keep their
exact spelling -- see :mod:`iceduck.sql.parse` for why regenerating SQL is avoided.

Text preparation (:func:`prepare`):

* Spark quotes identifiers with backticks, which DuckDB's tokenizer does not know: a
  backquoted name becomes a double-quoted one (DuckDB's identifier quote), so
  ``db.`my-table``` and an expression like ```my col` = 1`` mean the same to DuckDB;
* then :func:`iceduck.sql.parse.normalise` numbers ``?`` placeholders ``$1, $2, ...``
  as it does for queries, so ``INSERT INTO t VALUES (?, ?)`` binds positionally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot.tokens import Token, TokenType

from iceduck.errors import UserError
from iceduck.sql.parse import normalise, tokenize
from iceduck.sql.syntax import syntax_error, where

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})
_QUOTED = frozenset({TokenType.STRING, TokenType.IDENTIFIER})


def convert_backticks(text: str) -> tuple[str, bool]:
    """``text`` with backquoted identifiers double-quoted, and whether it had any.

    Strings (``'...'``), double-quoted identifiers and comments are copied unchanged;
    inside backticks a doubled backtick is a literal one (Spark's rule) and a ``"`` is
    doubled (DuckDB's).
    """
    if "`" not in text:
        return text, False
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"":
            end = _closing(text, i, ch)
            out.append(text[i:end])
            i = end
        elif text.startswith("--", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(text[i:end])
            i = end
        elif ch == "`":
            name, i = _backquoted(text, i)
            out.append('"' + name.replace('"', '""') + '"')
        else:
            out.append(ch)
            i += 1
    return "".join(out), True


def _closing(text: str, start: int, quote: str) -> int:
    """The offset after the quoted run starting at ``start`` (doubled quotes escape)."""
    i = start + 1
    while i < len(text):
        if text[i] == quote:
            if text.startswith(quote * 2, i):
                i += 2
                continue
            return i + 1
        i += 1
    return len(text)  # unterminated: the tokenizer reports it


def _backquoted(text: str, start: int) -> tuple[str, int]:
    name: list[str] = []
    i = start + 1
    while i < len(text):
        if text[i] == "`":
            if text.startswith("``", i):
                name.append("`")
                i += 2
                continue
            return "".join(name), i + 1
        name.append(text[i])
        i += 1
    raise UserError(f"unterminated `quoted` name starting at offset {start}")


def prepare(text: str) -> tuple[str, bool]:
    """The normalised statement text (see the module docstring) and whether it used backticks."""
    body = text.strip().rstrip(";").strip()
    converted, backticks = convert_backticks(body)
    return normalise(converted), backticks


#: multi-word keywords sqlglot fuses into one token that stay one word here (type names)
_FUSED_KEPT = frozenset({"DOUBLE PRECISION", "CHAR VARYING", "CHARACTER VARYING"})
_WORD = re.compile(r"\S+")


def split_fused(tokens: list[Token], text: str) -> list[Token]:
    """sqlglot tokenizes ``PARTITIONED BY``, ``ORDER BY``, ``PRIMARY KEY``... as one token;
    the grammar here matches words one by one, so those become one token per word."""
    result: list[Token] = []
    for token in tokens:
        if token.token_type in _QUOTED or " " not in token.text or token.text.upper() in _FUSED_KEPT:
            result.append(token)
            continue
        raw = text[token.start : token.end + 1]
        for m in _WORD.finditer(raw):
            start = token.start + m.start()
            result.append(
                Token(TokenType.VAR, m.group(), token.line, token.col, start, start + len(m.group()) - 1)
            )
    return result


@dataclass
class Cursor:
    """A position in the tokens of one statement; ``text`` is what token offsets index."""

    text: str
    tokens: list[Token]
    i: int = 0
    #: Spark-flavoured statement: decides ``timestamp`` (see :mod:`iceduck.sql.ddl_types`)
    spark: bool = False
    #: placeholder field ids of nested types, numbered from 1 in parse order
    next_id: int = field(default=1)

    @classmethod
    def of(cls, text: str, spark: bool = False) -> Cursor:
        return cls(text, split_fused(tokenize(text), text), spark=spark)

    # -- looking -----------------------------------------------------------------------------

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else None

    def word(self, k: int = 0) -> str:
        """The upper-cased text of an unquoted token ahead, else ``""``."""
        token = self.peek(k)
        if token is None or token.token_type in _QUOTED:
            return ""
        return token.text.upper()

    def at(self, *words: str) -> bool:
        return all(self.word(k) == w for k, w in enumerate(words))

    def at_type(self, token_type: TokenType, k: int = 0) -> bool:
        token = self.peek(k)
        return token is not None and token.token_type is token_type

    def done(self) -> bool:
        return self.i >= len(self.tokens)

    def near(self) -> str:
        """Where the cursor is, as a syntax error says it (:func:`iceduck.sql.syntax.where`)."""
        return where(self.text, self.peek())

    def error(self, expected: str) -> UserError:
        """A syntax error at the cursor: ``expected`` is what the grammar wanted there."""
        return syntax_error(self.text, self.peek(), f"expected {expected}")

    # -- consuming ----------------------------------------------------------------------------

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise syntax_error(self.text, None)
        self.i += 1
        return token

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        """Consume ``words``; the error names the word they had to follow (``FROM after DELETE``)."""
        if not self.accept(*words):
            last = self.tokens[self.i - 1] if self.i > 0 else None
            named = last is not None and (last.token_type in _QUOTED or last.token_type is TokenType.VAR)
            before = "" if last is None else last.text if named else last.text.upper()
            raise self.error(" ".join(words) + (f" after {before}" if before else ""))

    def accept_type(self, token_type: TokenType) -> bool:
        if self.at_type(token_type):
            self.i += 1
            return True
        return False

    def expect_type(self, token_type: TokenType, what: str) -> Token:
        if not self.at_type(token_type):
            raise self.error(what)
        return self.next()

    def end(self) -> None:
        if not self.done():
            raise self.error("the end of the statement")

    def identifier(self, what: str = "a name") -> str:
        """A (possibly quoted) identifier; unquoted keywords count when they look like names."""
        token = self.peek()
        if token is None or token.token_type is TokenType.STRING:
            raise self.error(what)
        if token.token_type is TokenType.IDENTIFIER or token.token_type is TokenType.VAR:
            self.i += 1
            return token.text
        if token.text.replace("_", "a").isalnum() and not token.text[0].isdigit():
            self.i += 1
            return token.text
        raise self.error(what)

    def name(self, what: str = "a table name") -> tuple[str, ...]:
        """A dotted name ``a.b.c`` as its parts."""
        parts = [self.identifier(what)]
        while self.accept_type(TokenType.DOT):
            parts.append(self.identifier(what))
        return tuple(parts)

    def string(self, what: str = "a quoted string") -> str:
        """A string literal; Spark's double-quoted strings are tokenized as identifiers."""
        token = self.peek()
        if token is None or token.token_type not in _QUOTED:
            raise self.error(what)
        self.i += 1
        return token.text

    def integer(self, what: str = "a number") -> int:
        negative = self.accept_type(TokenType.DASH)
        token = self.peek()
        if token is None or token.token_type is not TokenType.NUMBER or not token.text.isdigit():
            raise self.error(what)
        self.i += 1
        return -int(token.text) if negative else int(token.text)

    # -- slicing the user's text ----------------------------------------------------------------

    def span(self, start: int, stop: int) -> str:
        """The text of tokens ``start`` (inclusive) to ``stop`` (exclusive)."""
        if stop <= start:
            return ""
        return self.text[self.tokens[start].start : self.tokens[stop - 1].end + 1]

    def rest(self, what: str) -> str:
        """All the remaining text (a query), which must not be empty."""
        if self.done():
            raise self.error(what)
        text = self.span(self.i, len(self.tokens))
        self.i = len(self.tokens)
        return text

    def expression(self, what: str, stops: frozenset[str] = frozenset(), comma: bool = False) -> str:
        """Text up to a stop word, a ``,`` (with ``comma``) or an unmatched closing bracket at
        nesting depth 0; parentheses, brackets and ``CASE ... END`` nest."""
        start = self.i
        depth = 0
        while not self.done():
            token = self.tokens[self.i]
            word = self.word()
            if depth == 0 and (word in stops or (comma and token.token_type is TokenType.COMMA)):
                break
            if token.token_type in _OPEN or word == "CASE":
                depth += 1
            elif token.token_type in _CLOSE or word == "END":
                if depth == 0:
                    break
                depth -= 1
            self.i += 1
        if self.i == start:
            raise self.error(what)
        return self.span(start, self.i)

    def parenthesised(self, what: str) -> str:
        """The text inside a balanced ``( ... )`` at the cursor."""
        self.expect_type(TokenType.L_PAREN, f"( before {what}")
        text = self.expression(what)
        self.expect_type(TokenType.R_PAREN, f") after {what}")
        return text

    def new_id(self) -> int:
        field_id = self.next_id
        self.next_id += 1
        return field_id
