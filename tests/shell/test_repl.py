"""The interactive shell as a user meets it: a pseudo-terminal, keys typed, the screen read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shell.terminal import PROMPT, Terminal, shell_env

#: DuckDB hashes for minutes here: only Ctrl-C ends it within the test's time
SLOW_QUERY = "SELECT sum(hash(range)) AS s FROM range(100000000000);"


@pytest.fixture
def terminal(warehouse: Path, tmp_path: Path) -> Iterator[Terminal]:
    t = Terminal([str(warehouse)], shell_env(tmp_path / "history"))
    t.wait_prompt()
    yield t
    t.close()


def test_multiline_query_with_tab_completion(terminal: Terminal, tmp_path: Path) -> None:
    terminal.type("SELECT id,\r")
    terminal.wait_for(r"^    \.\.\.> $|^    \.\.\.>$")  # Enter before ';' continues the statement
    terminal.type("customer FROM shop.ord\t")
    terminal.wait_for(r"customer FROM shop\.orders$")  # Tab completed the table name
    terminal.run(" ORDER BY id;")
    screen = terminal.text()
    assert "iceduck> SELECT id,\n    ...> customer FROM shop.orders ORDER BY id;" in screen
    assert "│      1 │ ann      │" in screen
    assert "│      3 │ NULL     │" in screen
    assert "3 rows" in screen
    # the history file holds the statement whole, for the next session's Up arrow
    assert "customer FROM shop.orders ORDER BY id;" in (tmp_path / "history").read_text()
    terminal.type("\x04")  # Ctrl-D leaves
    assert terminal.exit_status() == 0


def test_completion_of_namespaces_columns_and_metadata_tables(terminal: Terminal) -> None:
    terminal.type("sel\t")
    terminal.wait_for(r"^iceduck> select$")  # keywords complete in the case typed
    terminal.type(" * FROM sho\t")  # several candidates: a menu with their kinds
    terminal.wait_for(r"shop\.orders +table")
    terminal.wait_for(r"shop +namespace")
    terminal.type("\x03")  # Ctrl-C at the prompt clears the line
    terminal.wait_prompt()
    terminal.type("SELECT * FROM shop.orders.snap\t")
    terminal.wait_for(r"FROM shop\.orders\.snapshots$")
    terminal.type("\x03")
    terminal.wait_prompt()
    terminal.type("SELECT * FROM shop.orders AS o WHERE o.cust\t")  # columns through an alias
    terminal.wait_for(r"WHERE o\.customer$")
    terminal.type(" IS NULL AND amo\t")  # columns of the tables the statement names
    terminal.wait_for(r"IS NULL AND amount$")
    terminal.run(" > 1;")
    assert "│      3 │ NULL     │          7.00 │" in terminal.text()


def test_modes_dot_commands_and_errors(terminal: Terminal) -> None:
    terminal.run(".mode csv")
    terminal.run("SELECT id, customer FROM shop.orders ORDER BY id;")
    assert "id,customer\n1,ann\n2,bob\n3," in terminal.text()
    terminal.run(".mode json")
    terminal.run("SELECT id FROM shop.orders WHERE id = 2;")
    assert '[{"id":2}]' in terminal.text()
    terminal.run(".mode line")
    terminal.run("SELECT id, customer FROM shop.orders WHERE id = 1;")
    assert "      id = 1\ncustomer = ann" in terminal.text()
    terminal.run(".mode markdown")
    terminal.run("SELECT id FROM shop.orders WHERE id = 1;")
    assert "|  id |\n|----:|\n|   1 |" in terminal.text()
    terminal.run(".mode box")
    terminal.run(".tables")
    assert "│ shop      │ orders  │" in terminal.text()
    terminal.run(".schema shop.orders")
    assert "table iceduck.shop.orders (format v2)" in terminal.text()
    terminal.run("SELEC 1;")
    screen = terminal.text()
    assert "Error: " in screen and "Traceback" not in screen
    terminal.run(".timer on")
    terminal.run("INSERT INTO shop.orders VALUES (4, 'cy', 1);")
    assert "inserted 1 row into shop.orders" in terminal.text()
    assert "Run Time: " in terminal.text()
    terminal.run("DELETE FROM shop.orders WHERE id = 4;")
    terminal.type(".quit\r")
    assert terminal.exit_status() == 0


def test_ctrl_c_cancels_a_running_query(terminal: Terminal) -> None:
    terminal.type(SLOW_QUERY + "\r")
    terminal.wait_for(r"\d+\.\d s .*\(Ctrl-C cancels\)")  # the spinner: elapsed time, DuckDB's progress
    terminal.child.sendintr()
    terminal.wait_for(r"^Interrupted$", timeout=20)
    terminal.wait_prompt()
    assert "Error" not in terminal.text()
    terminal.run("SELECT 6 * 7 AS answer;")  # the shell still works
    assert "│      42 │" in terminal.text()
    # Ctrl-C with a half-typed line drops the line; Ctrl-D then leaves
    terminal.type("SELECT half")
    terminal.wait_for(r"^iceduck> SELECT half$")
    terminal.type("\x03")
    terminal.wait(lambda: terminal.cursor_line() == PROMPT, "a cleared prompt")
    terminal.type("\x04")
    assert terminal.exit_status() == 0


def test_missing_warehouse_is_created_with_a_note(tmp_path: Path) -> None:
    t = Terminal(["fresh"], shell_env(tmp_path / "history"), cwd=tmp_path)
    try:
        t.wait_prompt()
        assert "Created warehouse folder fresh (it did not exist)." in t.text()
        assert (tmp_path / "fresh" / "catalog.db").exists()
        t.run("CREATE NAMESPACE n;")
        assert "created namespace n" in t.text()
    finally:
        t.close()
