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
    buffer: list[str] = []
    for line in text.splitlines():
        if is_dot_command(line) and not has_code("\n".join(buffer)):  # comments before it are dropped
            buffer = []
            yield line.strip()
            continue
        if not buffer and not line.strip():
            continue
        buffer.append(line)
        joined = "\n".join(buffer)
        if is_complete(joined):
            yield joined
            buffer = []
    rest = "\n".join(buffer)
    if rest.strip() and has_code(rest):
        yield rest
