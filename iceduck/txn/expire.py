"""Snapshot expiry as a metadata change: which refs and snapshots a table keeps.

The spec's "Snapshot Retention Policy": "Table metadata may also define ... a retention
policy for snapshots"; a branch keeps "the minimum number of snapshots to keep"
(``min-snapshots-to-keep``) and every snapshot younger than "the max age of snapshots"
(``max-snapshot-age-ms``); a ref older than "the max age of the snapshot reference"
(``max-ref-age-ms``) is removed, but "The main branch ... never expires". Refs without
their own settings take the table's ``history.expire.*`` properties. This follows Java's
``RemoveSnapshots.internalApply`` (Iceberg 1.10):

* retained refs: ``main`` always; another ref while ``now - its snapshot's time`` is at
  most its ``max-ref-age-ms``; a ref to a missing snapshot is dropped;
* retained snapshots: the snapshot of each retained ref; along each retained branch, its
  ancestors while fewer than ``min-snapshots-to-keep`` are kept or the ancestor is not
  older than the branch's expiry time (``now - max-snapshot-age-ms`` when the branch sets
  it, else ``older_than``); and every snapshot no ref reaches that is not older than
  ``older_than``;
* every other snapshot is removed, and so are the ``snapshot_ids`` asked for -- refused
  when one is still the snapshot of a retained ref ("Cannot expire %s. Still referenced
  by refs: %s").

``older_than`` defaults to ``now - history.expire.max-snapshot-age-ms`` and
``retain_last`` to ``history.expire.min-snapshots-to-keep``, as Spark's procedure
arguments override them. ``clean_expired_metadata`` also removes the partition specs no
retained manifest uses (never the default spec) and the schemas no retained snapshot uses
(never the current one).

The change is applied to whatever base the commit loop hands over, so a retry after a
concurrent commit re-decides on the new state (Java re-runs ``internalApply`` on refresh).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from iceduck.errors import UserError, ValidationError
from iceduck.scan.reachable import reachable_files
from iceduck.spec import properties as props
from iceduck.spec.snapshot import MAIN_BRANCH, Snapshot, SnapshotRef
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.builder import MetadataBuilder


@dataclass(frozen=True)
class ExpireRequest:
    """What to expire; None means "the table's property" (Spark's optional arguments)."""

    now_ms: int
    older_than_ms: int | None = None
    retain_last: int | None = None
    snapshot_ids: tuple[int, ...] = ()
    clean_expired_metadata: bool = False


def check_gc_enabled(metadata: TableMetadata, action: str) -> None:
    """Refuse to delete files of a table with ``gc.enabled=false`` (Java's message): its
    files may be shared with other tables."""
    if not props.bool_property(metadata.properties, props.GC_ENABLED, props.GC_ENABLED_DEFAULT):
        raise ValidationError(f"Cannot {action}: GC is disabled (deleting files may corrupt other tables)")


def expire_snapshots(metadata: TableMetadata, request: ExpireRequest) -> TableMetadata:
    """``metadata`` without the refs and snapshots the policy expires (the base itself
    when nothing expires)."""
    check_gc_enabled(metadata, "expire snapshots")
    if request.retain_last is not None and request.retain_last < 1:
        raise UserError(f"Number of snapshots to retain must be at least 1, cannot be: {request.retain_last}")
    if not metadata.snapshots:
        return metadata
    now = request.now_ms
    properties = metadata.properties
    older_than = request.older_than_ms
    if older_than is None:
        older_than = now - props.int_property(
            properties, props.MAX_SNAPSHOT_AGE_MS, props.MAX_SNAPSHOT_AGE_MS_DEFAULT
        )
    min_keep = request.retain_last
    if min_keep is None:
        min_keep = props.int_property(
            properties, props.MIN_SNAPSHOTS_TO_KEEP, props.MIN_SNAPSHOTS_TO_KEEP_DEFAULT
        )
    default_ref_age = props.int_property(properties, props.MAX_REF_AGE_MS, props.MAX_REF_AGE_MS_DEFAULT)

    refs = _retained_refs(metadata, now, default_ref_age)
    held_by: dict[int, list[str]] = {}
    for name, ref in sorted(refs.items()):
        held_by.setdefault(ref.snapshot_id, []).append(name)
    for snapshot_id in request.snapshot_ids:
        if snapshot_id in held_by:
            raise ValidationError(
                f"Cannot expire {snapshot_id}. Still referenced by refs: [{', '.join(held_by[snapshot_id])}]"
            )
    keep = set(held_by)
    reached: set[int] = set()
    for ref in refs.values():
        if not ref.is_branch:
            reached.add(ref.snapshot_id)
            continue
        branch_older_than = (
            now - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else older_than
        )
        branch_min = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else min_keep
        kept = _kept_along_branch(metadata, ref.snapshot_id, branch_older_than, branch_min)
        keep |= kept
        # the whole lineage counts as referenced, kept or not: the rule for snapshots no
        # ref reaches (below) must not keep an expired ancestor
        reached.update(s.snapshot_id for s in _ancestors(metadata, ref.snapshot_id))
    keep |= {
        s.snapshot_id
        for s in metadata.snapshots
        if s.snapshot_id not in reached and s.timestamp_ms >= older_than
    }
    keep -= set(request.snapshot_ids)

    builder = MetadataBuilder(metadata)
    for name in metadata.refs:
        if name not in refs:
            builder.remove_ref(name)
    builder.remove_snapshots(s.snapshot_id for s in metadata.snapshots if s.snapshot_id not in keep)
    if request.clean_expired_metadata:
        _remove_unused_specs_and_schemas(builder, metadata, keep)
    return builder.build(now)


def _retained_refs(metadata: TableMetadata, now: int, default_ref_age: int) -> dict[str, SnapshotRef]:
    retained: dict[str, SnapshotRef] = {}
    for name, ref in metadata.refs.items():
        if name == MAIN_BRANCH:
            retained[name] = ref
            continue
        snapshot = metadata.find_snapshot(ref.snapshot_id)
        max_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_ref_age
        if snapshot is not None and now - snapshot.timestamp_ms <= max_age:
            retained[name] = ref
    return retained


def _kept_along_branch(metadata: TableMetadata, head: int, older_than: int, min_keep: int) -> set[int]:
    """Java's ``computeBranchSnapshotsToRetain``: ancestors from the head while fewer than
    ``min_keep`` are kept or the ancestor is not older than ``older_than``; the first
    ancestor failing both ends the walk."""
    kept: set[int] = set()
    for ancestor in _ancestors(metadata, head):
        if len(kept) < min_keep or ancestor.timestamp_ms >= older_than:
            kept.add(ancestor.snapshot_id)
        else:
            break
    return kept


def _ancestors(metadata: TableMetadata, snapshot_id: int) -> Iterator[Snapshot]:
    """The snapshot and its ancestors, newest first, while they are in the metadata."""
    snapshot = metadata.find_snapshot(snapshot_id)
    while snapshot is not None:
        yield snapshot
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else metadata.find_snapshot(parent)


def _remove_unused_specs_and_schemas(
    builder: MetadataBuilder, metadata: TableMetadata, keep: set[int]
) -> None:
    """Java's ``cleanExpiredMetadata``: specs that no manifest of a retained snapshot uses
    (read strictly: a spec must not go while a kept manifest may need it) and schemas no
    retained snapshot names. A retained snapshot without a ``schema-id`` (old writers)
    could use any schema, so then every schema stays."""
    used_specs = reachable_files(metadata, keep, strict=True).spec_ids | {metadata.default_spec_id}
    builder.remove_partition_specs(s.spec_id for s in metadata.partition_specs if s.spec_id not in used_specs)
    retained = [s for s in metadata.snapshots if s.snapshot_id in keep]
    if any(s.schema_id is None for s in retained):
        return
    used_schemas = {s.schema_id for s in retained} | {metadata.current_schema_id}
    builder.remove_schemas(s.schema_id for s in metadata.schemas if s.schema_id not in used_schemas)
