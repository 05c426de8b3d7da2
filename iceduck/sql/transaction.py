"""``BEGIN`` / ``COMMIT`` / ``ROLLBACK`` and their spellings, read from a statement's words.

The forms DuckDB and PostgreSQL accept: ``BEGIN [TRANSACTION | WORK]`` and
``START TRANSACTION`` open a transaction; ``COMMIT [TRANSACTION | WORK]`` and
``END [TRANSACTION | WORK]`` commit it; ``ROLLBACK [TRANSACTION | WORK]`` and
``ABORT [TRANSACTION | WORK]`` discard it. Transaction modes (``ISOLATION LEVEL``,
``READ ONLY``), savepoints and ``ROLLBACK TO`` are refused by name.
"""

from __future__ import annotations

import enum
import re

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.parse import leading_word

#: leading words of transaction statements
TRANSACTION_WORDS = frozenset({"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT"})

_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)


class TransactionStatement(enum.Enum):
    BEGIN = "BEGIN"
    COMMIT = "COMMIT"
    ROLLBACK = "ROLLBACK"


_KINDS = {
    "BEGIN": TransactionStatement.BEGIN,
    "START": TransactionStatement.BEGIN,
    "COMMIT": TransactionStatement.COMMIT,
    "END": TransactionStatement.COMMIT,
    "ROLLBACK": TransactionStatement.ROLLBACK,
    "ABORT": TransactionStatement.ROLLBACK,
}


def parse_transaction(text: str) -> TransactionStatement | None:
    """The transaction statement ``text`` is; None when it starts with another word.
    UserError for a malformed one, UnsupportedError for modes and savepoints."""
    word = leading_word(text)
    if word not in TRANSACTION_WORDS:
        return None
    words = _COMMENTS.sub(" ", text).replace(";", " ").upper().split()
    rest = words[1:]
    if word == "START":
        if rest[:1] != ["TRANSACTION"]:
            raise UserError("syntax error: START TRANSACTION is the statement that starts a transaction")
        rest = rest[1:]
    elif rest[:1] in (["TRANSACTION"], ["WORK"]):
        rest = rest[1:]
    if rest:
        shown = " ".join(words)
        if word in ("BEGIN", "START") or rest[0] in ("TO", "AND"):
            raise UnsupportedError(
                f"{shown} is not supported: iceduck's transactions take no modes or savepoints "
                f"(use {_KINDS[word].value} alone)"
            )
        raise UserError(
            f'syntax error at or near "{rest[0]}" in {shown}: expected {word} [TRANSACTION | WORK]'
        )
    return _KINDS[word]
