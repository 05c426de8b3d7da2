"""From a dotted name as written to the table it means, for reads and writes.

Names resolve as Spark resolves them (:func:`iceduck.sql.references.name_candidates`): a
leading catalog name is optional, the last part may pick a metadata table, branch, tag or
snapshot. A session may have a current namespace (``USE ns``, ``connect(namespace=)``):
a name of one or two parts is then also read inside it (``orders``, ``orders.snapshots``),
after the name as written, and a table created under a one-part name goes there. When no
spelling matches exactly, levels are matched without case, as DuckDB matches names, as
long as that is unambiguous. A write may target a table or one of its branches, never a
tag, a snapshot or a metadata table.

A name that means nothing is answered in the catalog's terms: which namespace was
looked in, and which namespaces do have a table of that name (:func:`not_found_message`),
never with DuckDB's guess among its own system tables.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from iceduck.catalog.base import Catalog, Namespace, TableIdentifier
from iceduck.catalog.names import namespace_display
from iceduck.errors import NotFoundError, UserError
from iceduck.ops.context import WriteTarget
from iceduck.spec.snapshot import MAIN_BRANCH
from iceduck.sql.references import ResolvedName, is_selector, resolve_name

#: how many other places with a table of the wanted name a not-found message lists
HINTS = 5
#: DuckDB's message for a one-part relation it does not know (a name no Iceberg table took)
_DUCKDB_MISSING = re.compile(r"Catalog Error: Table with name (?P<name>[^\n]+?) does not exist!")


def fold_case(
    catalog: Catalog, parts: tuple[str, ...], catalog_prefix: bool = True
) -> tuple[str, ...] | None:
    """``parts`` with the namespace and table levels spelled as the catalog spells them,
    matched without case level by level; None when a level is missing or ambiguous.
    ``catalog_prefix`` lets a leading catalog name stand (it is never one in a name that
    starts with the current namespace)."""
    head: tuple[str, ...] = ()
    names = parts
    if catalog_prefix and len(parts) >= 3 and parts[0].lower() == catalog.name.lower():
        head, names = parts[:1], parts[1:]
    namespace: tuple[str, ...] = ()
    level = 0
    while level < len(names) - 1:
        found = [
            ns for ns in catalog.list_namespaces(namespace) if ns[-1].lower() == names[level].lower()
        ]
        if len(found) != 1:
            break
        namespace, level = found[0], level + 1
    if not namespace:
        return None
    wanted = names[level].lower()
    tables = [t.name for t in catalog.list_tables(namespace) if t.name.lower() == wanted]
    if len(tables) != 1:
        return None
    return (*head, *namespace, tables[0], *names[level + 1 :])


def resolve_table_name(
    catalog: Catalog,
    parts: tuple[str, ...],
    namespace: Namespace = (),
    exists: Callable[[TableIdentifier], bool] | None = None,
) -> ResolvedName | None:
    """The reading of ``parts`` whose table exists (exact spellings first, then levels
    matched without case), in the current ``namespace`` too; None when there is none.
    ``exists`` replaces ``catalog.table_exists`` (a statement's cache of loaded tables)."""
    table_exists = exists or catalog.table_exists
    name = resolve_name(parts, catalog.name, table_exists, namespace)
    if name is not None:
        return name
    folded = fold_case(catalog, parts)
    if folded is not None:
        name = resolve_name(folded, catalog.name, table_exists)
    if name is None and namespace and len(parts) <= 2:
        relative = fold_case(catalog, (*namespace, *parts), catalog_prefix=False)
        if relative is not None:
            # the folded name starts with the namespace: read as written (two parts or more)
            name = resolve_name(relative, "", table_exists)
    return name


def resolve_view_name(
    catalog: Catalog, parts: tuple[str, ...], namespace: Namespace = ()
) -> TableIdentifier | None:
    """The catalog view ``parts`` names, or None: as a table's name reads (a leading
    catalog name is optional, a one-part name is in the current ``namespace``), levels
    matched without case when no spelling matches exactly. A view has no metadata tables,
    branches or tags."""
    readings: list[tuple[str, ...]] = []
    if len(parts) >= 3 and parts[0].lower() == catalog.name.lower():
        readings.append(parts[1:])
    if len(parts) >= 2:
        readings.append(parts)
    elif namespace:
        readings.append((*namespace, parts[0]))
    for reading in readings:
        identifier = TableIdentifier(tuple(reading[:-1]), reading[-1])
        if catalog.view_exists(identifier):
            return identifier
    for reading in readings:
        folded = _fold_namespace(catalog, tuple(reading[:-1]))
        if folded is None:
            continue
        views = [v for v in catalog.list_views(folded) if v.name.lower() == reading[-1].lower()]
        if len(views) == 1:
            return views[0]
    return None


def all_namespaces(catalog: Catalog) -> list[Namespace]:
    """Every namespace, nested ones included, in tree order."""
    found: list[Namespace] = []
    pending = list(reversed(catalog.list_namespaces(())))
    while pending:
        namespace = pending.pop()
        found.append(namespace)
        pending.extend(reversed(catalog.list_namespaces(namespace)))
    return found


def not_found_message(catalog: Catalog, parts: tuple[str, ...], namespace: Namespace = ()) -> str:
    """Why ``parts`` names no table (a missing namespace, or a missing table), and where
    a table of that name does exist."""
    shown = ".".join(parts)
    names = parts[1:] if len(parts) >= 3 and parts[0].lower() == catalog.name.lower() else parts
    current = namespace_display(namespace)
    if len(parts) == 1 and namespace:
        gone = "" if catalog.namespace_exists(namespace) else f" (namespace {current} no longer exists)"
        message = f"table {shown} does not exist in namespace {current}{gone}"
    elif len(parts) == 1:
        message = f"table {shown} does not exist (no namespace is in use: USE one, or write ns.{shown})"
    elif names[:-1] and not catalog.namespace_exists(tuple(names[:-1])):
        missing = ".".join(names[:-1])
        message = f"table {shown} not found: catalog {catalog.name!r} has no namespace {missing}"
    else:
        message = f"table {shown} not found in catalog {catalog.name!r}"
    if len(parts) == 2 and namespace:
        message += f", nor in namespace {current}"
    return message + _elsewhere(catalog, parts, namespace)


def _elsewhere(catalog: Catalog, parts: tuple[str, ...], namespace: Namespace) -> str:
    """``; namespace x has a table t: write x.t`` for the tables named like the wanted one
    (compared without case) in any namespace; empty when there are none."""
    wanted, suffix = parts[-1], ""
    if len(parts) >= 2 and is_selector(parts[-1]):  # orders.snapshots: a table orders
        wanted, suffix = parts[-2], "." + parts[-1]
    tables = [t for space in all_namespaces(catalog) for t in catalog.list_tables(space)]
    found = sorted((t.namespace, f"{t}{suffix}") for t in tables if t.name.lower() == wanted.lower())
    if not found:
        return _close_names(tables, wanted, suffix)
    spaces = list(dict.fromkeys(namespace_display(space) for space, _ in found))
    has = f"namespace {spaces[0]} has" if len(spaces) == 1 else f"namespaces {', '.join(spaces[:HINTS])} have"
    more = f" (and {len(spaces) - HINTS} more)" if len(spaces) > HINTS else ""
    names = ", ".join(name for _, name in found[:HINTS])
    use = f" or USE {spaces[0]}" if len(parts) == 1 and not namespace else ""
    return f"; {has} a table {wanted}{more}: write {names}{use}"


def _close_names(tables: list[TableIdentifier], wanted: str, suffix: str) -> str:
    """``; did you mean shop.orders?`` for a misspelt name (what DuckDB's own suggestion
    did, among Iceberg tables instead of DuckDB's system tables); empty when none is close."""
    by_name: dict[str, list[TableIdentifier]] = {}
    for t in tables:
        by_name.setdefault(t.name.lower(), []).append(t)
    close = difflib.get_close_matches(wanted.lower(), list(by_name), n=3, cutoff=0.75)
    names = sorted(f"{t}{suffix}" for name in close for t in by_name[name])[:HINTS]
    return f"; did you mean {' or '.join(names)}?" if names else ""


def missing_relation(catalog: Catalog, message: str, namespace: Namespace = ()) -> NotFoundError | None:
    """The not-found error for DuckDB's "Table with name x does not exist!" (a one-part
    name that is neither an Iceberg table in the current namespace nor DuckDB's own),
    in the catalog's terms; None for any other message."""
    m = _DUCKDB_MISSING.search(message)
    if m is None:
        return None
    return NotFoundError(not_found_message(catalog, (m["name"],), namespace))


def resolve_target(catalog: Catalog, parts: tuple[str, ...], namespace: Namespace = ()) -> WriteTarget:
    """The existing table (and branch) a write names; reads-only readings are refused."""
    name = resolve_table_name(catalog, parts, namespace)
    shown = ".".join(parts)
    if name is None:
        view = resolve_view_name(catalog, parts, namespace)
        if view is not None:  # tables and views share one namespace of names
            raise UserError(
                f"{shown} is a view, not a table: a view is read-only (DROP VIEW, ALTER VIEW and "
                "CREATE OR REPLACE VIEW change it)"
            )
        raise NotFoundError(not_found_message(catalog, parts, namespace))
    if name.metadata_table is not None:
        raise UserError(f"cannot write to {shown}: {name.metadata_table} is a metadata table")
    if name.tag is not None:
        raise UserError(f"cannot write to {shown}: tags are read-only, write to a branch")
    if name.snapshot_id is not None or name.timestamp_ms is not None:
        raise UserError(f"cannot write to {shown}: a snapshot is read-only")
    table = catalog.load_table(name.identifier)
    branch = name.branch or MAIN_BRANCH
    if branch != MAIN_BRANCH:
        ref = table.metadata.refs.get(branch)
        if ref is None:
            raise NotFoundError(
                f"cannot write to {shown}: table {name.identifier} has no branch {branch!r}"
            )
        if not ref.is_branch:
            raise UserError(f"cannot write to {shown}: {branch!r} is a tag")
    return WriteTarget(table, branch)


def new_identifier(catalog_name: str, parts: tuple[str, ...], namespace: Namespace = ()) -> TableIdentifier:
    """The identifier a table created under the written name gets (``catalog.`` dropped);
    a one-part name goes into the current ``namespace``."""
    names = parts[1:] if len(parts) >= 3 and parts[0].lower() == catalog_name.lower() else parts
    if len(names) < 2 and namespace:
        return TableIdentifier(namespace, names[-1])
    if len(names) < 2:
        raise UserError(
            f"name the namespace of table {'.'.join(parts)}: write ns.{names[-1]}, or USE ns first"
        )
    return TableIdentifier(tuple(names[:-1]), names[-1])


def use_namespace(catalog: Catalog, parts: tuple[str, ...]) -> Namespace:
    """The namespace ``USE`` names, as the catalog spells it; ``()`` (none in use) for the
    catalog's own name alone. A leading catalog name is dropped, as Spark drops it
    (``USE iceduck.db``), unless the whole name is a namespace. NotFoundError naming the
    namespace, or the catalog, that does not exist."""
    shown = ".".join(parts)
    own = parts[0].lower() == catalog.name.lower()
    readings = [parts]
    if own:
        readings.insert(0, parts[1:])
    for reading in readings:
        if not reading:
            if not catalog.namespace_exists(parts):  # a namespace named like the catalog wins
                return ()
            continue
        if catalog.namespace_exists(reading):
            return reading
        folded = _fold_namespace(catalog, reading)
        if folded is not None:
            return folded
    top = [namespace_display(ns) for ns in catalog.list_namespaces(())]
    listed = f" (its namespaces: {', '.join(top[:20])}{', ...' if len(top) > 20 else ''})" if top else ""
    if len(parts) >= 2 and not own and _fold_namespace(catalog, parts[:1]) is None:
        return _no_catalog(catalog, parts, listed)
    raise NotFoundError(f"namespace {shown} does not exist in catalog {catalog.name!r}{listed}")


def written_namespace(catalog: Catalog, parts: Namespace) -> Namespace:
    """The namespace ``SHOW TABLES IN`` names: a leading catalog name is dropped, as Spark
    drops it (``iceduck.db``), unless the whole name is a namespace."""
    if len(parts) >= 2 and parts[0].lower() == catalog.name.lower() and not catalog.namespace_exists(parts):
        return parts[1:]
    return parts


def _no_catalog(catalog: Catalog, parts: tuple[str, ...], listed: str) -> Namespace:
    raise NotFoundError(
        f"cannot USE {'.'.join(parts)}: {parts[0]} is not this session's catalog "
        f"({catalog.name!r}; another is opened with --catalog or connect(catalog=...)) "
        f"nor a namespace of it{listed}"
    )


def _fold_namespace(catalog: Catalog, parts: tuple[str, ...]) -> Namespace | None:
    """``parts`` as the catalog spells the namespace, level by level without case; None
    when a level is missing or ambiguous."""
    namespace: Namespace = ()
    for part in parts:
        found = [ns for ns in catalog.list_namespaces(namespace) if ns[-1].lower() == part.lower()]
        if len(found) != 1:
            return None
        namespace = found[0]
    return namespace
