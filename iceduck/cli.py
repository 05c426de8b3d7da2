"""The ``iceduck`` command: a SQL shell on a warehouse folder, or on a team's lake.

::

    iceduck [WAREHOUSE]                       # interactive shell (default ./warehouse)
    iceduck WAREHOUSE -c "SELECT 1"           # run SQL, print, exit
    iceduck WAREHOUSE -f script.sql --csv     # run a script, results as CSV
    echo "SHOW TABLES;" | iceduck WAREHOUSE   # SQL on stdin
    iceduck --catalog postgresql://me@pg/lake --warehouse s3://lake/wh -p s3.endpoint=http://...
    iceduck --catalog http://catalog:8181 -p token=...   # an Iceberg REST catalog (no warehouse needed)
    iceduck                                   # the lake of ~/.iceduck/config.toml, if there is one
    iceduck serve [WAREHOUSE] --port 8181     # serve it as an Iceberg REST catalog (iceduck.serve.serve)

``--catalog`` takes a catalog URI (``scheme://...``, ``jdbc:...``, ``sqlite:...``) or, as
before, a catalog name (also ``--catalog-name``). Without a warehouse or a catalog URI on the
command line, the lake comes from the environment and the config file (:mod:`iceduck.config`;
``--config FILE`` names another file). A missing local warehouse folder is created (with a
note saying so); a location in object storage never is. Errors print one line,
``Error: <message>`` (``FILE:LINE: Error: <message>`` in a script); ``--debug`` adds the
traceback. Batch runs stop at the first error and exit 1; ``--continue-on-error`` runs on.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from iceduck.config import Lake
from iceduck.shell.render import MODES
from iceduck.shell.state import DEFAULT_MAXROWS, Settings
from iceduck.version import __version__

#: what ``iceduck --help`` says of the subcommands (:func:`main` dispatches them before
#: parsing, so argparse does not list them itself)
SUBCOMMANDS = """subcommands:
  iceduck serve [WAREHOUSE] [--port PORT]
                        serve the lake as an Iceberg REST catalog (iceduck serve --help)"""


#: said when the shell is left (EOF, .quit, exit, the end of a script) inside BEGIN ... with
#: no COMMIT: closing the connection rolled the transaction back, as psql and DuckDB do
ROLLED_BACK = "Warning: the open transaction was rolled back on leaving (COMMIT keeps its changes)."


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="iceduck",
        description="SQL shell for Apache Iceberg tables.",
        epilog=SUBCOMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "warehouse",
        nargs="?",
        default=None,
        help="warehouse folder or location URI (default: the config file's, else ./warehouse)",
    )
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
    p.add_argument(
        "--catalog",
        metavar="URI|NAME",
        help="catalog URI (postgresql://..., jdbc:postgresql://..., sqlite:///..., a REST catalog's "
        "http(s)://host:port), or catalog name",
    )
    p.add_argument("--catalog-name", metavar="NAME", help="catalog name (default iceduck)")
    p.add_argument("--warehouse", dest="warehouse_option", metavar="LOCATION", help="same as WAREHOUSE")
    p.add_argument(
        "-p",
        "--property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an Iceberg catalog property (s3.endpoint=..., jdbc.user=...); repeat for more",
    )
    p.add_argument("--config", metavar="FILE", help="config file (default ~/.iceduck/config.toml)")
    p.add_argument(
        "--namespace", metavar="NS", help="current namespace, as after USE NS (one-part table names)"
    )
    p.add_argument(
        "--paimon",
        action="append",
        default=[],
        metavar="[ALIAS=]LOCATION",
        help="attach a Paimon warehouse (as paimon, or ALIAS): SELECT * FROM paimon.db.t; repeat for more",
    )
    p.add_argument("--catalog-type", choices=("sql", "hadoop"), help="catalog kind (default sql)")
    p.add_argument("--read-only", action="store_true", help="never write to the catalog")
    p.add_argument("--debug", action="store_true", help="print full tracebacks of errors")
    p.add_argument("--version", action="version", version=f"iceduck {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:
        from iceduck.serve.serve import main as serve

        return serve(arguments[1:])
    args = parser().parse_args(arguments)
    interactive = not args.command and not args.file and sys.stdin.isatty()
    from iceduck.errors import IceduckError

    try:
        lake = _lake(args)
        folder = _local_folder(lake)
        existed = folder is None or folder.exists()
    except IceduckError as e:
        if args.debug:
            raise
        print(f"Error: {e}", file=sys.stderr)
        return 1

    import iceduck  # the engine loads after argument errors are reported
    from iceduck.shell.runner import error_line

    try:
        connection = iceduck.connect(
            lake.warehouse,
            lake.name,
            catalog_uri=lake.catalog_uri,
            properties=lake.properties,
            catalog_type=lake.catalog_type,
            read_only=args.read_only,
            namespace=args.namespace,
            paimon=_paimon_warehouses(args.paimon) or None,
        )
        if folder is not None and not existed and not args.read_only:
            try:
                _create_folder(folder, str(lake.warehouse))
            except BaseException:
                connection.close()
                raise
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
            completer = SqlCompleter(
                connection.session.catalog, shell.commands.names(), connection.session.paimon
            )
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
        open_transaction = not connection.closed and connection.in_transaction
        try:
            connection.close()
        except Exception as e:  # leaving anyway: say why the close failed, in one line
            print(error_line(e), file=sys.stderr)
        else:
            if open_transaction:  # closing rolls it back: never without a word
                print(ROLLED_BACK, file=sys.stderr)


def _lake(args: argparse.Namespace) -> Lake:
    """The lake the command line names, or the configuration's (:mod:`iceduck.config`)."""
    from iceduck.catalog.uri import looks_like_uri, parse_catalog_uri
    from iceduck.config import resolve_lake
    from iceduck.errors import UserError

    if args.warehouse and args.warehouse_option and args.warehouse != args.warehouse_option:
        raise UserError(f"two warehouses given: {args.warehouse} and --warehouse {args.warehouse_option}")
    warehouse = args.warehouse_option or args.warehouse
    catalog_uri = args.catalog if args.catalog and looks_like_uri(args.catalog) else None
    name = args.catalog_name
    if args.catalog and catalog_uri is None:
        if name is not None and name != args.catalog:
            raise UserError(f"two catalog names given: --catalog {args.catalog} and --catalog-name {name}")
        name = args.catalog
    if args.config and (warehouse or catalog_uri):
        raise UserError(
            "--config describes the lake: give it alone, or a warehouse and catalog on the command line"
        )
    if catalog_uri is not None:
        parse_catalog_uri(catalog_uri)  # a wrong URI is refused before anything is created
    properties = {}
    for item in args.property:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise UserError(f"--property takes KEY=VALUE (s3.endpoint=http://host:9000), not {key!r}")
        properties[key.strip()] = value
    return resolve_lake(
        warehouse, catalog_uri, name, args.catalog_type, properties, config_file=args.config
    )


def _local_folder(lake: Lake) -> Path | None:
    """The lake's local warehouse folder (``None`` for a location in object storage), which
    must be a folder if it exists; absolute: the catalog records table locations under it."""
    from iceduck.catalog.open import is_remote, warehouse_location
    from iceduck.catalog.uri import REST, parse_catalog_uri
    from iceduck.errors import UserError

    rest = lake.catalog_uri is not None and parse_catalog_uri(lake.catalog_uri).kind == REST
    if lake.warehouse is None or rest:
        return None  # a REST catalog: the server owns the locations, no folder to create
    if is_remote(str(lake.warehouse)):
        return None
    warehouse = Path(warehouse_location(lake.warehouse))
    if warehouse.exists() and not warehouse.is_dir():
        raise UserError(
            f"the warehouse {lake.warehouse} is a file, not a folder: "
            "name a warehouse folder (created if missing)"
        )
    return warehouse


def _create_folder(folder: Path, shown: str) -> None:
    """Create the local warehouse folder that was missing, once the lake has opened (a catalog
    that cannot be reached leaves nothing behind), saying so; the embedded ``catalog.db`` has
    created it already while opening."""
    from iceduck.errors import StorageError

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StorageError(f"cannot create warehouse folder {folder}: {e.strerror or e}") from None
    print(f"Created warehouse folder {shown} (it did not exist).", file=sys.stderr)


def _paimon_warehouses(values: list[str]) -> dict[str, str]:
    """``--paimon [ALIAS=]LOCATION`` options as {alias: location} (alias ``paimon`` when
    none is given; an ``=`` inside a URI's query is no alias: the alias is a plain name)."""
    attached: dict[str, str] = {}
    for value in values:
        alias, sep, location = value.partition("=")
        if not sep or not alias.isidentifier():
            alias, location = "paimon", value
        attached[alias] = location
    return attached


if __name__ == "__main__":
    sys.exit(main())

