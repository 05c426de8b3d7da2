"""Scripts and pipes: EXPLAIN as plain lines, the words that leave, columns capped without a terminal."""

from __future__ import annotations

from pathlib import Path

from tests.shell.test_batch import iceduck


def test_explain_prints_plain_lines_but_stays_a_table_in_csv(warehouse: Path) -> None:
    sql = "EXPLAIN SELECT * FROM shop.orders WHERE id = 2;"
    run = iceduck(str(warehouse), "-c", sql)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "Iceberg scan of iceduck.shop.orders"
    assert "DuckDB plan:" in lines
    assert "explain" not in run.stdout and "┌─────────" not in lines[0]
    commented = iceduck(str(warehouse), "-c", "-- why is it slow?\n" + sql)
    assert commented.stdout == run.stdout
    csv = iceduck(str(warehouse), "--csv", "-c", sql)
    assert csv.stdout.splitlines()[:2] == ["explain", "Iceberg scan of iceduck.shop.orders"]


def test_exit_words_end_a_script(warehouse: Path) -> None:
    for word in ("exit", "quit;", "\\q"):
        run = iceduck(str(warehouse), stdin=f"SELECT 1 AS a;\n{word}\nSELECT 2 AS b;\n")
        assert run.returncode == 0, run.stderr
        assert "│    a    │" in run.stdout and "b" not in run.stdout, word  # the script stopped there


def test_a_pipe_keeps_columns_at_80_characters(warehouse: Path) -> None:
    run = iceduck(str(warehouse), "-c", f"SELECT '{'q' * 120}' AS s")
    assert "q" * 79 + "…" in run.stdout and "q" * 80 not in run.stdout
