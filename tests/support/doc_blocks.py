"""Runs the fenced sql, python and sh blocks of a documentation page as written, in order.

A reader follows a page (README.md or one of docs/) from its top, in a clone of the repository:
its first blocks make what the later ones use. So the blocks run in that order, in one temporary
folder holding copies of ``sql/`` and ``examples/``, sharing one warehouse and one Python
namespace (as sqlglot's and DuckDB's documentation tests run their examples), and a block that
fails names its page and line (``docs/querying.md:12: ...``). Output the page shows is compared:
the lines after a statement of a shell transcript, and the comment after a ``print(...)``.

A block that cannot run here (installing packages, the test suite itself, starting Spark) is
marked on the page by an HTML comment ``<!-- not run: why -->`` right before its fence, so the
reader sees which ones are skipped; the tests keep that list short and deliberate.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("sql", "python", "sh")
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, the page's line of its first code line, its text."""

    language: str
    line: int
    text: str
    not_run: str | None  # the reason given on the page, when it is marked as not run
    page: str = "README.md"  # the page's path in the repository, for messages


class BlockFailed(AssertionError):
    """A block failed; the message starts with ``<page>:<line>``."""


def page_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The fenced blocks in order; a fence in another language is an error, so none is missed."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.fullmatch(r"```(\S*)\s*", lines[i])
        if fence is None:
            i += 1
            continue
        language = fence.group(1)
        if language not in LANGUAGES:
            shown = language or "no language"
            raise BlockFailed(f"{page}:{i + 1}: a fenced block in {shown!r}: use one of {LANGUAGES}")
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise BlockFailed(f"{page}:{i + 1}: the fenced block is never closed")
        marker = _NOT_RUN.fullmatch(lines[i - 1].strip()) if i > 0 else None
        body = "\n".join(lines[i + 1 : end]) + "\n"
        blocks.append(Block(language, i + 2, body, marker.group(1) if marker else None, page))
        i = end + 1
    return blocks


# -- sh ---------------------------------------------------------------------------------------


def reader_environment(bin_dir: Path) -> dict[str, str]:
    """PATH and PYTHONPATH as after ``pip install -e .``: ``iceduck`` and ``python3`` run this tree."""
    bin_dir.mkdir(exist_ok=True)
    python = f'"{sys.executable}"'
    for name, command in (("iceduck", f"{python} -m iceduck.cli"), ("python3", python)):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        script.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["COLUMNS"] = "100"  # the output shown must not depend on the terminal the tests run in
    return env


def run_sh(block: Block, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.text],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        failure = f"{block.page}:{block.line}: sh block exited {done.returncode}"
        raise BlockFailed(f"{failure}:\n{done.stderr[-3000:]}")


# -- sql: a shell transcript ------------------------------------------------------------------


@dataclass
class _Statement:
    line: int
    sql: str
    shown: list[str]  # the output lines the README shows after it


def transcript(block: Block) -> tuple[str, list[_Statement]]:
    """The command of the ``$`` line (default ``iceduck warehouse``) and the statements typed."""
    command = "iceduck warehouse"
    statements: list[_Statement] = []
    for offset, line in enumerate(block.text.splitlines()):
        if line.startswith("$ "):
            command = line[2:].strip()
        elif line.startswith("iceduck> "):
            statements.append(_Statement(block.line + offset, line[len("iceduck> ") :], []))
        elif re.match(r"\s*\.\.\.> ", line) and statements:
            statements[-1].sql += "\n" + line.split("...> ", 1)[1]
        elif statements:
            statements[-1].shown.append(line.rstrip())
        elif line.strip():
            statements.append(_Statement(block.line + offset, line, []))  # a plain SQL script
    return command, statements


def run_sql(block: Block, cwd: Path, env: dict[str, str]) -> None:
    """The transcript's statements go to its command on stdin; shown output must follow, in order."""
    command, statements = transcript(block)
    script = "\n".join(s.sql for s in statements) + "\n"
    done = subprocess.run(
        ["bash", "-c", command], input=script, cwd=cwd, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
    )  # fmt: skip
    out = [line.rstrip() for line in done.stdout.splitlines()]
    if done.returncode != 0:
        failure = f"{block.page}:{block.line}: `{command}` exited {done.returncode}"
        raise BlockFailed(f"{failure}:\n{done.stdout[-3000:]}")
    position = 0
    for statement in statements:
        if not statement.shown:
            continue
        found = _find_lines(out, statement.shown, position)
        if found is None:
            raise BlockFailed(
                f"{block.page}:{statement.line}: the output shown after this statement does not follow it:\n"
                + "\n".join(statement.shown)
                + "\n-- iceduck printed, from there on:\n"
                + "\n".join(out[position : position + 40])
            )
        position = found + len(statement.shown)


def _find_lines(out: list[str], wanted: list[str], start: int) -> int | None:
    for i in range(start, len(out) - len(wanted) + 1):
        if out[i : i + len(wanted)] == wanted:
            return i
    return None


# -- python -----------------------------------------------------------------------------------


def _comments(source: str) -> dict[int, str]:
    """The comment at the end of each line of ``source``, by line number."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {tok.start[0]: tok.string[1:].strip() for tok in tokens if tok.type == tokenize.COMMENT}


def _is_print(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id == "print"
    )


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    """Statement by statement in ``namespace`` (shared by all blocks); a ``print(...)`` ending in a
    comment must print exactly that comment."""
    module = ast.parse(block.text)
    comments = _comments(block.text)
    for statement in module.body:
        line = block.line + statement.lineno - 1
        printed = io.StringIO()
        code = compile(ast.Module(body=[statement], type_ignores=[]), f"{block.page}:{line}", "exec")
        try:
            with contextlib.redirect_stdout(printed):
                exec(code, namespace)
        except Exception as exc:  # the block's own error, whatever it is, is what the test reports
            raise BlockFailed(f"{block.page}:{line}: {type(exc).__name__}: {exc}") from exc
        expected = comments.get(statement.end_lineno or statement.lineno)
        if _is_print(statement) and expected is not None and printed.getvalue().strip() != expected:
            shown = printed.getvalue().strip()
            raise BlockFailed(f"{block.page}:{line}: printed {shown!r}, the page shows {expected!r}")


# -- a page, in order ---------------------------------------------------------------------


def run_blocks(blocks: list[Block], cwd: Path) -> list[Block]:
    """Runs every block not marked as not run, in order, in ``cwd``; returns the blocks run."""
    env = reader_environment(cwd / ".bin")
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    ran: list[Block] = []
    old = Path.cwd()
    os.chdir(cwd)  # the Python blocks open "warehouse", relative to the clone
    try:
        for block in blocks:
            if block.not_run is not None:
                continue
            if block.language == "sh":
                run_sh(block, cwd, env)
            elif block.language == "sql":
                run_sql(block, cwd, env)
            else:
                run_python(block, namespace)
            ran.append(block)
    finally:
        os.chdir(old)
        for value in namespace.values():  # connections the blocks opened and left open
            if type(value).__name__ == "Connection" and not getattr(value, "closed", False):
                value.close()
    return ran


def clone_for_reader(tmp_path: Path) -> Path:
    """What a page's commands need of a clone: the SQL scripts and the examples."""
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "sql").mkdir()
    for script in (ROOT / "sql").glob("*.sql"):
        shutil.copy(script, clone / "sql")
    shutil.copytree(ROOT / "examples", clone / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return clone


