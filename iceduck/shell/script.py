"""Where statements end in text typed or read by the shell, before any SQL parser sees it.

The REPL keeps reading lines until the statement ends with ``;`` (outside strings, quoted
names and comments); scripts (``-f``, ``.read``, stdin) mix SQL with dot commands, which
take one line each and need no ``;``.
"""

from __future__ import annotations

from collections.abc import Iterator


def _scan(text: str) -> tuple[str, str]:
    """The last character of ``text`` outside comments (quotes count, their content not), and
    the quote left open at its end ("" when none; ``/*`` for an open block comment)."""
    last = ""
    quote = ""  # the open quote character, or "" outside strings and quoted names
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == quote:
                if i + 1 < n and text[i + 1] == quote:  # '' or "" inside: an escaped quote
                    i += 1
                else:
                    quote = ""
                    last = c
        elif c in "'\"":
            quote = c
        elif text.startswith("--", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return last, "/*"
            i = end + 2
            continue
        elif not c.isspace():
            last = c
        i += 1
    return last, quote


def is_complete(text: str) -> bool:
    """True when ``text`` ends a statement: its last token outside comments is ``;``."""
    last, open_quote = _scan(text)
    return not open_quote and last == ";"


def has_code(text: str) -> bool:
    """False for text of comments and blanks only (a script's trailing comment is no statement)."""
    last, open_quote = _scan(text)
    return bool(last or open_quote)


def is_dot_command(text: str) -> bool:
    return text.lstrip().startswith(".")


def split_script(text: str) -> Iterator[str]:
    """The pieces of a script in order: each dot command line, each SQL statement text
    (up to and including its ``;``; a last statement may lack it)."""
    for _, piece in script_pieces(text):
        yield piece


def script_pieces(text: str) -> Iterator[tuple[int, str]]:
    """The pieces of :func:`split_script`, each with the (1-based) line of the script it
    starts on, so that an error can name it (``script.sql:12: Error: ...``). Blank and
    comment lines before a piece are not part of it: it starts on its first line of code."""
    buffer: list[str] = []
    first = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not buffer and is_dot_command(line):
            yield number, line.strip()
            continue
        if not buffer and not has_code(line):  # blank or comment lines before a piece
            continue
        if not buffer:
            first = number
        buffer.append(line)
        joined = "\n".join(buffer)
        if is_complete(joined):
            yield first, joined
            buffer = []
    rest = "\n".join(buffer)
    if rest.strip() and has_code(rest):
        yield first, rest
