"""Cherry-picking a snapshot onto ``main``: Java's ``CherryPickOperation`` and ``WapUtil``.

A snapshot that is not on ``main`` -- staged by write-audit-publish (summary ``wap.id``),
left behind by a rollback, or on another branch -- is applied to ``main``:

* when its parent is ``main``'s current snapshot (or both are absent), ``main`` simply
  moves to it (a fast-forward: no new snapshot, any operation);
* an ``append`` is re-applied as a new ``append`` snapshot on the current state: the data
  files it added are added again (the same files, no copy), with summary
  ``source-snapshot-id`` naming the picked snapshot;
* a dynamic overwrite (summary ``replace-partitions=true``) likewise re-adds its files and
  removes the files it removed, only if its parent is an ancestor of the current state and
  no file was added since in a partition it replaces (its result would otherwise drop
  those rows);
* anything else is refused.

A snapshot already in ``main``'s lineage, or already picked into it (an ancestor's
``source-snapshot-id``), is refused, and a staged snapshot whose ``wap.id`` was already
published (an ancestor's ``wap.id`` or ``published-wap-id``) too; a picked staged snapshot
records ``published-wap-id``. Every check runs on the base each commit attempt gets, so a
concurrent commit is re-validated. Nothing is deleted: the picked snapshot stays in the
metadata and its files are shared.
"""

from __future__ import annotations

from dataclasses import replace

from iceduck.errors import NotFoundError, ValidationError
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import DataFile, EntryStatus, ManifestContent
from iceduck.spec.snapshot import MAIN_BRANCH, Operation, Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.commit import PendingCommit
from iceduck.txn.snapshot import SnapshotChanges, produce
from iceduck.txn.snapshot_refs import ancestor_ids, set_current
from iceduck.txn.validation import added_data_files, snapshots_since

#: Java's ``SnapshotSummary`` property names
WAP_ID = "wap.id"
PUBLISHED_WAP_ID = "published-wap-id"
SOURCE_SNAPSHOT_ID = "source-snapshot-id"
REPLACE_PARTITIONS = "replace-partitions"


def staged_wap_id(snapshot: Snapshot) -> str | None:
    """The WAP id a snapshot was staged with (summary ``wap.id``), if any."""
    return snapshot.summary.get(WAP_ID) or None


def check_wap_not_published(metadata: TableMetadata, snapshot: Snapshot) -> str | None:
    """The snapshot's WAP id; refused when an ancestor of the current snapshot already
    carries it (staged then fast-forwarded, or published by a pick): Java's
    ``DuplicateWAPCommitException``."""
    wap_id = staged_wap_id(snapshot)
    if wap_id is None:
        return None
    for sid in ancestor_ids(metadata, metadata.current_snapshot_id):
        summary = metadata.snapshot_by_id(sid).summary
        if wap_id in (summary.get(WAP_ID), summary.get(PUBLISHED_WAP_ID)):
            raise ValidationError(
                f"Duplicate request to cherry pick wap id that was published already: {wap_id}"
            )
    return wap_id


def is_fast_forward(metadata: TableMetadata, snapshot: Snapshot) -> bool:
    return snapshot.parent_snapshot_id == metadata.current_snapshot_id


def cherrypick(metadata: TableMetadata, snapshot_id: int, cache: ManifestCache) -> PendingCommit:
    """The new metadata with snapshot ``snapshot_id`` applied to ``main`` (see the module)."""
    snapshot = metadata.find_snapshot(snapshot_id)
    if snapshot is None:
        raise NotFoundError(f"Cannot cherry-pick unknown snapshot ID: {snapshot_id}")
    operation = snapshot.operation
    dynamic = operation == Operation.OVERWRITE.value and snapshot.summary.get(REPLACE_PARTITIONS) == "true"
    picks_files = operation == Operation.APPEND.value or dynamic
    wap_id = check_wap_not_published(metadata, snapshot) if picks_files else None
    if is_fast_forward(metadata, snapshot):
        return PendingCommit(set_current(metadata, snapshot_id), [])
    if not picks_files:
        raise ValidationError(
            f"Cannot cherry-pick snapshot {snapshot_id}: not append, dynamic overwrite, or fast-forward"
        )
    _check_not_picked(metadata, snapshot_id)
    extra = {PUBLISHED_WAP_ID: wap_id} if wap_id is not None else {}
    extra[SOURCE_SNAPSHOT_ID] = str(snapshot_id)
    added = tuple(replace(f, first_row_id=None) for _, f in added_data_files(metadata, [snapshot], cache))
    removed: tuple[str, ...] = ()
    if dynamic:
        removed = tuple(f.file_path for f in _removed_data_files(metadata, snapshot, cache))
        _check_partitions_unchanged(metadata, snapshot, added, cache)
    changes = SnapshotChanges(
        Operation(operation),
        added_data_files=added,
        removed_data_files=removed,
        validate_from_snapshot_id=metadata.current_snapshot_id,
        summary_extra=extra,
    )
    return produce(metadata, changes, branch=MAIN_BRANCH, table_location=metadata.location, cache=cache)


def _check_not_picked(metadata: TableMetadata, snapshot_id: int) -> None:
    """Java's ``CherrypickAncestorCommitException``: in the lineage, or picked into it."""
    lineage = ancestor_ids(metadata, metadata.current_snapshot_id)
    if snapshot_id in lineage:
        raise ValidationError(f"Cannot cherrypick snapshot {snapshot_id}: already an ancestor")
    for sid in lineage:
        if metadata.snapshot_by_id(sid).summary.get(SOURCE_SNAPSHOT_ID) == str(snapshot_id):
            raise ValidationError(
                f"Cannot cherrypick snapshot {snapshot_id}: already picked to create ancestor {sid}"
            )


def _removed_data_files(metadata: TableMetadata, snapshot: Snapshot, cache: ManifestCache) -> list[DataFile]:
    """The data files ``snapshot`` itself removed (its DELETED entries)."""
    specs = metadata.specs_by_id()
    out = []
    for m in cache.snapshot_manifests(snapshot, metadata.format_version):
        if m.content is not ManifestContent.DATA:
            continue
        for e in cache.parsed_manifest(m, specs).entries:
            if e.status is EntryStatus.DELETED and e.snapshot_id == snapshot.snapshot_id:
                out.append(e.data_file)
    return out


def _check_partitions_unchanged(
    metadata: TableMetadata, snapshot: Snapshot, added: tuple[DataFile, ...], cache: ManifestCache
) -> None:
    """A dynamic overwrite replaces whole partitions: it may only be picked when its parent
    is in the current lineage and nothing was added since in those partitions."""
    parent = snapshot.parent_snapshot_id
    current = metadata.current_snapshot()
    if parent is not None and parent not in ancestor_ids(metadata, metadata.current_snapshot_id):
        raise ValidationError(
            "Cannot cherry-pick overwrite not based on an ancestor of the current state: "
            f"{snapshot.snapshot_id}"
        )
    replaced = {(f.spec_id, f.partition) for f in added}
    for _, f in added_data_files(metadata, snapshots_since(metadata, current, parent), cache):
        if (f.spec_id, f.partition) in replaced:
            raise ValidationError(
                f"Cannot cherry-pick replace partitions with changed partition: {f.partition}"
            )
