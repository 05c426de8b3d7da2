"""What the shell's dot commands change: output mode, row limit, timer, output file."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from typing import TextIO

#: rows a result shows on a terminal before ``.maxrows`` is raised (DuckDB's shell shows 40)
DEFAULT_MAXROWS = 40


@dataclass
class Settings:
    """The shell's settings; the REPL and batch runs differ only in their defaults."""

    mode: str = "box"
    #: rows shown per result; 0 shows them all (batch mode's default)
    maxrows: int = DEFAULT_MAXROWS
    timer: bool = False
    #: True on a terminal: grids fit its width, long statements show a spinner
    interactive: bool = False
    out: TextIO = field(default_factory=lambda: sys.stdout)
    #: the file ``.output FILE`` opened (closed when output returns to stdout)
    out_file: TextIO | None = None

    def width(self) -> int | None:
        """The terminal's width when results go to it; None (no truncation) otherwise."""
        if self.out_file is not None or not self.interactive:
            return None
        return shutil.get_terminal_size((120, 40)).columns

    def set_output(self, target: TextIO | None) -> None:
        """Send results to ``target`` (an open file), or back to stdout (None)."""
        if self.out_file is not None:
            self.out_file.close()
        self.out_file = target
        self.out = target if target is not None else sys.stdout
