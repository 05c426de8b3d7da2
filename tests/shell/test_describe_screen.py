"""DESCRIBE in the shell, as the user reads it on the screen: required columns ``NO``,
defaults as literals, the doc in ``comment``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from tests.shell.terminal import Terminal, shell_env


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    warehouse = tmp_path / "warehouse"
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE shop")
        con.execute(
            "CREATE TABLE shop.items (id bigint NOT NULL COMMENT 'item number', "
            "price decimal(10, 2) DEFAULT 0.00, added date DEFAULT DATE '2024-01-01') "
            "TBLPROPERTIES ('format-version' = '3')"
        )
    t = Terminal([str(warehouse)], shell_env(tmp_path / "history"))
    t.wait_prompt()
    yield t
    t.close()


def test_describe_shows_the_declared_columns(terminal: Terminal) -> None:
    terminal.run("DESCRIBE shop.items;")
    lines = [" ".join(line.replace("│", " ").split()) for line in terminal.text().splitlines()]
    assert "column_name column_type null key default extra comment" in lines
    assert "id BIGINT NO NULL NULL NULL item number" in lines
    assert "price DECIMAL(10,2) YES NULL 0.00 NULL NULL" in lines
    assert "added DATE YES NULL DATE '2024-01-01' NULL NULL" in lines
