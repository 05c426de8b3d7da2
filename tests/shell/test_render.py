"""The output modes, on values of every kind the engine returns."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid

import pytest

from iceduck.shell.render import MODES, fit_widths, format_value, json_value, render

COLUMNS = ["id", "name", "amount"]
TYPES = ["BIGINT", "VARCHAR", "DECIMAL(10,2)"]
ROWS = [(1, "ann", decimal.Decimal("10.50")), (22, None, None)]


def test_box() -> None:
    assert render("box", COLUMNS, TYPES, ROWS) == (
        "┌────────┬─────────┬───────────────┐\n"
        "│   id   │   name  │     amount    │\n"
        "│ bigint │ varchar │ decimal(10,2) │\n"
        "├────────┼─────────┼───────────────┤\n"
        "│      1 │ ann     │         10.50 │\n"
        "│     22 │ NULL    │          NULL │\n"
        "└────────┴─────────┴───────────────┘\n"
        "2 rows\n"
    )


def test_box_says_when_rows_were_cut_and_fits_the_width() -> None:
    text = render("box", ["s"], ["VARCHAR"], [("x" * 200,)], width=30, more=True)
    lines = text.splitlines()
    assert all(len(line) <= 30 for line in lines[:-1])  # the grid; the footer is a sentence
    assert lines[4] == "│ " + "x" * 25 + "… │"
    assert lines[-1] == "1 row shown, more not counted (.maxrows N to change, 0 for all)"
    total = render("box", ["s"], ["VARCHAR"], [("x",)], more=True, total=1_000_000).splitlines()[-1]
    assert total == "1 row shown of 1,000,000 (.maxrows N to change, 0 for all)"


def test_a_wide_terminal_shows_wide_values_whole() -> None:
    """Only the terminal's width limits a column (no fixed 80-character cap), as in DuckDB."""
    value = "y" * 150
    assert f"│ {value} │" in render("box", ["s"], ["VARCHAR"], [(value,)], width=200)
    cut = render("box", ["s"], ["VARCHAR"], [(value,)], width=100).splitlines()[4]
    assert len(cut) == 100 and cut.endswith("y… │")
    # without a terminal (a pipe), columns stay at most 80 characters, as before
    assert "y" * 79 + "… │" in render("box", ["s"], ["VARCHAR"], [(value,)])


def test_paths_keep_their_end_and_timestamps_stay_whole() -> None:
    path = "/home/me/warehouse/shop/orders/data/ts_day=2024-05-01/00000-0-9816c75f-00001.parquet"
    when = dt.datetime(2024, 5, 1, 10, 30, 15, 123456, tzinfo=dt.UTC)
    text = render(
        "box",
        ["committed_at", "file_path", "summary"],
        ["TIMESTAMP WITH TIME ZONE", "VARCHAR", "VARCHAR"],
        [(when, path, "added-data-files=1, added-records=1440, total-records=1440")],
        width=80,
    )
    row = text.splitlines()[4]
    assert len(row) <= 80
    assert f"│ {when} │" in row  # the timestamp whole: the text columns shrank instead
    assert "…" in row and "-00001.parquet │" in row  # the path lost its prefix, kept its file name
    assert "│ added-data" in row  # other text keeps its start


def test_fixed_width_columns_shrink_only_when_alone() -> None:
    widths, dropped = fit_widths([19, 32, 40], 40, 3, [True, True, False])
    assert dropped and widths == [19]  # numbers and timestamps are dropped, not cut
    assert fit_widths([60], 40, 3, [True]) == ([36], False)  # one column left: cut to fit


def test_box_drops_trailing_columns_behind_an_ellipsis() -> None:
    text = render("box", [f"c{i}" for i in range(20)], ["INTEGER"] * 20, [tuple(range(20))], width=40)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 40
    assert lines[4] == "│       0 │       1 │       2 │ … │"
    assert lines[-1] == "1 row (20 columns, some not shown)"


def test_fit_widths_keeps_narrow_columns() -> None:
    assert fit_widths([3, 50, 4], None, 3) == ([3, 50, 4], False)
    widths, dropped = fit_widths([3, 50, 4], 30, 3)
    assert not dropped and widths[0] == 3 and widths[2] == 4 and sum(widths) + 3 * 3 + 1 == 30


def test_csv_json_markdown_line() -> None:
    assert render("csv", COLUMNS, TYPES, ROWS) == "id,name,amount\n1,ann,10.50\n22,,\n"
    assert json.loads(render("json", COLUMNS, TYPES, ROWS)) == [
        {"id": 1, "name": "ann", "amount": 10.5},
        {"id": 22, "name": None, "amount": None},
    ]
    assert render("json", COLUMNS, TYPES, []) == "[]\n"
    assert render("markdown", ["a", "b"], ["VARCHAR", "INTEGER"], [("x|y", 1)]) == (
        "| a    |   b |\n|------|----:|\n| x\\|y |   1 |\n"
    )
    assert render("line", ["id", "name"], ["BIGINT", "VARCHAR"], [(1, "a"), (2, None)]) == (
        "  id = 1\nname = a\n\n  id = 2\nname = NULL\n"
    )


def test_csv_quotes_what_needs_quoting() -> None:
    assert render("csv", ["s"], ["VARCHAR"], [('a,"b"\nc',)]) == 's\n"a,""b""\nc"\n'


def test_values() -> None:
    assert format_value(True) == "true"
    assert format_value([1, "a", None]) == "[1, 'a', NULL]"
    assert format_value({"k": 1, "v": "x"}) == "{'k': 1, 'v': 'x'}"
    assert format_value(b"ab\x00") == "ab\\x00"
    assert format_value(dt.date(2024, 1, 2)) == "2024-01-02"
    assert json_value(decimal.Decimal("1.50")) == "1.50"
    assert json_value(float("nan")) == "null"
    assert json_value({"a": [1, None]}) == '{"a":[1,null]}'
    assert json_value(uuid.UUID(int=1)) == '"00000000-0000-0000-0000-000000000001"'
    assert json_value(dt.datetime(2024, 1, 2, 3, 4, 5)) == '"2024-01-02 03:04:05"'


def test_box_prints_a_multi_line_value_as_lines_of_its_cell() -> None:
    """As DuckDB's CLI box mode: SHOW CREATE TABLE reads as the statement, not ``\\n``."""
    rows = [("CREATE TABLE t (\r\n  id bigint)", 7), ("x\ty", 8)]
    text = render("box", ["s", "n"], ["VARCHAR", "BIGINT"], rows)
    assert text.splitlines()[4:8] == [
        "│ CREATE TABLE t ( │      7 │",
        "│   id bigint)     │        │",
        "│ x\\ty             │      8 │",
        "└──────────────────┴────────┘",
    ]


def test_markdown_cells_stay_one_line() -> None:
    text = render("markdown", ["s"], ["VARCHAR"], [("a\nb",)])
    assert "| a\\nb |" in text


NO_ROWS = {
    # the header and the column type, an empty body, and the count (DuckDB's CLI does the same)
    "box": "┌─────────┐\n│    a    │\n│ integer │\n├─────────┤\n└─────────┘\n0 rows\n",
    "csv": "a\n",
    "json": "[]\n",
    "markdown": "|   a |\n|----:|\n",
    "line": "",
}


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_renders_no_rows(mode: str) -> None:
    assert render(mode, ["a"], ["INTEGER"], []) == NO_ROWS[mode]
