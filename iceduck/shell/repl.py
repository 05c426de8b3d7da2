"""The interactive shell: a prompt_toolkit prompt with history, completion and multi-line input.

Enter runs the statement once it ends with ``;`` (a dot command, or an empty line, runs at
once); before that Enter starts a new line, so a statement can be typed over several lines
and comes back whole from the history (Up arrow). The ``...>`` prompt marks those new lines
only: a long line that the terminal wraps goes on at the left edge, as it would in a plain
terminal. Ctrl-C clears the line being typed (and cancels a running query:
:mod:`iceduck.shell.runner`). ``exit``, ``quit`` and ``\\q`` leave, as ``.quit`` does; so does
Ctrl-D on an empty prompt, while Ctrl-D at the end of a pending statement clears it (as
Ctrl-C does), so a second Ctrl-D leaves. Inside the text Ctrl-D deletes a character, as in
Emacs and readline.
Colours follow prompt_toolkit, which honours ``NO_COLOR``.
"""

from __future__ import annotations

import os
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from iceduck.shell.core import Shell, is_exit_command
from iceduck.shell.script import has_code, is_complete, is_dot_command
from iceduck.version import __version__

PROMPT = "iceduck> "
#: the prompt while a transaction is open (BEGIN ... COMMIT), as psql's ``*``
TRANSACTION_PROMPT = "iceduck*> "
CONTINUATION = "    ...> "
HISTORY_ENV = "ICEDUCK_HISTORY"


def history_path() -> Path:
    """``$ICEDUCK_HISTORY``, else ``~/.iceduck_history``."""
    return Path(os.environ.get(HISTORY_ENV) or Path.home() / ".iceduck_history").expanduser()


def ready(text: str) -> bool:
    """Whether Enter runs ``text`` (else it starts a new line)."""
    return not has_code(text) or is_dot_command(text) or is_exit_command(text) or is_complete(text)


def continuation(width: int, line_number: int, wrap_count: int) -> str:
    """The prefix of a line after the first: ``...>`` on a new line of the statement, nothing
    where the terminal wrapped a long line (a prefix there would land inside a word)."""
    return "" if wrap_count else CONTINUATION[-width:].rjust(width)


def key_bindings() -> KeyBindings:
    """Ctrl-D at the end of pending text clears it (on an empty prompt it still leaves)."""
    bindings = KeyBindings()
    pending_at_end = Condition(
        lambda: bool(get_app().current_buffer.text) and get_app().current_buffer.document.is_cursor_at_the_end
    )

    @bindings.add("c-d", filter=pending_at_end)
    def _clear(event: KeyPressEvent) -> None:
        event.current_buffer.reset()

    return bindings


def banner(shell: Shell) -> str:
    session = shell.connection.session
    where = f" at {session.catalog_uri}" if session.catalog_uri else ""  # without its password
    lake = f"warehouse {session.warehouse}" if session.warehouse else "the REST catalog"
    return (
        f"iceduck {__version__} on {lake} (catalog {session.catalog.name}{where})\n"
        'End SQL statements with ";". Enter ".help" for the dot commands, "exit" or Ctrl-D to leave.'
    )


def run_repl(shell: Shell, completer: object | None = None) -> int:
    """Read and run entries until ``.quit``, ``exit`` or Ctrl-D; the exit status (always 0)."""
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
        prompt_continuation=continuation,
        enable_history_search=False,
        key_bindings=key_bindings(),
    )
    print(banner(shell), flush=True)
    while not shell.done:
        try:
            text = session.prompt(TRANSACTION_PROMPT if shell.connection.in_transaction else PROMPT)
        except KeyboardInterrupt:  # Ctrl-C at the prompt: drop the line, prompt again
            continue
        except EOFError:  # Ctrl-D on an empty line
            break
        if text.strip():
            shell.run_input(text)
    return 0
