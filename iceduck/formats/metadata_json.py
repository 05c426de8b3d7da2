"""Table metadata JSON files, v1-v3 (spec: "Table Metadata Fields", Appendix C "Table
Metadata and Snapshots", Appendix E, Appendix F "Naming for GZIP compressed Metadata
JSON files").

Writing mirrors Iceberg Java 1.10's ``TableMetadataParser.toJson`` (and the snapshot,
ref, statistics and encryption-key parsers it calls) key for key, in Java's key order,
as compact UTF-8 JSON, so that for any metadata file Spark writes::

    table_metadata_to_json(read_table_metadata(data, path)) == json.loads(data)

What Java writes, per format version:

* v1 only: the deprecated ``schema`` (current schema) and ``partition-spec`` (default
  spec's fields) next to ``schemas``/``partition-specs``; no ``last-sequence-number``.
* always: ``properties``, ``refs``, ``snapshots``, ``statistics``,
  ``partition-statistics``, ``snapshot-log``, ``metadata-log`` (empty when empty).
* ``current-snapshot-id``: "Java writes ``-1`` for 'no current snapshot' with V1 and V2
  tables [...] and will use ``null`` [...] for all tables with a version greater than or
  equal to V3" (Appendix F).
* v3 only: ``next-row-id``; ``encryption-keys`` only when there are any.

Iceberg Java 1.8 wrote v3 tables before the spec's row lineage was final: ``next-row-id``
only with ``"row-lineage": true`` (its default was false). Such a table reads as one whose
row ids were never assigned (``next_row_id`` None, the rows' ids null), and its next commit
starts ``next-row-id`` at 0, the spec's rule for a table upgraded to v3. Java 1.9 and later
refuse it ("Cannot parse missing long: next-row-id").

Reading fills what older versions lack with the defaults of Appendix E and of Java's
reader: no ``schemas`` -> the single ``schema``; no ``partition-specs`` -> spec 0 from
``partition-spec`` (field ids from 1000); no ``last-partition-id`` -> the highest field id
(999 when unpartitioned); no ``sort-orders`` -> the unsorted order 0; sequence numbers
default to 0; ``current-snapshot-id`` of -1 or null -> no current snapshot; no ``refs`` ->
"There is always a ``main`` branch reference pointing to the ``current-snapshot-id`` even
if the refs map is null".
"""

from __future__ import annotations

import gzip
import json
import re
import uuid
import zlib
from typing import Any

from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.formats.schema_json import (
    corrupt_in,
    get_int,
    get_int_list,
    get_list,
    get_long,
    get_object,
    get_str,
    get_str_list,
    get_str_map,
    partition_fields_from_json,
    partition_fields_to_json,
    partition_spec_from_json,
    partition_spec_to_json,
    require_object,
    schema_from_json,
    schema_to_json,
    sort_order_from_json,
    sort_order_to_json,
)
from iceduck.spec.partition import UNPARTITIONED_LAST_ASSIGNED_ID
from iceduck.spec.snapshot import (
    MAIN_BRANCH,
    EncryptedKey,
    MetadataLogEntry,
    PartitionStatisticsFile,
    RefType,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsBlobMetadata,
    StatisticsFile,
)
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import INITIAL_SEQUENCE_NUMBER, SUPPORTED_FORMAT_VERSIONS, TableMetadata

GZIP_MAGIC = b"\x1f\x8b"
METADATA_SUFFIX = ".metadata.json"
GZIP_METADATA_SUFFIX = ".gz.metadata.json"
#: "The Java reference implementation can additionally read GZIP compressed files with
#: the suffix ``metadata.json.gz``"
OLD_GZIP_METADATA_SUFFIX = ".metadata.json.gz"
#: Java writes -1 for "no current snapshot" in v1/v2 and null from v3 on (Appendix F)
NO_SNAPSHOT_ID = -1
MIN_NULL_CURRENT_SNAPSHOT_VERSION = 3
#: "When a table is upgraded to v3, ``next_row_id`` should be initialized to 0"
INITIAL_ROW_ID = 0

_WHERE = "table metadata"


def _next_row_id(obj: dict[str, Any], version: int) -> int | None:
    """v3's required ``next-row-id``; absent only where Java 1.8 wrote a v3 table without row
    lineage (its ``row-lineage`` flag false or missing)."""
    if version < 3:
        return None
    lineage_off = "next-row-id" not in obj and obj.get("row-lineage") in (None, False)
    return None if lineage_off else get_long(obj, "next-row-id", _WHERE)

# -- file names ------------------------------------------------------------------------


def metadata_file_name(version: int, compress: bool = False, file_uuid: str | None = None) -> str:
    """A metastore-catalog metadata file name as Java writes it: ``00001-<uuid>.metadata.json``
    (``.gz.metadata.json`` when compressed; ``BaseMetastoreTableOperations``)."""
    suffix = GZIP_METADATA_SUFFIX if compress else METADATA_SUFFIX
    return f"{version:05d}-{file_uuid or uuid.uuid4()}{suffix}"


def hadoop_metadata_file_name(version: int, compress: bool = False) -> str:
    """A file-system (Hadoop) catalog metadata file name: ``v1.metadata.json``."""
    return f"v{version}{GZIP_METADATA_SUFFIX if compress else METADATA_SUFFIX}"


_VERSIONED_NAME = re.compile(r"(?:(\d+)-[^/]*|v(\d+))(?:\.gz)?\.metadata\.json(?:\.gz)?")


def metadata_file_version(path: str) -> int | None:
    """The version number in a metadata file's name (``00042-…`` or ``v42.…``), else None."""
    m = _VERSIONED_NAME.fullmatch(path.rsplit("/", 1)[-1])
    if m is None:
        return None
    return int(m.group(1) or m.group(2))


def is_gzip_metadata_name(path: str) -> bool:
    """Whether the name says GZIP (``.gz.metadata.json`` or the old ``.metadata.json.gz``)."""
    return path.endswith((GZIP_METADATA_SUFFIX, OLD_GZIP_METADATA_SUFFIX))


# -- reading ---------------------------------------------------------------------------


def read_table_metadata(data: bytes, path: str) -> TableMetadata:
    """Parse a metadata file's bytes; GZIP is recognised by its magic bytes, whatever the name.

    Raises :class:`UnsupportedError` for a format version other than 1-3 ("Implementations
    must throw an exception if a table's version is higher than the supported version")
    and :class:`CorruptDataError` naming ``path`` and the field for anything malformed.
    """
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise CorruptDataError(f"invalid GZIP data: {e}", path) from e
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CorruptDataError(f"metadata file is not valid UTF-8: {e}", path) from e
    except json.JSONDecodeError as e:
        raise CorruptDataError(f"metadata file is not valid JSON: {e}", path) from e
    return table_metadata_from_json(obj, path)


def table_metadata_from_json(obj: Any, path: str | None = None) -> TableMetadata:
    """Parse table metadata already decoded from JSON (a file, or a REST catalog response)."""
    with corrupt_in(path):
        obj = require_object(obj, _WHERE)
        version = get_int(obj, "format-version", _WHERE)
        if version not in SUPPORTED_FORMAT_VERSIONS:
            where = f"{path}: " if path else ""
            raise UnsupportedError(
                f"{where}table format version {version} is not supported (iceduck reads versions 1 to 3)"
            )
        return _parse(obj, version)


def _parse(obj: dict[str, Any], v: int) -> TableMetadata:
    location = get_str(obj, "location", _WHERE)
    if not location:
        raise CorruptDataError(f"{_WHERE}: field 'location' must not be empty")

    schemas, current_schema_id = _schemas(obj, v)
    specs, default_spec_id = _specs(obj, v)
    last_partition_id = get_int(obj, "last-partition-id", _WHERE, required=v > 1)
    if last_partition_id is None:
        last_partition_id = max(
            (s.last_assigned_field_id for s in specs), default=UNPARTITIONED_LAST_ASSIGNED_ID
        )
    sort_orders, default_order_id = _sort_orders(obj, v)

    current_snapshot_id = get_long(obj, "current-snapshot-id", _WHERE, required=False)
    if current_snapshot_id == NO_SNAPSHOT_ID:
        current_snapshot_id = None
    snapshots = tuple(
        snapshot_from_json(s, f"snapshots[{i}]")
        for i, s in enumerate(get_list(obj, "snapshots", _WHERE, required=False) or ())
    )
    refs = _refs(obj, current_snapshot_id)

    md = TableMetadata(
        format_version=v,
        table_uuid=get_str(obj, "table-uuid", _WHERE, required=v > 1),
        location=_strip_trailing_slash(location),
        last_updated_ms=get_long(obj, "last-updated-ms", _WHERE),
        last_column_id=get_int(obj, "last-column-id", _WHERE),
        schemas=schemas,
        current_schema_id=current_schema_id,
        partition_specs=specs,
        default_spec_id=default_spec_id,
        last_partition_id=last_partition_id,
        sort_orders=sort_orders,
        default_sort_order_id=default_order_id,
        last_sequence_number=(
            get_long(obj, "last-sequence-number", _WHERE) if v > 1 else INITIAL_SEQUENCE_NUMBER
        ),
        properties=get_str_map(obj, "properties", _WHERE) or {},
        current_snapshot_id=current_snapshot_id,
        snapshots=snapshots,
        snapshot_log=tuple(
            SnapshotLogEntry(get_long(e, "timestamp-ms", w), get_long(e, "snapshot-id", w))
            for e, w in _objects(obj, "snapshot-log")
        ),
        metadata_log=tuple(
            MetadataLogEntry(get_long(e, "timestamp-ms", w), get_str(e, "metadata-file", w))
            for e, w in _objects(obj, "metadata-log")
        ),
        refs=refs,
        statistics=tuple(statistics_from_json(e, w) for e, w in _objects(obj, "statistics")),
        partition_statistics=tuple(
            PartitionStatisticsFile(
                get_long(e, "snapshot-id", w),
                get_str(e, "statistics-path", w),
                get_long(e, "file-size-in-bytes", w),
            )
            for e, w in _objects(obj, "partition-statistics")
        ),
        next_row_id=_next_row_id(obj, v),
        encryption_keys=tuple(encryption_key_from_json(e, w) for e, w in _objects(obj, "encryption-keys")),
    )
    _validate(md)
    return md


def _strip_trailing_slash(location: str) -> str:
    """Java's ``LocationUtil.stripTrailingSlash``: writers append ``/data``, ``/metadata``."""
    while location.endswith("/") and not location.endswith("://"):
        location = location[:-1]
    return location


def _objects(obj: dict[str, Any], key: str) -> list[tuple[dict[str, Any], str]]:
    """The objects of an optional list field, each with its position for error messages."""
    items = get_list(obj, key, _WHERE, required=False) or []
    return [(require_object(item, f"{key}[{i}]"), f"{key}[{i}]") for i, item in enumerate(items)]


def _schemas(obj: dict[str, Any], v: int) -> tuple[tuple[Any, ...], int]:
    raw = get_list(obj, "schemas", _WHERE, required=v > 1)
    if raw is None:  # v1 written before schemas were tracked
        schema = schema_from_json(obj.get("schema"), "schema") if obj.get("schema") is not None else None
        if schema is None:
            raise CorruptDataError(f"{_WHERE}: missing required field 'schema' (or 'schemas')")
        return (schema,), schema.schema_id
    current = get_int(obj, "current-schema-id", _WHERE)
    return tuple(schema_from_json(s, f"schemas[{i}]") for i, s in enumerate(raw)), current


def _specs(obj: dict[str, Any], v: int) -> tuple[tuple[Any, ...], int]:
    raw = get_list(obj, "partition-specs", _WHERE, required=v > 1)
    if raw is None:  # v1 written before specs were tracked: the one spec has id 0
        fields = get_list(obj, "partition-spec", _WHERE)
        return (partition_fields_from_json(fields, 0, "partition-spec"),), 0
    default = get_int(obj, "default-spec-id", _WHERE)
    return tuple(partition_spec_from_json(s, f"partition-specs[{i}]") for i, s in enumerate(raw)), default


def _sort_orders(obj: dict[str, Any], v: int) -> tuple[tuple[Any, ...], int]:
    raw = get_list(obj, "sort-orders", _WHERE, required=v > 1)
    if raw is None:
        return (UNSORTED,), UNSORTED.order_id
    default = get_int(obj, "default-sort-order-id", _WHERE)
    return tuple(sort_order_from_json(s, f"sort-orders[{i}]") for i, s in enumerate(raw)), default


def _refs(obj: dict[str, Any], current_snapshot_id: int | None) -> dict[str, SnapshotRef]:
    raw = get_object(obj, "refs", _WHERE, required=False)
    if raw is None:
        if current_snapshot_id is None:
            return {}
        return {MAIN_BRANCH: SnapshotRef(current_snapshot_id, RefType.BRANCH)}
    return {name: snapshot_ref_from_json(ref, f"refs[{name!r}]") for name, ref in raw.items()}


def snapshot_ref_from_json(obj: Any, where: str) -> SnapshotRef:
    obj = require_object(obj, where)
    kind = get_str(obj, "type", where)
    try:
        ref_type = RefType(kind.lower())
    except ValueError as e:
        raise CorruptDataError(f"{where}: field 'type' must be 'branch' or 'tag', got {kind!r}") from e
    return SnapshotRef(
        snapshot_id=get_long(obj, "snapshot-id", where),
        type=ref_type,
        min_snapshots_to_keep=get_int(obj, "min-snapshots-to-keep", where, required=False),
        max_snapshot_age_ms=get_long(obj, "max-snapshot-age-ms", where, required=False),
        max_ref_age_ms=get_long(obj, "max-ref-age-ms", where, required=False),
    )


def snapshot_from_json(obj: Any, where: str) -> Snapshot:
    """A snapshot. Like Java, ``sequence-number`` defaults to 0 in every version (Java
    omits it when 0, e.g. for snapshots of a table upgraded from v1), and v3 row lineage
    fields may be absent (snapshots committed before an upgrade to v3)."""
    obj = require_object(obj, where)
    manifest_list = get_str(obj, "manifest-list", where, required=False)
    manifests = None
    if manifest_list is None:
        if "manifests" not in obj:
            raise CorruptDataError(f"{where}: missing required field 'manifest-list'")
        manifests = get_str_list(obj, "manifests", where)
    sequence_number = get_long(obj, "sequence-number", where, required=False)
    return Snapshot(
        snapshot_id=get_long(obj, "snapshot-id", where),
        timestamp_ms=get_long(obj, "timestamp-ms", where),
        summary=get_str_map(obj, "summary", where) or {},
        parent_snapshot_id=get_long(obj, "parent-snapshot-id", where, required=False),
        sequence_number=INITIAL_SEQUENCE_NUMBER if sequence_number is None else sequence_number,
        manifest_list=manifest_list,
        manifests=manifests,
        schema_id=get_int(obj, "schema-id", where, required=False),
        first_row_id=get_long(obj, "first-row-id", where, required=False),
        added_rows=get_long(obj, "added-rows", where, required=False),
        key_id=get_str(obj, "key-id", where, required=False),
    )


def statistics_from_json(obj: dict[str, Any], where: str) -> StatisticsFile:
    blobs = []
    for i, blob in enumerate(get_list(obj, "blob-metadata", where)):
        bw = f"{where}.blob-metadata[{i}]"
        blob = require_object(blob, bw)
        blobs.append(
            StatisticsBlobMetadata(
                type=get_str(blob, "type", bw),
                snapshot_id=get_long(blob, "snapshot-id", bw),
                sequence_number=get_long(blob, "sequence-number", bw),
                fields=get_int_list(blob, "fields", bw),
                properties=get_str_map(blob, "properties", bw),
            )
        )
    return StatisticsFile(
        snapshot_id=get_long(obj, "snapshot-id", where),
        statistics_path=get_str(obj, "statistics-path", where),
        file_size_in_bytes=get_long(obj, "file-size-in-bytes", where),
        file_footer_size_in_bytes=get_long(obj, "file-footer-size-in-bytes", where),
        blob_metadata=tuple(blobs),
        key_metadata=get_str(obj, "key-metadata", where, required=False),
    )


def encryption_key_from_json(obj: dict[str, Any], where: str) -> EncryptedKey:
    """An encryption key. The spec's table names the wrapping key's id
    ``encrypted-by-id-metadata``; Java (the only writer) uses ``encrypted-by-id``."""
    return EncryptedKey(
        key_id=get_str(obj, "key-id", where),
        encrypted_key_metadata=get_str(obj, "encrypted-key-metadata", where),
        encrypted_by_id=get_str(obj, "encrypted-by-id", where, required=False),
        properties=get_str_map(obj, "properties", where),
    )


def _validate(md: TableMetadata) -> None:
    """Cross-field checks Java's ``TableMetadata`` makes on every file it reads."""
    if not any(s.schema_id == md.current_schema_id for s in md.schemas):
        raise CorruptDataError(f"{_WHERE}: no schema with current-schema-id {md.current_schema_id}")
    if not any(s.spec_id == md.default_spec_id for s in md.partition_specs):
        raise CorruptDataError(f"{_WHERE}: no partition spec with default-spec-id {md.default_spec_id}")
    if not any(o.order_id == md.default_sort_order_id for o in md.sort_orders):
        raise CorruptDataError(
            f"{_WHERE}: no sort order with default-sort-order-id {md.default_sort_order_id}"
        )
    snapshot_ids = {s.snapshot_id for s in md.snapshots}
    if md.current_snapshot_id is not None and md.current_snapshot_id not in snapshot_ids:
        raise CorruptDataError(
            f"{_WHERE}: current-snapshot-id {md.current_snapshot_id} is not in 'snapshots'"
        )
    for name, ref in md.refs.items():
        if ref.snapshot_id not in snapshot_ids:
            raise CorruptDataError(f"{_WHERE}: ref {name!r} points to unknown snapshot {ref.snapshot_id}")
    main = md.refs.get(MAIN_BRANCH)
    if main is not None and main.snapshot_id != md.current_snapshot_id:
        raise CorruptDataError(
            f"{_WHERE}: current-snapshot-id {md.current_snapshot_id} does not match "
            f"the main branch's snapshot {main.snapshot_id}"
        )


# -- writing ---------------------------------------------------------------------------


def write_table_metadata(md: TableMetadata, compress: bool = False) -> bytes:
    """Compact UTF-8 JSON as Java's Jackson generator writes it; GZIP when ``compress``
    (with a zero modification time, as Java's ``GZIPOutputStream``)."""
    try:
        text = json.dumps(
            table_metadata_to_json(md), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except ValueError as e:  # NaN or infinity (in a default value) has no JSON form
        raise ValidationError(f"table metadata cannot be written as JSON: {e}") from e
    data = text.encode("utf-8")
    return gzip.compress(data, mtime=0) if compress else data


def table_metadata_to_json(md: TableMetadata) -> dict[str, Any]:
    """The JSON object Java writes for ``md``, keys in Java's order (see module docstring)."""
    v = md.format_version
    # Java writes the key even for a v1 table without a UUID (as null); a committing
    # writer assigns one first (Java's ``TableMetadata.Builder.assignUUID``).
    out: dict[str, Any] = {"format-version": v, "table-uuid": md.table_uuid}
    out["location"] = md.location
    if v > 1:
        out["last-sequence-number"] = md.last_sequence_number
    out["last-updated-ms"] = md.last_updated_ms
    out["last-column-id"] = md.last_column_id
    if v == 1:
        out["schema"] = schema_to_json(md.schema())
    out["current-schema-id"] = md.current_schema_id
    out["schemas"] = [schema_to_json(s) for s in md.schemas]
    if v == 1:
        out["partition-spec"] = partition_fields_to_json(md.spec())
    out["default-spec-id"] = md.default_spec_id
    out["partition-specs"] = [partition_spec_to_json(s) for s in md.partition_specs]
    out["last-partition-id"] = md.last_partition_id
    out["default-sort-order-id"] = md.default_sort_order_id
    out["sort-orders"] = [sort_order_to_json(o) for o in md.sort_orders]
    out["properties"] = dict(md.properties)
    if md.current_snapshot_id is not None:
        out["current-snapshot-id"] = md.current_snapshot_id
    else:
        out["current-snapshot-id"] = None if v >= MIN_NULL_CURRENT_SNAPSHOT_VERSION else NO_SNAPSHOT_ID
    if v >= 3:
        out["next-row-id"] = INITIAL_ROW_ID if md.next_row_id is None else md.next_row_id
    if md.encryption_keys:
        out["encryption-keys"] = [encryption_key_to_json(k) for k in md.encryption_keys]
    out["refs"] = {name: snapshot_ref_to_json(ref) for name, ref in md.refs.items()}
    out["snapshots"] = [snapshot_to_json(s) for s in md.snapshots]
    out["statistics"] = [statistics_to_json(s) for s in md.statistics]
    out["partition-statistics"] = [
        {
            "snapshot-id": s.snapshot_id,
            "statistics-path": s.statistics_path,
            "file-size-in-bytes": s.file_size_in_bytes,
        }
        for s in md.partition_statistics
    ]
    out["snapshot-log"] = [
        {"timestamp-ms": e.timestamp_ms, "snapshot-id": e.snapshot_id} for e in md.snapshot_log
    ]
    out["metadata-log"] = [
        {"timestamp-ms": e.timestamp_ms, "metadata-file": e.metadata_file} for e in md.metadata_log
    ]
    return out


def snapshot_to_json(s: Snapshot) -> dict[str, Any]:
    """Java's ``SnapshotParser.toJson``: ``sequence-number`` only when above 0 (never in
    v1: "Snapshot field ``sequence-number`` should not be written"), ``operation`` first
    in the summary, ``manifest-list`` or else the v1 ``manifests`` list."""
    out: dict[str, Any] = {}
    if s.sequence_number > INITIAL_SEQUENCE_NUMBER:
        out["sequence-number"] = s.sequence_number
    out["snapshot-id"] = s.snapshot_id
    if s.parent_snapshot_id is not None:
        out["parent-snapshot-id"] = s.parent_snapshot_id
    out["timestamp-ms"] = s.timestamp_ms
    if s.summary:
        summary = {"operation": s.summary["operation"]} if "operation" in s.summary else {}
        summary.update((k, v) for k, v in s.summary.items() if k != "operation")
        out["summary"] = summary
    if s.manifest_list is not None:
        out["manifest-list"] = s.manifest_list
    else:
        out["manifests"] = list(s.manifests or ())
    if s.schema_id is not None:
        out["schema-id"] = s.schema_id
    if s.first_row_id is not None:
        out["first-row-id"] = s.first_row_id
    if s.added_rows is not None:
        out["added-rows"] = s.added_rows
    if s.key_id is not None:
        out["key-id"] = s.key_id
    return out


def snapshot_ref_to_json(ref: SnapshotRef) -> dict[str, Any]:
    out: dict[str, Any] = {"snapshot-id": ref.snapshot_id, "type": ref.type.value}
    if ref.min_snapshots_to_keep is not None:
        out["min-snapshots-to-keep"] = ref.min_snapshots_to_keep
    if ref.max_snapshot_age_ms is not None:
        out["max-snapshot-age-ms"] = ref.max_snapshot_age_ms
    if ref.max_ref_age_ms is not None:
        out["max-ref-age-ms"] = ref.max_ref_age_ms
    return out


def statistics_to_json(s: StatisticsFile) -> dict[str, Any]:
    out: dict[str, Any] = {
        "snapshot-id": s.snapshot_id,
        "statistics-path": s.statistics_path,
        "file-size-in-bytes": s.file_size_in_bytes,
        "file-footer-size-in-bytes": s.file_footer_size_in_bytes,
    }
    if s.key_metadata is not None:
        out["key-metadata"] = s.key_metadata
    blobs = []
    for b in s.blob_metadata:
        blob: dict[str, Any] = {
            "type": b.type,
            "snapshot-id": b.snapshot_id,
            "sequence-number": b.sequence_number,
            "fields": list(b.fields),
        }
        if b.properties is not None:
            blob["properties"] = dict(b.properties)
        blobs.append(blob)
    out["blob-metadata"] = blobs
    return out


def encryption_key_to_json(k: EncryptedKey) -> dict[str, Any]:
    out: dict[str, Any] = {"key-id": k.key_id, "encrypted-key-metadata": k.encrypted_key_metadata}
    if k.encrypted_by_id is not None:
        out["encrypted-by-id"] = k.encrypted_by_id
    if k.properties is not None:
        out["properties"] = dict(k.properties)
    return out
