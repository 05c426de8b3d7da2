"""The shell's state shared by the REPL and batch runs: connection, settings, runner, commands."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TextIO

from iceduck.connection import Connection
from iceduck.shell.commands import Commands
from iceduck.shell.runner import Runner
from iceduck.shell.script import is_dot_command, script_pieces
from iceduck.shell.state import Settings

#: what leaves the shell besides ``.quit``: psql's ``\q``, and sqlite3's and DuckDB's ``exit``
#: and ``quit``, each with or without a ``;``
_EXIT = re.compile(r"\s*(?:exit|quit|\\q)\s*;?\s*", re.IGNORECASE)


def is_exit_command(text: str) -> bool:
    """Whether ``text`` is one of the words that leave the shell (``exit``, ``quit;``, ``\\q``)."""
    return _EXIT.fullmatch(text) is not None


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
        #: set by ``.quit`` (or ``exit``, ``quit``, ``\\q``): the REPL or script stops
        self.done = False
        #: ``--continue-on-error``: a script runs on after a failed statement (and still fails)
        self.keep_going = False

    def run_input(self, text: str) -> bool:
        """One entry: a dot command line, a word that leaves, or SQL statements. False when it
        failed."""
        if is_exit_command(text):
            self.done = True
            return True
        if is_dot_command(text):
            return self.commands.run(text.strip())
        return self.runner.run_sql(text)

    def run_script(self, text: str, source: str | None = None) -> bool:
        """Every piece of a script in order, stopping at the first failure (or ``.quit``),
        or after the last one with :attr:`keep_going`; False when any failed. Errors name
        ``source:line`` when the script comes from a file (or ``<stdin>``).

        A line of its own that leaves (``exit``, ``\\q``) ends the script even without a ``;``,
        as in psql: no statement can start with those words."""
        ok = True
        for line, piece in script_pieces(text):
            if is_exit_command(piece.lstrip().split("\n", 1)[0]):
                self.done = True
                break
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
