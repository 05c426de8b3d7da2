"""Leaving the shell as psql, sqlite3 and DuckDB users do, and how pending input is shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shell.terminal import PROMPT, Terminal, shell_env


def start(warehouse: Path, tmp_path: Path, columns: int = 120) -> Terminal:
    t = Terminal([str(warehouse)], shell_env(tmp_path / "history"), columns=columns)
    t.wait_prompt()
    return t


@pytest.fixture
def t(warehouse: Path, tmp_path: Path) -> Iterator[Terminal]:
    terminal = start(warehouse, tmp_path)
    yield terminal
    terminal.close()


@pytest.mark.parametrize("word", ["exit", "quit", "\\q", "exit;", "QUIT ;", "\\q;"])
def test_exit_words_leave(t: Terminal, word: str) -> None:
    t.run("SELECT 1 AS one;")
    t.type(word + "\r")  # one Enter: no `...>` waiting for a `;`
    assert t.exit_status() == 0
    assert "...>" not in t.transcript and "Error" not in t.transcript


def test_exit_inside_a_statement_is_not_a_command(t: Terminal) -> None:
    t.type("SELECT 'exit' AS word\r")
    t.wait_for(r"^    \.\.\.>$")
    t.run("exit;")  # ends the statement, does not leave
    assert "Error" in t.text()  # `SELECT ... AS word exit` is no statement
    assert not t.eof
    t.type("exit\r")
    assert t.exit_status() == 0


def test_ctrl_d_clears_a_pending_statement_and_a_second_one_leaves(t: Terminal) -> None:
    t.type("SELECT id\r")
    t.wait_for(r"^    \.\.\.>$")
    t.type("FROM shop.orders")
    t.wait_for(r"^    \.\.\.> FROM shop\.orders$")
    t.type("\x04")  # Ctrl-D with a statement pending: the statement goes, the shell stays
    t.wait(lambda: t.cursor_line() == PROMPT, "a cleared prompt")
    t.run("SELECT 6 * 7 AS answer;")  # the cleared text did not join this statement
    assert "│      42 │" in t.text()
    t.type("\x04")
    assert t.exit_status() == 0


def test_a_wrapped_long_line_has_no_continuation_prompt(warehouse: Path, tmp_path: Path) -> None:
    t = start(warehouse, tmp_path, columns=60)
    try:
        long = "SELECT " + ", ".join(f"{i} AS column_number_{i}" for i in range(6))
        t.type(long)
        t.wait_for(r"column_number_5$")
        assert "...>" not in t.text()  # the terminal wrapped it: no prefix inside a word
        t.type("\r")
        t.wait_for(r"^    \.\.\.>$")  # a real new line still shows it
        t.type("\x03")
        t.wait_prompt()
    finally:
        t.close()
