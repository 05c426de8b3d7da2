"""Producing a snapshot: files added and removed -> manifests, manifest list, Snapshot, metadata.

:func:`build_snapshot` does the work that does not touch table metadata: it validates the
change against the branch head (see :mod:`iceduck.txn.validation`), writes the new and
rewritten manifests (:mod:`iceduck.txn.manifest_ops`), merges small manifests as every Java
``MergingSnapshotProducer`` does (:mod:`iceduck.txn.manifest_merge`), writes the manifest list
and returns the
:class:`Snapshot`. :func:`produce` then adds it to the metadata with the
:class:`~iceduck.txn.builder.MetadataBuilder` and moves the branch.

Spec rules applied here:

* "When a snapshot is created for a commit, it is optimistically assigned the next sequence
  number" (``last-sequence-number + 1``; v1 snapshots have none);
* "A snapshot's ``first-row-id`` is assigned to the table's current ``next-row-id`` on each
  commit attempt" and ``added-rows`` is what First Row ID Assignment consumed (v3);
* the parent is the branch head; a branch that does not exist yet forks from ``main``'s
  current snapshot as in Java's ``SnapshotUtil.latestSnapshot``;
* "Writers should produce positive values for snapshot ids [...] and should verify the id
  does not conflict with existing snapshots" (:func:`new_snapshot_id`, Java's scheme).

Every file a call writes is listed in the result (``written``) and deleted again if the
call fails, so a failed attempt leaves nothing behind.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from iceduck.errors import CommitConflictError, IceduckError, ValidationError
from iceduck.formats.manifest_list import assign_first_row_ids, write_manifest_list
from iceduck.io import fileio
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import DataFile, FileContent, ManifestContent, ManifestFile
from iceduck.spec.properties import metadata_location
from iceduck.spec.snapshot import MAIN_BRANCH, Operation, RefType, Snapshot, SnapshotRef
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn import validation
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit
from iceduck.txn.manifest_merge import MergeContext, MergeSettings, merge_manifests
from iceduck.txn.manifest_ops import (
    DeleteKey,
    FileWriter,
    Removals,
    filter_manifests,
    live_data_files,
    split_by_content,
    write_added_manifests,
)
from iceduck.txn.replay import concurrent_snapshots
from iceduck.txn.summary import snapshot_summary
from iceduck.version import __version__

_LONG_MASK = (1 << 64) - 1
_MAX_LONG = (1 << 63) - 1


@dataclass(frozen=True)
class SnapshotChanges:
    """What one commit changes in a branch, and what must still hold when it lands."""

    operation: Operation
    #: new data files (``spec_id`` and ``partition`` set; ``first_row_id`` None)
    added_data_files: tuple[DataFile, ...] = ()
    #: position-delete Parquet files, DV Puffin blobs, equality delete files
    added_delete_files: tuple[DataFile, ...] = ()
    #: paths of live data files to drop
    removed_data_files: tuple[str, ...] = ()
    #: delete files to drop: a path (every entry of that file) or (path, referenced data
    #: file) for one DV of a Puffin file holding several
    removed_delete_files: tuple[DeleteKey, ...] = ()
    #: the snapshot the operation read (None: it read an empty branch); commits since then
    #: are checked by the validations below and, for added DVs, for concurrent DVs
    validate_from_snapshot_id: int | None = None
    #: data files that added deletes reference: they must still be live
    validate_data_files_live: tuple[str, ...] = ()
    #: copy-on-write: no delete file may have been added since for these data files
    validate_no_new_deletes_for: tuple[str, ...] = ()
    #: serializable isolation: data files added since the read that may match the
    #: operation's condition conflict (None: appends and other operations without one)
    conflict_detection: validation.ConflictDetection | None = None
    #: extra summary properties, written before the metrics as Java does
    summary_extra: dict[str, str] = field(default_factory=dict, hash=False)
    #: an explicit data sequence number for the added data files (None: they inherit the
    #: new snapshot's). A compaction gives its files the sequence number of the snapshot it
    #: read (Java's ``RewriteFiles.dataSequenceNumber``), so equality deletes committed
    #: after that snapshot still apply to the rewritten rows
    added_data_sequence_number: int | None = None


@dataclass(frozen=True)
class ProducedSnapshot:
    """A snapshot whose manifests and manifest list are written, not yet in table metadata."""

    snapshot: Snapshot
    #: the manifest list's rows as written (sequence numbers of new manifests unassigned)
    manifests: tuple[ManifestFile, ...]
    #: files removed from the branch (data and delete files, DVs that went with their data file)
    removed_files: tuple[DataFile, ...]
    #: files written by this attempt (manifests, then the manifest list)
    written: tuple[str, ...]


def new_snapshot_id(metadata: TableMetadata) -> int:
    """Java's ``SnapshotIdGenerator``: a random uuid's halves XORed, as a positive long, unused."""
    used = {s.snapshot_id for s in metadata.snapshots}
    while True:
        u = uuid.uuid4().int
        candidate = ((u >> 64) ^ (u & _LONG_MASK)) & _MAX_LONG
        if candidate > 0 and candidate not in used:
            return candidate


def branch_head(metadata: TableMetadata, branch: str) -> Snapshot | None:
    """The snapshot a commit to ``branch`` builds on (None: empty branch)."""
    ref = metadata.refs.get(branch)
    if ref is None:
        return metadata.current_snapshot()
    if not ref.is_branch:
        raise ValidationError(f"{branch!r} is a tag, not a branch: tags cannot be written to")
    return metadata.snapshot_by_id(ref.snapshot_id)


def _check_changes(metadata: TableMetadata, changes: SnapshotChanges) -> None:
    if metadata.format_version == 1 and (changes.added_delete_files or changes.removed_delete_files):
        raise ValidationError("row-level deletes need format-version 2 (this table is format-version 1)")
    for f in changes.added_data_files:
        if f.content is not FileContent.DATA:
            raise ValidationError(f"{f.file_path} is a {f.content.name} file, not a data file")
    for f in changes.added_delete_files:
        if f.content is FileContent.DATA:
            raise ValidationError(f"{f.file_path} is a data file, not a delete file")


def _validate(
    metadata: TableMetadata,
    changes: SnapshotChanges,
    head: Snapshot | None,
    head_manifests: tuple[ManifestFile, ...],
    cache: ManifestCache,
    branch: str,
) -> None:
    """The concurrency checks of :mod:`iceduck.txn.validation` for this change."""
    since_id = changes.validate_from_snapshot_id
    head_id = head.snapshot_id if head is not None else None
    if head_id == since_id:
        concurrent: list[Snapshot] = []
    else:
        concurrent = concurrent_snapshots(metadata, head, since_id)
    needs_live = changes.validate_data_files_live or (concurrent and changes.validate_no_new_deletes_for)
    live = live_data_files(head_manifests, cache, metadata.specs_by_id()) if needs_live else {}
    if changes.validate_data_files_live:
        validation.check_files_live(changes.validate_data_files_live, live, branch)
    if concurrent and changes.validate_no_new_deletes_for:
        files = [live[p] for p in changes.validate_no_new_deletes_for if p in live]
        ignore_equality = changes.added_data_sequence_number is not None
        validation.check_no_new_deletes(metadata, concurrent, files, cache, ignore_equality)
    if concurrent and since_id is not None and changes.added_delete_files:
        validation.check_no_concurrent_dvs(metadata, concurrent, changes.added_delete_files, cache)
    if concurrent and changes.conflict_detection is not None:
        validation.check_no_conflicting_data(metadata, concurrent, changes.conflict_detection, cache)


def _missing_removals(removals: Removals, concurrent: bool, branch: str) -> None:
    missing = removals.missing_data() + removals.missing_deletes()
    if not missing:
        return
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    if concurrent:
        raise CommitConflictError(
            f"files to remove are no longer live in branch {branch} "
            f"(a concurrent commit removed them): {shown}"
        )
    raise ValidationError(f"cannot remove files that are not live in branch {branch}: {shown}")


def build_snapshot(
    metadata: TableMetadata,
    changes: SnapshotChanges,
    *,
    branch: str = MAIN_BRANCH,
    table_location: str | None = None,
    cache: ManifestCache,
    snapshot_id: int | None = None,
    now_ms: int | None = None,
) -> ProducedSnapshot:
    """Validate ``changes`` against the head of ``branch`` and write the new snapshot's
    manifests and manifest list (files are deleted again when this raises)."""
    _check_changes(metadata, changes)
    fv = metadata.format_version
    head = branch_head(metadata, branch)
    head_manifests = cache.snapshot_manifests(head, fv) if head is not None else ()
    _validate(metadata, changes, head, head_manifests, cache, branch)
    snapshot_id = snapshot_id if snapshot_id is not None else new_snapshot_id(metadata)
    location = table_location if table_location is not None else metadata.location
    writer = FileWriter(metadata_location(metadata.properties, location), str(uuid.uuid4()))
    try:
        return _write_snapshot(
            metadata, changes, head, head_manifests, cache, branch, snapshot_id, now_ms, writer
        )
    except BaseException:
        writer.delete_written()
        raise


def _write_snapshot(
    metadata: TableMetadata,
    changes: SnapshotChanges,
    head: Snapshot | None,
    head_manifests: tuple[ManifestFile, ...],
    cache: ManifestCache,
    branch: str,
    snapshot_id: int,
    now_ms: int | None,
    writer: FileWriter,
) -> ProducedSnapshot:
    fv = metadata.format_version
    specs = metadata.specs_by_id()
    schema = metadata.schema()
    removals = Removals.of(changes.removed_data_files, changes.removed_delete_files, fv)
    data, deletes = split_by_content(head_manifests)
    common: dict[str, Any] = {
        "cache": cache,
        "specs": specs,
        "format_version": fv,
        "snapshot_id": snapshot_id,
        "writer": writer,
    }
    kept_data = filter_manifests(data, removals, **common)
    kept_deletes = filter_manifests(deletes, removals, **common)
    _missing_removals(removals, changes.validate_from_snapshot_id != _id(head), branch)
    added: dict[str, Any] = {
        "specs": specs,
        "schema": schema,
        "format_version": fv,
        "snapshot_id": snapshot_id,
        "writer": writer,
    }
    new_data = write_added_manifests(
        changes.added_data_files,
        ManifestContent.DATA,
        **added,
        sequence_number=changes.added_data_sequence_number,
    )
    new_deletes = write_added_manifests(changes.added_delete_files, ManifestContent.DELETES, **added)
    merge = MergeSettings.of(metadata.properties)
    merging = MergeContext(cache, specs, schema, fv, snapshot_id, writer)
    # Java's order: new data manifests, the other data manifests, then the same for deletes,
    # each list merged on its own
    rows = [
        *merge_manifests([*new_data, *kept_data.manifests], merge, merging),
        *merge_manifests([*new_deletes, *kept_deletes.manifests], merge, merging),
    ]

    sequence_number = metadata.last_sequence_number + 1 if fv >= 2 else 0
    first_row_id = added_rows = None
    if fv >= 3:
        first_row_id = metadata.next_row_id or 0
        rows, next_row_id = assign_first_row_ids(rows, first_row_id)
        added_rows = next_row_id - first_row_id
    list_path = writer.manifest_list_path(snapshot_id)
    writer.write(
        list_path, write_manifest_list(rows, fv, snapshot_id, _id(head), sequence_number, first_row_id)
    )
    removed = (*kept_data.removed, *kept_deletes.removed)
    summary = snapshot_summary(
        changes.operation.value,
        (*changes.added_data_files, *changes.added_delete_files),
        removed,
        head.summary if head is not None else None,
        changes.summary_extra,
        __version__,
    )
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=now_ms if now_ms is not None else int(time.time() * 1000),
        summary=summary,
        parent_snapshot_id=_id(head),
        sequence_number=sequence_number,
        manifest_list=list_path,
        schema_id=metadata.current_schema_id,
        first_row_id=first_row_id,
        added_rows=added_rows,
    )
    return ProducedSnapshot(snapshot, tuple(rows), removed, tuple(writer.written))


def _id(s: Snapshot | None) -> int | None:
    return None if s is None else s.snapshot_id


def branch_ref(metadata: TableMetadata, branch: str, snapshot_id: int) -> SnapshotRef:
    """The branch's ref moved to ``snapshot_id``, keeping its retention settings."""
    old = metadata.refs.get(branch)
    if old is None:
        return SnapshotRef(snapshot_id, RefType.BRANCH)
    return SnapshotRef(
        snapshot_id, RefType.BRANCH, old.min_snapshots_to_keep, old.max_snapshot_age_ms, old.max_ref_age_ms
    )


def produce(
    metadata: TableMetadata,
    changes: SnapshotChanges,
    *,
    branch: str = MAIN_BRANCH,
    table_location: str | None = None,
    cache: ManifestCache,
    snapshot_id: int | None = None,
    now_ms: int | None = None,
    stage_only: bool = False,
) -> PendingCommit:
    """The new table metadata with the snapshot of ``changes`` committed to ``branch``,
    and the files written for it (for :func:`iceduck.txn.commit.commit`'s cleanup).

    ``stage_only`` (Java's ``SnapshotUpdate.stageOnly``, write-audit-publish): the snapshot
    is built on the branch head and added to the table's snapshots, but no ref moves and
    the snapshot log is unchanged -- readers see it only by its id until it is published."""
    produced = build_snapshot(
        metadata,
        changes,
        branch=branch,
        table_location=table_location,
        cache=cache,
        snapshot_id=snapshot_id,
        now_ms=now_ms,
    )
    try:
        builder = MetadataBuilder(metadata)
        builder.add_snapshot(produced.snapshot)
        if not stage_only:
            builder.set_ref(branch, branch_ref(metadata, branch, produced.snapshot.snapshot_id))
        new_metadata = builder.build(now_ms=produced.snapshot.timestamp_ms)
    except IceduckError:
        for path in produced.written:
            fileio.delete(path)
        raise
    return PendingCommit(new_metadata, list(produced.written))
