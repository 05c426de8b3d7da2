"""Paimon's system tables (``t$snapshots``, ``t$files``...), with Paimon's column names.

Columns and types follow Paimon Java's ``SnapshotsTable``, ``SchemasTable``,
``OptionsTable``, ``TagsTable``, ``FilesTable`` and ``ManifestsTable`` (and the
"System Tables" page of Paimon's documentation):

* ``snapshots``: snapshot_id, schema_id, commit_user, commit_identifier, commit_kind,
  commit_time, base_manifest_list, delta_manifest_list, changelog_manifest_list,
  total_record_count, delta_record_count, changelog_record_count, watermark -- every
  snapshot of the table;
* ``schemas``: schema_id, fields, partition_keys, primary_keys, options (JSON text, as the
  schema file holds them), comment, update_time -- every schema version;
* ``options``: key, value -- of the schema read;
* ``tags``: tag_name, snapshot_id, schema_id, commit_time, record_count;
* ``files``: partition, bucket, file_path, file_format, schema_id, level, record_count,
  file_size_in_bytes, min_key, max_key, null_value_counts, min_value_stats,
  max_value_stats, min_sequence_number, max_sequence_number, creation_time -- the live
  data files of the snapshot read; keys, partitions and statistics as Paimon prints them
  (``[v1, v2]``, ``{col=v, ...}``);
* ``manifests``: file_name, file_size, num_added_files, num_deleted_files, schema_id,
  min_partition_stats, max_partition_stats -- the base and delta manifests of the
  snapshot read;
* ``partitions`` (partition, record_count, file_size_in_bytes, file_count,
  last_update_time) and ``buckets`` (partition, bucket, and the same sums): the live files of
  the snapshot read, summed per partition or per bucket (``PartitionsTable``, ``BucketsTable``);
  a partition is named by its folder (``dt=2024-01-01/region=0``, nulls by
  ``partition.default-name``), as pypaimon names it.

Times (``commit_time``, ``update_time``, ``creation_time``) are UTC timestamps of
millisecond precision; Paimon Java shows them in the JVM's time zone.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from iceduck.errors import CorruptDataError, NotFoundError
from iceduck.formats.paimon.manifests import read_manifest, read_manifest_list
from iceduck.formats.paimon.paths import data_file_path, partition_path
from iceduck.formats.paimon.table_files import (
    read_schema,
    read_snapshot,
    read_tag,
    schema_ids,
    snapshot_ids,
    tag_names,
)
from iceduck.io import fileio
from iceduck.scan.paimon.stats import value_stats_fields
from iceduck.spec.paimon.binary_row import decode_row
from iceduck.spec.paimon.iceberg_bridge import iceberg_type
from iceduck.spec.paimon.manifest import SimpleStats, live_files
from iceduck.spec.paimon.schema import DataField, TableSchema
from iceduck.spec.paimon.snapshot import Snapshot
from iceduck.spec.types import PrimitiveType
from iceduck.spec.values import to_json

_MS = pa.timestamp("ms")

SNAPSHOTS = pa.schema(
    [
        ("snapshot_id", pa.int64()),
        ("schema_id", pa.int64()),
        ("commit_user", pa.string()),
        ("commit_identifier", pa.int64()),
        ("commit_kind", pa.string()),
        ("commit_time", _MS),
        ("base_manifest_list", pa.string()),
        ("delta_manifest_list", pa.string()),
        ("changelog_manifest_list", pa.string()),
        ("total_record_count", pa.int64()),
        ("delta_record_count", pa.int64()),
        ("changelog_record_count", pa.int64()),
        ("watermark", pa.int64()),
    ]
)
SCHEMAS = pa.schema(
    [
        ("schema_id", pa.int64()),
        ("fields", pa.string()),
        ("partition_keys", pa.string()),
        ("primary_keys", pa.string()),
        ("options", pa.string()),
        ("comment", pa.string()),
        ("update_time", _MS),
    ]
)
OPTIONS = pa.schema([("key", pa.string()), ("value", pa.string())])
TAGS = pa.schema(
    [
        ("tag_name", pa.string()),
        ("snapshot_id", pa.int64()),
        ("schema_id", pa.int64()),
        ("commit_time", _MS),
        ("record_count", pa.int64()),
    ]
)
FILES = pa.schema(
    [
        ("partition", pa.string()),
        ("bucket", pa.int32()),
        ("file_path", pa.string()),
        ("file_format", pa.string()),
        ("schema_id", pa.int64()),
        ("level", pa.int32()),
        ("record_count", pa.int64()),
        ("file_size_in_bytes", pa.int64()),
        ("min_key", pa.string()),
        ("max_key", pa.string()),
        ("null_value_counts", pa.string()),
        ("min_value_stats", pa.string()),
        ("max_value_stats", pa.string()),
        ("min_sequence_number", pa.int64()),
        ("max_sequence_number", pa.int64()),
        ("creation_time", _MS),
    ]
)
MANIFESTS = pa.schema(
    [
        ("file_name", pa.string()),
        ("file_size", pa.int64()),
        ("num_added_files", pa.int64()),
        ("num_deleted_files", pa.int64()),
        ("schema_id", pa.int64()),
        ("min_partition_stats", pa.string()),
        ("max_partition_stats", pa.string()),
    ]
)

#: ``PartitionsTable`` and ``BucketsTable``: the live files of the snapshot read, summed
PARTITIONS = pa.schema(
    [
        ("partition", pa.string()),
        ("record_count", pa.int64()),
        ("file_size_in_bytes", pa.int64()),
        ("file_count", pa.int64()),
        ("last_update_time", _MS),
    ]
)
BUCKETS = pa.schema(
    [
        ("partition", pa.string()),
        ("bucket", pa.int32()),
        ("record_count", pa.int64()),
        ("file_size_in_bytes", pa.int64()),
        ("file_count", pa.int64()),
        ("last_update_time", _MS),
    ]
)


#: the system tables :func:`paimon_metadata_table` builds
PAIMON_SYSTEM_TABLES = (
    "snapshots", "schemas", "options", "tags", "files", "manifests", "partitions", "buckets"
)


def paimon_metadata_table(name: str, table: str, snapshot: Snapshot | None, schema: TableSchema) -> pa.Table:
    """The system table ``name`` of the Paimon table at ``table`` (its folder):
    ``snapshot`` is the snapshot read (None: the table has none) and ``schema`` its
    schema, for ``files``, ``manifests`` and ``options``."""
    builders: dict[str, Callable[[], tuple[pa.Schema, list[dict[str, Any]]]]] = {
        "snapshots": lambda: (SNAPSHOTS, _snapshots(table)),
        "schemas": lambda: (SCHEMAS, _schemas(table)),
        "options": lambda: (OPTIONS, [{"key": k, "value": v} for k, v in sorted(schema.options.items())]),
        "tags": lambda: (TAGS, _tags(table)),
        "files": lambda: (FILES, _files(table, snapshot, schema)),
        "manifests": lambda: (MANIFESTS, _manifests(table, snapshot, schema)),
        "partitions": lambda: (PARTITIONS, _summed(_files(table, snapshot, schema), False)),
        "buckets": lambda: (BUCKETS, _summed(_files(table, snapshot, schema), True)),
    }
    build = builders.get(name.lower())
    if build is None:
        raise NotFoundError(f"Paimon tables have no system table {name!r} (known: {', '.join(builders)})")
    arrow_schema, rows = build()
    return pa.Table.from_pylist(rows, schema=arrow_schema)


def _snapshot_row(s: Snapshot) -> dict[str, Any]:
    return {
        "snapshot_id": s.id,
        "schema_id": s.schema_id,
        "commit_user": s.commit_user,
        "commit_identifier": s.commit_identifier,
        "commit_kind": s.commit_kind,
        "commit_time": s.time_millis,
        "base_manifest_list": s.base_manifest_list,
        "delta_manifest_list": s.delta_manifest_list,
        "changelog_manifest_list": s.changelog_manifest_list,
        "total_record_count": s.total_record_count,
        "delta_record_count": s.delta_record_count,
        "changelog_record_count": s.changelog_record_count,
        "watermark": s.watermark,
    }


def _snapshots(table: str) -> list[dict[str, Any]]:
    rows = []
    for sid in snapshot_ids(table):
        try:
            rows.append(_snapshot_row(read_snapshot(table, sid)))
        except NotFoundError:
            continue  # expired between the listing and the read
    return rows


def _schemas(table: str) -> list[dict[str, Any]]:
    rows = []
    for sid in schema_ids(table):
        path = posixpath.join(table, "schema", f"schema-{sid}")
        schema = read_schema(table, sid)
        try:  # the field list as the file spells it (type strings, nested JSON)
            raw = json.loads(fileio.read_bytes(path))
        except (ValueError, OSError) as e:
            raise CorruptDataError(f"schema file is not JSON: {e}", path) from e
        rows.append(
            {
                "schema_id": schema.id,
                "fields": json.dumps(raw.get("fields", []), separators=(",", ":")),
                "partition_keys": json.dumps(list(schema.partition_keys)),
                "primary_keys": json.dumps(list(schema.primary_keys)),
                "options": json.dumps(schema.options, separators=(",", ":")),
                "comment": schema.comment,
                "update_time": schema.time_millis,
            }
        )
    return rows


def _tags(table: str) -> list[dict[str, Any]]:
    rows = []
    for name in tag_names(table):
        s = read_tag(table, name)
        rows.append(
            {
                "tag_name": name,
                "snapshot_id": s.id,
                "schema_id": s.schema_id,
                "commit_time": s.time_millis,
                "record_count": s.total_record_count,
            }
        )
    return rows


def _text(f: DataField, value: Any) -> str:
    """A value as Paimon prints it: its text (dates and times in ISO form)."""
    if value is None:
        return "null"
    t = iceberg_type(f.type)
    if isinstance(t, PrimitiveType) and not isinstance(value, bool | str):
        try:
            return str(to_json(t, value))
        except (ValueError, TypeError):
            return str(value)
    return str(value)


def _row_text(fields: Sequence[DataField], data: bytes, path: str) -> str:
    """``[v1, v2]``: a BinaryRow (partition, key) as Paimon's files table prints it."""
    if not fields or not data:
        return "[]"
    values = decode_row(data, [f.type for f in fields], path)
    return "[" + ", ".join(_text(f, v) for f, v in zip(fields, values, strict=False)) + "]"


def _stats_text(fields: Sequence[DataField], stats: SimpleStats, path: str) -> tuple[str, str, str]:
    """``{col=v, ...}`` for the null counts, minimums and maximums of value statistics."""
    if not fields:
        return "{}", "{}", "{}"
    types = [f.type for f in fields]
    mins = decode_row(stats.min_values, types, path) if stats.min_values else (None,) * len(fields)
    maxs = decode_row(stats.max_values, types, path) if stats.max_values else (None,) * len(fields)
    nulls = stats.null_counts or (None,) * len(fields)
    order = sorted(range(len(fields)), key=lambda i: fields[i].name)

    def render(values: Sequence[Any], text: Callable[[DataField, Any], str]) -> str:
        return "{" + ", ".join(f"{fields[i].name}={text(fields[i], values[i])}" for i in order) + "}"

    return (
        render(nulls, lambda _, v: "null" if v is None else str(v)),
        render(mins, _text),
        render(maxs, _text),
    )


def _files(table: str, snapshot: Snapshot | None, schema: TableSchema) -> list[dict[str, Any]]:
    if snapshot is None:
        return []
    entries = []
    for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
        for meta in read_manifest_list(table, name):
            entries.extend(read_manifest(table, meta.file_name))
    partition_fields = list(schema.partition_fields)
    schemas: dict[int, TableSchema] = {schema.id: schema}
    rows = []
    for e in live_files(entries, table):
        f = e.file
        file_schema = schemas.get(f.schema_id) or schemas.setdefault(
            f.schema_id, read_schema(table, f.schema_id)
        )
        keys = file_schema.trimmed_primary_key_fields
        cols = f.value_stats_cols if f.value_stats_cols is not None or f.write_cols is None else f.write_cols
        nulls, mins, maxs = _stats_text(
            value_stats_fields(file_schema.fields, cols, f.file_name), f.value_stats, f.file_name
        )
        partition_values = (
            decode_row(e.partition, [p.type for p in partition_fields], table) if partition_fields else ()
        )
        rows.append(
            {
                "partition": _row_text(partition_fields, e.partition, table),
                "bucket": e.bucket,
                "file_path": data_file_path(table, schema, tuple(partition_values), e.bucket, f),
                "file_format": f.file_name.rpartition(".")[2] if "." in f.file_name else schema.file_format,
                "schema_id": f.schema_id,
                "level": f.level,
                "record_count": f.row_count,
                "file_size_in_bytes": f.file_size,
                "min_key": _row_text(keys, f.min_key, f.file_name),
                "max_key": _row_text(keys, f.max_key, f.file_name),
                "null_value_counts": nulls,
                "min_value_stats": mins,
                "max_value_stats": maxs,
                "min_sequence_number": f.min_sequence_number,
                "max_sequence_number": f.max_sequence_number,
                "creation_time": f.creation_time_ms,
                # the partitions and buckets tables name a partition by its folder
                "partition_name": partition_path(schema, tuple(partition_values)).rstrip("/") or None,
            }
        )
    return rows


def _manifests(table: str, snapshot: Snapshot | None, schema: TableSchema) -> list[dict[str, Any]]:
    if snapshot is None:
        return []
    partition_fields = list(schema.partition_fields)
    rows = []
    for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
        for m in read_manifest_list(table, name):
            path = posixpath.join(table, "manifest", m.file_name)
            rows.append(
                {
                    "file_name": m.file_name,
                    "file_size": m.file_size,
                    "num_added_files": m.num_added_files,
                    "num_deleted_files": m.num_deleted_files,
                    "schema_id": m.schema_id,
                    "min_partition_stats": _row_text(partition_fields, m.partition_stats.min_values, path),
                    "max_partition_stats": _row_text(partition_fields, m.partition_stats.max_values, path),
                }
            )
    return rows


def _summed(files: list[dict[str, Any]], per_bucket: bool) -> list[dict[str, Any]]:
    """The rows of ``files`` grouped per partition (named by its folder, ``dt=2024-01-01``;
    null when unpartitioned), or per partition and bucket: records, bytes and files summed,
    the newest file's creation time as the last update (Java's ``PartitionEntry``)."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for f in files:
        key = (f["partition_name"], f["bucket"]) if per_bucket else (f["partition_name"],)
        row = groups.setdefault(
            key,
            {
                **dict(zip(("partition", "bucket"), key, strict=False)),
                "record_count": 0,
                "file_size_in_bytes": 0,
                "file_count": 0,
                "last_update_time": None,
            },
        )
        row["record_count"] += f["record_count"]
        row["file_size_in_bytes"] += f["file_size_in_bytes"]
        row["file_count"] += 1
        created = f["creation_time"]
        if created is not None and (row["last_update_time"] is None or created > row["last_update_time"]):
            row["last_update_time"] = created
    return [groups[k] for k in sorted(groups, key=lambda k: tuple(str(v) for v in k))]
