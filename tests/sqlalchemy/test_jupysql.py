"""jupysql's ``%sql`` magic (the real package, in a real IPython shell) on an iceduck URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

InteractiveShell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell
pytest.importorskip("sql.magic")  # jupysql


@pytest.fixture
def shell() -> Iterator[object]:
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "sql")
    shell.run_line_magic("config", "SqlMagic.displaycon = False")
    shell.run_line_magic("config", "SqlMagic.autopandas = False")
    yield shell
    shell.run_line_magic("sql", "--close-all")
    InteractiveShell.clear_instance()


def test_sql_magic_queries_an_iceduck_warehouse(shell: object, warehouse: Path) -> None:
    shell.run_line_magic("sql", f"iceduck:///{warehouse}")  # type: ignore[attr-defined]
    result = shell.run_line_magic(  # type: ignore[attr-defined]
        "sql", "SELECT id, customer FROM sales.orders ORDER BY id"
    )
    assert [tuple(row) for row in result] == [(1, "ann"), (2, "bob")]
    frame = shell.run_line_magic("sql", "SELECT count(*) AS n FROM sales.orders").DataFrame()  # type: ignore[attr-defined]
    assert frame["n"].tolist() == [2]
