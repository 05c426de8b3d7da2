"""The Paimon tables a statement reads: each reference resolved to a table version, planned
from its manifests and replaced by the DuckDB relation that reads it.

Paimon tables sit beside the Iceberg catalog, under the alias of an attached warehouse
(``ATTACH 'path' AS p (TYPE paimon)``, ``iceduck.connect(paimon=...)``), named
``p.<database>.<table>`` as DuckDB names a table of an attached database; or read by
folder with ``paimon_scan('<table folder>')``. A fourth part, or Paimon's own
``"<table>$<system table>"`` spelling, reads a system table (``p.db.t.snapshots``,
``p.db."t$files"``). ``VERSION AS OF`` takes a snapshot id or a tag name,
``TIMESTAMP AS OF`` a time (:mod:`iceduck.catalog.paimon_warehouse`).

Planning is the Iceberg one's twin (:mod:`iceduck.session.iceberg_sources`): the WHERE/ON clauses become
a row filter per reference (:func:`iceduck.sql.predicates.pushdown`, on the Iceberg view of
the Paimon schema: same field ids), :func:`iceduck.scan.paimon.planner.plan_paimon_scan`
prunes manifests and files with it, and :func:`iceduck.engine.paimon_read.paimon_scan_sql`
writes the SELECT that reads the files, deletion vectors applied and primary keys merged.
The query keeps its WHERE, so the filter only ever skips files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iceduck.engine import queries
from iceduck.engine.deletes import PositionCache
from iceduck.errors import NotFoundError, UserError
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.tasks import MATCH_ALL
from iceduck.sql.columns import names_used
from iceduck.sql.parse import Statement
from iceduck.sql.predicates import pushdown
from iceduck.sql.references import PAIMON_FUNCTION, TableRef
from iceduck.sql.rewrite import quote_identifier

# Paimon's reader, planner and catalog are imported when a statement names a Paimon table:
# a statement on Iceberg tables never loads them
if TYPE_CHECKING:
    from iceduck.catalog.paimon_warehouse import PaimonTable, PaimonWarehouse
    from iceduck.engine.connection import Duck
    from iceduck.scan.paimon.tasks import PaimonScanPlan

#: Paimon's separator of a table and its system table (``t$snapshots``)
SYSTEM_TABLE_SEPARATOR = "$"


@dataclass
class PaimonSource:
    """One Paimon table reference of a statement, resolved (then planned and attached)."""

    ref: TableRef
    table: PaimonTable
    metadata_table: str | None = None
    plan: PaimonScanPlan | None = None
    view: str = ""
    relation: str = ""
    rows: int | None = None


def is_paimon_ref(ref: TableRef, attached: Mapping[str, PaimonWarehouse]) -> bool:
    """Whether ``ref`` names a Paimon table: ``paimon_scan(...)``, or a name led by the
    alias of an attached warehouse."""
    if ref.path is not None:
        return ref.function == PAIMON_FUNCTION
    return bool(ref.parts) and ref.parts[0].lower() in attached


def resolve_paimon(ref: TableRef, attached: Mapping[str, PaimonWarehouse]) -> PaimonSource:
    """The table version ``ref`` reads (see the module docstring); NotFoundError naming
    what exists for a missing database, table, snapshot or tag."""
    from iceduck.catalog.paimon_warehouse import load_paimon_table

    travel = ref.time_travel
    version = travel.version if travel is not None else None
    timestamp_ms = travel.timestamp_ms if travel is not None else None
    if ref.path is not None:
        table = load_paimon_table(ref.path.rstrip("/"), ref.display, version, timestamp_ms)
        return PaimonSource(ref, table)
    warehouse = attached[ref.parts[0].lower()]
    if len(ref.parts) < 3:
        raise UserError(
            f"{ref.display}: a Paimon table is named {warehouse.alias}.<database>.<table> "
            f"(databases: {', '.join(warehouse.databases()) or 'none'})"
        )
    if len(ref.parts) > 4:
        raise UserError(f"{ref.display}: too many parts for a Paimon table name")
    database, name = ref.parts[1], ref.parts[2]
    system = ref.parts[3] if len(ref.parts) == 4 else None
    if system is None and SYSTEM_TABLE_SEPARATOR in name and not _is_table(warehouse, database, name):
        name, system = name.split(SYSTEM_TABLE_SEPARATOR, 1)
    location = warehouse.table_location(database, name)
    display = ".".join((warehouse.alias, database, name))
    table = load_paimon_table(location, display, version, timestamp_ms)
    return PaimonSource(ref, table, system.lower() if system is not None else None)


def _is_table(warehouse: PaimonWarehouse, database: str, name: str) -> bool:
    """Whether ``name`` (holding a ``$``) is itself a table, rather than ``table$system``."""
    try:
        warehouse.table_location(database, name)
    except NotFoundError:
        return False
    return True


def plan_paimon_sources(
    statement: Statement,
    sources: list[PaimonSource],
    params: Any,
    duck: Duck,
    timezone: str,
    unique_name: Callable[..., str],
    cache: ManifestCache | None = None,
    positions: PositionCache | None = None,
    pruning: bool = True,
) -> None:
    """Plan each Paimon source of ``statement`` with the filter its WHERE/ON clauses imply
    and attach it to ``duck`` (setting ``plan``, ``view`` and ``relation``); register each
    system table as Arrow. ``cache`` and ``positions`` are the session's caches of parsed
    manifests and decoded deletion vectors; ``pruning`` false (``SET iceduck.pruning = false``)
    pushes no filter down."""
    from iceduck.engine.paimon_read import paimon_scan_sql
    from iceduck.scan.paimon.metadata_tables import paimon_metadata_table
    from iceduck.scan.paimon.planner import plan_paimon_scan
    from iceduck.spec.paimon.iceberg_bridge import iceberg_schema

    data = [s for s in sources if s.metadata_table is None]
    schemas = {id(s.ref.node): iceberg_schema(s.table.schema) for s in data}
    filters = pushdown(statement.tree, schemas, params, timezone) if data and pruning else {}
    used = names_used(statement.tree) if data and statement.kind != "DESCRIBE" else None
    for source in sources:
        source.view = unique_name("paimon")
        if source.metadata_table is not None:
            table = paimon_metadata_table(
                source.metadata_table, source.table.location, source.table.snapshot, source.table.schema
            )
            source.rows = table.num_rows
            queries.register_arrow(duck, source.view, table)
            source.relation = quote_identifier(source.view)
            continue
        source.plan = plan_paimon_scan(
            source.table.location,
            source.table.snapshot,
            source.table.schema,
            filters.get(id(source.ref.node), MATCH_ALL),
            cache,
        )
        columns = _columns(source.table, used)
        scan = paimon_scan_sql(duck, source.plan, source.view, columns, positions=positions)
        source.relation = f"({scan})"


def _columns(table: PaimonTable, used: frozenset[str] | None) -> list[str] | None:
    """The columns a scan outputs: the ones the query can name, at least one (``count(*)``);
    None (all) when that is every column."""
    if used is None:
        return None
    names = [f.name for f in table.schema.fields if f.name.lower() in used]
    if not names and table.schema.fields:
        names = [table.schema.fields[0].name]
    return None if len(names) == len(table.schema.fields) else names


def explain_paimon(source: PaimonSource) -> list[str]:
    """EXPLAIN's lines for one Paimon reference: the version read and what the plan read
    and skipped (:meth:`~iceduck.scan.paimon.tasks.PaimonScanPlan.explain_lines`)."""
    table = source.table
    if source.metadata_table is not None:
        return [f"Paimon system table {source.metadata_table} of {table.display}: {source.rows or 0} rows"]
    assert source.plan is not None
    head, *rest = source.plan.explain_lines()
    kind = head[head.rindex(" (") :] if head.endswith(")") else ""
    # the snapshot line says what chose it, as the Iceberg one does ("(current snapshot of main)")
    rest = [f"{line} ({table.selector})" if line.startswith("  snapshot: ") else line for line in rest]
    return [f"Paimon scan of {table.display}{kind}", *rest]
