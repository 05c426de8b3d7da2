"""The non-interactive shell: ``-c SQL``, ``-f FILE`` and SQL piped on stdin.

Each source is a script (SQL statements and dot commands) run in order; the first error
stops the run and the exit status is 1 (0 when everything succeeded), so shell scripts
and CI can rely on it. Results print in full (no row limit, no truncation).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from iceduck.shell.core import Shell


def run_batch(shell: Shell, commands: Sequence[str], files: Sequence[str], stdin: TextIO | None) -> int:
    """Run the ``-c`` texts, then the ``-f`` files, then ``stdin`` when given; the exit status."""
    scripts: list[str] = list(commands)
    for name in files:
        try:
            scripts.append(Path(name).read_text(encoding="utf-8"))
        except OSError as e:
            shell.runner.note(f"Error: cannot read {name}: {e.strerror or e}")
            return 1
    if stdin is not None:
        scripts.append(stdin.read())
    for script in scripts:
        if not shell.run_script(script):
            return 1
        if shell.done:
            break
    return 0
