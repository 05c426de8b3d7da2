"""Moving ``main`` or a branch to a snapshot the table already has: rollback, set current,
fast-forward.

These change only refs (and the snapshot log), never files: every snapshot stays in
``snapshots`` and every file stays where it is, so nothing becomes unreadable and nothing
is deleted. The rules and messages are Java's ``SetSnapshotOperation`` (rollback, set
current) and ``UpdateSnapshotReferencesOperation`` (fast-forward). Each function takes the
metadata a commit attempt is given and returns the new metadata, so the commit loop
re-checks the rule on a refreshed table after a concurrent commit.

Spec, "Snapshot References": "The ``main`` branch ref [...] is the current snapshot", and
``current-snapshot-id`` "must be the same as the current ID of the main branch in refs";
:meth:`MetadataBuilder.set_ref` keeps the two (and the ``snapshot-log``) together.
"""

from __future__ import annotations

from iceduck.errors import NotFoundError, ValidationError
from iceduck.spec.snapshot import MAIN_BRANCH, Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.snapshot import branch_ref


def ancestor_ids(metadata: TableMetadata, snapshot_id: int | None) -> list[int]:
    """``snapshot_id`` and its parents, newest first, up to the first one no longer in the
    metadata (an expired parent ends the lineage, as Java's ``SnapshotUtil.ancestorIds``)."""
    out: list[int] = []
    current = None if snapshot_id is None else metadata.find_snapshot(snapshot_id)
    while current is not None:
        out.append(current.snapshot_id)
        parent = current.parent_snapshot_id
        current = None if parent is None else metadata.find_snapshot(parent)
    return out


def is_current_ancestor(metadata: TableMetadata, snapshot_id: int) -> bool:
    """Whether ``snapshot_id`` is the current snapshot or one of its ancestors."""
    return snapshot_id in ancestor_ids(metadata, metadata.current_snapshot_id)


def known_snapshot(metadata: TableMetadata, snapshot_id: int) -> Snapshot:
    """The snapshot, or Java's "Cannot roll back to unknown snapshot id"."""
    snapshot = metadata.find_snapshot(snapshot_id)
    if snapshot is None:
        raise NotFoundError(f"Cannot roll back to unknown snapshot id: {snapshot_id}")
    return snapshot


def set_current(metadata: TableMetadata, snapshot_id: int) -> TableMetadata:
    """``main`` (and the current snapshot) moved to any known snapshot, keeping main's
    retention settings; the metadata itself when it is already there."""
    known_snapshot(metadata, snapshot_id)
    builder = MetadataBuilder(metadata)
    builder.set_ref(MAIN_BRANCH, branch_ref(metadata, MAIN_BRANCH, snapshot_id))
    return builder.build()


def rollback_to(metadata: TableMetadata, snapshot_id: int) -> TableMetadata:
    """``main`` moved back to ``snapshot_id``, which must be the current snapshot or one of
    its ancestors (a rollback never jumps to another lineage: that is :func:`set_current`)."""
    known_snapshot(metadata, snapshot_id)
    if not is_current_ancestor(metadata, snapshot_id):
        raise ValidationError(
            f"Cannot roll back to snapshot, not an ancestor of the current state: {snapshot_id}"
        )
    return set_current(metadata, snapshot_id)


def latest_ancestor_before(metadata: TableMetadata, timestamp_ms: int) -> int:
    """The newest ancestor of the current snapshot committed strictly before
    ``timestamp_ms`` (Java's ``findLatestAncestorOlderThan``: compared by ``timestamp-ms``,
    not by position in the lineage)."""
    best: Snapshot | None = None
    for sid in ancestor_ids(metadata, metadata.current_snapshot_id):
        snapshot = metadata.snapshot_by_id(sid)
        if snapshot.timestamp_ms < timestamp_ms and (
            best is None or snapshot.timestamp_ms > best.timestamp_ms
        ):
            best = snapshot
    if best is None:
        raise ValidationError(f"Cannot roll back, no valid snapshot older than: {timestamp_ms}")
    return best.snapshot_id


def fast_forward(metadata: TableMetadata, branch: str, to: str) -> TableMetadata:
    """Branch ``branch`` moved to the snapshot of ref ``to``, which must descend from the
    branch's head (so no commit of ``branch`` is lost); unchanged when both are already
    the same snapshot. Java's ``UpdateSnapshotReferencesOperation.fastForward``."""
    target = metadata.refs.get(branch)
    source = metadata.refs.get(to)
    if target is None:
        raise NotFoundError(f"Target branch does not exist: {branch}")
    if source is None:
        raise NotFoundError(f"Ref does not exist: {to}")
    if not target.is_branch:
        raise ValidationError(f"Ref {branch} is a tag not a branch")
    if source.snapshot_id == target.snapshot_id:
        return metadata
    if target.snapshot_id not in ancestor_ids(metadata, source.snapshot_id):
        raise ValidationError(f"Cannot fast-forward: {branch} is not an ancestor of {to}")
    builder = MetadataBuilder(metadata)
    builder.set_ref(branch, branch_ref(metadata, branch, source.snapshot_id))
    return builder.build()
