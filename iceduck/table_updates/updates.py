"""Table updates of a REST commit: the metadata changes a client sends, as typed objects.

The REST spec ("TableUpdate"): updates are identified by ``action`` and applied in order
to build the new metadata (:func:`iceduck.txn.apply_updates.apply_updates`). These are the
actions Iceberg Java's ``MetadataUpdate`` / ``MetadataUpdateParser`` send, with the JSON
field names of ``rest-catalog-open-api.yaml``; schemas, specs, sort orders, snapshots,
statistics and encryption keys use the table metadata JSON codecs of
:mod:`iceduck.formats`. A malformed update is a :class:`ValidationError` (400 BadRequest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iceduck.errors import ValidationError
from iceduck.formats.metadata_json import (
    encryption_key_from_json,
    encryption_key_to_json,
    snapshot_from_json,
    snapshot_to_json,
    statistics_from_json,
    statistics_to_json,
)
from iceduck.formats.schema_json import (
    get_int,
    get_int_list,
    get_list,
    get_long,
    get_object,
    get_str,
    get_str_list,
    get_str_map,
    partition_spec_from_json,
    partition_spec_to_json,
    schema_from_json,
    schema_to_json,
    sort_order_from_json,
    sort_order_to_json,
)
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import (
    EncryptedKey,
    PartitionStatisticsFile,
    RefType,
    Snapshot,
    SnapshotRef,
    StatisticsFile,
)
from iceduck.spec.sort import SortOrder
from iceduck.spec.table_metadata import TableMetadata
from iceduck.table_updates.change_json import bad_request, discriminator

#: "-1" in set-current-schema / set-default-spec / set-default-sort-order: "the last added"
LAST_ADDED = -1


@dataclass(frozen=True)
class AssignUUID:
    uuid: str


@dataclass(frozen=True)
class UpgradeFormatVersion:
    format_version: int


@dataclass(frozen=True)
class AddSchema:
    schema: Schema
    #: deprecated in the spec ("the last column id is computed by the server") but Java sends it
    last_column_id: int | None = None


@dataclass(frozen=True)
class SetCurrentSchema:
    """``schema-id``: "Schema ID to set as current, or -1 to set last added schema"."""

    schema_id: int


@dataclass(frozen=True)
class AddPartitionSpec:
    spec: PartitionSpec


@dataclass(frozen=True)
class SetDefaultSpec:
    """``spec-id``: "Partition spec ID to set as the default, or -1 to set last added spec"."""

    spec_id: int


@dataclass(frozen=True)
class AddSortOrder:
    sort_order: SortOrder


@dataclass(frozen=True)
class SetDefaultSortOrder:
    """``sort-order-id``: "Sort order ID to set as the default, or -1 to set last added sort order"."""

    sort_order_id: int


@dataclass(frozen=True)
class AddSnapshot:
    snapshot: Snapshot


@dataclass(frozen=True)
class SetSnapshotRef:
    ref_name: str
    ref: SnapshotRef


@dataclass(frozen=True)
class RemoveSnapshots:
    snapshot_ids: tuple[int, ...]


@dataclass(frozen=True)
class RemoveSnapshotRef:
    ref_name: str


@dataclass(frozen=True)
class SetLocation:
    location: str


@dataclass(frozen=True)
class SetProperties:
    updates: dict[str, str] = field(hash=False)


@dataclass(frozen=True)
class RemoveProperties:
    removals: tuple[str, ...]


@dataclass(frozen=True)
class SetStatistics:
    statistics: StatisticsFile


@dataclass(frozen=True)
class RemoveStatistics:
    snapshot_id: int


@dataclass(frozen=True)
class SetPartitionStatistics:
    partition_statistics: PartitionStatisticsFile


@dataclass(frozen=True)
class RemovePartitionStatistics:
    snapshot_id: int


@dataclass(frozen=True)
class RemovePartitionSpecs:
    spec_ids: tuple[int, ...]


@dataclass(frozen=True)
class RemoveSchemas:
    schema_ids: tuple[int, ...]


@dataclass(frozen=True)
class AddEncryptionKey:
    encryption_key: EncryptedKey


@dataclass(frozen=True)
class RemoveEncryptionKey:
    key_id: str


Update = (
    AssignUUID
    | UpgradeFormatVersion
    | AddSchema
    | SetCurrentSchema
    | AddPartitionSpec
    | SetDefaultSpec
    | AddSortOrder
    | SetDefaultSortOrder
    | AddSnapshot
    | SetSnapshotRef
    | RemoveSnapshots
    | RemoveSnapshotRef
    | SetLocation
    | SetProperties
    | RemoveProperties
    | SetStatistics
    | RemoveStatistics
    | SetPartitionStatistics
    | RemovePartitionStatistics
    | RemovePartitionSpecs
    | RemoveSchemas
    | AddEncryptionKey
    | RemoveEncryptionKey
)

ACTIONS: dict[type, str] = {
    AssignUUID: "assign-uuid",
    UpgradeFormatVersion: "upgrade-format-version",
    AddSchema: "add-schema",
    SetCurrentSchema: "set-current-schema",
    AddPartitionSpec: "add-spec",
    SetDefaultSpec: "set-default-spec",
    AddSortOrder: "add-sort-order",
    SetDefaultSortOrder: "set-default-sort-order",
    AddSnapshot: "add-snapshot",
    SetSnapshotRef: "set-snapshot-ref",
    RemoveSnapshots: "remove-snapshots",
    RemoveSnapshotRef: "remove-snapshot-ref",
    SetLocation: "set-location",
    SetProperties: "set-properties",
    RemoveProperties: "remove-properties",
    SetStatistics: "set-statistics",
    RemoveStatistics: "remove-statistics",
    SetPartitionStatistics: "set-partition-statistics",
    RemovePartitionStatistics: "remove-partition-statistics",
    RemovePartitionSpecs: "remove-partition-specs",
    RemoveSchemas: "remove-schemas",
    AddEncryptionKey: "add-encryption-key",
    RemoveEncryptionKey: "remove-encryption-key",
}
_BY_ACTION = {name: cls for cls, name in ACTIONS.items()}


# -- recorded with metadata -------------------------------------------------------------------


def recorded_updates(metadata: TableMetadata) -> list[Update]:
    """The updates ``metadata`` records since it was read from a file (its ``changes``),
    typed; anything else there is a programming error, never data."""
    out: list[Update] = []
    for u in metadata.changes:
        if not isinstance(u, Update):
            raise TypeError(f"table metadata records {u!r}, which is not a table update")
        out.append(u)
    return out


# -- reading ----------------------------------------------------------------------------------


def parse_update(obj: Any) -> Update:
    """An update from its JSON object; a :class:`ValidationError` (a bad request) names an
    unknown ``action`` or a missing or ill-typed field."""
    obj, action = discriminator(obj, "action", "update")
    if action not in _BY_ACTION:
        raise ValidationError(f"unknown update action {action!r}")
    with bad_request():
        return _parse(obj, action, f"update {action!r}")


def parse_updates(obj: Any) -> list[Update]:
    """The ``updates`` array of a commit request; an error names the bad element's index."""
    if not isinstance(obj, list):
        raise ValidationError(f"updates must be a JSON array, got {type(obj).__name__}")
    out = []
    for i, item in enumerate(obj):
        try:
            out.append(parse_update(item))
        except ValidationError as e:
            raise ValidationError(f"updates[{i}]: {e}") from e
    return out


def _parse(obj: dict[str, Any], action: str, where: str) -> Update:
    cls = _BY_ACTION[action]
    if cls is AssignUUID:
        return AssignUUID(get_str(obj, "uuid", where))
    if cls is UpgradeFormatVersion:
        return UpgradeFormatVersion(get_int(obj, "format-version", where))
    if cls is AddSchema:
        return AddSchema(
            schema_from_json(get_object(obj, "schema", where), f"{where}.schema"),
            get_int(obj, "last-column-id", where, required=False),
        )
    if cls is SetCurrentSchema:
        return SetCurrentSchema(get_int(obj, "schema-id", where))
    if cls is AddPartitionSpec:
        return AddPartitionSpec(partition_spec_from_json(get_object(obj, "spec", where), f"{where}.spec"))
    if cls is SetDefaultSpec:
        return SetDefaultSpec(get_int(obj, "spec-id", where))
    if cls is AddSortOrder:
        return AddSortOrder(sort_order_from_json(get_object(obj, "sort-order", where), f"{where}.sort-order"))
    if cls is SetDefaultSortOrder:
        return SetDefaultSortOrder(get_int(obj, "sort-order-id", where))
    if cls is AddSnapshot:
        return AddSnapshot(snapshot_from_json(get_object(obj, "snapshot", where), f"{where}.snapshot"))
    if cls is SetSnapshotRef:
        return _parse_set_ref(obj, where)
    if cls is RemoveSnapshots:
        return RemoveSnapshots(_longs(obj, "snapshot-ids", where))
    if cls is RemoveSnapshotRef:
        return RemoveSnapshotRef(get_str(obj, "ref-name", where))
    if cls is SetLocation:
        return SetLocation(get_str(obj, "location", where))
    if cls is SetProperties:
        return SetProperties(get_str_map(obj, "updates", where, required=True) or {})
    if cls is RemoveProperties:
        return RemoveProperties(get_str_list(obj, "removals", where))
    if cls is SetStatistics:
        stats = get_object(obj, "statistics", where)
        return SetStatistics(statistics_from_json(stats, f"{where}.statistics"))
    if cls is SetPartitionStatistics:
        stats = get_object(obj, "partition-statistics", where)
        w = f"{where}.partition-statistics"
        return SetPartitionStatistics(
            PartitionStatisticsFile(
                get_long(stats, "snapshot-id", w),
                get_str(stats, "statistics-path", w),
                get_long(stats, "file-size-in-bytes", w),
            )
        )
    if cls is RemoveStatistics:
        return RemoveStatistics(get_long(obj, "snapshot-id", where))
    if cls is RemovePartitionStatistics:
        return RemovePartitionStatistics(get_long(obj, "snapshot-id", where))
    if cls is RemovePartitionSpecs:
        return RemovePartitionSpecs(get_int_list(obj, "spec-ids", where))
    if cls is RemoveSchemas:
        return RemoveSchemas(get_int_list(obj, "schema-ids", where))
    if cls is AddEncryptionKey:
        key = get_object(obj, "encryption-key", where)
        return AddEncryptionKey(encryption_key_from_json(key, f"{where}.encryption-key"))
    return RemoveEncryptionKey(get_str(obj, "key-id", where))


def _parse_set_ref(obj: dict[str, Any], where: str) -> SetSnapshotRef:
    """``set-snapshot-ref`` carries the ref's fields inline (``SnapshotReference`` plus
    ``ref-name``): ``type`` is ``branch`` or ``tag``."""
    kind = get_str(obj, "type", where)
    try:
        ref_type = RefType(kind.lower())
    except ValueError:
        raise ValidationError(f"{where}: field 'type' must be 'branch' or 'tag', got {kind!r}") from None
    ref = SnapshotRef(
        snapshot_id=get_long(obj, "snapshot-id", where),
        type=ref_type,
        min_snapshots_to_keep=get_int(obj, "min-snapshots-to-keep", where, required=False),
        max_snapshot_age_ms=get_long(obj, "max-snapshot-age-ms", where, required=False),
        max_ref_age_ms=get_long(obj, "max-ref-age-ms", where, required=False),
    )
    return SetSnapshotRef(get_str(obj, "ref-name", where), ref)


def _longs(obj: dict[str, Any], key: str, where: str) -> tuple[int, ...]:
    """A list of longs (snapshot ids), each checked as ``get_long`` checks one."""
    items = get_list(obj, key, where)
    return tuple(get_long({key: item}, key, f"{where}.{key}[{i}]") for i, item in enumerate(items))


# -- writing ----------------------------------------------------------------------------------


def update_json(update: Update) -> dict[str, Any]:
    """The JSON object of ``update``, in the REST spec's shape."""
    out: dict[str, Any] = {"action": ACTIONS[type(update)]}
    if isinstance(update, AssignUUID):
        out["uuid"] = update.uuid
    elif isinstance(update, UpgradeFormatVersion):
        out["format-version"] = update.format_version
    elif isinstance(update, AddSchema):
        out["schema"] = schema_to_json(update.schema)
        if update.last_column_id is not None:
            out["last-column-id"] = update.last_column_id
    elif isinstance(update, SetCurrentSchema):
        out["schema-id"] = update.schema_id
    elif isinstance(update, AddPartitionSpec):
        out["spec"] = partition_spec_to_json(update.spec)
    elif isinstance(update, SetDefaultSpec):
        out["spec-id"] = update.spec_id
    elif isinstance(update, AddSortOrder):
        out["sort-order"] = sort_order_to_json(update.sort_order)
    elif isinstance(update, SetDefaultSortOrder):
        out["sort-order-id"] = update.sort_order_id
    elif isinstance(update, AddSnapshot):
        out["snapshot"] = snapshot_to_json(update.snapshot)
    elif isinstance(update, SetSnapshotRef):
        out["ref-name"] = update.ref_name
        out.update(_ref_json(update.ref))
    elif isinstance(update, RemoveSnapshots):
        out["snapshot-ids"] = list(update.snapshot_ids)
    elif isinstance(update, RemoveSnapshotRef):
        out["ref-name"] = update.ref_name
    elif isinstance(update, SetLocation):
        out["location"] = update.location
    elif isinstance(update, SetProperties):
        out["updates"] = dict(update.updates)
    elif isinstance(update, RemoveProperties):
        out["removals"] = list(update.removals)
    elif isinstance(update, SetStatistics):
        out["snapshot-id"] = update.statistics.snapshot_id  # deprecated, still sent by Java
        out["statistics"] = statistics_to_json(update.statistics)
    elif isinstance(update, SetPartitionStatistics):
        p = update.partition_statistics
        out["partition-statistics"] = {
            "snapshot-id": p.snapshot_id,
            "statistics-path": p.statistics_path,
            "file-size-in-bytes": p.file_size_in_bytes,
        }
    elif isinstance(update, RemoveStatistics | RemovePartitionStatistics):
        out["snapshot-id"] = update.snapshot_id
    elif isinstance(update, RemovePartitionSpecs):
        out["spec-ids"] = list(update.spec_ids)
    elif isinstance(update, RemoveSchemas):
        out["schema-ids"] = list(update.schema_ids)
    elif isinstance(update, AddEncryptionKey):
        out["encryption-key"] = encryption_key_to_json(update.encryption_key)
    else:
        out["key-id"] = update.key_id
    return out


def _ref_json(ref: SnapshotRef) -> dict[str, Any]:
    out: dict[str, Any] = {"type": ref.type.value, "snapshot-id": ref.snapshot_id}
    if ref.max_ref_age_ms is not None:
        out["max-ref-age-ms"] = ref.max_ref_age_ms
    if ref.max_snapshot_age_ms is not None:
        out["max-snapshot-age-ms"] = ref.max_snapshot_age_ms
    if ref.min_snapshots_to_keep is not None:
        out["min-snapshots-to-keep"] = ref.min_snapshots_to_keep
    return out
