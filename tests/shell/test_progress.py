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


def test_an_operation_s_progress_is_its_own_never_duckdb_s_of_one_step() -> None:
    """A CALL runs many DuckDB statements, each reaching 100% (a COPY sits there while it
    writes): the bar shows what the procedure reports, or nothing until it reports."""
    from iceduck.session.session import statement_progress

    assert statement_progress(False, None, lambda: 37.0) == 37.0  # a query: DuckDB's
    assert statement_progress(True, None, lambda: 100.0) is None  # no bar
    assert statement_progress(True, 40.0, lambda: 100.0) == 40.0


def test_a_call_s_cursor_counts_as_an_operation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a procedure runs, its cursor's progress is the procedure's (see above)."""
    session = Session(tmp_path / "wh")
    seen: list[bool] = []
    real = Session._report
    monkeypatch.setattr(
        Session, "_report", lambda self, duck, p: (seen.append(duck in self._reported), real(self, duck, p))
    )
    try:
        session.run("CREATE NAMESPACE db").close()
        session.run("CREATE TABLE db.t (id bigint, s string)").close()
        session.run("INSERT INTO db.t VALUES (1, 'a')").close()
        session.run("CALL system.compute_table_stats('db.t')").close()
        assert seen and all(seen)
        assert session.progress() is None  # the statement is over: nothing left
    finally:
        session.close()
