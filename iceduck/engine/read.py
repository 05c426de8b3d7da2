"""Execute a :class:`~iceduck.scan.tasks.ScanPlan` in DuckDB.

:func:`register_scan` creates ``CREATE TEMP VIEW <name> AS ...`` whose columns are the
scan schema's top-level columns (current names and types), reading exactly the planned
files with deletes applied; :func:`attach_scan` returns the same SELECT for splicing into a
statement as a derived table. The user's query keeps its WHERE clause, so DuckDB evaluates
the residual filters itself (and pushes them into the Parquet scans).

Shape of the SELECT (columns named by their SQL names inside every layer, so the plans and
filters DuckDB prints speak of the user's columns; ``__r<id>`` only where a name would
clash with DuckDB's virtual columns: :func:`iceduck.engine.groups.read_names`)::

    SELECT "id", "data", ... FROM (
        SELECT <columns> FROM read_parquet(getvariable('<name>__f0'), schema = MAP {...})
      UNION ALL                                                -- footers prove it: by name
        SELECT <columns> FROM (SELECT "a" AS "data", ... FROM read_parquet(...))
      UNION ALL                                                -- files with deleted rows:
        SELECT <columns> FROM read_parquet(...) WHERE NOT (file_row_number BETWEEN ...)
      UNION ALL                                                -- (or, when runs are many)
        SELECT <columns> FROM read_parquet(...)
               WHERE CASE <file, segment> WHEN 0 THEN get_bit(getvariable('<name>__b2_0')::BIT,
                     file_row_number::INTEGER) ... ELSE 0 END = 0  -- :mod:`iceduck.engine.bitmaps`
    ) AS __s

with as few groups as the files allow (:mod:`iceduck.engine.groups`), so a 2,000-file
table without deletes is one ``read_parquet`` over its list. Equality deletes are turned
into the positions they delete before the SQL is built (:mod:`iceduck.engine.equality`),
so every deleted row goes through the same position filter. A group of a few files lists
them in the SQL (:data:`INLINE_FILES`); longer file lists travel as DuckDB variables
(``<name>__f<n>``), deletion bitmaps as BLOB variables (``<name>__b<n>_<k>``);
:func:`unregister_scan` drops them with the view. A group read plainly whose columns are the
files' own is one ``SELECT "a" AS "a", ... FROM read_parquet([...])``, the whole scan.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import duckdb

from iceduck.engine.bitmaps import BitmapScan, bitmap_scans
from iceduck.engine.deletes import PositionCache, deleted_positions, range_predicate
from iceduck.engine.equality import equality_positions, key_columns
from iceduck.engine.file_errors import file_error, io_error, note_scan_files, scan_files
from iceduck.engine.groups import Group, Grouper, ReadSpec, column_expr, select_items
from iceduck.engine.layout import LayoutCache, parse_name_mapping
from iceduck.engine.object_stores import duck_paths, prefetch
from iceduck.engine.plain_read import needs_virtual_columns, plain_columns, plain_source
from iceduck.engine.projection import METADATA_COLUMNS, needs_layouts, output_fields, output_names, schema_map
from iceduck.engine.types import quote_identifier, quote_string, typed_null
from iceduck.errors import UnsupportedError, UserError
from iceduck.scan.tasks import FileScanTask, ScanPlan
from iceduck.spec.manifest import FileFormat

# numpy is imported only where deleted positions are counted (a table without deletes
# never needs it)
if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from iceduck.engine.connection import Duck

#: what the names of a view's variables start with, after the view's name (file lists are
#: ``<view>__f<n>``: :func:`file_errors.scan_files` reads them back to name a broken file
#: after a failure)
AUX = "__"
#: footers a scan reads (once per session: :class:`LayoutCache`) to prove a plain read
#: (:mod:`iceduck.engine.plain_read`); about 40 us each, so at most ~10 ms per statement
PLAIN_READ_FOOTERS = 256
#: groups of at most this many files list them in the SELECT's text rather than in a variable:
#: setting a variable is a DuckDB statement of its own (0.2-0.3 ms, a few per query), parsing
#: a path in a list about 7 us (a 2,000-path list literal cost DuckDB's parser 13 ms)
INLINE_FILES = 16
#: the view name a remembered SELECT is written for (:func:`attach_scan`), replaced by each
#: statement's own
TEMPLATE = "__iceduck_template"


@dataclass(frozen=True)
class ScanSql:
    """What a scan's view needs: its SELECT, and the variables that SELECT names."""

    sql: str
    #: DuckDB variables to set (file lists: a list literal of 2,000 paths costs DuckDB's
    #: parser 13 ms on every statement, a variable is set once in 2-3 ms; deletion bitmaps
    #: as BLOBs, see :mod:`iceduck.engine.bitmaps`)
    variables: dict[str, Any] = field(default_factory=dict)
    #: the files the SELECT lists in its own text (groups of at most :data:`INLINE_FILES`)
    files: list[str] = field(default_factory=list)


def register_scan(
    con: Duck,
    plan: ScanPlan,
    view_name: str,
    field_ids: Sequence[int] | None = None,
    *,
    layouts: LayoutCache | None = None,
    positions: PositionCache | None = None,
) -> None:
    """Create the temporary view ``view_name`` reading ``plan`` on connection ``con``.

    ``field_ids`` picks top-level columns (and metadata columns such as ``_file``,
    ``_pos``, ``_row_id`` by their reserved ids), in that order; by default every
    top-level column of ``plan.schema``. The variables the view needs are set on ``con``
    under names starting with ``<view_name>__``; they, like the temporary view, belong to
    that connection (cursor).
    """
    sql = attach_scan(con, plan, view_name, field_ids, layouts=layouts, positions=positions)
    try:  # binding globs every file: a missing one fails here, named
        con.execute(f"CREATE OR REPLACE TEMP VIEW {quote_identifier(view_name)} AS {sql}")
    except duckdb.IOException as e:
        unregister_scan(con, view_name)
        raise io_error(e) from e


def attach_scan(
    con: Duck,
    plan: ScanPlan,
    prefix: str,
    field_ids: Sequence[int] | None = None,
    *,
    layouts: LayoutCache | None = None,
    positions: PositionCache | None = None,
    read_ahead: bool = True,
) -> str:
    """Set on ``con`` the variables the scan's SELECT names (``<prefix>__...``) and return
    the SELECT, for use as a derived table: unlike a view, DuckDB then binds the file list
    once per statement instead of twice. ``read_ahead=False``: the statement reads no rows
    (an EXPLAIN), so the files are not fetched ahead.

    A plan without deletes reads the same files in the same way every time, so with the
    session's ``layouts`` its SELECT is written once per column set and kept on the plan
    (:attr:`ScanPlan.derived`; a cached plan is shared by every statement reading that table
    version), then renamed for ``prefix``: an unchanged table costs a dictionary look-up."""
    scan = _remembered_scan(con, plan, prefix, field_ids, layouts, positions, read_ahead)
    for name, value in scan.variables.items():
        con.execute(f"SET VARIABLE {quote_identifier(name)} = ?", [value])
    if scan.files:
        note_scan_files(con, scan.files)
    return scan.sql


def scan_objects(tasks: Sequence[FileScanTask]) -> list[str]:
    """The files DuckDB reads for ``tasks``: each data file, then its position and equality
    delete files (deletion vectors are read by iceduck itself)."""
    found = [t.path for t in tasks]
    for t in tasks:
        found.extend(d.path for d in (*t.position_deletes, *t.equality_deletes))
    return found


def _remembered_scan(
    con: Duck,
    plan: ScanPlan,
    prefix: str,
    field_ids: Sequence[int] | None,
    layouts: LayoutCache | None,
    positions: PositionCache | None,
    read_ahead: bool,
) -> ScanSql:
    """:func:`scan_sql` of ``plan``, written once per column set when it depends on nothing
    but the plan (no deletes, whose positions are read per scan; footers known, so the
    first scan of many files, which stays blind, is not kept) and renamed for ``prefix``.
    The files are still fetched ahead for each statement (the bytes serve one statement)."""
    if layouts is None or any(_has_deletes(t) for t in plan.tasks):
        return scan_sql(
            con, plan, prefix, field_ids, layouts=layouts, positions=positions, read_ahead=read_ahead
        )
    key = ("scan", None if field_ids is None else tuple(field_ids))
    template: ScanSql | None = plan.derived.get(key)
    if template is None:
        template = scan_sql(
            con, plan, TEMPLATE, field_ids, layouts=layouts, positions=positions, read_ahead=read_ahead
        )
        if not layouts.missing(t.path for t in plan.tasks):
            plan.derived[key] = template
    elif read_ahead and plan.tasks and "://" in plan.tasks[0].path:  # a local table: nothing to fetch
        prefetch(con, scan_objects(plan.tasks))
    return _renamed(template, prefix)


def _renamed(template: ScanSql, prefix: str) -> ScanSql:
    """``template`` (written for the view name :data:`TEMPLATE`) for the view ``prefix``: its
    variables, named ``<view>__...`` and read by ``getvariable('<view>__...')``."""
    opening = "getvariable({}"  # the string literal without its closing quote
    old, new = opening.format(quote_string(TEMPLATE)[:-1]), opening.format(quote_string(prefix)[:-1])
    sql = template.sql.replace(old, new)
    variables = {prefix + name[len(TEMPLATE) :]: value for name, value in template.variables.items()}
    return ScanSql(sql, variables, template.files)


def _has_deletes(t: FileScanTask) -> bool:
    return t.deletion_vector is not None or bool(t.position_deletes) or bool(t.equality_deletes)


def unregister_scan(con: Duck, view_name: str) -> None:
    """Drop a view made by :func:`register_scan` with its variables."""
    prefix = view_name + AUX
    con.execute(f"DROP VIEW IF EXISTS {quote_identifier(view_name)}")
    variables = con.execute(
        "SELECT name FROM duckdb_variables() WHERE starts_with(name, ?)", [prefix]
    ).fetchall()
    for (name,) in variables:
        con.execute(f"RESET VARIABLE {quote_identifier(name)}")


def scan_to_arrow(con: Duck, plan: ScanPlan, field_ids: Sequence[int] | None = None) -> pa.Table:
    """Every row of the scan as an Arrow table (the view is dropped afterwards)."""
    view = f"__iceduck_scan_{uuid.uuid4().hex}"
    register_scan(con, plan, view, field_ids)
    try:
        return con.sql(f"SELECT * FROM {quote_identifier(view)}").to_arrow_table()
    except duckdb.Error as e:
        translated = file_error(con, e, scan_files(con))
        if translated is None:
            raise
        raise translated from e
    finally:
        unregister_scan(con, view)


def scan_sql(
    con: Duck,
    plan: ScanPlan,
    view_name: str,
    field_ids: Sequence[int] | None = None,
    *,
    layouts: LayoutCache | None = None,
    positions: PositionCache | None = None,
    read_ahead: bool = True,
) -> ScanSql:
    """The SELECT behind the view of ``plan`` (see the module docstring).

    ``layouts`` and ``positions`` are the session's caches of file schemas and decoded
    deletes; without them, what this scan reads is not kept for the next one. With
    ``read_ahead``, the scan's files in an object store read through pyarrow are fetched
    together first (:func:`iceduck.engine.object_stores.prefetch`)."""
    if layouts is None:
        layouts = LayoutCache()
    if positions is None:
        positions = PositionCache()
    fields = tuple(output_fields(plan.schema, field_ids))
    if not fields:
        raise UserError("a scan must read at least one column")
    for t in plan.tasks:
        if t.file_format is not FileFormat.PARQUET:
            raise UnsupportedError(f"reading {t.file_format.value} data files is not supported: {t.path}")
    tasks = list(plan.tasks)
    if read_ahead:
        prefetch(con, scan_objects(tasks))
    deleted = deleted_positions(con, [t for t in tasks if _has_position_deletes(t)], positions)
    if any(t.equality_deletes for t in tasks):
        tasks, deleted = _apply_equality(con, plan, tasks, deleted, layouts, positions)
    # a data file whose every row is deleted is not read at all
    tasks = [t for t in tasks if not _all_deleted(t, deleted.get(t.path))]
    if not tasks:
        typed = zip(fields, output_names(plan.schema, fields), strict=True)
        items = ", ".join(f"{typed_null(f.field_type)} AS {quote_identifier(n)}" for f, n in typed)
        return ScanSql(f"SELECT {items} WHERE false")
    spec = ReadSpec(plan.schema, fields, ())
    needed = needs_layouts(fields, plan.name_mapping, tasks)
    # footers also let a group be read plainly (plain_read), which DuckDB plans better; a
    # first scan of a table of many small files stays blind rather than read them all twice
    blind = not needed and layouts.missing(t.path for t in tasks) > PLAIN_READ_FOOTERS
    file_layouts = None if blind else layouts.get_many(con, [t.path for t in tasks])
    mapping = parse_name_mapping(plan.name_mapping) if plan.name_mapping else None
    groups = Grouper(spec, file_layouts, mapping).group(tasks, set(deleted))

    scan = ScanSql("")
    selects: list[str] = []
    reads: list[tuple[Group, BitmapScan | None]] = []
    for g in groups:  # files with deleted positions: a bitmap filter per few files
        if g.has_positions:
            reads.extend((replace(g, tasks=b.tasks), b) for b in bitmap_scans(g.tasks, deleted))
        else:
            reads.append((g, None))
    for n, (g, bitmaps) in enumerate(reads):
        paths = duck_paths(con, [t.path for t in g.tasks])
        if len(paths) <= INLINE_FILES:
            file_list = "[" + ", ".join(map(quote_string, paths)) + "]"
            scan.files.extend(paths)
        else:
            files = f"{view_name}{AUX}f{n}"
            scan.variables[files] = paths
            file_list = f"getvariable({quote_string(files)})"
        names = None
        virtual = needs_virtual_columns(fields, g.has_positions or g.has_equality)
        if file_layouts is not None:
            names = plain_columns(g.entries, file_layouts[g.tasks[0].path], g.by_name, virtual)
        if len(reads) == 1 and bitmaps is None and names is not None and not virtual:
            options = cardinality_option(g.tasks, deleted)
            source = f"read_parquet({file_list}, hive_partitioning = false{options})"
            folded = _one_plain_read(g, spec, names, source)
            if folded is not None:
                return ScanSql(folded, scan.variables, scan.files)
        if names is not None:
            source = plain_source(file_list, g.entries, names, cardinality_option(g.tasks, deleted), virtual)
        else:
            source = (
                f"read_parquet({file_list}, schema = {schema_map(g.entries, g.by_name)}"
                f"{cardinality_option(g.tasks, deleted)})"
            )
        where = ""
        if bitmaps is not None:
            ranges = range_predicate(g.tasks, deleted)
            if ranges is None:  # clustered deletes are few ranges, which prune row groups
                ranges, blobs = bitmaps.predicate(f"{view_name}{AUX}b{n}_")
                scan.variables.update(blobs)
            where = f" WHERE {ranges}"
        selects.append(f"SELECT {', '.join(select_items(g, spec, {}))} FROM {source}{where}")
    if len(selects) == 1 and not reads[0][0].has_equality:  # its SELECT list is the scan's columns
        return ScanSql(selects[0], scan.variables, scan.files)
    columns = ", ".join(quote_identifier(name) for name in output_names(plan.schema, fields))
    union = " UNION ALL ".join(selects)
    return ScanSql(f"SELECT {columns} FROM ({union}) AS __s", scan.variables, scan.files)


def _one_plain_read(g: Group, spec: ReadSpec, names: dict[int, str], source: str) -> str | None:
    """The whole scan as one SELECT over ``source`` when it is one group read plainly whose
    columns are the files' own (no partition value filled in, no metadata column): each
    file column named as the scan names it. The layers the general shape has (file names
    -> read names -> the scan's names, then the union's) each cost DuckDB's binder and
    optimizer, on every statement. None when some column needs more than its name."""
    entries = {e.field_id: e for e in g.entries}
    items = []
    for f, name in zip(spec.fields, output_names(spec.schema, spec.fields), strict=True):
        entry = entries.get(f.field_id)
        if entry is None or f.field_id in METADATA_COLUMNS or f.field_id not in names:
            return None
        if column_expr(f, g, entries) != entry.expr:
            return None
        items.append(f"{quote_identifier(names[f.field_id])} AS {quote_identifier(name)}")
    return f"SELECT {', '.join(items)} FROM {source}"


def cardinality_option(tasks: Sequence[FileScanTask], deleted: dict[str, np.ndarray]) -> str:
    """``, explicit_cardinality = N``: the rows the group's files hold, from the manifests.

    With ``schema = MAP {...}`` DuckDB does not open a footer at bind time and guesses the row
    count from file sizes (or ~1 row on some versions), so every join above an iceduck scan was
    ordered blind: TPC-H q5 ran at 3x and some TPC-DS queries never finished. The manifests
    already know: "record_count: Number of records in this file" (spec, "Manifests"), less the
    positions deleted (rows an equality delete removes are not known before the join, so the
    figure is an upper bound there, as a table's row count is for a filter).
    """
    rows = 0
    for t in tasks:
        rows += max(t.record_count, 0)
        positions = deleted.get(t.path)
        if positions is not None:
            import numpy as np  # only with deletes: a cold query without them never imports numpy

            rows -= int(np.searchsorted(positions, max(t.record_count, 0)) - np.searchsorted(positions, 0))
    return f", explicit_cardinality = {rows}" if rows > 0 else ""


def _all_deleted(t: FileScanTask, positions: np.ndarray | None) -> bool:
    """Whether every row position of the file is deleted (positions are sorted, unique)."""
    if positions is None or t.record_count <= 0:
        return False
    import numpy as np

    in_range = int(np.searchsorted(positions, t.record_count)) - int(np.searchsorted(positions, 0))
    return in_range >= t.record_count


def _has_position_deletes(t: FileScanTask) -> bool:
    return t.deletion_vector is not None or bool(t.position_deletes)


def _apply_equality(
    con: Duck,
    plan: ScanPlan,
    tasks: list[FileScanTask],
    deleted: dict[str, np.ndarray],
    layouts: LayoutCache,
    positions: PositionCache,
) -> tuple[list[FileScanTask], dict[str, np.ndarray]]:
    """Equality deletes as the positions they delete (:mod:`iceduck.engine.equality`),
    merged into ``deleted``; the tasks come back without equality deletes."""
    import numpy as np

    targets = [t for t in tasks if t.equality_deletes]
    keys = key_columns(con, plan.schema, targets, layouts)
    tops = [f for k in keys if (f := plan.schema.find_field_or_none(k.top_id)) is not None]
    blind = not (needs_layouts(tops, plan.name_mapping, targets) or any(k.path for k in keys))
    file_layouts = None if blind else layouts.get_many(con, [t.path for t in targets])
    mapping = parse_name_mapping(plan.name_mapping) if plan.name_mapping else None
    grouper = Grouper(ReadSpec(plan.schema, (), keys), file_layouts, mapping)
    merged = dict(deleted)
    for path, found in equality_positions(con, plan.schema, targets, keys, grouper, positions).items():
        prior = merged.get(path)
        merged[path] = found if prior is None else np.union1d(prior, found)
    return [replace(t, equality_deletes=()) if t.equality_deletes else t for t in tasks], merged
