"""The non-interactive shell: ``-c SQL``, ``-f FILE`` and SQL piped on stdin.

Each source is a script (SQL statements and dot commands) run in order. The first error
stops the run and the exit status is 1 (0 when everything succeeded), so shell scripts
and CI can rely on it; with ``--continue-on-error`` every statement runs and the status is
still 1 when any failed. An error in a file or on stdin names where the statement starts
(``load.sql:12: Error: ...``, ``<stdin>:3: Error: ...``), as psql and sqlite3 do. Results
print in full (no row limit, no truncation).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from iceduck.shell.core import Shell

#: the name errors give to statements read from stdin
STDIN = "<stdin>"


def run_batch(shell: Shell, commands: Sequence[str], files: Sequence[str], stdin: TextIO | None) -> int:
    """Run the ``-c`` texts, then the ``-f`` files, then ``stdin`` when given; the exit status."""
    scripts: list[tuple[str | None, str]] = [(None, command) for command in commands]
    for name in files:
        try:
            scripts.append((name, Path(name).read_text(encoding="utf-8")))
        except OSError as e:
            shell.runner.note(f"Error: cannot read {name}: {e.strerror or e}")
            return 1
        except UnicodeDecodeError as e:
            shell.runner.note(f"Error: cannot read {name}: not UTF-8 text (byte {e.start})")
            return 1
    if stdin is not None:
        scripts.append((STDIN, stdin.read()))
    failed = False
    for source, script in scripts:
        if not shell.run_script(script, source):
            failed = True
            if not shell.keep_going or shell.runner.interrupted:
                break
        if shell.done:
            break
    return 1 if failed else 0
