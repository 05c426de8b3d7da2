"""What a REST client sends for a commit built locally: the updates the metadata builder
recorded, and the requirements derived from them.

Iceberg Java records each builder call (``TableMetadata.changes()``) and derives the
requirements from those changes (``UpdateRequirements.forCreateTable`` /
``forUpdateTable``); iceduck does the same: :class:`iceduck.txn.builder.MetadataBuilder`
records an update for every change it applies (in :attr:`TableMetadata.changes`), so the
server replays exactly the calls iceduck made, in their order, and builds the metadata
iceduck built. Requirements, as Java's: ``assert-create`` for a new table; otherwise
``assert-table-uuid``, one ``assert-ref-snapshot-id`` per ref that is set (its id in
``base``, null when the ref is new: "in the case of a null the ref must not already
exist"; a removed ref is not asserted), every other branch when specs or schemas are
removed, ``assert-last-assigned-field-id`` when schemas are added,
``assert-current-schema-id`` when the current schema changes or schemas are removed,
``assert-last-assigned-partition-id`` when specs are added, ``assert-default-spec-id``
when the default spec changes or specs are removed, ``assert-default-sort-order-id`` when
the default order changes -- the values of ``base``, as Java asserts them.
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
    AddPartitionSpec,
    AddSchema,
    RemovePartitionSpecs,
    RemoveSchemas,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetSnapshotRef,
    Update,
    recorded_updates,
)


def commit_request(base: TableMetadata | None, new: TableMetadata) -> tuple[list[Requirement], list[Update]]:
    """The requirements and updates that make ``new`` of ``base`` (None: no table yet)."""
    updates = updates_since(base, new)
    return requirements_for(base, updates), updates


def updates_since(base: TableMetadata | None, new: TableMetadata) -> list[Update]:
    """What ``new`` records beyond what ``base`` records. ``new`` must have been built
    from ``base`` (its changes start with the base's), and a change must be recorded:
    metadata that differs from its base with nothing recorded would commit as a no-op."""
    done = recorded_updates(base) if base is not None else []
    updates = recorded_updates(new)
    if updates[: len(done)] != done:
        raise ValueError(  # a programming error, raised before anything is sent
            "the new table metadata was not built from the base it is committed on"
        )
    updates = updates[len(done) :]
    if not updates and (base is None or new != base):
        raise ValueError("the new table metadata differs from its base but records no update")
    return updates


def requirements_for(base: TableMetadata | None, updates: list[Update]) -> list[Requirement]:
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
        if isinstance(u, RemoveSchemas | RemovePartitionSpecs):
            # "require that no branches have changed, so that old specs/schemas won't be written"
            reqs += [
                AssertRefSnapshotId(name, ref.snapshot_id)
                for name, ref in base.refs.items()
                if ref.is_branch and name != MAIN_BRANCH
            ]
    return reqs
