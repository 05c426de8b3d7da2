"""The schemas of Iceberg's metadata tables, as Iceberg Java 1.10 declares them.

Each schema is an Iceberg struct with Java's field ids, names, order and required flags
(``SnapshotsTable``, ``HistoryTable``, ``RefsTable``, ``MetadataLogEntriesTable``,
``ManifestsTable``, ``AllManifestsTable``, ``DataFile.getType``, ``ManifestEntry
.getSchema``, ``PartitionsTable``, ``MetricsUtil.readableMetricsSchema``), so that
:mod:`iceduck.scan.metadata.arrow` turns it into the Arrow schema matching what Spark
shows for ``SELECT * FROM t.<kind>``.

The file and entry tables depend on the table: their ``partition`` struct is the table's
partition type (:func:`iceduck.scan.metadata.partitioning.table_partition_type`), left out
when that is empty ("avoid returning an empty struct, which is not always supported"),
and their ``readable_metrics`` struct has one field per primitive column of the current
schema.
"""

from __future__ import annotations

from collections.abc import Iterator

from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestamptzType,
    VariantType,
)


def _req(field_id: int, name: str, t: IcebergType) -> NestedField:
    return NestedField(field_id, name, t, required=True)


def _opt(field_id: int, name: str, t: IcebergType) -> NestedField:
    return NestedField(field_id, name, t, required=False)


_LONG, _INT, _STR, _TSTZ = LongType(), IntegerType(), StringType(), TimestamptzType()

SNAPSHOTS = StructType(
    (
        _req(1, "committed_at", _TSTZ),
        _req(2, "snapshot_id", _LONG),
        _opt(3, "parent_id", _LONG),
        _opt(4, "operation", _STR),
        _opt(5, "manifest_list", _STR),
        _opt(6, "summary", MapType(7, _STR, 8, _STR, value_required=True)),
    )
)

HISTORY = StructType(
    (
        _req(1, "made_current_at", _TSTZ),
        _req(2, "snapshot_id", _LONG),
        _opt(3, "parent_id", _LONG),
        _req(4, "is_current_ancestor", BooleanType()),
    )
)

REFS = StructType(
    (
        _req(1, "name", _STR),
        _req(2, "type", _STR),
        _req(3, "snapshot_id", _LONG),
        _opt(4, "max_reference_age_in_ms", _LONG),
        _opt(5, "min_snapshots_to_keep", _INT),
        _opt(6, "max_snapshot_age_in_ms", _LONG),
    )
)

METADATA_LOG_ENTRIES = StructType(
    (
        _req(1, "timestamp", _TSTZ),
        _req(2, "file", _STR),
        _opt(3, "latest_snapshot_id", _LONG),
        _opt(4, "latest_schema_id", _INT),
        _opt(5, "latest_sequence_number", _LONG),
    )
)


def _summaries(contains_nan_required: bool) -> ListType:
    element = StructType(
        (
            _req(10, "contains_null", BooleanType()),
            NestedField(11, "contains_nan", BooleanType(), required=contains_nan_required),
            _opt(12, "lower_bound", _STR),
            _opt(13, "upper_bound", _STR),
        )
    )
    return ListType(9, element, element_required=True)


MANIFESTS = StructType(
    (
        _req(14, "content", _INT),
        _req(1, "path", _STR),
        _req(2, "length", _LONG),
        _req(3, "partition_spec_id", _INT),
        _req(4, "added_snapshot_id", _LONG),
        _req(5, "added_data_files_count", _INT),
        _req(6, "existing_data_files_count", _INT),
        _req(7, "deleted_data_files_count", _INT),
        _req(15, "added_delete_files_count", _INT),
        _req(16, "existing_delete_files_count", _INT),
        _req(17, "deleted_delete_files_count", _INT),
        _req(8, "partition_summaries", _summaries(contains_nan_required=False)),
    )
)

# AllManifestsTable declares some of the same columns optional and contains_nan required.
ALL_MANIFESTS = StructType(
    (
        _req(14, "content", _INT),
        _req(1, "path", _STR),
        _req(2, "length", _LONG),
        _opt(3, "partition_spec_id", _INT),
        _opt(4, "added_snapshot_id", _LONG),
        _opt(5, "added_data_files_count", _INT),
        _opt(6, "existing_data_files_count", _INT),
        _opt(7, "deleted_data_files_count", _INT),
        _req(15, "added_delete_files_count", _INT),
        _req(16, "existing_delete_files_count", _INT),
        _req(17, "deleted_delete_files_count", _INT),
        _opt(8, "partition_summaries", _summaries(contains_nan_required=True)),
        _req(18, "reference_snapshot_id", _LONG),
    )
)

PARTITION_ID = 102


def _int_map(field_id: int, name: str, key_id: int, value_type: IcebergType) -> NestedField:
    return _opt(field_id, name, MapType(key_id, _INT, key_id + 1, value_type, value_required=True))


def data_file_type(partition_type: StructType) -> StructType:
    """``DataFile.getType``: the columns of ``files`` and of ``entries.data_file``."""
    fields: tuple[NestedField, ...] = (
        _opt(134, "content", _INT),
        _req(100, "file_path", _STR),
        _req(101, "file_format", _STR),
        _opt(141, "spec_id", _INT),
        _req(PARTITION_ID, "partition", partition_type),
        _req(103, "record_count", _LONG),
        _req(104, "file_size_in_bytes", _LONG),
        _int_map(108, "column_sizes", 117, _LONG),
        _int_map(109, "value_counts", 119, _LONG),
        _int_map(110, "null_value_counts", 121, _LONG),
        _int_map(137, "nan_value_counts", 138, _LONG),
        _int_map(125, "lower_bounds", 126, BinaryType()),
        _int_map(128, "upper_bounds", 129, BinaryType()),
        _opt(131, "key_metadata", BinaryType()),
        _opt(132, "split_offsets", ListType(133, _LONG, element_required=True)),
        _opt(135, "equality_ids", ListType(136, _INT, element_required=True)),
        _opt(140, "sort_order_id", _INT),
        _opt(142, "first_row_id", _LONG),
        _opt(143, "referenced_data_file", _STR),
        _opt(144, "content_offset", _LONG),
        _opt(145, "content_size_in_bytes", _LONG),
    )
    if not partition_type.fields:
        fields = tuple(f for f in fields if f.field_id != PARTITION_ID)
    return StructType(fields)


def entry_prefix() -> tuple[NestedField, ...]:
    """``ManifestEntry``'s own columns, before ``data_file``."""
    return (
        _req(0, "status", _INT),
        _opt(1, "snapshot_id", _LONG),
        _opt(3, "sequence_number", _LONG),
        _opt(4, "file_sequence_number", _LONG),
    )


#: names of the per-column metrics, in ``MetricsUtil.READABLE_METRIC_COLS`` order
READABLE_METRIC_NAMES = (
    "column_size",
    "value_count",
    "null_value_count",
    "nan_value_count",
    "lower_bound",
    "upper_bound",
)


def metric_columns(schema: Schema) -> list[tuple[str, NestedField]]:
    """The columns ``readable_metrics`` covers: every primitive field, nested ones too, by
    dotted name (list elements ``element``, map keys and values ``key``/``value``), sorted
    by name as Java's ``String.compareTo`` does (UTF-16 code units)."""
    found = list(_primitive_fields(schema.fields, ()))
    return sorted(found, key=lambda item: item[0].encode("utf-16-be"))


def _primitive_fields(
    fields: tuple[NestedField, ...], prefix: tuple[str, ...]
) -> Iterator[tuple[str, NestedField]]:
    for f in fields:
        path = (*prefix, f.name)
        t = f.field_type
        # Java's Type.isPrimitiveType(): variant is not primitive there.
        if isinstance(t, PrimitiveType) and not isinstance(t, VariantType):
            yield ".".join(path), f
        elif isinstance(t, StructType | ListType | MapType):
            yield from _primitive_fields(t.fields, path)


def readable_metrics_field(columns: list[tuple[str, NestedField]], first_id: int) -> NestedField:
    """The optional ``readable_metrics`` struct: per column, its counts (long) and bounds
    (of the column's own type)."""
    next_id = first_id
    per_column = []
    for name, f in columns:
        metrics = []
        for metric in READABLE_METRIC_NAMES:
            t = f.field_type if metric.endswith("_bound") else _LONG
            next_id += 1
            metrics.append(_opt(next_id, metric, t))
        next_id += 1
        per_column.append(_opt(next_id, name, StructType(tuple(metrics))))
    return _opt(next_id + 1, "readable_metrics", StructType(tuple(per_column)))


def files_schema(partition_type: StructType, columns: list[tuple[str, NestedField]]) -> StructType:
    """``files``, ``data_files``, ``delete_files`` and their ``all_`` forms."""
    base = data_file_type(partition_type)
    return StructType((*base.fields, readable_metrics_field(columns, 10_000)))


def entries_schema(partition_type: StructType, columns: list[tuple[str, NestedField]]) -> StructType:
    """``entries`` and ``all_entries``."""
    data_file = _req(2, "data_file", data_file_type(partition_type))
    return StructType((*entry_prefix(), data_file, readable_metrics_field(columns, 10_000)))


def partitions_schema(partition_type: StructType) -> StructType:
    """``PartitionsTable``; an unpartitioned table has no ``partition`` and ``spec_id``."""
    fields: tuple[NestedField, ...] = (
        _req(1, "partition", partition_type),
        _req(4, "spec_id", _INT),
        _req(2, "record_count", _LONG),
        _req(3, "file_count", _INT),
        _req(11, "total_data_file_size_in_bytes", _LONG),
        _req(5, "position_delete_record_count", _LONG),
        _req(6, "position_delete_file_count", _INT),
        _req(7, "equality_delete_record_count", _LONG),
        _req(8, "equality_delete_file_count", _INT),
        _opt(9, "last_updated_at", _TSTZ),
        _opt(10, "last_updated_snapshot_id", _LONG),
    )
    if not partition_type.fields:
        fields = fields[2:]
    return StructType(fields)
