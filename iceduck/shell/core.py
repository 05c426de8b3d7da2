"""The shell's state shared by the REPL and batch runs: connection, settings, runner, commands."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from iceduck.connection import Connection
from iceduck.shell.commands import Commands
from iceduck.shell.runner import Runner
from iceduck.shell.script import is_dot_command, script_pieces
from iceduck.shell.state import Settings


class Shell:
    """Runs what the user enters (SQL or a dot command) on one connection."""

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
        self.err = err if err is not None else sys.stderr
        self.runner = Runner(connection, settings, debug=debug, err=self.err, on_change=on_change)
        self.commands = Commands(self)
        #: set by ``.quit``: the REPL or script stops
        self.done = False
        #: ``--continue-on-error``: a script runs on after a failed statement (and still fails)
        self.keep_going = False

    def run_input(self, text: str) -> bool:
        """One entry: a dot command line or SQL statements. False when it failed."""
        if is_dot_command(text):
            return self.commands.run(text.strip())
        return self.runner.run_sql(text)

    def run_script(self, text: str, source: str | None = None) -> bool:
        """Every piece of a script in order, stopping at the first failure (or ``.quit``),
        or after the last one with :attr:`keep_going`; False when any failed. Errors name
        ``source:line`` when the script comes from a file (or ``<stdin>``)."""
        ok = True
        for line, piece in script_pieces(text):
            if is_dot_command(piece):
                self.runner.location = f"{source}:{line}" if source is not None else None
                try:
                    done = self.commands.run(piece)
                finally:
                    self.runner.location = None
            else:
                done = self.runner.run_sql(piece, source=source, line=line, keep_going=self.keep_going)
            ok = ok and done
            if self.done or (not done and (not self.keep_going or self.runner.interrupted)):
                break
        return ok
