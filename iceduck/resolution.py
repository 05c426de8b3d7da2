"""From a dotted name as written to the table it means, for reads and writes.

Names resolve as Spark resolves them (:func:`iceduck.sql.references.name_candidates`): a
leading catalog name is optional, the last part may pick a metadata table, branch, tag or
snapshot. When no spelling matches exactly, levels are matched without case, as DuckDB
matches names, as long as that is unambiguous. A write may target a table or one of its
branches, never a tag, a snapshot or a metadata table.
"""

from __future__ import annotations

from iceduck.catalog.base import Catalog, TableIdentifier
from iceduck.errors import NotFoundError, UserError
from iceduck.ops.context import WriteTarget
from iceduck.spec.snapshot import MAIN_BRANCH
from iceduck.sql.references import resolve_name


def fold_case(catalog: Catalog, parts: tuple[str, ...]) -> tuple[str, ...] | None:
    """``parts`` with the namespace and table levels spelled as the catalog spells them,
    matched without case level by level; None when a level is missing or ambiguous."""
    head: tuple[str, ...] = ()
    names = parts
    if len(parts) >= 3 and parts[0].lower() == catalog.name.lower():
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


def not_found_message(catalog: Catalog, parts: tuple[str, ...]) -> str:
    """Why ``parts`` names no table: a missing namespace, or a missing table."""
    shown = ".".join(parts)
    names = parts[1:] if len(parts) >= 3 and parts[0].lower() == catalog.name.lower() else parts
    namespace = tuple(names[:-1])
    if namespace and not catalog.namespace_exists(namespace):
        missing = ".".join(namespace)
        return f"table {shown} not found: catalog {catalog.name!r} has no namespace {missing}"
    return f"table {shown} not found in catalog {catalog.name!r}"


def resolve_target(catalog: Catalog, parts: tuple[str, ...]) -> WriteTarget:
    """The existing table (and branch) a write names; reads-only readings are refused."""
    exists = catalog.table_exists
    name = resolve_name(parts, catalog.name, exists)
    if name is None:
        folded = fold_case(catalog, parts)
        name = resolve_name(folded, catalog.name, exists) if folded else None
    shown = ".".join(parts)
    if name is None:
        raise NotFoundError(not_found_message(catalog, parts))
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


def new_identifier(catalog_name: str, parts: tuple[str, ...]) -> TableIdentifier:
    """The identifier a table created under the written name gets (``catalog.`` dropped)."""
    names = parts[1:] if len(parts) >= 3 and parts[0].lower() == catalog_name.lower() else parts
    if len(names) < 2:
        raise UserError(f"name the namespace of table {'.'.join(parts)}: write ns.{names[-1]}")
    return TableIdentifier(tuple(names[:-1]), names[-1])
