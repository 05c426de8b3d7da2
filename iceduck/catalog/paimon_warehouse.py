"""Paimon warehouses attached beside the Iceberg catalog, and the table versions they hold.

A Paimon filesystem catalog keeps each database as a folder ``<name>.db`` under the
warehouse and each table as a folder below it (``<warehouse>/<db>.db/<table>/`` holding
``schema/``, ``snapshot/``, ``manifest/`` and the data's ``bucket-<n>`` folders), with no
catalog database to ask: listing the folders is the catalog (Paimon's
``FileSystemCatalog.listDatabases``/``listTables``). Names match as DuckDB matches them:
the exact spelling first, then without case when that is unambiguous.

A table version is a snapshot (``VERSION AS OF <id>``), a tag (``VERSION AS OF 'name'``,
the tag file holding the snapshot it names), the latest snapshot at a time
(``TIMESTAMP AS OF``), or by default the latest snapshot (``snapshot/LATEST``); a table
without a snapshot yet reads as empty, with its latest schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from iceduck.errors import NotFoundError, UserError
from iceduck.formats.paimon.table_files import (
    is_paimon_table,
    latest_snapshot,
    read_schema,
    read_snapshot,
    read_tag,
    schema_ids,
    snapshot_at_or_before,
    snapshot_ids,
    tag_names,
)
from iceduck.io.listing import list_children
from iceduck.spec.paimon.schema import TableSchema
from iceduck.spec.paimon.snapshot import Snapshot

#: a database folder's suffix (Paimon's ``Catalog.DB_SUFFIX``)
DB_SUFFIX = ".db"


@dataclass(frozen=True)
class PaimonTable:
    """One version of a Paimon table, as a statement reads it."""

    location: str
    #: how the statement named it (``p.db.t``, ``paimon_scan('...')``), for messages
    display: str
    schema: TableSchema
    snapshot: Snapshot | None
    #: what picked the version, for EXPLAIN ("latest snapshot", "tag v1", "VERSION AS OF 3"...)
    selector: str


class PaimonWarehouse:
    """An attached Paimon warehouse: its databases are folders, its tables folders below."""

    def __init__(self, location: str, alias: str) -> None:
        self.location = location.rstrip("/") or "/"
        self.alias = alias

    def databases(self) -> list[str]:
        """The databases, by name (folder names without ``.db``), sorted."""
        _, folders = list_children(self.location)
        names = [f.rstrip("/").rsplit("/", 1)[-1] for f in folders]
        databases = [n[: -len(DB_SUFFIX)] for n in names if n.endswith(DB_SUFFIX)]
        return sorted(d for d in databases if d)

    def tables(self, database: str) -> list[str]:
        """The Paimon tables of ``database``, sorted (folders without a schema are skipped)."""
        _, folders = list_children(f"{self.location}/{database}{DB_SUFFIX}")
        return sorted(f.rstrip("/").rsplit("/", 1)[-1] for f in folders if is_paimon_table(f))

    def table_location(self, database: str, table: str) -> str:
        """The folder of ``database.table``, names matched as DuckDB matches them;
        NotFoundError naming what exists when there is no such table."""
        db = _match(database, self.databases())
        if db is None:
            known = ", ".join(self.databases()) or "none"
            raise NotFoundError(
                f"Paimon database {database!r} not found in {self.alias} ({self.location}); "
                f"databases: {known}"
            )
        # only the matched folder is checked for a schema: a query does not list every table's
        _, folders = list_children(f"{self.location}/{db}{DB_SUFFIX}")
        name = _match(table, [f.rstrip("/").rsplit("/", 1)[-1] for f in folders])
        location = f"{self.location}/{db}{DB_SUFFIX}/{name}"
        if name is None or not is_paimon_table(location):
            known = ", ".join(self.tables(db)) or "none"
            raise NotFoundError(f"Paimon table {self.alias}.{db}.{table} not found; tables of {db}: {known}")
        return location


def _match(name: str, names: list[str]) -> str | None:
    if name in names:
        return name
    folded = [n for n in names if n.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def load_paimon_table(
    location: str,
    display: str,
    version: int | str | None = None,
    timestamp_ms: int | None = None,
) -> PaimonTable:
    """The version of the table at ``location`` a reference reads: ``version`` a snapshot
    id or a tag name (a tag first, as Paimon's ``TimeTravelUtil`` tries a tag before a
    numeric snapshot id), ``timestamp_ms`` the latest snapshot committed at or before it,
    neither the latest snapshot."""
    if not is_paimon_table(location):
        raise NotFoundError(f"{display}: {location} is not a Paimon table (no schema/schema-* files)")
    snapshot, selector = _snapshot(location, display, version, timestamp_ms)
    if snapshot is not None:
        return PaimonTable(location, display, read_schema(location, snapshot.schema_id), snapshot, selector)
    ids = schema_ids(location)
    return PaimonTable(location, display, read_schema(location, max(ids)), None, selector)


def _snapshot(
    location: str, display: str, version: int | str | None, timestamp_ms: int | None
) -> tuple[Snapshot | None, str]:
    """The snapshot a reference reads and what chose it; the folders are listed only to
    name what exists when the wanted tag or snapshot does not."""
    if isinstance(version, str):
        try:
            return read_tag(location, version), f"tag {version}"
        except NotFoundError:
            if not version.strip().isdigit():
                tags = ", ".join(tag_names(location)) or "none"
                raise NotFoundError(f"{display}: no tag {version!r} (tags: {tags})") from None
        version = int(version)
    if isinstance(version, int) and not isinstance(version, bool):
        try:
            return read_snapshot(location, version), f"VERSION AS OF {version}"
        except NotFoundError:
            ids = snapshot_ids(location)
            shown = f"{ids[0]}..{ids[-1]}" if ids else "none"
            raise NotFoundError(f"{display}: no snapshot {version} (snapshots: {shown})") from None
    if version is not None:
        raise UserError(f"{display}: VERSION AS OF takes a snapshot id or a tag name, not {version!r}")
    if timestamp_ms is not None:
        found = snapshot_at_or_before(location, timestamp_ms)
        if found is None:
            raise NotFoundError(f"{display}: no snapshot at or before {timestamp_ms} ms (epoch)")
        return found, f"TIMESTAMP AS OF {timestamp_ms} ms"
    latest = latest_snapshot(location)
    return latest, "latest snapshot" if latest is not None else "no snapshot yet"
