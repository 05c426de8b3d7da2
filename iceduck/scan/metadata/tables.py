"""Iceberg metadata tables as Arrow tables: ``SELECT ... FROM ns.t.<kind>``.

:func:`metadata_table` builds the table of one kind with the columns (names, order,
types, nullability) and rows that Spark 3.5 with Iceberg 1.10 shows for it; the SQL layer
registers the result in DuckDB. Kinds that list files read manifests through a
:class:`~iceduck.scan.metadata.reader.ManifestSource`, so a session's manifest cache
serves them as it serves scan planning.

``snapshot_id`` selects the snapshot of ``manifests``, ``files``, ``data_files``,
``delete_files``, ``entries`` and ``partitions`` (time travel; default: the current
snapshot, none for an empty table). The metadata-only kinds show the whole metadata
whatever the snapshot, as Java does; the ``all_`` kinds refuse one, as Java does
("Cannot select snapshot in table: ALL_...").
"""

from __future__ import annotations

import pyarrow as pa

from iceduck.errors import NotFoundError, UnsupportedError
from iceduck.scan.metadata import file_tables as ft
from iceduck.scan.metadata import schemas
from iceduck.scan.metadata.arrow import build_table
from iceduck.scan.metadata.manifest_tables import all_manifests_rows, manifests_rows
from iceduck.scan.metadata.partitioning import table_partition_type
from iceduck.scan.metadata.partitions_table import partitions_rows
from iceduck.scan.metadata.reader import DirectManifestSource, ManifestSource
from iceduck.scan.metadata.snapshot_tables import (
    history_rows,
    metadata_log_rows,
    refs_rows,
    snapshots_rows,
)
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata

#: every kind, in Iceberg's ``MetadataTableType`` order (those iceduck supports)
METADATA_TABLE_KINDS = (
    "entries",
    "files",
    "data_files",
    "delete_files",
    "history",
    "metadata_log_entries",
    "snapshots",
    "refs",
    "manifests",
    "partitions",
    "all_data_files",
    "all_delete_files",
    "all_files",
    "all_manifests",
    "all_entries",
)

_SNAPSHOT_KINDS = frozenset({"entries", "files", "data_files", "delete_files", "manifests", "partitions"})
_STATIC_KINDS = frozenset({"history", "metadata_log_entries", "snapshots", "refs"})

_FILE_FILTERS: dict[str, ft.ManifestFilter] = {
    "files": ft.all_contents,
    "data_files": ft.data_only,
    "delete_files": ft.deletes_only,
}


def metadata_table(
    kind: str,
    metadata: TableMetadata,
    metadata_location: str,
    *,
    snapshot_id: int | None = None,
    reader: ManifestSource | None = None,
) -> pa.Table:
    """The metadata table ``kind`` of a table (case-insensitive, as Spark's names).

    ``metadata_location`` is the location of ``metadata``'s own file (the last row of
    ``metadata_log_entries``). Raises :class:`NotFoundError` for an unknown kind (listing
    the valid ones) or snapshot id, :class:`UnsupportedError` for a snapshot on an ``all_``
    kind, and :class:`~iceduck.errors.CorruptDataError` naming the file for broken manifests.
    """
    name = kind.lower()
    if name not in METADATA_TABLE_KINDS:
        raise NotFoundError(
            f"unknown metadata table {kind!r}; valid metadata tables: {', '.join(METADATA_TABLE_KINDS)}"
        )
    if name in _STATIC_KINDS:
        return _static_table(name, metadata, metadata_location)
    if snapshot_id is not None and name not in _SNAPSHOT_KINDS:
        raise UnsupportedError(
            f"cannot select a snapshot of metadata table {name!r}: it covers all snapshots"
        )
    source = reader if reader is not None else DirectManifestSource()
    snapshot = (
        metadata.snapshot_by_id(snapshot_id) if snapshot_id is not None else metadata.current_snapshot()
    )
    return _manifest_table(name, metadata, snapshot, source)


def _static_table(name: str, metadata: TableMetadata, metadata_location: str) -> pa.Table:
    if name == "snapshots":
        return build_table(schemas.SNAPSHOTS, snapshots_rows(metadata))
    if name == "history":
        return build_table(schemas.HISTORY, history_rows(metadata))
    if name == "refs":
        return build_table(schemas.REFS, refs_rows(metadata))
    return build_table(schemas.METADATA_LOG_ENTRIES, metadata_log_rows(metadata, metadata_location))


def _manifest_table(
    name: str, metadata: TableMetadata, snapshot: Snapshot | None, source: ManifestSource
) -> pa.Table:
    if name == "manifests":
        return build_table(schemas.MANIFESTS, manifests_rows(metadata, snapshot, source))
    if name == "all_manifests":
        return build_table(schemas.ALL_MANIFESTS, all_manifests_rows(metadata, source))
    if name == "partitions":
        struct = schemas.partitions_schema(table_partition_type(metadata))
        return build_table(struct, partitions_rows(metadata, snapshot, source))
    builder = ft.FileRows(metadata)
    base = name.removeprefix("all_")
    which = ft.all_contents if base == "entries" else _FILE_FILTERS[base]
    if name.startswith("all_"):
        manifests = ft.reachable_entries(metadata, source, which)
    else:
        manifests = ft.snapshot_entries(metadata, snapshot, source, which)
    if base == "entries":
        return build_table(builder.entries_schema(), ft.entry_rows(builder, manifests))
    return build_table(builder.files_schema(), ft.file_rows(builder, manifests))
