"""The shell's state shared by the REPL and batch runs: connection, settings, runner, commands."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TextIO

from iceduck.connection import Connection
from iceduck.shell.commands import Commands
from iceduck.shell.runner import Runner
from iceduck.shell.script import is_dot_command, split_script
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

    def run_input(self, text: str) -> bool:
        """One entry: a dot command line, a word that leaves, or SQL statements. False when it
        failed."""
        if is_exit_command(text):
            self.done = True
            return True
        if is_dot_command(text):
            return self.commands.run(text.strip())
        return self.runner.run_sql(text)

    def run_script(self, text: str) -> bool:
        """Every piece of a script in order, stopping at the first failure (or ``.quit``).

        A line of its own that leaves (``exit``, ``\\q``) ends the script even without a ``;``,
        as in psql: no statement can start with those words."""
        for piece in split_script(text):
            if is_exit_command(piece.lstrip().split("\n", 1)[0]):
                self.done = True
                break
            if not self.run_input(piece):
                return False
            if self.done:
                break
        return True
