"""Building new table metadata from a base, by the rules of Java's ``TableMetadata.Builder``.

Every write ends in a new ``TableMetadata``; these rules keep the ids and logs in it what
Spark and PyIceberg expect:

* schemas: a schema equal to an existing one (same fields and identifier fields) reuses
  its id, otherwise the id is the highest + 1; ``last-column-id`` never decreases;
* partition specs: a spec compatible with an existing one (same fields, transforms and
  names) reuses its id; ``last-partition-id`` is the highest partition field id ever;
  v1 specs need sequential field ids from 1000 (spec: "In v1, partition field IDs were
  not tracked, but were assigned sequentially starting at 1000");
* sort orders: "Order id 0 is reserved for the unsorted order"; others from 1, equal
  orders reuse their id;
* snapshots: "Sequence numbers [...] must be larger than the last-sequence-number";
  v3 "A snapshot's first-row-id is assigned the table's current next-row-id" and
  ``next-row-id`` grows by the snapshot's ``added-rows``;
* ``main`` moving appends to the snapshot log (time of the snapshot when the snapshot is
  new, else the time of the change); entries of snapshots that were added and then
  replaced as ``main`` within one build are dropped (Java's intermediate snapshots);
* format version only goes up ("Cannot downgrade"); upgrading to v3 starts
  ``next-row-id`` at 0 ("When a table is upgraded to v3, next-row-id should be
  initialized to 0").

The ``metadata-log`` is not the builder's: the catalog appends the file a commit replaces
(:func:`iceduck.catalog.metadata_files.with_previous_file`), since only it knows the file.

Errors: a change the spec forbids is a :class:`ValidationError`; a snapshot that lost a
race (sequence number or first row id behind the base) is a :class:`CommitConflictError`,
so the commit loop retries it on fresh metadata, as Java's ``RetryableValidationException``.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterable, Mapping

from iceduck.errors import CommitConflictError, NotFoundError, UnsupportedError, ValidationError
from iceduck.spec import properties as props
from iceduck.spec.partition import (
    PARTITION_DATA_ID_START,
    UNPARTITIONED_LAST_ASSIGNED_ID,
    PartitionSpec,
)
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import (
    MAIN_BRANCH,
    EncryptedKey,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
)
from iceduck.spec.sort import UNSORTED_ORDER_ID, SortOrder
from iceduck.spec.table_metadata import SUPPORTED_FORMAT_VERSIONS, TableMetadata
from iceduck.spec.types import (
    GeographyType,
    GeometryType,
    TimestampNanoType,
    TimestamptzNanoType,
    UnknownType,
    VariantType,
)
from iceduck.table_updates import updates as up
from iceduck.txn.fresh_ids import (
    assign_fresh_ids,
    counter,
    persisted_properties,
    rebind_order,
    rebind_spec,
    v1_replacement_fields,
)

INITIAL_SORT_ORDER_ID = 1
#: "When a table is upgraded to v3, next-row-id should be initialized to 0"
INITIAL_ROW_ID = 0
ROW_LINEAGE_VERSION = 3
#: Java's ``Schema.MIN_FORMAT_VERSIONS``: types that exist only from v3 on
_V3_TYPES = (TimestampNanoType, TimestamptzNanoType, VariantType, UnknownType, GeometryType, GeographyType)


class MetadataBuilder:
    """Changes to a base ``TableMetadata``; :meth:`build` returns the new metadata."""

    def __init__(self, base: TableMetadata) -> None:
        self._base = base
        self._format_version = base.format_version
        self._last_column_id = base.last_column_id
        self._schemas = list(base.schemas)
        self._current_schema_id = base.current_schema_id
        self._specs = list(base.partition_specs)
        self._default_spec_id = base.default_spec_id
        self._last_partition_id = base.last_partition_id
        self._orders = list(base.sort_orders)
        self._default_order_id = base.default_sort_order_id
        self._properties = dict(base.properties)
        self._last_sequence_number = base.last_sequence_number
        self._snapshots = list(base.snapshots)
        self._current_snapshot_id = base.current_snapshot_id
        self._refs = dict(base.refs)
        #: entries with None for "the time of this build" (a rollback's time of change)
        self._snapshot_log: list[tuple[int | None, int]] = [
            (e.timestamp_ms, e.snapshot_id) for e in base.snapshot_log
        ]
        self._next_row_id = base.next_row_id
        self._partition_statistics = list(base.partition_statistics)
        self._added_snapshot_ids: set[int] = set()
        self._removed_snapshot_ids: set[int] = set()
        self._statistics = list(base.statistics)
        self._table_uuid = base.table_uuid
        self._location = base.location
        self._encryption_keys = list(base.encryption_keys)
        #: every change applied, as the update a REST commit sends for it (after the base's own)
        self._updates: list[up.Update] = up.recorded_updates(base)
        self._base_updates = len(self._updates)

    @property
    def format_version(self) -> int:
        return self._format_version

    def current_schema(self) -> Schema:
        return self._schema_by_id(self._current_schema_id)

    def refs(self) -> dict[str, SnapshotRef]:
        """The branches and tags as built so far (a copy)."""
        return dict(self._refs)

    def _record(self, update: up.Update) -> None:
        self._updates.append(update)

    def _last_added(
        self, kind: type[up.AddSchema | up.AddPartitionSpec | up.AddSortOrder], new_id: int
    ) -> int:
        """``-1`` ("last added") when ``new_id`` is what the latest update of ``kind`` added,
        as Java sends it; else the id itself."""
        latest = next((u for u in reversed(self._updates) if isinstance(u, kind)), None)
        return up.LAST_ADDED if latest is not None and _added_id(latest) == new_id else new_id

    # -- schemas ---------------------------------------------------------------------

    def add_schema(self, schema: Schema, last_column_id: int | None = None) -> int:
        """Add ``schema`` (its ids as given); the id of an equal existing schema, else a new
        one. ``last_column_id`` (the evolution's) defaults to the schema's highest id."""
        check_schema_compatibility(schema, self._format_version)
        new_last = max(self._last_column_id, schema.highest_field_id, last_column_id or 0)
        for existing in self._schemas:
            if _same_schema(existing, schema):
                if new_last != self._last_column_id:
                    self._last_column_id = new_last
                    self._record(up.AddSchema(existing, new_last))
                return existing.schema_id
        new_id = max([self._current_schema_id - 1, *(s.schema_id for s in self._schemas)]) + 1
        added = Schema(schema.fields, new_id, schema.identifier_field_ids)
        self._schemas.append(added)
        self._last_column_id = new_last
        self._record(up.AddSchema(added, new_last))
        return new_id

    def set_current_schema(self, schema_id: int) -> None:
        self._schema_by_id(schema_id)
        if schema_id != self._current_schema_id:
            self._current_schema_id = schema_id
            self._record(up.SetCurrentSchema(self._last_added(up.AddSchema, schema_id)))

    # -- partition specs ---------------------------------------------------------------

    def add_partition_spec(self, spec: PartitionSpec) -> int:
        """Add ``spec`` (field ids as given); the id of a compatible existing spec, else a new one."""
        for existing in self._specs:
            if existing.compatible_with(spec):
                return existing.spec_id
        schema = self.current_schema()
        for f in spec.fields:
            if not f.transform.is_void and any(
                schema.find_field_or_none(i) is None for i in f.all_source_ids
            ):
                raise ValidationError(f"partition field {f.name!r} refers to a column that does not exist")
        if self._format_version == 1:
            ids = [f.field_id for f in spec.fields]
            if ids != list(range(PARTITION_DATA_ID_START, PARTITION_DATA_ID_START + len(ids))):
                raise ValidationError(
                    f"format-version 1 needs partition field ids 1000, 1001, ... in order, not {ids}"
                )
        new_id = max((s.spec_id for s in self._specs), default=-1) + 1
        added = PartitionSpec(new_id, spec.fields)
        self._specs.append(added)
        self._last_partition_id = max(self._last_partition_id, spec.last_assigned_field_id)
        self._record(up.AddPartitionSpec(added))
        return new_id

    def set_default_spec(self, spec_id: int) -> None:
        if not any(s.spec_id == spec_id for s in self._specs):
            raise NotFoundError(f"table has no partition spec with id {spec_id}")
        if spec_id != self._default_spec_id:
            self._default_spec_id = spec_id
            self._record(up.SetDefaultSpec(self._last_added(up.AddPartitionSpec, spec_id)))

    # -- sort orders -------------------------------------------------------------------

    def add_sort_order(self, order: SortOrder) -> int:
        """Add ``order``; 0 for unsorted, the id of an equal order, else max(1, highest + 1)."""
        if order.is_unsorted:
            if not any(o.order_id == UNSORTED_ORDER_ID for o in self._orders):
                unsorted = SortOrder(UNSORTED_ORDER_ID, ())
                self._orders.append(unsorted)
                self._record(up.AddSortOrder(unsorted))
            return UNSORTED_ORDER_ID
        schema = self.current_schema()
        for f in order.fields:
            ids = f.source_ids if f.source_ids is not None else (f.source_id,)
            if any(schema.find_field_or_none(i) is None for i in ids):
                raise ValidationError(f"sort field refers to field id {f.source_id}, which is not a column")
        new_id = INITIAL_SORT_ORDER_ID
        for existing in self._orders:
            if existing.fields == order.fields:
                return existing.order_id
            new_id = max(new_id, existing.order_id + 1)
        added = SortOrder(new_id, order.fields)
        self._orders.append(added)
        self._record(up.AddSortOrder(added))
        return new_id

    def set_default_sort_order(self, order_id: int) -> None:
        if not any(o.order_id == order_id for o in self._orders):
            raise NotFoundError(f"table has no sort order with id {order_id}")
        if order_id != self._default_order_id:
            self._default_order_id = order_id
            self._record(up.SetDefaultSortOrder(self._last_added(up.AddSortOrder, order_id)))

    # -- properties and format version -------------------------------------------------

    def set_properties(self, updates: dict[str, str]) -> None:
        """Merge ``updates`` into the properties. ``format-version`` is not stored: it
        upgrades the table (as Spark's ``SET TBLPROPERTIES ('format-version'=...)``); the
        other reserved names (``uuid``, ``current-snapshot-id``, ...) are refused."""
        updates = dict(updates)
        if props.FORMAT_VERSION in updates:
            self.upgrade_format_version(parse_format_version(updates.pop(props.FORMAT_VERSION)))
        reserved = sorted(set(updates) & props.RESERVED_PROPERTIES)
        if reserved:
            raise ValidationError(f"cannot set reserved table property {reserved[0]!r}")
        changed = {k: str(v) for k, v in updates.items() if self._properties.get(k) != str(v)}
        if changed:
            self._properties.update(changed)
            self._record(up.SetProperties(changed))

    def remove_properties(self, keys: Iterable[str]) -> None:
        removed = tuple(dict.fromkeys(k for k in keys if k in self._properties))
        for key in removed:
            del self._properties[key]
        if removed:
            self._record(up.RemoveProperties(removed))

    def upgrade_format_version(self, version: int) -> None:
        if version not in SUPPORTED_FORMAT_VERSIONS:
            raise UnsupportedError(f"format-version {version} is not supported (1, 2 or 3)")
        if version < self._format_version:
            raise ValidationError(f"cannot downgrade a v{self._format_version} table to v{version}")
        if version == self._format_version:
            return
        if version >= ROW_LINEAGE_VERSION and self._next_row_id is None:
            self._next_row_id = INITIAL_ROW_ID
        self._format_version = version
        self._record(up.UpgradeFormatVersion(version))

    # -- identity, location and encryption keys ----------------------------------------

    def assign_uuid(self, table_uuid: str) -> None:
        """Set the table UUID (Java's ``assignUUID``: a REST ``assign-uuid`` update, sent when
        a table is created; v1 tables written before UUIDs existed get one on commit)."""
        if not table_uuid:
            raise ValidationError("a table UUID cannot be empty")
        if table_uuid != self._table_uuid:
            self._table_uuid = table_uuid
            self._record(up.AssignUUID(table_uuid))

    def set_location(self, location: str) -> None:
        """Move the table's base location; trailing slashes are dropped as on read (writers
        append ``/data`` and ``/metadata``)."""
        location = location.rstrip("/") if not location.endswith("://") else location
        if not location:
            raise ValidationError("a table location cannot be empty")
        if location != self._location:
            self._location = location
            self._record(up.SetLocation(location))

    def add_encryption_key(self, key: EncryptedKey) -> None:
        """Add or replace (by ``key-id``) an entry of v3 ``encryption-keys``: iceduck keeps the
        keys in the metadata as given and never uses them."""
        new = [key if k.key_id == key.key_id else k for k in self._encryption_keys]
        if key not in new:
            new.append(key)
        if new != self._encryption_keys:
            self._encryption_keys = new
            self._record(up.AddEncryptionKey(key))

    def remove_encryption_key(self, key_id: str) -> None:
        """Remove the encryption key with ``key_id``; an unknown id changes nothing (Java)."""
        kept = [k for k in self._encryption_keys if k.key_id != key_id]
        if len(kept) != len(self._encryption_keys):
            self._encryption_keys = kept
            self._record(up.RemoveEncryptionKey(key_id))

    # -- snapshots and refs ------------------------------------------------------------

    def add_snapshot(self, snapshot: Snapshot) -> None:
        """Add a snapshot (not yet on any ref): checks its id, sequence number and v3 row ids."""
        if any(s.snapshot_id == snapshot.snapshot_id for s in self._snapshots):
            raise ValidationError(f"snapshot {snapshot.snapshot_id} already exists")
        if (
            self._format_version > 1
            and snapshot.parent_snapshot_id is not None
            and snapshot.sequence_number <= self._last_sequence_number
        ):
            raise CommitConflictError(
                f"cannot add snapshot with sequence number {snapshot.sequence_number}, not above the "
                f"table's last sequence number {self._last_sequence_number}"
            )
        if self._format_version >= ROW_LINEAGE_VERSION:
            next_row_id = INITIAL_ROW_ID if self._next_row_id is None else self._next_row_id
            if snapshot.first_row_id is None or snapshot.added_rows is None:
                raise ValidationError("a v3 snapshot needs first-row-id and added-rows")
            if snapshot.first_row_id < next_row_id:
                raise CommitConflictError(
                    f"cannot add snapshot: first-row-id {snapshot.first_row_id} is behind the table's "
                    f"next-row-id {next_row_id}"
                )
            self._next_row_id = next_row_id + snapshot.added_rows
        self._last_sequence_number = snapshot.sequence_number
        self._snapshots.append(snapshot)
        self._added_snapshot_ids.add(snapshot.snapshot_id)
        self._record(up.AddSnapshot(snapshot))

    def set_ref(self, name: str, ref: SnapshotRef) -> None:
        """Point a branch or tag at a known snapshot; ``main`` also becomes the current
        snapshot and gets a snapshot-log entry."""
        if self._refs.get(name) == ref:
            return
        snapshot = self._snapshot_by_id(ref.snapshot_id)
        if name == MAIN_BRANCH:
            if not ref.is_branch:
                raise ValidationError("cannot set main to a tag, it must be a branch")
            self._current_snapshot_id = ref.snapshot_id
            added = ref.snapshot_id in self._added_snapshot_ids
            self._snapshot_log.append((snapshot.timestamp_ms if added else None, ref.snapshot_id))
        self._refs[name] = ref
        self._record(up.SetSnapshotRef(name, ref))

    def remove_ref(self, name: str) -> None:
        if name == MAIN_BRANCH:
            raise ValidationError("the main branch cannot be removed")
        if name not in self._refs:
            raise NotFoundError(f"table has no branch or tag named {name!r}")
        del self._refs[name]
        self._record(up.RemoveSnapshotRef(name))

    def remove_snapshots(self, snapshot_ids: Iterable[int]) -> None:
        """Remove snapshots no ref points at (snapshot expiry), with their statistics and
        partition-statistics entries (Java's ``removeSnapshots``); unknown ids are ignored."""
        known = {s.snapshot_id for s in self._snapshots}
        removing = set(snapshot_ids) & known
        if not removing:
            return
        held = sorted(name for name, ref in self._refs.items() if ref.snapshot_id in removing)
        if held:
            raise ValidationError(f"cannot remove snapshots still referenced by refs: {', '.join(held)}")
        self._snapshots = [s for s in self._snapshots if s.snapshot_id not in removing]
        self._removed_snapshot_ids |= removing
        self._record(up.RemoveSnapshots(tuple(sorted(removing))))

    def set_statistics(self, statistics: StatisticsFile) -> None:
        """Register a table statistics file for its snapshot, replacing the one that snapshot
        had (Java's ``UpdateStatistics.setStatistics``: at most one file per snapshot)."""
        if statistics.snapshot_id not in {s.snapshot_id for s in self._snapshots}:
            raise NotFoundError(f"cannot set statistics of unknown snapshot {statistics.snapshot_id}")
        self._statistics = [s for s in self._statistics if s.snapshot_id != statistics.snapshot_id]
        self._statistics.append(statistics)
        self._record(up.SetStatistics(statistics))

    def remove_statistics(self, snapshot_id: int) -> None:
        """Drop the statistics file of ``snapshot_id``; none there changes nothing (Java's
        ``removeStatistics``)."""
        kept = [s for s in self._statistics if s.snapshot_id != snapshot_id]
        if len(kept) != len(self._statistics):
            self._statistics = kept
            self._record(up.RemoveStatistics(snapshot_id))

    def remove_partition_statistics(self, snapshot_id: int) -> None:
        """Drop the partition statistics file of ``snapshot_id``; none there changes nothing."""
        kept = [s for s in self._partition_statistics if s.snapshot_id != snapshot_id]
        if len(kept) != len(self._partition_statistics):
            self._partition_statistics = kept
            self._record(up.RemovePartitionStatistics(snapshot_id))

    def set_partition_statistics(self, stats: PartitionStatisticsFile) -> None:
        """Register a snapshot's partition statistics file, replacing the one it had: the
        spec allows "at most one partition statistics file" per snapshot (Java's
        ``setPartitionStatistics``)."""
        if stats.snapshot_id not in {s.snapshot_id for s in self._snapshots}:
            raise NotFoundError(f"cannot set partition statistics of unknown snapshot {stats.snapshot_id}")
        old = self._partition_statistics
        new = [stats if s.snapshot_id == stats.snapshot_id else s for s in old]
        if stats not in new:
            new.append(stats)
        if new != old:
            self._partition_statistics = new
            self._record(up.SetPartitionStatistics(stats))

    def remove_partition_specs(self, spec_ids: Iterable[int]) -> None:
        """Remove partition specs no retained manifest uses; never the default spec."""
        removing = set(spec_ids) & {s.spec_id for s in self._specs}
        if self._default_spec_id in removing:
            raise ValidationError(f"cannot remove the default partition spec {self._default_spec_id}")
        if removing:
            self._specs = [s for s in self._specs if s.spec_id not in removing]
            self._record(up.RemovePartitionSpecs(tuple(sorted(removing))))

    def remove_schemas(self, schema_ids: Iterable[int]) -> None:
        """Remove schemas no retained snapshot uses; never the current schema."""
        removing = set(schema_ids) & {s.schema_id for s in self._schemas}
        if self._current_schema_id in removing:
            raise ValidationError(f"cannot remove the current schema {self._current_schema_id}")
        if removing:
            self._schemas = [s for s in self._schemas if s.schema_id not in removing]
            self._record(up.RemoveSchemas(tuple(sorted(removing))))

    def clear_main(self) -> None:
        """Drop ``main`` so the table has no current snapshot (only ``CREATE OR REPLACE``
        does this: Java's ``buildReplacement`` removes the main ref)."""
        if MAIN_BRANCH in self._refs or self._current_snapshot_id is not None:
            self._refs.pop(MAIN_BRANCH, None)
            self._current_snapshot_id = None
            self._record(up.RemoveSnapshotRef(MAIN_BRANCH))

    # -- build -------------------------------------------------------------------------

    def build(self, now_ms: int | None = None) -> TableMetadata:
        """The new metadata (the base itself when nothing changed)."""
        if len(self._updates) == self._base_updates:  # nothing changed
            return self._base
        now = int(time.time() * 1000) if now_ms is None else now_ms
        intermediate = {sid for sid in self._added_snapshot_ids if sid != self._current_snapshot_id} & {
            sid for ts, sid in self._snapshot_log[len(self._base.snapshot_log) :]
        }
        log = _without_removed_history(
            [
                SnapshotLogEntry(now if ts is None else ts, sid)
                for ts, sid in self._snapshot_log
                if sid not in intermediate
            ],
            {s.snapshot_id for s in self._snapshots},
        )
        removed = self._removed_snapshot_ids
        return dataclasses.replace(
            self._base,
            format_version=self._format_version,
            table_uuid=self._table_uuid,
            location=self._location,
            encryption_keys=tuple(self._encryption_keys),
            last_updated_ms=now,
            last_column_id=self._last_column_id,
            schemas=tuple(self._schemas),
            current_schema_id=self._current_schema_id,
            partition_specs=tuple(self._specs),
            default_spec_id=self._default_spec_id,
            last_partition_id=self._last_partition_id,
            sort_orders=tuple(self._orders),
            default_sort_order_id=self._default_order_id,
            last_sequence_number=self._last_sequence_number,
            properties=dict(self._properties),
            current_snapshot_id=self._current_snapshot_id,
            snapshots=tuple(self._snapshots),
            snapshot_log=log,
            refs=dict(self._refs),
            statistics=tuple(s for s in self._statistics if s.snapshot_id not in removed),
            partition_statistics=tuple(s for s in self._partition_statistics if s.snapshot_id not in removed),
            next_row_id=self._next_row_id if self._format_version >= ROW_LINEAGE_VERSION else None,
            changes=tuple(self._updates),
        )

    # -- lookups -----------------------------------------------------------------------

    def _schema_by_id(self, schema_id: int) -> Schema:
        for s in self._schemas:
            if s.schema_id == schema_id:
                return s
        raise NotFoundError(f"table has no schema with id {schema_id}")

    def _snapshot_by_id(self, snapshot_id: int) -> Snapshot:
        for s in self._snapshots:
            if s.snapshot_id == snapshot_id:
                return s
        raise ValidationError(f"cannot point a ref at unknown snapshot {snapshot_id}")


def _added_id(update: up.AddSchema | up.AddPartitionSpec | up.AddSortOrder) -> int:
    """The id of the schema, spec or order an update adds."""
    if isinstance(update, up.AddSchema):
        return update.schema.schema_id
    if isinstance(update, up.AddPartitionSpec):
        return update.spec.spec_id
    return update.sort_order.order_id


def _without_removed_history(
    log: list[SnapshotLogEntry], snapshot_ids: set[int]
) -> tuple[SnapshotLogEntry, ...]:
    """The snapshot log without entries of snapshots that are gone: as Java's
    ``updateSnapshotLog``, an entry of a missing snapshot also drops every entry before it,
    so the log never names a snapshot the table no longer has (the spec: the log is "a
    list of timestamp and snapshot ID pairs that encodes changes to the current snapshot")."""
    kept: list[SnapshotLogEntry] = []
    for entry in log:
        if entry.snapshot_id in snapshot_ids:
            kept.append(entry)
        else:
            kept.clear()
    return tuple(kept)


def _same_schema(a: Schema, b: Schema) -> bool:
    """Java's ``Schema.sameSchema``: same struct and identifier fields, schema ids aside."""
    return a.fields == b.fields and set(a.identifier_field_ids) == set(b.identifier_field_ids)


def parse_format_version(value: str | int) -> int:
    try:
        version = int(str(value).strip())
    except ValueError:
        raise ValidationError(f"format-version must be 1, 2 or 3, not {value!r}") from None
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise UnsupportedError(f"format-version {version} is not supported (1, 2 or 3)")
    return version


def check_schema_compatibility(schema: Schema, format_version: int) -> None:
    """Java's ``Schema.checkCompatibility``: v3-only types and default values need v3."""
    if format_version >= ROW_LINEAGE_VERSION:
        return
    for field_id in schema.field_ids():
        f = schema.find_field(field_id)
        name = schema.column_name(field_id)
        if isinstance(f.field_type, _V3_TYPES):
            raise ValidationError(
                f"column {name!r} of type {f.field_type} needs format-version 3, "
                f"the table has {format_version}"
            )
        if f.initial_default is not None or f.write_default is not None:
            raise ValidationError(
                f"column {name!r} has a default value, which needs format-version 3, "
                f"the table has {format_version}"
            )


# -- new and replaced tables ------------------------------------------------------------------


def new_table_metadata(
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    location: str,
    properties: Mapping[str, str],
    format_version: int = props.DEFAULT_FORMAT_VERSION,
    table_uuid: str | None = None,
    now_ms: int | None = None,
) -> TableMetadata:
    """The first metadata of a table, as Java's ``TableMetadata.newTableMetadata``.

    Field ids are assigned fresh from 1 (:mod:`iceduck.txn.fresh_ids`), partition field ids
    from 1000 in spec order (spec id 0), a sorted order gets id 1; ``spec`` and
    ``sort_order`` refer to columns by ``schema``'s (input) ids. A ``format-version``
    property overrides ``format_version`` and is not stored.
    """
    if props.FORMAT_VERSION in properties:
        format_version = parse_format_version(properties[props.FORMAT_VERSION])
    else:
        format_version = parse_format_version(format_version)
    fresh = assign_fresh_ids(schema, counter(0))
    check_schema_compatibility(fresh, format_version)
    last_column_id = max(fresh.field_ids(), default=0)
    field_ids = range(PARTITION_DATA_ID_START, PARTITION_DATA_ID_START + len(spec.fields))
    fresh_spec = rebind_spec(schema, fresh, spec, field_ids)
    fresh_order = rebind_order(schema, fresh, sort_order, INITIAL_SORT_ORDER_ID)
    created = TableMetadata(
        format_version=format_version,
        table_uuid=table_uuid or str(uuid.uuid4()),
        location=location.rstrip("/"),
        last_updated_ms=int(time.time() * 1000) if now_ms is None else now_ms,
        last_column_id=last_column_id,
        schemas=(fresh,),
        current_schema_id=fresh.schema_id,
        partition_specs=(fresh_spec,),
        default_spec_id=fresh_spec.spec_id,
        last_partition_id=max(fresh_spec.last_assigned_field_id, UNPARTITIONED_LAST_ASSIGNED_ID),
        sort_orders=(fresh_order,),
        default_sort_order_id=fresh_order.order_id,
        properties=persisted_properties(properties),
        next_row_id=INITIAL_ROW_ID if format_version >= ROW_LINEAGE_VERSION else None,
    )
    return dataclasses.replace(created, changes=tuple(_creation_updates(created)))


def _creation_updates(md: TableMetadata) -> list[up.Update]:
    """What builds ``md`` from nothing (a REST create transaction sends them after
    ``assert-create``), in the order of Java's ``TableMetadata.newTableMetadata``: each
    "set" names the one just added (``-1``)."""
    out: list[up.Update] = []
    if md.table_uuid:
        out.append(up.AssignUUID(md.table_uuid))
    out += [
        up.UpgradeFormatVersion(md.format_version),
        up.AddSchema(md.schema(), md.last_column_id),
        up.SetCurrentSchema(up.LAST_ADDED),
        up.AddPartitionSpec(md.spec()),
        up.SetDefaultSpec(up.LAST_ADDED),
        up.AddSortOrder(md.sort_order()),
        up.SetDefaultSortOrder(up.LAST_ADDED),
        up.SetLocation(md.location),
    ]
    if md.properties:
        out.append(up.SetProperties(dict(md.properties)))
    return out


def replace_table_metadata(
    base: TableMetadata,
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    properties: Mapping[str, str],
    format_version: int | None = None,
    now_ms: int | None = None,
) -> TableMetadata:
    """``CREATE OR REPLACE`` / ``REPLACE TABLE``, as Java's ``buildReplacement``.

    History stays (snapshots, other refs, logs) but ``main`` is removed, so the table has no
    current snapshot until the replacing write commits one. Columns whose full name exists
    in the current schema keep their ids, new ones continue after ``last-column-id``;
    partition fields reuse the id of an earlier field with the same source and transform
    (v2+), new ones continue after ``last-partition-id``; v1 keeps the current spec's
    fields in place and turns dropped ones into ``void``. Properties merge into the old
    ones (Java's ``setProperties``), ``format-version`` may only go up.
    """
    builder = MetadataBuilder(base)
    requested = properties.get(props.FORMAT_VERSION, format_version)
    if requested is not None:
        builder.upgrade_format_version(parse_format_version(requested))
    builder.clear_main()
    fresh = assign_fresh_ids(schema, counter(base.last_column_id), base=base.schema())
    schema_id = builder.add_schema(fresh, last_column_id=max(base.last_column_id, fresh.highest_field_id))
    builder.set_current_schema(schema_id)
    unbound = rebind_spec(schema, fresh, spec, [f.field_id for f in spec.fields])
    next_partition_id = counter(base.last_partition_id)
    if builder.format_version > 1:
        known: dict[tuple[tuple[int, ...], str], int] = {}
        for old_spec in base.partition_specs:
            for f in old_spec.fields:
                key = (f.all_source_ids, str(f.transform))
                known[key] = max(known.get(key, f.field_id), f.field_id)
        fields = tuple(
            dataclasses.replace(
                f, field_id=known.get((f.all_source_ids, str(f.transform))) or next_partition_id()
            )
            for f in unbound.fields
        )
    else:
        fields = v1_replacement_fields(base.spec(), unbound, next_partition_id)
    builder.set_default_spec(builder.add_partition_spec(PartitionSpec(0, fields)))
    order = rebind_order(schema, fresh, sort_order, INITIAL_SORT_ORDER_ID)
    builder.set_default_sort_order(builder.add_sort_order(order))
    builder.set_properties(persisted_properties(properties))
    return builder.build(now_ms)
