"""The current namespace in the shell: ``USE ns`` typed at the prompt, then one-part names,
and ``iceduck WAREHOUSE --namespace ns`` for scripts."""

from __future__ import annotations

import re
from pathlib import Path

from tests.shell.terminal import Terminal, shell_env
from tests.shell.test_batch import iceduck


def test_use_then_unqualified_queries(warehouse: Path, tmp_path: Path) -> None:
    terminal = Terminal([str(warehouse)], shell_env(tmp_path / "history"))
    try:
        _use_then_unqualified_queries(terminal)
    finally:
        terminal.close()


def _use_then_unqualified_queries(terminal: Terminal) -> None:
    terminal.wait_prompt()
    terminal.run("SELECT * FROM orders;")
    screen = terminal.text().replace("\n", "")  # the error's one line wraps at the screen's edge
    assert "Error: table orders does not exist (no namespace is in use" in screen
    assert "namespace shop has a table orders: write shop.orders or USE shop" in screen
    assert "pg_prepared_statements" not in screen
    terminal.run("USE shop;")
    assert "using namespace shop" in terminal.text()
    terminal.run("SELECT id, customer FROM orders WHERE id < 3 ORDER BY id;")
    screen = terminal.text()
    assert "│      1 │ ann      │" in screen
    assert "│      2 │ bob      │" in screen
    terminal.run("SELECT count(*) AS snaps FROM orders.snapshots;")
    assert "│ snaps  │" in terminal.text() and "│      1 │" in terminal.text()
    terminal.run(".schema orders")
    assert "table iceduck.shop.orders (format v2)" in terminal.text()
    terminal.run("SHOW TABLES;")
    assert re.search(r"│ shop +│ orders +│", terminal.text())
    terminal.run("USE nowhere;")
    assert "Error: namespace nowhere does not exist in catalog 'iceduck' (its namespaces: shop)" in (
        terminal.text().replace("\n", "")
    )
    terminal.type("\x04")
    assert terminal.exit_status() == 0


def test_namespace_flag(warehouse: Path) -> None:
    run = iceduck(str(warehouse), "--namespace", "shop", "--csv", "-c", "SELECT id FROM orders ORDER BY id")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["id", "1", "2", "3"]
    # USE in a script changes the namespace for the statements after it
    run = iceduck(str(warehouse), "--csv", stdin="USE iceduck.shop;\nSELECT count(*) AS n FROM orders;\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["n", "3"]
    assert run.stderr == "using namespace shop\n"
    missing = iceduck(str(warehouse), "--namespace", "nope", "-c", "SELECT 1")
    assert missing.returncode == 1
    assert missing.stderr == (
        "Error: namespace nope does not exist in catalog 'iceduck' (its namespaces: shop)\n"
    )
