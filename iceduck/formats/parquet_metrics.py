"""Column metrics of a Parquet data file from its footer (spec, "Manifests": ``column_sizes``,
``value_counts``, ``null_value_counts``, ``nan_value_counts``, ``lower_bounds``,
``upper_bounds``, ``split_offsets``), as Iceberg Java's ``ParquetUtil.footerMetrics`` and
``MetricsConfig`` compute them, so manifests iceduck writes prune like Spark's.

Rules, all Java's:

* every leaf column chunk with a field id adds its compressed size to ``column_sizes``
  (whatever the metrics mode), its ``num_values`` (nulls included) to ``value_counts`` and
  its statistics' null count to ``null_value_counts``; a row group without statistics for
  a column drops that column's null count and bounds ("discard accumulated values if any
  stats were missing");
* counts and bounds only for primitives reached through structs alone, none for list
  and map children (Java's ``shouldStoreBounds``; Spark's manifests have no counts for
  them either); bounds serialized per Appendix D;
* float/double bounds and NaN counts come from the writer (``float_stats``), not from the
  footer (and, for floats inside structs, the value and null counts too, as Java's writer
  counts them: checked against Spark's manifests): Parquet statistics may hold NaN or be
  absent when a NaN was seen, and "NaNs are not permitted as lower or upper bounds";
* metrics modes (table properties): ``write.metadata.metrics.default`` (``truncate(16)``),
  ``write.metadata.metrics.column.<dotted name>``; ``none`` (sizes only), ``counts``
  (counts, no bounds), ``truncate(N)`` (string/binary/fixed bounds cut to N: lower by
  prefix, upper by prefix with its last unit incremented, none if impossible), ``full``.
  An unparsable mode falls back to the default, as Java does. Without an explicit default
  and with more than ``write.metadata.metrics.max-inferred-column-defaults`` (100)
  top-level columns, only the first 100 get ``truncate(16)`` and the rest ``none``;
  columns of the sort order (order-preserving transforms) get at least ``truncate(16)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.spec import properties as props
from iceduck.spec import values
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortOrder
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

DEFAULT_MODE_PROPERTY = props.METRICS_MODE_DEFAULT
COLUMN_MODE_PREFIX = props.METRICS_MODE_COLUMN_PREFIX
MAX_INFERRED_PROPERTY = props.METRICS_MAX_INFERRED_COLUMN_DEFAULTS
MAX_INFERRED_DEFAULT = props.METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT
_FIELD_ID_KEY = b"PARQUET:field_id"


@dataclass(frozen=True)
class MetricsMode:
    """``none``, ``counts``, ``truncate`` (with ``length``) or ``full``."""

    kind: str
    length: int = 0

    @property
    def counts(self) -> bool:
        return self.kind != "none"

    @property
    def bounds(self) -> bool:
        return self.kind in ("truncate", "full")


NONE = MetricsMode("none")
COUNTS = MetricsMode("counts")
FULL = MetricsMode("full")
DEFAULT_MODE = MetricsMode("truncate", values.DEFAULT_TRUNCATE_LENGTH)


def parse_mode(text: str) -> MetricsMode | None:
    """Java ``MetricsModes.fromString``; None for text it would reject
    (:func:`iceduck.spec.properties.metrics_mode`)."""
    parsed = props.metrics_mode(text)
    return None if parsed is None else MetricsMode(*parsed)


@dataclass(frozen=True)
class MetricsConfig:
    """The metrics mode of every column, by dotted column name (Java ``MetricsConfig``)."""

    default: MetricsMode
    columns: Mapping[str, MetricsMode] = field(default_factory=dict)

    def mode(self, schema: Schema, field_id: int) -> MetricsMode:
        name = schema.column_name(field_id)
        return self.columns.get(name, self.default) if name is not None else self.default


def metrics_config(
    properties: Mapping[str, str], schema: Schema, sort_order: SortOrder | None = None
) -> MetricsConfig:
    """Java ``MetricsConfig.from(properties, schema, sortOrder)``."""
    columns: dict[str, MetricsMode] = {}
    configured = properties.get(DEFAULT_MODE_PROPERTY)
    try:
        max_inferred = int(properties.get(MAX_INFERRED_PROPERTY, MAX_INFERRED_DEFAULT))
    except ValueError:
        max_inferred = MAX_INFERRED_DEFAULT
    if configured is not None:
        default = parse_mode(configured) or DEFAULT_MODE
    elif len(schema.fields) <= max_inferred:
        default = DEFAULT_MODE
    else:  # the first columns (with everything nested in them) keep the default
        for top in schema.fields[:max_inferred]:
            for fid in _ids_under(top.field_id, top.field_type):
                name = schema.column_name(fid)
                if name is not None:
                    columns[name] = DEFAULT_MODE
        default = NONE
    sorted_mode = DEFAULT_MODE if not default.bounds else default
    for sort_field in sort_order.fields if sort_order is not None else ():
        name = schema.column_name(sort_field.source_id)
        if sort_field.transform.preserves_order and name is not None:
            columns[name] = sorted_mode
    for key, text in properties.items():
        if key.startswith(COLUMN_MODE_PREFIX):
            columns[key[len(COLUMN_MODE_PREFIX) :]] = parse_mode(text) or default
    return MetricsConfig(default, columns)


def _ids_under(field_id: int, t: IcebergType) -> list[int]:
    out = [field_id]
    for child in t.fields if isinstance(t, StructType | ListType | MapType) else ():
        out += _ids_under(child.field_id, child.field_type)
    return out


@dataclass(frozen=True)
class FloatStats:
    """What a writer saw of one float/double column: NaN count and non-NaN min/max."""

    nan_count: int
    lower: float | None = None
    upper: float | None = None
    #: Java counts a nested float/double from what its writer saw: not the rows where an
    #: enclosing struct is null (the footer counts those as nulls); None: use the footer
    value_count: int | None = None
    null_count: int | None = None


@dataclass
class FileMetrics:
    record_count: int
    column_sizes: dict[int, int]
    value_counts: dict[int, int]
    null_value_counts: dict[int, int]
    nan_value_counts: dict[int, int]
    lower_bounds: dict[int, bytes]
    upper_bounds: dict[int, bytes]
    split_offsets: list[int]


def parquet_data_file(
    location: str,
    partition: Any,
    record_count: int,
    size: int,
    metrics: FileMetrics,
    *,
    sort_order_id: int,
    spec_id: int,
) -> DataFile:
    """The manifest entry's data file of a Parquet data file with these footer ``metrics``:
    how a written file and an imported one (``add_files``) enter a table alike."""
    return DataFile(
        content=FileContent.DATA,
        file_path=location,
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=record_count,
        file_size_in_bytes=size,
        column_sizes=metrics.column_sizes,
        value_counts=metrics.value_counts,
        null_value_counts=metrics.null_value_counts,
        nan_value_counts=metrics.nan_value_counts,
        lower_bounds=metrics.lower_bounds,
        upper_bounds=metrics.upper_bounds,
        split_offsets=metrics.split_offsets,
        sort_order_id=sort_order_id,
        spec_id=spec_id,
    )


def file_metrics(
    metadata: pq.FileMetaData,
    schema: Schema,
    properties: Mapping[str, str],
    *,
    sort_order: SortOrder | None = None,
    float_stats: Mapping[int, FloatStats] | None = None,
    column_ids: Mapping[str, int] | None = None,
) -> FileMetrics:
    """Metrics of the file whose footer is ``metadata``, for a table with ``schema``.

    ``column_ids`` (Parquet column path -> field id) stands in for the file's own field
    ids: a file written without them gets its ids from the table's name mapping."""
    config = metrics_config(properties, schema, sort_order)
    ids = leaf_field_ids(metadata.schema.to_arrow_schema()) if column_ids is None else column_ids
    boundable = _boundable_ids(schema)
    sizes: dict[int, int] = {}
    counts: dict[int, int] = {}
    nulls: dict[int, int] = {}
    lowers: dict[int, Any] = {}
    uppers: dict[int, Any] = {}
    missing: set[int] = set()
    offsets = []
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        offsets.append(_row_group_start(group))
        for c in range(group.num_columns):
            column = group.column(c)
            fid = ids.get(column.path_in_schema)
            iceberg = schema.find_field_or_none(fid) if fid is not None else None
            if fid is None or iceberg is None:
                continue
            sizes[fid] = sizes.get(fid, 0) + column.total_compressed_size
            mode = config.mode(schema, fid)
            if not mode.counts or fid not in boundable:
                continue
            counts[fid] = counts.get(fid, 0) + column.num_values
            stats = column.statistics if column.is_stats_set else None
            if stats is None or not stats.has_null_count:
                missing.add(fid)
                continue
            nulls[fid] = nulls.get(fid, 0) + stats.null_count
            t = iceberg.field_type
            if not (mode.bounds and stats.has_min_max) or isinstance(t, FloatType | DoubleType):
                continue
            low, high = (
                _footer_value(t, stats.min_raw, stats, True),
                _footer_value(t, stats.max_raw, stats, False),
            )
            if low is not None and (fid not in lowers or values.compare(t, low, lowers[fid]) < 0):
                lowers[fid] = low
            if fid in uppers and uppers[fid] is None:
                continue  # an earlier row group had no representable maximum
            if high is None or fid not in uppers or values.compare(t, high, uppers[fid]) > 0:
                uppers[fid] = high
    for fid in missing:
        nulls.pop(fid, None)
        lowers.pop(fid, None)
        uppers.pop(fid, None)
    nans: dict[int, int] = {}
    for fid, fs in (float_stats or {}).items():
        f = schema.find_field_or_none(fid)
        if f is None or not config.mode(schema, fid).counts or fid not in boundable:
            continue
        nans[fid] = fs.nan_count
        if fs.value_count is not None and fid in counts:
            counts[fid] = fs.value_count
        if fs.null_count is not None and fid in nulls:
            nulls[fid] = fs.null_count
        if (
            config.mode(schema, fid).bounds
            and fid in boundable
            and fs.lower is not None
            and fs.upper is not None
        ):
            lowers[fid], uppers[fid] = fs.lower, fs.upper
    return FileMetrics(
        record_count=metadata.num_rows,
        column_sizes=sizes,
        value_counts=counts,
        null_value_counts=nulls,
        nan_value_counts=nans,
        lower_bounds=_serialize(schema, config, lowers, lower=True),
        upper_bounds=_serialize(schema, config, uppers, lower=False),
        split_offsets=sorted(offsets),
    )


def leaf_field_ids(arrow_schema: pa.Schema) -> dict[str, int]:
    """Parquet column path (``a.b``, ``l.list.element``, ``m.key_value.key``) -> field id."""
    out: dict[str, int] = {}

    def walk(f: pa.Field, path: str) -> None:
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i), f"{path}.{t.field(i).name}")
        elif pa.types.is_map(t):
            walk(t.key_field, f"{path}.key_value.key")
            walk(t.item_field, f"{path}.key_value.value")
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(t.value_field, f"{path}.list.{t.value_field.name}")
        elif f.metadata and _FIELD_ID_KEY in f.metadata:
            out[path] = int(f.metadata[_FIELD_ID_KEY])

    for f in arrow_schema:
        walk(f, f.name)
    return out


def _boundable_ids(schema: Schema) -> set[int]:
    """Primitive fields reached through structs only (Java ``shouldStoreBounds``)."""
    out: set[int] = set()

    def walk(fields: tuple[Any, ...]) -> None:
        for f in fields:
            if isinstance(f.field_type, StructType):
                walk(f.field_type.fields)
            elif isinstance(f.field_type, PrimitiveType):
                out.add(f.field_id)

    walk(schema.fields)
    return out


def _row_group_start(group: pq.RowGroupMetaData) -> int:
    """Java ``BlockMetaData.getStartingPos``: the first column's dictionary or data page."""
    first = group.column(0)
    dictionary = first.dictionary_page_offset
    return dictionary if dictionary is not None and dictionary > 0 else first.data_page_offset


def _time_unit(stats: Any) -> str:
    text = str(stats.logical_type)
    if "nanoseconds" in text:
        return "ns"
    return "ms" if "milliseconds" in text else "us"


def _footer_value(t: IcebergType, raw: Any, stats: Any, lower: bool) -> Any:
    """A footer min/max in the Python representation of ``t`` (None: not usable)."""
    if isinstance(t, BooleanType | IntegerType | LongType | DateType):
        return bool(raw) if isinstance(t, BooleanType) else int(raw)
    if isinstance(t, TimeType | TimestampType | TimestamptzType | TimestampNanoType | TimestamptzNanoType):
        unit = _time_unit(stats)
        wants_nanos = isinstance(t, TimestampNanoType | TimestamptzNanoType)
        scale = (
            {"ms": 1_000_000, "us": 1_000, "ns": 1}[unit]
            if wants_nanos
            else {"ms": 1000, "us": 1, "ns": -1}[unit]
        )
        if scale == -1:  # nanoseconds in a microsecond column: floor / ceil keeps a valid bound
            return raw // 1000 if lower else -(-raw // 1000)
        return int(raw) * scale
    if isinstance(t, DecimalType):
        unscaled = int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes) else int(raw)
        return values.from_bytes(t, values.decimal_to_min_bytes(unscaled))
    if isinstance(t, StringType):
        return _utf8_bound(bytes(raw), lower)
    if isinstance(t, UUIDType):
        return values.from_bytes(t, bytes(raw))
    if isinstance(t, BinaryType | FixedType):
        return bytes(raw)
    return None


def _utf8_bound(data: bytes, lower: bool) -> str | None:
    """Writers truncate long string statistics (DuckDB at 256 bytes), possibly inside a
    character: a lower bound drops the broken tail (a shorter prefix is still below), an
    upper bound that is not UTF-8 is unusable."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        if not lower:
            return None
        for cut in range(1, 4):
            try:
                return data[:-cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return None


def _serialize(
    schema: Schema, config: MetricsConfig, bounds: dict[int, Any], lower: bool
) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for fid, value in bounds.items():
        if value is None:
            continue
        t = schema.find_field(fid).field_type
        mode = config.mode(schema, fid)
        if mode.kind == "truncate" and isinstance(t, StringType | BinaryType | FixedType):
            if isinstance(t, StringType):
                value = (
                    values.truncate_lower_string(value, mode.length)
                    if lower
                    else (values.truncate_upper_string(value, mode.length))
                )
            else:
                value = (
                    values.truncate_lower_binary(value, mode.length)
                    if lower
                    else (values.truncate_upper_binary(value, mode.length))
                )
            if value is None:
                continue
            if isinstance(t, FixedType):  # a truncated fixed bound is stored as bare bytes
                out[fid] = bytes(value)
                continue
        out[fid] = values.to_bytes(t, value)  # type: ignore[arg-type]
    return out
