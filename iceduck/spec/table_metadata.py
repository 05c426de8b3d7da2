"""Table metadata: the root of a table's state (spec: "Table Metadata Fields").

The model holds every field of v1-v3 metadata; reading old versions fills v2/v3 fields
with the defaults of Appendix E (done by ``iceduck.formats.metadata_json``), so code
above this layer never branches on how a field was stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from iceduck.errors import NotFoundError
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import (
    MAIN_BRANCH,
    EncryptedKey,
    MetadataLogEntry,
    PartitionStatisticsFile,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
)
from iceduck.spec.sort import SortOrder

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)
#: v1 has no sequence numbers: "When reading v1 ... sequence numbers ... must default to 0"
INITIAL_SEQUENCE_NUMBER = 0


@dataclass(frozen=True)
class TableMetadata:
    format_version: int
    table_uuid: str | None
    location: str
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[Schema, ...]
    current_schema_id: int
    partition_specs: tuple[PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int
    sort_orders: tuple[SortOrder, ...]
    default_sort_order_id: int
    last_sequence_number: int = INITIAL_SEQUENCE_NUMBER
    properties: dict[str, str] = field(default_factory=dict, hash=False)
    current_snapshot_id: int | None = None
    snapshots: tuple[Snapshot, ...] = ()
    snapshot_log: tuple[SnapshotLogEntry, ...] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    refs: dict[str, SnapshotRef] = field(default_factory=dict, hash=False)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[PartitionStatisticsFile, ...] = ()
    #: v3 row lineage: "A long higher than all assigned row IDs"
    next_row_id: int | None = None
    encryption_keys: tuple[EncryptedKey, ...] = ()
    #: the updates applied since this metadata was read from its file or written to one, in
    #: order (:mod:`iceduck.table_updates.updates` values, recorded by the metadata builder):
    #: what a REST commit sends, as Java's ``TableMetadata.changes()``. Not part of the
    #: table: a metadata file holds none, and two metadata equal in content are equal.
    changes: tuple[object, ...] = field(default=(), compare=False, repr=False)

    # -- lookups -------------------------------------------------------------------

    def schema(self) -> Schema:
        """The current schema."""
        return self.schema_by_id(self.current_schema_id)

    def schema_by_id(self, schema_id: int) -> Schema:
        for s in self.schemas:
            if s.schema_id == schema_id:
                return s
        raise NotFoundError(f"table metadata has no schema with id {schema_id}")

    def spec(self) -> PartitionSpec:
        """The default partition spec (the one writers use)."""
        return self.spec_by_id(self.default_spec_id)

    def spec_by_id(self, spec_id: int) -> PartitionSpec:
        for s in self.partition_specs:
            if s.spec_id == spec_id:
                return s
        raise NotFoundError(f"table metadata has no partition spec with id {spec_id}")

    def specs_by_id(self) -> dict[int, PartitionSpec]:
        return {s.spec_id: s for s in self.partition_specs}

    def sort_order(self) -> SortOrder:
        for o in self.sort_orders:
            if o.order_id == self.default_sort_order_id:
                return o
        raise NotFoundError(f"table metadata has no sort order with id {self.default_sort_order_id}")

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot:
        found = self.find_snapshot(snapshot_id)
        if found is None:
            raise NotFoundError(f"table has no snapshot with id {snapshot_id}")
        return found

    def find_snapshot(self, snapshot_id: int) -> Snapshot | None:
        """The snapshot with this id, None if there is none (a dict lookup: a streaming
        table's metadata lists thousands of snapshots, and every statement looks one up)."""
        return self._snapshots_by_id.get(snapshot_id)

    @cached_property
    def _snapshots_by_id(self) -> dict[int, Snapshot]:
        """Built on first use; the metadata is immutable, so it never goes stale (the first
        snapshot wins if an id repeats, as a scan of the list would find it)."""
        by_id: dict[int, Snapshot] = {}
        for s in self.snapshots:
            by_id.setdefault(s.snapshot_id, s)
        return by_id

    def current_snapshot(self) -> Snapshot | None:
        """The snapshot of the ``main`` branch, or None for an empty table."""
        if self.current_snapshot_id is None:
            return None
        return self.snapshot_by_id(self.current_snapshot_id)

    def snapshot_for_ref(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points at; None for an empty ``main``."""
        ref = self.refs.get(name)
        if ref is None:
            if name == MAIN_BRANCH:
                return self.current_snapshot()
            raise NotFoundError(f"table has no branch or tag named {name!r}")
        return self.snapshot_by_id(ref.snapshot_id)
