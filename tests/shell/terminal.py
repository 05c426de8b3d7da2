"""A real terminal for shell tests: the shell runs in a pseudo-terminal (pexpect) and its
output is fed to a VT100 emulator (pyte), so tests read the screen the user would see,
whatever escape sequences prompt_toolkit chose to draw it with."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pexpect
import pyte

ROWS, COLUMNS = 40, 120
#: generous: a loaded CI machine may take seconds to import iceduck
TIMEOUT_S = 30.0
PROMPT = "iceduck>"


def shell_env(history: Path) -> dict[str, str]:
    """An environment without colours or terminal queries that pexpect cannot answer."""
    env = dict(os.environ)
    env.update(
        NO_COLOR="1",
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        ICEDUCK_HISTORY=str(history),
        PYTHONUNBUFFERED="1",
    )
    return env


class Terminal:
    """The screen of an ``iceduck`` process in a pseudo-terminal."""

    def __init__(
        self,
        args: Sequence[str],
        env: dict[str, str],
        cwd: Path | None = None,
        columns: int = COLUMNS,
        rows: int = ROWS,
    ) -> None:
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "iceduck.cli", *args],
            dimensions=(rows, columns),
            env=env,
            cwd=str(cwd) if cwd else None,
            # poll(), not select(): select() fails on a descriptor numbered past 1024, which a
            # long test run holding many connections reaches
            use_poll=True,
        )
        #: everything printed so far, as text lines (survives scrolling)
        self.transcript = ""
        self.eof = False

    def pump(self, wait: float = 0.05) -> None:
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            self.eof = True
            return
        self.stream.feed(data)
        self.transcript += data.decode("utf-8", "replace")

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def cursor_line(self) -> str:
        return self.screen.display[self.screen.cursor.y].rstrip()

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline or self.eof:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{self.text()}")
            self.pump()

    def wait_for(self, pattern: str, timeout: float = TIMEOUT_S) -> None:
        """Until ``pattern`` (a regex) is on the screen."""
        self.wait(lambda: re.search(pattern, self.text(), re.MULTILINE) is not None, repr(pattern), timeout)

    def wait_prompt(self, timeout: float = TIMEOUT_S) -> None:
        """Until the cursor sits on an empty ``iceduck>`` prompt."""
        self.wait(lambda: self.cursor_line() == PROMPT, "an empty prompt", timeout)

    def type(self, keys: str) -> None:
        self.child.send(keys)

    def run(self, line: str, timeout: float = TIMEOUT_S) -> None:
        """Type ``line`` and Enter, then wait for the prompt under the echoed line."""
        self.type(line + "\r")
        self.wait(lambda: self._after(line), f"the prompt after {line!r}", timeout)

    def _after(self, line: str) -> bool:
        """The cursor is on an empty prompt below the last screen line showing ``line``."""
        last = line.splitlines()[-1].rstrip()
        lines = self.text().splitlines()
        y = self.screen.cursor.y
        return self.cursor_line() == PROMPT and any(lines[i].endswith(last) for i in range(y))

    def resize(self, columns: int, rows: int = ROWS) -> None:
        """Resize the terminal (the shell gets SIGWINCH, as from a terminal window)."""
        self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def exit_status(self, timeout: float = TIMEOUT_S) -> int | None:
        self.wait(lambda: self.eof, "the shell to exit", timeout)
        return self.child.wait()

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
