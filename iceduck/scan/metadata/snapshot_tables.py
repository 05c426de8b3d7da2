"""Metadata tables that come from the table metadata file alone.

``snapshots``, ``history``, ``refs`` and ``metadata_log_entries``: rows as Iceberg Java
1.10 builds them (``SnapshotsTable``, ``HistoryTable``, ``RefsTable``,
``MetadataLogEntriesTable``). Timestamps are microseconds (``timestamp_ms * 1000``).
"""

from __future__ import annotations

from typing import Any

from iceduck.spec.snapshot import MetadataLogEntry
from iceduck.spec.table_metadata import TableMetadata

Row = tuple[Any, ...]


def snapshots_rows(metadata: TableMetadata) -> list[Row]:
    """One row per snapshot in the metadata, in metadata order.

    Java's ``Snapshot.summary()`` does not hold ``operation`` (it is its own column), and
    is null for a snapshot written without a summary (allowed in v1).
    """
    rows = []
    for s in metadata.snapshots:
        summary = None
        if s.summary:
            summary = {k: v for k, v in s.summary.items() if k != "operation"}
        rows.append(
            (
                s.timestamp_ms * 1000,
                s.snapshot_id,
                s.parent_snapshot_id,
                s.operation,
                s.manifest_list,
                summary,
            )
        )
    return rows


def current_ancestor_ids(metadata: TableMetadata) -> set[int]:
    """Ids of the current snapshot and its parents, as far as they are still in the metadata."""
    by_id = {s.snapshot_id: s for s in metadata.snapshots}
    found: set[int] = set()
    current = by_id.get(metadata.current_snapshot_id) if metadata.current_snapshot_id is not None else None
    while current is not None and current.snapshot_id not in found:
        found.add(current.snapshot_id)
        parent = current.parent_snapshot_id
        current = by_id.get(parent) if parent is not None else None
    return found


def history_rows(metadata: TableMetadata) -> list[Row]:
    """One row per snapshot-log entry: when a snapshot became current on ``main``.

    ``parent_id`` is null when the snapshot has been expired; ``is_current_ancestor`` tells
    whether it is still in the current snapshot's lineage (false after a rollback).
    """
    parents = {s.snapshot_id: s.parent_snapshot_id for s in metadata.snapshots}
    ancestors = current_ancestor_ids(metadata)
    return [
        (e.timestamp_ms * 1000, e.snapshot_id, parents.get(e.snapshot_id), e.snapshot_id in ancestors)
        for e in metadata.snapshot_log
    ]


def refs_rows(metadata: TableMetadata) -> list[Row]:
    """One row per branch or tag; ``type`` is Java's enum name, ``BRANCH`` or ``TAG``."""
    return [
        (
            name,
            ref.type.name,
            ref.snapshot_id,
            ref.max_ref_age_ms,
            ref.min_snapshots_to_keep,
            ref.max_snapshot_age_ms,
        )
        for name, ref in metadata.refs.items()
    ]


def metadata_log_rows(metadata: TableMetadata, metadata_location: str) -> list[Row]:
    """The metadata log plus the current file (stamped with ``last-updated-ms``).

    ``latest_snapshot_id`` is the last snapshot-log entry at or before the file's time
    (Java ``SnapshotUtil.nullableSnapshotIdAsOfTime`` over the *current* snapshot log);
    its schema id and sequence number are null when that snapshot was expired.
    """
    entries = [*metadata.metadata_log, MetadataLogEntry(metadata.last_updated_ms, metadata_location)]
    snapshots = {s.snapshot_id: s for s in metadata.snapshots}
    rows = []
    for entry in entries:
        latest = None
        for log in metadata.snapshot_log:
            if log.timestamp_ms <= entry.timestamp_ms:
                latest = log.snapshot_id
        snapshot = snapshots.get(latest) if latest is not None else None
        rows.append(
            (
                entry.timestamp_ms * 1000,
                entry.metadata_file,
                latest,
                snapshot.schema_id if snapshot is not None else None,
                snapshot.sequence_number if snapshot is not None else None,
            )
        )
    return rows
