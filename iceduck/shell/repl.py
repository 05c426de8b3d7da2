"""The interactive shell: a prompt_toolkit prompt with history, completion and multi-line input.

Enter runs the statement once it ends with ``;`` (a dot command, or an empty line, runs at
once); before that Enter starts a new line, so a statement can be typed over several lines
and comes back whole from the history (Up arrow). Ctrl-C clears the line being typed (and
cancels a running query: :mod:`iceduck.shell.runner`); Ctrl-D on an empty line leaves.
Colours follow prompt_toolkit, which honours ``NO_COLOR``.
"""

from __future__ import annotations

import os
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory, InMemoryHistory

from iceduck.shell.core import Shell
from iceduck.shell.script import has_code, is_complete, is_dot_command
from iceduck.version import __version__

PROMPT = "iceduck> "
CONTINUATION = "    ...> "
HISTORY_ENV = "ICEDUCK_HISTORY"


def history_path() -> Path:
    """``$ICEDUCK_HISTORY``, else ``~/.iceduck_history``."""
    return Path(os.environ.get(HISTORY_ENV) or Path.home() / ".iceduck_history").expanduser()


def ready(text: str) -> bool:
    """Whether Enter runs ``text`` (else it starts a new line)."""
    return not has_code(text) or is_dot_command(text) or is_complete(text)


def banner(shell: Shell) -> str:
    session = shell.connection.session
    return (
        f"iceduck {__version__} on warehouse {session.warehouse} (catalog {session.catalog.name})\n"
        'End SQL statements with ";". Enter ".help" for the dot commands, Ctrl-D to leave.'
    )


def run_repl(shell: Shell, completer: object | None = None) -> int:
    """Read and run entries until ``.quit`` or Ctrl-D; the exit status (always 0)."""
    try:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        history: FileHistory | InMemoryHistory = FileHistory(str(path))
    except OSError:  # an unwritable home: history for this session only
        history = InMemoryHistory()
    multiline = Condition(lambda: not ready(get_app().current_buffer.text))
    session: PromptSession[str] = PromptSession(
        history=history,
        completer=completer,  # type: ignore[arg-type]
        complete_while_typing=False,
        multiline=multiline,
        prompt_continuation=lambda width, line_number, wrap_count: CONTINUATION[-width:].rjust(width),
        enable_history_search=False,
    )
    print(banner(shell), flush=True)
    while not shell.done:
        try:
            text = session.prompt(PROMPT)
        except KeyboardInterrupt:  # Ctrl-C at the prompt: drop the line, prompt again
            continue
        except EOFError:  # Ctrl-D on an empty line
            break
        if text.strip():
            shell.run_input(text)
    return 0
