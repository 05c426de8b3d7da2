"""Results in a real terminal: as wide as the terminal, EXPLAIN as plain lines, totals in footers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from tests.shell.terminal import Terminal, shell_env

#: an EXPLAIN whose pushed-filter line is about 170 characters long
WIDE_EXPLAIN = (
    "EXPLAIN SELECT * FROM shop.events WHERE id IN (1000001, 1000002, 1000003, 1000004, 1000005, "
    "1000006, 1000007, 1000008, 1000009, 1000010, 1000011, 1000012);"
)
PUSHED = (
    "pushed filter: id in (1000001, 1000002, 1000003, 1000004, 1000005, 1000006, 1000007, "
    "1000008, 1000009, 1000010, 1000011, 1000012)"
)


@pytest.fixture(scope="module")
def wide_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``shop.events``: 5,000 rows in days partitions under a deep folder (long file paths)."""
    path = tmp_path_factory.mktemp("wide") / ("a-rather-long-folder-name-" * 3) / "warehouse"
    with iceduck.connect(path) as con:
        con.execute("CREATE NAMESPACE shop")
        con.execute(
            "CREATE TABLE shop.events (id BIGINT, ts TIMESTAMP) USING iceberg PARTITIONED BY (days(ts))"
        )
        con.execute(
            "INSERT INTO shop.events SELECT i, TIMESTAMP '2024-05-01' + to_minutes(i) FROM range(5000) r(i)"
        )
    return path


def open_terminal(warehouse: Path, tmp_path: Path, columns: int) -> Terminal:
    t = Terminal([str(warehouse)], shell_env(tmp_path / "history"), columns=columns)
    t.wait_prompt()
    return t


@pytest.fixture
def wide(wide_warehouse: Path, tmp_path: Path) -> Iterator[Terminal]:
    t = open_terminal(wide_warehouse, tmp_path, 200)
    yield t
    t.close()


def test_explain_prints_whole_lines_in_a_wide_terminal(wide: Terminal) -> None:
    wide.run(WIDE_EXPLAIN)
    screen = wide.text()
    lines = screen.splitlines()
    assert any(line == f"  {PUSHED}" for line in lines), screen  # whole, not in a box, not cut
    assert "Iceberg scan of iceduck.shop.events" in lines
    assert "DuckDB plan:" in lines
    assert "│ explain" not in screen and "…" not in screen


def test_values_use_the_terminal_width_and_a_resize_applies_to_the_next_result(wide: Terminal) -> None:
    value = "z" * 150
    wide.run(f"SELECT '{value}' AS s;")
    assert f"│ {value} │" in wide.text()
    wide.resize(100)
    other = "w" * 150
    wide.type(f"SELECT '{other}' AS t;\r")  # wraps on the screen, so wait for the result itself
    wide.wait_for(r"^│ w+… │$")
    row = [line for line in wide.text().splitlines() if line.startswith("│ www")][-1]
    assert len(row) == 100


def test_files_keep_the_end_of_their_paths_and_snapshots_their_time(
    wide_warehouse: Path, tmp_path: Path
) -> None:
    t = open_terminal(wide_warehouse, tmp_path, 120)
    try:
        t.run(".files shop.events")
        screen = t.text()
        rows = [line for line in screen.splitlines() if line.startswith("│ ") and ".parquet" in line]
        assert len(rows) == 4, screen
        assert all(len(line) <= 120 for line in rows)
        # each path lost the warehouse's long prefix and kept its distinctive end
        assert all(re.search(r"│ …[\w/-]+-\d{5}\.parquet │", line) for line in rows), screen
        assert len({line.split("│")[2] for line in rows}) == 4
        t.resize(80)
        t.type("\x0c")
        t.wait_prompt()
        t.run(".snapshots shop.events")
        assert re.search(r"│ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+[+-]\d\d(:\d\d)? │", t.text()), t.text()
    finally:
        t.close()


def test_the_row_limit_footer_counts_every_row(wide: Terminal) -> None:
    wide.run(".maxrows 5")
    wide.run("SELECT range AS i FROM range(1000000);")
    assert "5 rows shown of 1,000,000 (.maxrows N to change, 0 for all)" in wide.text()
    wide.run("SELECT * FROM shop.events;")
    assert "5 rows shown of 5,000 (" in wide.text()


def test_ctrl_c_stops_the_count_and_keeps_the_rows_shown(wide: Terminal) -> None:
    """Counting streams the rows (none is kept), so a huge result shows its first rows at once
    and Ctrl-C stops only the count."""
    wide.run(".maxrows 3")
    wide.type("SELECT range AS i FROM range(100000000000);\r")
    wide.wait_for(r"\d+\.\d s .*\(Ctrl-C cancels\)")
    wide.child.sendintr()
    wide.wait_for(r"^3 rows shown, more not counted \(\.maxrows N to change, 0 for all\)$", timeout=20)
    wide.wait_prompt()
    assert re.search(r"^│ +2 │$", wide.text(), re.MULTILINE), wide.text()  # the rows shown
    wide.run("SELECT 6 * 7 AS answer;")  # the shell still works
    assert "│      42 │" in wide.text()
