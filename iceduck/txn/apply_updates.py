"""Applying a REST commit's updates to table metadata, through :class:`MetadataBuilder`.

The REST spec: the server applies the ``updates`` of a ``CommitTableRequest`` in order,
after its ``requirements`` passed (:func:`iceduck.table_updates.requirements.check_requirements`).
Each update is one call of the builder, so metadata built from a client's updates follows
the same id, sequence-number, row-lineage and snapshot-log rules as iceduck's own commits.

A create (``assert-create``, or a staged create/replace) has no base: the updates build the
table from nothing, as Java's ``TableMetadata.buildFromEmpty`` does. The empty start has
the format version of the first ``upgrade-format-version`` update (else the default, 2):
the builder refuses downgrades, and a v1 table must be creatable.
"""

from __future__ import annotations

from collections.abc import Iterable

from iceduck.errors import ValidationError
from iceduck.spec import properties as props
from iceduck.spec.partition import UNPARTITIONED_LAST_ASSIGNED_ID
from iceduck.spec.snapshot import MAIN_BRANCH
from iceduck.spec.table_metadata import TableMetadata
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
from iceduck.txn.builder import INITIAL_ROW_ID, ROW_LINEAGE_VERSION, MetadataBuilder


def empty_metadata(format_version: int) -> TableMetadata:
    """The start of a table built from updates: no schema, spec, order, snapshot or
    location yet (ids start where Java's empty builder starts them: schema and spec 0,
    ``last-partition-id`` 999, sort order 0 for unsorted and 1 for the first sorted)."""
    return TableMetadata(
        format_version=format_version,
        table_uuid=None,
        location="",
        last_updated_ms=0,
        last_column_id=0,
        schemas=(),
        current_schema_id=0,
        partition_specs=(),
        default_spec_id=0,
        last_partition_id=UNPARTITIONED_LAST_ASSIGNED_ID,
        sort_orders=(),
        default_sort_order_id=0,
        next_row_id=INITIAL_ROW_ID if format_version >= ROW_LINEAGE_VERSION else None,
    )


def apply_updates(
    base: TableMetadata | None, updates: Iterable[Update], now_ms: int | None = None
) -> TableMetadata:
    """The metadata ``updates`` make of ``base`` (None: a table created from nothing).

    A change the spec forbids is a :class:`ValidationError` (400), a snapshot behind the
    table (sequence number, first row id) a :class:`CommitConflictError` (409), as from
    iceduck's own commits. The ``metadata-log`` is the catalog's to extend, not this.
    """
    updates = list(updates)
    if base is None:
        version = next(
            (u.format_version for u in updates if isinstance(u, UpgradeFormatVersion)),
            props.DEFAULT_FORMAT_VERSION,
        )
        builder = MetadataBuilder(empty_metadata(version))
    else:
        builder = MetadataBuilder(base)
    applier = _Applier(builder)
    for update in updates:
        applier.apply(update)
    new = builder.build(now_ms)
    if base is None:
        _check_created(new)
    return new


class _Applier:
    """Applies updates one by one, remembering the ids "-1" (last added) refers to."""

    def __init__(self, builder: MetadataBuilder) -> None:
        self.b = builder
        self.last_schema: int | None = None
        self.last_spec: int | None = None
        self.last_order: int | None = None

    def apply(self, u: Update) -> None:
        b = self.b
        if isinstance(u, AssignUUID):
            b.assign_uuid(u.uuid)
        elif isinstance(u, UpgradeFormatVersion):
            b.upgrade_format_version(u.format_version)
        elif isinstance(u, AddSchema):
            self.last_schema = b.add_schema(u.schema, u.last_column_id)
        elif isinstance(u, SetCurrentSchema):
            b.set_current_schema(_resolve(u.schema_id, self.last_schema, "schema"))
        elif isinstance(u, AddPartitionSpec):
            self.last_spec = b.add_partition_spec(u.spec)
        elif isinstance(u, SetDefaultSpec):
            b.set_default_spec(_resolve(u.spec_id, self.last_spec, "partition spec"))
        elif isinstance(u, AddSortOrder):
            self.last_order = b.add_sort_order(u.sort_order)
        elif isinstance(u, SetDefaultSortOrder):
            b.set_default_sort_order(_resolve(u.sort_order_id, self.last_order, "sort order"))
        elif isinstance(u, AddSnapshot):
            b.add_snapshot(u.snapshot)
        elif isinstance(u, SetSnapshotRef):
            b.set_ref(u.ref_name, u.ref)
        elif isinstance(u, RemoveSnapshots):
            self.remove_snapshots(u.snapshot_ids)
        elif isinstance(u, RemoveSnapshotRef):
            # Java's removeRef accepts main: the table then has no current snapshot
            # (what a REPLACE TABLE sends); iceduck's own remove_ref keeps refusing it
            if u.ref_name == MAIN_BRANCH:
                b.clear_main()
            else:
                b.remove_ref(u.ref_name)
        elif isinstance(u, SetLocation):
            b.set_location(u.location)
        elif isinstance(u, SetProperties):
            b.set_properties(dict(u.updates))
        elif isinstance(u, RemoveProperties):
            b.remove_properties(u.removals)
        elif isinstance(u, SetStatistics):
            b.set_statistics(u.statistics)
        elif isinstance(u, RemoveStatistics):
            b.remove_statistics(u.snapshot_id)
        elif isinstance(u, SetPartitionStatistics):
            b.set_partition_statistics(u.partition_statistics)
        elif isinstance(u, RemovePartitionStatistics):
            b.remove_partition_statistics(u.snapshot_id)
        elif isinstance(u, RemovePartitionSpecs):
            b.remove_partition_specs(u.spec_ids)
        elif isinstance(u, RemoveSchemas):
            b.remove_schemas(u.schema_ids)
        elif isinstance(u, AddEncryptionKey):
            b.add_encryption_key(u.encryption_key)
        elif isinstance(u, RemoveEncryptionKey):
            b.remove_encryption_key(u.key_id)
        else:  # pragma: no cover - the Update union is closed
            raise ValidationError(f"unknown update {u!r}")

    def remove_snapshots(self, snapshot_ids: tuple[int, ...]) -> None:
        """Java's ``removeSnapshots`` also removes the refs left pointing at a removed
        snapshot ("remove any refs that are no longer valid"), so a client's expiry is
        accepted as Java's server accepts it; iceduck's own expiry drops refs first and
        keeps the builder's stricter check."""
        removing = set(snapshot_ids)
        for name, ref in self.b.refs().items():
            if ref.snapshot_id in removing:
                if name == MAIN_BRANCH:
                    self.b.clear_main()
                else:
                    self.b.remove_ref(name)
        self.b.remove_snapshots(snapshot_ids)


def _resolve(requested: int, last_added: int | None, what: str) -> int:
    """``-1`` means the last one added in this commit (the REST spec's "-1 to set last added")."""
    if requested != LAST_ADDED:
        return requested
    if last_added is None:
        raise ValidationError(f"cannot set the last added {what}: no {what} was added")
    return last_added


def _check_created(md: TableMetadata) -> None:
    """A table built from nothing must have what every metadata file has (Java's
    ``TableMetadata`` constructor checks): a UUID, a location, its current schema, its
    default spec and its default sort order."""
    if not md.table_uuid:
        raise ValidationError("a created table needs a UUID (assign-uuid)")
    if not md.location:
        raise ValidationError("a created table needs a location (set-location)")
    if not any(s.schema_id == md.current_schema_id for s in md.schemas):
        raise ValidationError("a created table needs a current schema (add-schema, set-current-schema)")
    if not any(s.spec_id == md.default_spec_id for s in md.partition_specs):
        raise ValidationError("a created table needs a partition spec (add-spec, set-default-spec)")
    if not any(o.order_id == md.default_sort_order_id for o in md.sort_orders):
        raise ValidationError("a created table needs a sort order (add-sort-order, set-default-sort-order)")
