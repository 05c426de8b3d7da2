"""Where statements end: the REPL's Enter and scripts' pieces."""

from __future__ import annotations

from iceduck.shell.repl import ready
from iceduck.shell.script import has_code, is_complete, script_pieces, split_script


def test_is_complete() -> None:
    assert is_complete("SELECT 1;")
    assert is_complete("SELECT 1;  -- done\n")
    assert not is_complete("SELECT ';'")
    assert not is_complete("SELECT 'it''s;")
    assert is_complete("SELECT 'it''s';")
    assert not is_complete('SELECT "a;b"')
    assert not is_complete("SELECT 1 /* ; */")
    assert not is_complete("SELECT 1 -- ;")
    assert not is_complete("SELECT 1 /* ;")


def test_ready_runs_dot_commands_blank_lines_and_comments_at_once() -> None:
    assert ready(".tables")
    assert ready("   ")
    assert ready("-- just a note")
    assert not ready("SELECT 1")
    assert ready("SELECT 1;")


def test_has_code() -> None:
    assert not has_code("-- a\n/* b */\n")
    assert has_code("-- a\nSELECT 1")
    assert has_code("'unterminated")


def test_split_script() -> None:
    script = "-- intro\n.mode csv\nSELECT 1\n  AS one;\n\n.timer on\nSELECT ';' AS s; SELECT 2;\nSELECT 3"
    assert list(split_script(script)) == [
        ".mode csv",
        "SELECT 1\n  AS one;",
        ".timer on",
        "SELECT ';' AS s; SELECT 2;",
        "SELECT 3",
    ]
    assert list(split_script("SELECT 1;\n-- trailing comment\n")) == ["SELECT 1;"]


def test_script_pieces_start_on_their_first_line_of_code() -> None:
    script = "-- intro\n\n.mode csv\n/* c */ SELECT 1\n  AS one;\n-- between\n\nSELECT 2;\nSELECT\n3"
    assert list(script_pieces(script)) == [
        (3, ".mode csv"),
        (4, "/* c */ SELECT 1\n  AS one;"),
        (8, "SELECT 2;"),
        (9, "SELECT\n3"),
    ]
