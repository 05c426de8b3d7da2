"""The ``iceduck`` command: a SQL shell on a warehouse folder.

::

    iceduck [WAREHOUSE]                       # interactive shell (default ./warehouse)
    iceduck WAREHOUSE -c "SELECT 1"           # run SQL, print, exit
    iceduck WAREHOUSE -f script.sql --csv     # run a script, results as CSV
    echo "SHOW TABLES;" | iceduck WAREHOUSE   # SQL on stdin

A missing warehouse folder is created (with a note saying so). Errors print one line,
``Error: <message>`` (``FILE:LINE: Error: <message>`` in a script); ``--debug`` adds the
traceback. Batch runs stop at the first error and exit 1; ``--continue-on-error`` runs on.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from iceduck.shell.render import MODES
from iceduck.shell.state import DEFAULT_MAXROWS, Settings
from iceduck.version import __version__


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="iceduck", description="SQL shell for Apache Iceberg tables.")
    p.add_argument("warehouse", nargs="?", default="warehouse", help="warehouse folder (default ./warehouse)")
    p.add_argument("-c", "--command", action="append", default=[], metavar="SQL", help="run SQL and exit")
    p.add_argument(
        "-f", "--file", action="append", default=[], metavar="FILE", help="run a SQL file and exit"
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--csv", dest="mode", action="store_const", const="csv", help="print results as CSV")
    out.add_argument("--json", dest="mode", action="store_const", const="json", help="print results as JSON")
    out.add_argument("--mode", choices=MODES, help="output mode (default box)")
    p.add_argument("--maxrows", type=int, default=None, help="rows shown per result (0: all)")
    p.add_argument(
        "--continue-on-error",
        action="store_true",
        help="run every statement of -c/-f/stdin even after one fails (the exit code is still 1)",
    )
    p.add_argument("--catalog", default="iceduck", help="catalog name (default iceduck)")
    p.add_argument("--catalog-type", default="sql", choices=("sql", "hadoop"), help="catalog kind")
    p.add_argument("--read-only", action="store_true", help="never write to the catalog")
    p.add_argument("--debug", action="store_true", help="print full tracebacks of errors")
    p.add_argument("--version", action="version", version=f"iceduck {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    interactive = not args.command and not args.file and sys.stdin.isatty()
    # absolute: the catalog records table locations under it, which must not depend on the cwd
    warehouse = Path(args.warehouse).expanduser().resolve()
    if warehouse.exists() and not warehouse.is_dir():
        print(
            f"Error: the warehouse {args.warehouse} is a file, not a folder: "
            "name a warehouse folder (created if missing)",
            file=sys.stderr,
        )
        return 1
    if not warehouse.exists() and not args.read_only:
        try:
            warehouse.mkdir(parents=True)
        except OSError as e:
            print(f"Error: cannot create warehouse folder {warehouse}: {e.strerror or e}", file=sys.stderr)
            return 1
        print(f"Created warehouse folder {args.warehouse} (it did not exist).", file=sys.stderr)

    import iceduck  # the engine loads after argument errors are reported
    from iceduck.shell.runner import error_line

    try:
        connection = iceduck.connect(
            warehouse, args.catalog, catalog_type=args.catalog_type, read_only=args.read_only
        )
    except Exception as e:
        if args.debug:
            raise
        print(error_line(e), file=sys.stderr)
        return 1
    maxrows = args.maxrows if args.maxrows is not None else DEFAULT_MAXROWS if interactive else 0
    settings = Settings(
        mode=args.mode or "box", maxrows=maxrows, interactive=interactive and sys.stdout.isatty()
    )
    from iceduck.shell.core import Shell

    try:
        if interactive:
            from iceduck.shell.completion import SqlCompleter
            from iceduck.shell.repl import run_repl

            shell = Shell(connection, settings, debug=args.debug)
            completer = SqlCompleter(connection.session.catalog, shell.commands.names())
            shell.runner.on_change = completer.invalidate  # writes may add tables and columns
            return run_repl(shell, completer)
        from iceduck.shell.batch import run_batch

        shell = Shell(connection, settings, debug=args.debug)
        shell.keep_going = args.continue_on_error
        stdin = sys.stdin if not args.command and not args.file else None
        return run_batch(shell, args.command, args.file, stdin)
    except KeyboardInterrupt:
        print("Interrupted", file=sys.stderr)
        return 130
    finally:
        settings.set_output(None)
        try:
            connection.close()
        except Exception as e:  # leaving anyway: say why the close failed, in one line
            print(error_line(e), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
