"""What a REST client sends for a commit built locally: requirements and updates from two
versions of a table's metadata.

Iceberg Java records each builder call (``TableMetadata.changes()``) and derives the
requirements from them (``UpdateRequirements.forCreateTable`` / ``forUpdateTable``);
iceduck's operations build new metadata directly, so :func:`diff` reconstructs the same
lists by comparing ``base`` with ``new``:

* requirements: ``assert-create`` for a new table; otherwise ``assert-table-uuid``, one
  ``assert-ref-snapshot-id`` per ref that is set (its id in ``base``, null when the ref
  is new: "in the case of a null the ref must not already exist"; a removed ref is not
  asserted, as in Java), every other branch when specs or schemas are removed,
  ``assert-last-assigned-field-id`` when schemas are added,
  ``assert-current-schema-id`` when the current schema changes or schemas are removed,
  ``assert-last-assigned-partition-id`` when specs are added, ``assert-default-spec-id``
  when the default spec changes or specs are removed, ``assert-default-sort-order-id``
  when the default order changes -- the ids of ``base``, as Java asserts them;
* updates, in an order :func:`iceduck.txn.apply_updates.apply_updates` can replay:
  identity and format version, schemas, specs, orders (each "set" as ``-1`` when it names
  one added in this commit, as Java sends it), location, properties, new snapshots (in
  sequence order), removed refs, set refs, removed snapshots, statistics, removed specs
  and schemas, encryption keys.

Replaying the updates on ``base`` gives ``new`` up to what the spec lets a catalog decide
itself: ``last-updated-ms``, the ``snapshot-log`` times of moves that are not new
snapshots, and the ``metadata-log``.
"""

from __future__ import annotations

from iceduck.spec.snapshot import MAIN_BRANCH
from iceduck.spec.table_metadata import TableMetadata
from iceduck.table_updates.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    Requirement,
)
from iceduck.table_updates.updates import (
    LAST_ADDED,
    AddEncryptionKey,
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssignUUID,
    RemoveEncryptionKey,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    Update,
    UpgradeFormatVersion,
)


def diff(
    base: TableMetadata | None, new: TableMetadata, replace: bool = False
) -> tuple[list[Requirement], list[Update]]:
    """The requirements and updates that turn ``base`` (None: no table yet) into ``new``;
    ``replace`` for a ``REPLACE TABLE`` transaction (Java's ``forReplaceTable``: only the
    UUID is asserted, since the replacement does not depend on the old refs or ids)."""
    updates = _updates(base, new)
    return _requirements(base, updates, replace), updates


def _requirements(base: TableMetadata | None, updates: list[Update], replace: bool) -> list[Requirement]:
    """Java's ``UpdateRequirements``: one requirement per kind of update (the first time it
    appears), in the order of the updates, asserting the value ``base`` had."""
    if base is None:
        return [AssertCreate()]
    # a v1 table written before UUIDs existed has none to assert (its commit assigns one)
    reqs: list[Requirement] = [AssertTableUUID(base.table_uuid)] if base.table_uuid else []
    seen: set[object] = set()

    def once(key: object, req: Requirement) -> None:
        if key not in seen:
            seen.add(key)
            if not replace or isinstance(req, AssertLastAssignedFieldId | AssertLastAssignedPartitionId):
                reqs.append(req)

    for u in updates:
        if isinstance(u, SetSnapshotRef):
            old = base.refs.get(u.ref_name)
            once(("ref", u.ref_name), AssertRefSnapshotId(u.ref_name, old.snapshot_id if old else None))
        elif isinstance(u, AddSchema):
            once(AddSchema, AssertLastAssignedFieldId(base.last_column_id))
        elif isinstance(u, SetCurrentSchema | RemoveSchemas):
            once(SetCurrentSchema, AssertCurrentSchemaId(base.current_schema_id))
        elif isinstance(u, AddPartitionSpec):
            once(AddPartitionSpec, AssertLastAssignedPartitionId(base.last_partition_id))
        elif isinstance(u, SetDefaultSpec | RemovePartitionSpecs):
            once(SetDefaultSpec, AssertDefaultSpecId(base.default_spec_id))
        elif isinstance(u, SetDefaultSortOrder):
            once(SetDefaultSortOrder, AssertDefaultSortOrderId(base.default_sort_order_id))
        if isinstance(u, RemoveSchemas | RemovePartitionSpecs) and not replace:
            # "require that no branches have changed, so that old specs/schemas won't be written"
            reqs += [
                AssertRefSnapshotId(name, ref.snapshot_id)
                for name, ref in base.refs.items()
                if ref.is_branch and name != MAIN_BRANCH
            ]
    return reqs


def _updates(base: TableMetadata | None, new: TableMetadata) -> list[Update]:
    out: list[Update] = []
    if base is None or new.table_uuid != base.table_uuid:
        if new.table_uuid:
            out.append(AssignUUID(new.table_uuid))
    if base is None or new.format_version != base.format_version:
        out.append(UpgradeFormatVersion(new.format_version))
    out += _schema_spec_order_updates(base, new)
    if base is None or new.location != base.location:
        out.append(SetLocation(new.location))
    out += _property_updates(base.properties if base else {}, new.properties)
    out += _snapshot_updates(base, new)
    out += _statistics_updates(base, new)
    old_specs = {s.spec_id for s in base.partition_specs} if base else set()
    removed_specs = sorted(old_specs - {s.spec_id for s in new.partition_specs})
    if removed_specs:
        out.append(RemovePartitionSpecs(tuple(removed_specs)))
    old_schemas = {s.schema_id for s in base.schemas} if base else set()
    removed_schemas = sorted(old_schemas - {s.schema_id for s in new.schemas})
    if removed_schemas:
        out.append(RemoveSchemas(tuple(removed_schemas)))
    old_keys = {k.key_id: k for k in base.encryption_keys} if base else {}
    new_keys = {k.key_id for k in new.encryption_keys}
    out += [RemoveEncryptionKey(key_id) for key_id in old_keys if key_id not in new_keys]
    out += [AddEncryptionKey(k) for k in new.encryption_keys if old_keys.get(k.key_id) != k]
    return out


def _schema_spec_order_updates(base: TableMetadata | None, new: TableMetadata) -> list[Update]:
    """Additions in id order, then the current/default ids (``-1`` when just added)."""
    out: list[Update] = []
    old_schemas = {s.schema_id for s in base.schemas} if base else set()
    added_schemas = [s for s in new.schemas if s.schema_id not in old_schemas]
    out += [AddSchema(s, new.last_column_id) for s in added_schemas]
    if base is None or new.current_schema_id != base.current_schema_id:
        last = added_schemas[-1].schema_id if added_schemas else None
        out.append(SetCurrentSchema(LAST_ADDED if new.current_schema_id == last else new.current_schema_id))
    old_specs = {s.spec_id for s in base.partition_specs} if base else set()
    added_specs = [s for s in new.partition_specs if s.spec_id not in old_specs]
    out += [AddPartitionSpec(s) for s in added_specs]
    if base is None or new.default_spec_id != base.default_spec_id:
        last = added_specs[-1].spec_id if added_specs else None
        out.append(SetDefaultSpec(LAST_ADDED if new.default_spec_id == last else new.default_spec_id))
    old_orders = {o.order_id for o in base.sort_orders} if base else set()
    added_orders = [o for o in new.sort_orders if o.order_id not in old_orders]
    out += [AddSortOrder(o) for o in added_orders]
    if base is None or new.default_sort_order_id != base.default_sort_order_id:
        last = added_orders[-1].order_id if added_orders else None
        order_id = new.default_sort_order_id
        out.append(SetDefaultSortOrder(LAST_ADDED if order_id == last else order_id))
    return out


def _property_updates(old: dict[str, str], new: dict[str, str]) -> list[Update]:
    out: list[Update] = []
    changed = {k: v for k, v in new.items() if old.get(k) != v}
    if changed:
        out.append(SetProperties(changed))
    removed = tuple(k for k in old if k not in new)
    if removed:
        out.append(RemoveProperties(removed))
    return out


def _snapshot_updates(base: TableMetadata | None, new: TableMetadata) -> list[Update]:
    """New snapshots (sequence order: the builder requires increasing sequence numbers),
    then removed refs, then moved refs (``main`` first, so it is current before tags and
    branches point at it), then removed snapshots (once no ref holds them)."""
    out: list[Update] = []
    old_ids = {s.snapshot_id for s in base.snapshots} if base else set()
    added = [s for s in new.snapshots if s.snapshot_id not in old_ids]
    out += [AddSnapshot(s) for s in sorted(added, key=lambda s: (s.sequence_number, s.timestamp_ms))]
    old_refs = base.refs if base else {}
    out += [RemoveSnapshotRef(name) for name in old_refs if name not in new.refs]
    moved = [name for name, ref in new.refs.items() if old_refs.get(name) != ref]
    moved.sort(key=lambda name: name != MAIN_BRANCH)
    out += [SetSnapshotRef(name, new.refs[name]) for name in moved]
    new_ids = {s.snapshot_id for s in new.snapshots}
    removed = tuple(sorted(old_ids - new_ids))
    if removed:
        out.append(RemoveSnapshots(removed))
    return out


def _statistics_updates(base: TableMetadata | None, new: TableMetadata) -> list[Update]:
    """Statistics set or replaced, and removed -- except those of removed snapshots, which
    go with them (the builder's ``remove_snapshots`` drops them, as Java's)."""
    out: list[Update] = []
    old_stats = {s.snapshot_id: s for s in base.statistics} if base else {}
    new_stats = {s.snapshot_id: s for s in new.statistics}
    old_parts = {s.snapshot_id: s for s in base.partition_statistics} if base else {}
    new_parts = {s.snapshot_id: s for s in new.partition_statistics}
    live = {s.snapshot_id for s in new.snapshots}
    out += [SetStatistics(s) for sid, s in new_stats.items() if old_stats.get(sid) != s]
    out += [RemoveStatistics(sid) for sid in old_stats if sid not in new_stats and sid in live]
    out += [SetPartitionStatistics(s) for sid, s in new_parts.items() if old_parts.get(sid) != s]
    out += [RemovePartitionStatistics(sid) for sid in old_parts if sid not in new_parts and sid in live]
    return out
