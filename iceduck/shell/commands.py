"""The shell's dot commands (``.tables``, ``.schema``, ``.mode``, ...), as in sqlite3 and DuckDB.

A dot command is one line, needs no ``;``, and is handled here rather than by the SQL
engine; those that list catalog contents run the SQL that shows them (``SHOW TABLES``,
``ns.t.snapshots``) so they print in the current output mode.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from iceduck.catalog.base import Catalog, LoadedTable, Namespace, TableIdentifier
from iceduck.errors import NotFoundError, UserError
from iceduck.session.name_resolution import not_found_message, resolve_table_name
from iceduck.shell.render import MODES
from iceduck.sql.describe import default_sql
from iceduck.sql.explain import snapshot_ndv

if TYPE_CHECKING:
    from iceduck.shell.core import Shell

HELP = """\
.tables [NAMESPACE]    list tables (of one namespace)
.namespaces            list namespaces
.schema [TABLE]        columns, partitioning, sort order and properties of a table (or all)
.snapshots TABLE       the snapshots of a table
.files TABLE           the data and delete files of a table's current snapshot
.mode [MODE]           output mode: box (default), csv, json, markdown, line
.maxrows [N]           rows shown per result (0: all)
.timer on|off          print how long each statement takes
.read FILE             run the SQL and dot commands of FILE
.output [FILE|stdout]  write results to FILE, or back to the terminal
.help                  this text
.quit, .exit           leave (so do exit, quit and \\q, and Ctrl-D on an empty prompt)

SQL statements end with ';' and may span lines; Ctrl-D clears a statement being typed. Tab
completes keywords, namespaces, tables, columns and metadata tables (ns.t.snapshots, ns.t.files,
...). Ctrl-C cancels a running query."""


class Commands:
    """Dispatches ``.name args`` lines to methods ``dot_<name>``."""

    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    def names(self) -> list[str]:
        """Every command, with its dot (for completion)."""
        return sorted("." + name[4:] for name in dir(self) if name.startswith("dot_"))

    def run(self, line: str) -> bool:
        """Run one dot command line; False (after printing why) when it failed."""
        try:
            words = shlex.split(line.lstrip()[1:].rstrip(";"))
        except ValueError as e:
            return self._fail(f"cannot read {line!r}: {e}")
        if not words:
            return self._fail("a dot command needs a name: try .help")
        name, args = words[0].lower(), words[1:]
        method: Callable[[list[str]], bool] | None = getattr(self, f"dot_{name}", None)
        if method is None:
            return self._fail(f"unknown command .{name}: try .help")
        try:
            return method(args)
        except (OSError, UserError) as e:
            return self._fail(str(e))

    def _fail(self, message: str) -> bool:
        self.shell.runner.failure(f"Error: {message}")
        return False

    def _print(self, text: str) -> None:
        out = self.shell.settings.out
        out.write(text if text.endswith("\n") else text + "\n")
        out.flush()

    # -- the commands ---------------------------------------------------------------------------

    def dot_help(self, args: list[str]) -> bool:
        self._print(HELP)
        return True

    def dot_quit(self, args: list[str]) -> bool:
        self.shell.done = True
        return True

    dot_exit = dot_quit

    def dot_tables(self, args: list[str]) -> bool:
        sql = f"SHOW TABLES IN {args[0]}" if args else "SHOW TABLES"
        return self.shell.runner.run_sql(sql)

    def dot_namespaces(self, args: list[str]) -> bool:
        sql = f"SHOW NAMESPACES IN {args[0]}" if args else "SHOW NAMESPACES"
        return self.shell.runner.run_sql(sql)

    def dot_snapshots(self, args: list[str]) -> bool:
        if len(args) != 1:
            return self._fail("usage: .snapshots TABLE")
        return self.shell.runner.run_sql(
            "SELECT committed_at, snapshot_id, parent_id, operation, summary "
            f"FROM {args[0]}.snapshots ORDER BY committed_at"
        )

    def dot_files(self, args: list[str]) -> bool:
        """The files table's columns that tell files apart, under short names so that the path
        keeps room (a cut path keeps its file name)."""
        if len(args) != 1:
            return self._fail("usage: .files TABLE")
        return self.shell.runner.run_sql(
            "SELECT COLUMNS('^(content|file_path|partition)$'), record_count AS records, "
            f"file_size_in_bytes AS bytes FROM {args[0]}.files"
        )

    def dot_schema(self, args: list[str]) -> bool:
        catalog = self.shell.connection.session.catalog
        if len(args) > 1:
            return self._fail("usage: .schema [TABLE]")
        if args:
            identifiers = [self._identifier(args[0])]
        else:
            identifiers = [t for ns in all_namespaces(catalog) for t in catalog.list_tables(ns)]
        texts = [describe_table(catalog.name, catalog.load_table(i)) for i in identifiers]
        self._print("\n\n".join(texts) if texts else "no tables")
        return True

    def _identifier(self, text: str) -> TableIdentifier:
        """The table ``text`` names, as SQL resolves it (``orders`` in the current namespace)."""
        session = self.shell.connection.session
        parts = tuple(p.strip('"`') for p in text.split("."))
        name = resolve_table_name(session.catalog, parts, session.namespace)
        if name is None:
            raise NotFoundError(not_found_message(session.catalog, parts, session.namespace))
        return name.identifier

    def dot_mode(self, args: list[str]) -> bool:
        settings = self.shell.settings
        if not args:
            self._print(f"current output mode: {settings.mode} (one of {', '.join(MODES)})")
            return True
        mode = args[0].lower()
        if mode not in MODES:
            return self._fail(f"unknown mode {args[0]!r}: use one of {', '.join(MODES)}")
        settings.mode = mode
        return True

    def dot_maxrows(self, args: list[str]) -> bool:
        settings = self.shell.settings
        if not args:
            self._print(f"maxrows: {settings.maxrows or 'all'}")
            return True
        if not args[0].isdigit():
            return self._fail("usage: .maxrows N (0 shows every row)")
        settings.maxrows = int(args[0])
        return True

    def dot_timer(self, args: list[str]) -> bool:
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            return self._fail("usage: .timer on|off")
        self.shell.settings.timer = args[0].lower() == "on"
        return True

    def dot_read(self, args: list[str]) -> bool:
        if len(args) != 1:
            return self._fail("usage: .read FILE")
        return self.shell.run_script(Path(args[0]).expanduser().read_text(encoding="utf-8"), source=args[0])

    def dot_output(self, args: list[str]) -> bool:
        if len(args) > 1:
            return self._fail("usage: .output [FILE|stdout]")
        if not args or args[0] == "stdout":
            self.shell.settings.set_output(None)
        else:
            target = open(Path(args[0]).expanduser(), "w", encoding="utf-8")
            self.shell.settings.set_output(target)
        return True


def all_namespaces(catalog: Catalog) -> list[Namespace]:
    """Every namespace, nested ones included."""
    found: list[Namespace] = []
    pending = list(catalog.list_namespaces(()))
    while pending:
        namespace = pending.pop(0)
        found.append(namespace)
        pending.extend(catalog.list_namespaces(namespace))
    return found


def describe_table(catalog_name: str, table: LoadedTable) -> str:
    """What ``.schema`` prints: fields with ids, required or optional, write-defaults (as
    DESCRIBE writes them), the distinct counts of the current snapshot's statistics file
    (``compute_table_stats``) and docs; partitioning, sort order, properties."""
    metadata = table.metadata
    schema = metadata.schema()
    lines = [f"table {catalog_name}.{table.identifier} (format v{metadata.format_version})"]
    ndv = snapshot_ndv(metadata, metadata.current_snapshot_id)  # compute_table_stats' figures
    width = max((len(f.name) for f in schema.fields), default=0)
    type_width = max((len(str(f.field_type)) for f in schema.fields), default=0)
    for f in schema.fields:
        required = "required" if f.required else "optional"
        literal = default_sql(f.field_type, f.write_default)
        default = f" default {literal}" if literal is not None else ""
        doc = f"  -- {f.doc}" if f.doc else ""
        distinct = f" ndv {ndv[f.field_id]:,}" if f.field_id in ndv else ""
        kind = str(f.field_type).ljust(type_width)
        lines.append(f"  {f.field_id:>3}  {f.name.ljust(width)}  {kind}  {required}{default}{distinct}{doc}")
    name = lambda field_id: schema.column_name(field_id) or f"field {field_id}"  # noqa: E731
    spec = metadata.spec()
    if not spec.is_unpartitioned:
        parts = [f"{p.transform}({name(p.source_id)})" for p in spec.fields if not p.transform.is_void]
        lines.append("partitioned by: " + ", ".join(parts))
    order = metadata.sort_order()
    if not order.is_unsorted:
        keys = [
            f"{s.transform}({name(s.source_id)}) {s.direction.value} {s.null_order.value}"
            for s in order.fields
        ]
        lines.append("sorted by: " + ", ".join(keys))
    lines.append(f"location: {metadata.location}")
    if metadata.properties:
        lines.append("properties:")
        lines.extend(f"  {k} = {v}" for k, v in sorted(metadata.properties.items()))
    return "\n".join(lines)
