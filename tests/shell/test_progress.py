"""The shell's progress line: the bar, and the percent a procedure reports reaching it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from iceduck.engine import connection as engine
from iceduck.session.session import Session
from iceduck.shell.runner import Spinner, progress_bar


@pytest.mark.parametrize(
    ("percent", "bar"),
    [(0.0, "[" + "-" * 20 + "]"), (50.0, "[" + "#" * 10 + "-" * 10 + "]"), (100.0, "[" + "#" * 20 + "]")],
)
def test_progress_bar(percent: float, bar: str) -> None:
    assert progress_bar(percent) == bar
    assert progress_bar(250.0) == progress_bar(100.0) and progress_bar(-5.0) == progress_bar(0.0)


def test_a_long_operation_s_progress_is_the_session_s_until_its_statement_ends(tmp_path: Path) -> None:
    session = Session(tmp_path / "wh")
    try:
        assert session.progress() is None
        duck = engine.open_cursor(session.database)
        session.op_context(duck, None).report_progress(42.5)
        assert session.progress() == 42.5
        out = io.StringIO()
        spinner = Spinner(out, session.progress, enabled=True)
        spinner.started -= 5  # shown after a second
        spinner.tick()
        assert "[########------------]  42.5%" in out.getvalue()
        session.run("SELECT 1").close()  # another statement ending does not clear it
        assert session.progress() == 42.5
    finally:
        session.close()
