"""``python -m iceduck serve`` as a separate process, for the tests that kill it.

The server prints ``... at http://127.0.0.1:PORT`` on stderr once it listens; a thread reads
stderr to the end (so the access log never fills the pipe and blocks the server), keeps the
lines, and sets :attr:`ServedProcess.ready` when the address appears -- the test waits on
that event, not on a clock.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_ADDRESS = re.compile(r"at (http://127\.0\.0\.1:\d+)")
#: how long starting may take on a busy 2-core machine
START_TIMEOUT_S = 60


class ServedProcess:
    """``iceduck serve WAREHOUSE --port 0 *options``, started at once."""

    def __init__(self, warehouse: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "iceduck", "serve", str(warehouse), "--port", "0", *options],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.url = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self.ready.wait(START_TIMEOUT_S) or not self.url:
            self.kill()
            raise AssertionError(f"iceduck serve did not start: {''.join(self.lines)}")

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            found = _ADDRESS.search(line)
            if found and not self.url:
                self.url = found.group(1)
                self.ready.set()
        self.ready.set()  # ended before it listened: the constructor reports the lines

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or finished."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._reader.join(30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=30)
        self._reader.join(30)

    def logged_errors(self) -> list[str]:
        """The exception of each traceback on stderr (the outermost of a chain), as its last
        line names it: the server logs one for every 5xx it answers."""
        errors: list[str] = []
        inside = False
        for line in self.lines:
            if line.startswith("Traceback"):
                inside = True
            elif line.startswith(("The above exception", "During handling")):
                errors.pop()  # that was the cause: the outer exception follows
            elif inside and line.strip() and not line.startswith(" "):
                errors.append(line.split(":", 1)[0])
                inside = False
        return errors
