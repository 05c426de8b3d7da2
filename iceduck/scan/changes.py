"""Which files hold the rows that changed between two snapshots: planned from metadata only.

A changelog covers the snapshots after ``start`` (exclusive) up to ``end`` (inclusive) on
``end``'s ancestry -- Iceberg Java's ``IncrementalChangelogScan``: "Starting snapshot
(exclusive) ... is not a parent ancestor of end snapshot" otherwise -- oldest first, each
numbered by its ``_change_ordinal``. ``replace`` snapshots (compaction, rewritten
manifests or deletes) change no row and are skipped, as Java skips them, so they take no
ordinal.

For each snapshot S with parent P, the rows that changed are in three kinds of files, found
by comparing the two snapshots' plans (every live data file with the delete files that
apply to it):

* data files live in S and not in P: their rows (S's deletes applied) are inserted;
* data files live in P and not in S: their rows (P's deletes applied) are deleted;
* data files live in both whose delete files differ (S added position deletes, a
  deletion vector, or equality deletes that reach the file): the rows live in P and not in
  S are deleted.

Java's changelog scan refuses snapshots with delete files ("Delete files are currently
not supported in changelog scans"); comparing the two snapshots' live rows covers them.
Only these files are read; the rest of the table is not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from iceduck.errors import NotFoundError, UserError
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import plan_scan
from iceduck.scan.tasks import DeleteFile, FileScanTask, ScanPlan
from iceduck.scan.trusted_metrics import FieldIdsOf
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Operation, Snapshot
from iceduck.spec.table_metadata import TableMetadata


@dataclass(frozen=True)
class ChangedFiles:
    """The files of one snapshot's changes (see the module docstring)."""

    ordinal: int
    snapshot: Snapshot
    #: S's plan restricted to its new data files (rows inserted)
    inserted: ScanPlan
    #: P's plan restricted to the data files S removed (rows deleted)
    removed: ScanPlan
    #: P's and S's plans restricted to the files whose deletes changed (rows of the first
    #: not in the second are deleted; the reverse, which no writer does, inserted)
    before: ScanPlan
    after: ScanPlan
    #: files whose only change is new equality deletes: P's plan of them, with those delete
    #: files (same top-level equality fields): their rows matching a delete row are deleted,
    #: found with the (small) delete files instead of a second scan
    by_key: tuple[tuple[ScanPlan, tuple[DeleteFile, ...]], ...] = ()


def changelog_snapshots(
    metadata: TableMetadata, start_exclusive: int | None, end_inclusive: int
) -> list[Snapshot]:
    """The snapshots of the changelog, oldest first, ``replace`` ones left out."""
    end = _snapshot(metadata, end_inclusive, "end")
    chain: list[Snapshot] = []
    current: Snapshot | None = end
    while current is not None and current.snapshot_id != start_exclusive:
        chain.append(current)
        parent = current.parent_snapshot_id
        current = None if parent is None else metadata.find_snapshot(parent)
    if start_exclusive is not None and current is None:
        _snapshot(metadata, start_exclusive, "start")
        raise UserError(
            f"Starting snapshot (exclusive) {start_exclusive} is not a parent ancestor of end snapshot "
            f"{end_inclusive}"
        )
    chain.reverse()
    return [s for s in chain if s.operation != Operation.REPLACE.value]


def _snapshot(metadata: TableMetadata, snapshot_id: int, what: str) -> Snapshot:
    found = metadata.find_snapshot(snapshot_id)
    if found is None:
        raise NotFoundError(f"cannot find the {what} snapshot {snapshot_id} of the changelog")
    return found


def _same_deletes(one: FileScanTask, two: FileScanTask) -> bool:
    def key(t: FileScanTask) -> tuple[object, ...]:
        dv = None if t.deletion_vector is None else (t.deletion_vector.path, t.deletion_vector.content_offset)
        return (dv, sorted(d.path for d in t.position_deletes), sorted(d.path for d in t.equality_deletes))

    return key(one) == key(two)


def plan_changes(
    metadata: TableMetadata,
    snapshots: list[Snapshot],
    schema: Schema,
    cache: ManifestCache,
    field_ids_of: FieldIdsOf | None = None,
) -> list[ChangedFiles]:
    """The changed files of each of ``snapshots`` (from :func:`changelog_snapshots`), read
    with ``schema`` (the table's current schema, as Spark reads changelogs)."""

    def plan(snapshot: Snapshot | None) -> ScanPlan:
        return plan_scan(metadata, snapshot=snapshot, schema=schema, cache=cache, field_ids_of=field_ids_of)

    out = []
    for ordinal, snapshot in enumerate(snapshots):
        parent_id = snapshot.parent_snapshot_id
        parent = None if parent_id is None else metadata.find_snapshot(parent_id)
        now, before = plan(snapshot), plan(parent)
        old = {t.path: t for t in before.tasks}
        new = {t.path: t for t in now.tasks}
        changed = [p for p in new if p in old and not _same_deletes(old[p], new[p])]
        keyed: dict[tuple[DeleteFile, ...], list[FileScanTask]] = {}
        for p in changed:
            added = _added_equality_deletes(old[p], new[p], schema)
            if added is not None:
                keyed.setdefault(added, []).append(old[p])
        by_key = {t.path for tasks in keyed.values() for t in tasks}
        rest = [p for p in changed if p not in by_key]
        out.append(
            ChangedFiles(
                ordinal,
                snapshot,
                _restricted(now, [t for p, t in new.items() if p not in old]),
                _restricted(before, [t for p, t in old.items() if p not in new]),
                _restricted(before, [old[p] for p in rest]),
                _restricted(now, [new[p] for p in rest]),
                tuple((_restricted(before, tasks), added) for added, tasks in keyed.items()),
            )
        )
    return out


def _added_equality_deletes(
    old: FileScanTask, new: FileScanTask, schema: Schema
) -> tuple[DeleteFile, ...] | None:
    """The equality delete files ``new`` has beyond ``old`` when that is its only change and
    they share one set of top-level equality fields of ``schema``; else None."""
    if old.deletion_vector != new.deletion_vector or old.position_deletes != new.position_deletes:
        return None
    before = {d.path for d in old.equality_deletes}
    if not before <= {d.path for d in new.equality_deletes}:
        return None
    added = tuple(sorted((d for d in new.equality_deletes if d.path not in before), key=lambda d: d.path))
    top = {f.field_id for f in schema.fields}
    if not added or len({d.equality_ids for d in added}) != 1 or not set(added[0].equality_ids) <= top:
        return None
    return added


def _restricted(plan: ScanPlan, tasks: list[FileScanTask]) -> ScanPlan:
    return replace(plan, tasks=tuple(tasks))


@dataclass(frozen=True)
class Bound:
    """One end of a changelog as given: a snapshot id, a branch or tag, or a time (millis)."""

    snapshot_id: int | None = None
    ref: str | None = None
    timestamp_ms: int | None = None


def changelog_ends(
    metadata: TableMetadata, start: Bound | None, end: Bound | None
) -> tuple[int | None, int | None]:
    """(start snapshot exclusive or None for the first, end snapshot inclusive), or
    (None, None) for an empty changelog; Spark's rules for its changelog options
    (``SparkScanBuilder.buildChangelogScan``): a start time picks the parent of the oldest
    current ancestor committed at or after it, an end time the newest current ancestor
    committed at or before it."""
    current = metadata.current_snapshot()
    ancestors = _current_ancestors(metadata)
    if (
        start is not None
        and end is not None
        and start.timestamp_ms is not None
        and end.timestamp_ms is not None
    ):
        if start.timestamp_ms >= end.timestamp_ms:
            raise UserError("Cannot set start-timestamp to be greater than end-timestamp for changelogs")
    start_id: int | None = None
    empty = False
    if start is not None and start.timestamp_ms is not None:
        empty = current is None or start.timestamp_ms > current.timestamp_ms
        after = [s for s in ancestors if s.timestamp_ms >= start.timestamp_ms]
        if after:
            oldest = after[-1]
            start_id = (
                oldest.snapshot_id if oldest.timestamp_ms == start.timestamp_ms else oldest.parent_snapshot_id
            )
    elif start is not None:
        start_id = _bound_id(metadata, start, "start")
    end_id: int | None
    if end is not None and end.timestamp_ms is not None:
        end_id = next((s.snapshot_id for s in ancestors if s.timestamp_ms <= end.timestamp_ms), None)
        empty = (
            empty or (start_id is None and end_id is None) or (start_id is not None and start_id == end_id)
        )
    elif end is not None:
        end_id = _bound_id(metadata, end, "end")
    else:
        end_id = None if current is None else current.snapshot_id
    if empty or end_id is None:
        return None, None
    return start_id, end_id


def _current_ancestors(metadata: TableMetadata) -> list[Snapshot]:
    """The current snapshot and its ancestors, newest first."""
    out: list[Snapshot] = []
    current = metadata.current_snapshot()
    while current is not None:
        out.append(current)
        parent = current.parent_snapshot_id
        current = None if parent is None else metadata.find_snapshot(parent)
    return out


def _bound_id(metadata: TableMetadata, bound: Bound, what: str) -> int:
    if bound.snapshot_id is not None:
        return _snapshot(metadata, bound.snapshot_id, what).snapshot_id
    assert bound.ref is not None
    found = metadata.snapshot_for_ref(bound.ref)
    if found is None:
        raise NotFoundError(f"cannot find the {what} of the changelog: no branch or tag named {bound.ref!r}")
    return found.snapshot_id
