"""Running SQL for the shell: one statement at a time on a worker thread, so Ctrl-C can stop it.

The main thread waits for the worker, ticking a spinner on the terminal (elapsed time and
DuckDB's progress percentage) once a statement runs longer than a second. Ctrl-C there raises
``KeyboardInterrupt`` in the main thread, which calls :meth:`iceduck.Connection.interrupt`
until the worker returns: DuckDB stops the query with an error and the shell goes back to
its prompt. Python-side work (planning, committing) cannot be stopped midway; the interrupt
is repeated until DuckDB sees it or the statement ends.

Results print through :mod:`iceduck.shell.render`; messages (``inserted 3 rows into db.t``,
timings, errors) go to ``err`` so that ``--csv`` output stays clean. A result cut by the row
limit still reports its size: the rows not shown are fetched in chunks, counted and dropped
(as DuckDB's CLI does), never held. EXPLAIN prints its lines as plain text, whole.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

from iceduck.connection import Connection, Cursor
from iceduck.shell.render import format_value, writer
from iceduck.shell.script import has_code
from iceduck.shell.state import Settings
from iceduck.sql.parse import split_statements

#: rows fetched at a time when a result is printed in full
CHUNK = 10_000
#: a statement running longer than this many seconds shows the spinner
SPINNER_AFTER_S = 1.0
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: cells of the progress bar
BAR_WIDTH = 20
#: an EXPLAIN statement, after any leading comments
_EXPLAIN = re.compile(r"(?:\s|--[^\n]*\n|/\*.*?\*/)*EXPLAIN\b", re.IGNORECASE | re.DOTALL)
#: output modes in which EXPLAIN keeps its one-column table (machine-readable ones)
_TABULAR_EXPLAIN = ("csv", "json")


def error_line(error: BaseException) -> str:
    """One line for an error: its message up to DuckDB's ``LINE n:`` excerpt, joined."""
    text = str(error).strip() or type(error).__name__
    head = text.split("\n\n")[0]
    return "Error: " + " ".join(line.strip() for line in head.splitlines() if line.strip())


def progress_bar(percent: float, width: int = BAR_WIDTH) -> str:
    """``[#######-------]``: ``percent`` (0-100) of ``width`` cells filled."""
    filled = max(0, min(width, round(percent / 100 * width)))
    return "[" + "#" * filled + "-" * (width - filled) + "]"


class Spinner:
    """Elapsed time, and a progress bar with the percent done when it is known (DuckDB's
    for a query, the procedure's own for a ``CALL``), on one terminal line, redrawn in place."""

    def __init__(self, stream: TextIO, progress: Callable[[], float | None], enabled: bool) -> None:
        self.stream = stream
        self.progress = progress
        self.enabled = enabled
        self.started = time.monotonic()
        self.shown = False
        self.frame = 0

    def tick(self) -> None:
        elapsed = time.monotonic() - self.started
        if not self.enabled or elapsed < SPINNER_AFTER_S:
            return
        done = self.progress()
        percent = f"  {progress_bar(done)} {done:5.1f}%" if done is not None else ""
        self.frame = (self.frame + 1) % len(_FRAMES)
        self.stream.write(f"\r{_FRAMES[self.frame]} {elapsed:6.1f} s{percent}  (Ctrl-C cancels)\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


class Runner:
    """Runs SQL text on a connection and prints what each statement returns."""

    def __init__(
        self,
        connection: Connection,
        settings: Settings,
        *,
        debug: bool = False,
        err: TextIO | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.connection = connection
        self.settings = settings
        self.debug = debug
        self.err = err if err is not None else sys.stderr
        #: called after a write or DDL statement (completion forgets the catalog it cached)
        self.on_change = on_change
        #: ``file:line`` of the script statement running (set by :meth:`Shell.run_script`):
        #: its error says where it is, as ``script.sql:12: Error: ...``
        self.location: str | None = None
        #: set when Ctrl-C stopped a statement: a script stops even when it keeps going on errors
        self.interrupted = False
        if settings.interactive:
            connection.session.track_progress = True

    # -- messages -------------------------------------------------------------------------------

    def note(self, text: str) -> None:
        """A line for the user that is not a result (messages, timings)."""
        self.settings.out.flush()
        self.err.write(text + "\n")
        self.err.flush()

    def error(self, error: BaseException) -> None:
        self.settings.out.flush()
        if self.debug:
            traceback.print_exception(error, file=self.err)
        self.failure(error_line(error))

    def failure(self, line: str) -> None:
        """An error line (``Error: ...``), after the script location when one runs."""
        self.note(f"{self.location}: {line}" if self.location else line)

    # -- running --------------------------------------------------------------------------------

    def run_sql(
        self, text: str, *, source: str | None = None, line: int = 1, keep_going: bool = False
    ) -> bool:
        """Run every statement of ``text`` in order; False on error or Ctrl-C, which skips the
        rest unless ``keep_going``. ``text`` starting on ``line`` of script ``source`` makes
        each statement's error name its line there."""
        try:
            statements = split_statements(text)
        except Exception:  # an unterminated string: let the statement itself report it
            statements = [text.strip()]
        ok = True
        offset = 0
        for statement in statements:
            found = text.find(statement, offset)
            offset = found + len(statement) if found >= 0 else offset
            if not has_code(statement):
                continue
            at = line + text.count("\n", 0, found) if found >= 0 else line
            self.location = f"{source}:{at}" if source is not None else None
            try:
                ok = self.run_statement(statement) and ok
            finally:
                self.location = None
            if not ok and (not keep_going or self.interrupted):
                return False
        return ok

    def run_statement(self, sql: str) -> bool:
        started = time.monotonic()
        cursor = self.connection.cursor()
        try:
            explain = _EXPLAIN.match(sql) is not None
            outcome = self._in_worker(lambda: self._execute(cursor, sql, explain))
            if isinstance(outcome, _Interrupted):
                self.note("Interrupted")
                self.interrupted = True
                return False
            if isinstance(outcome, BaseException):
                self.error(outcome)
                return False
            ok = self._show(cursor, outcome, explain)
            notice = cursor.result.notice if cursor.result is not None else None
            if ok and notice:
                self.note(notice)  # under the rows (why a CALL did nothing)
            if self.settings.timer:
                self.note(f"Run Time: {time.monotonic() - started:.3f} s")
            return ok
        finally:
            cursor.close()

    def _execute(self, cursor: Cursor, sql: str, explain: bool) -> list[tuple[Any, ...]]:
        """On the worker: run ``sql`` and fetch the first rows (all a limited result shows;
        every line of a plan)."""
        cursor.execute(sql)
        if _is_write(cursor):
            return []
        if explain:
            return cursor.fetchall()
        limit = self.settings.maxrows
        return cursor.fetchmany(limit + 1 if limit > 0 else CHUNK)

    def _in_worker(self, fn: Callable[[], Any], cancel: threading.Event | None = None) -> Any:
        """``fn()``'s value or exception (as a value); :class:`_Interrupted` after a Ctrl-C that
        stopped it (Ctrl-C interrupts DuckDB and sets ``cancel``, for work DuckDB's interrupt
        does not reach). The worker is a daemon: leaving the shell never waits for it."""
        box: list[Any] = []

        def work() -> None:
            try:
                box.append(fn())
            except BaseException as e:
                box.append(e)

        thread = threading.Thread(target=work, name="iceduck-statement", daemon=True)
        spinner = Spinner(self.err, self.connection.session.progress, self.settings.interactive)
        stop = cancel if cancel is not None else threading.Event()
        # Ctrl-C only sets a flag: a KeyboardInterrupt raised inside a DuckDB call (the spinner
        # asks for progress) would leave that DuckDB connection unusable
        previous = _on_sigint(lambda signum, frame: stop.set())
        try:
            thread.start()
            while thread.is_alive():
                thread.join(0.1)
                if stop.is_set():
                    self.connection.session.interrupt()
                else:
                    spinner.tick()
        finally:
            _on_sigint(previous)
        interrupted = stop.is_set()
        spinner.clear()
        outcome = box[0] if box else RuntimeError("the statement ended without a result")
        if interrupted and isinstance(outcome, BaseException):
            return _Interrupted()
        return outcome

    # -- results --------------------------------------------------------------------------------

    def _count_rest(self, cursor: Cursor) -> int | None:
        """The rows left unread on ``cursor``, fetched chunk by chunk and dropped (DuckDB's
        Arrow readers copy the whole result first, so they are not used); None when Ctrl-C
        stopped the count (it looks at ``cancel`` between chunks) or a fetch failed."""
        cancel = threading.Event()

        def count() -> int | None:
            total = 0
            while not cancel.is_set():
                rows = len(cursor.fetchmany(CHUNK))
                if not rows:
                    return total
                total += rows
            return None

        outcome = self._in_worker(count, cancel)
        return outcome if isinstance(outcome, int) else None

    def _show(self, cursor: Cursor, first: list[tuple[Any, ...]], explain: bool = False) -> bool:
        description = cursor.description
        if description is None or _is_write(cursor):  # a write or DDL statement: its message
            result = cursor.result
            message = result.message if result is not None else None
            if message is None:
                message = f"{cursor.rowcount} rows" if cursor.rowcount >= 0 else "OK"
            self.note(message)
            if self.on_change is not None:
                self.on_change()
            return True
        out = self.settings.out
        if explain and len(description) == 1 and self.settings.mode not in _TABULAR_EXPLAIN:
            out.write("".join(format_value(row[0]) + "\n" for row in first))
            out.flush()
            return True
        w = writer(self.settings.mode, out, self.settings.width())
        w.start([d[0] for d in description], [str(d[1]) for d in description])
        limit = self.settings.maxrows
        if limit > 0:
            more = len(first) > limit
            total = None
            if more:
                rest = self._count_rest(cursor)
                total = len(first) + rest if rest is not None else None
            w.rows(first[:limit])
            w.finish(more, total)
            out.flush()
            return True
        stop = threading.Event()  # Ctrl-C stops between chunks, never inside a DuckDB call
        previous = _on_sigint(lambda signum, frame: stop.set())
        try:
            rows = first
            while rows and not stop.is_set():
                w.rows(rows)
                rows = cursor.fetchmany(CHUNK)
        finally:
            _on_sigint(previous)
        if stop.is_set():
            out.write("\n")
            self.note("Interrupted")
            self.interrupted = True
            return False
        w.finish()
        out.flush()
        return True


def _is_write(cursor: Cursor) -> bool:
    """Whether the statement ``cursor`` ran was a write or DDL (the shell prints its message;
    the DB-API cursor describes DuckDB's ``Count`` row instead)."""
    return cursor.result is not None and cursor.result.written is not None


def _on_sigint(handler: Any) -> Any:
    """Install ``handler`` for SIGINT (main thread only; elsewhere nothing changes); the old one."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, handler)


class _Interrupted:
    """The outcome of a statement that Ctrl-C stopped."""
