"""Paimon statistics as Iceberg column metrics, so one evaluator prunes both formats.

Paimon keeps a SimpleStats per manifest (partition fields), and per data file for its key
and value columns: "_MIN_VALUES: BYTES -- BinaryRow; the minimum values of the columns.
_MAX_VALUES: BYTES -- BinaryRow; the maximum values of the columns. _NULL_COUNTS:
ARRAY<BIGINT> -- the number of nulls in the columns" (seed 004). Here those become an
Iceberg :class:`DataFile`'s ``lower_bounds``/``upper_bounds`` (single-value bytes),
``null_value_counts`` and ``value_counts`` keyed by field id, which
:class:`~iceduck.spec.expressions.metrics_evaluator.InclusiveMetricsEvaluator` reads.

Only what is certain becomes a metric: a null min/max (``metadata.stats-mode`` ``counts``
or ``none``), a nested type, or a field whose type differs between the file's schema
and the read schema (a widened column: its old bounds are of the old type) gives no
bound, and a missing metric never prunes. String bounds Paimon truncates
(``truncate(16)``, its default stats mode) keep a prefix as minimum and an incremented
prefix as maximum, which still bound the values, as Iceberg's truncated bounds do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.paimon.binary_row import decode_row
from iceduck.spec.paimon.iceberg_bridge import iceberg_type
from iceduck.spec.paimon.manifest import SimpleStats
from iceduck.spec.paimon.schema import DataField
from iceduck.spec.types import NestedField, PrimitiveType
from iceduck.spec.values import to_bytes


def stats_metrics(
    stats: SimpleStats,
    fields: Sequence[DataField],
    read_fields: Mapping[int, NestedField],
    record_count: int,
    path: str,
    value_counts: bool = True,
) -> DataFile:
    """``stats`` of ``fields`` (in the stats' column order) as an Iceberg ``DataFile``
    with ``record_count`` rows, its metrics keyed by field id. ``read_fields`` are the
    read schema's Iceberg fields by id: metrics of other fields are left out.
    ``value_counts`` False leaves out the value counts (manifest partition stats count
    files, not rows)."""
    lower: dict[int, bytes] = {}
    upper: dict[int, bytes] = {}
    nulls: dict[int, int] = {}
    counts: dict[int, int] = {}
    if fields:
        types = [f.type for f in fields]
        mins = decode_row(stats.min_values, types, path) if stats.min_values else (None,) * len(fields)
        maxs = decode_row(stats.max_values, types, path) if stats.max_values else (None,) * len(fields)
        null_counts = stats.null_counts or ()
        if len(mins) != len(fields) or len(maxs) != len(fields):
            raise CorruptDataError(f"statistics have {len(mins)} values for {len(fields)} columns", path)
        for i, f in enumerate(fields):
            target = read_fields.get(f.id)
            if target is None:
                continue
            if i < len(null_counts) and null_counts[i] is not None:
                nulls[f.id] = int(null_counts[i])  # type: ignore[arg-type]
                if value_counts:
                    counts[f.id] = record_count
            t = target.field_type
            if not isinstance(t, PrimitiveType) or iceberg_type(f.type) != t:
                continue
            lo, hi = mins[i], maxs[i]
            if lo is None or hi is None:
                continue
            try:
                lower[f.id], upper[f.id] = to_bytes(t, lo), to_bytes(t, hi)
            except (ValidationError, ValueError, TypeError, OverflowError):
                continue  # a value iceduck cannot serialise is no bound, never a wrong one
    return DataFile(
        content=FileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=(),
        record_count=record_count,
        file_size_in_bytes=0,
        value_counts=counts,
        null_value_counts=nulls,
        lower_bounds=lower,
        upper_bounds=upper,
    )


def exact_metrics(
    fields: Sequence[DataField], values: Sequence[Any], read_fields: Mapping[int, NestedField], path: str
) -> DataFile:
    """One row's values (a partition) as the metrics of a one-row file: each field's
    bounds are its value, its null count 1 when null."""
    lower: dict[int, bytes] = {}
    nulls: dict[int, int] = {}
    for f, v in zip(fields, values, strict=False):
        target = read_fields.get(f.id)
        if target is None:
            continue
        nulls[f.id] = int(v is None)
        t = target.field_type
        if v is None or not isinstance(t, PrimitiveType) or iceberg_type(f.type) != t:
            continue
        try:
            lower[f.id] = to_bytes(t, v)
        except (ValidationError, ValueError, TypeError, OverflowError):
            continue
    counts = dict.fromkeys(nulls, 1)
    return DataFile(
        content=FileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=(),
        record_count=1,
        file_size_in_bytes=0,
        value_counts=counts,
        null_value_counts=nulls,
        lower_bounds=lower,
        upper_bounds=dict(lower),
    )


def value_stats_fields(
    file_fields: Sequence[DataField], stats_cols: Sequence[str] | None, path: str
) -> list[DataField]:
    """The columns a file's ``_VALUE_STATS`` describe: "_VALUE_STATS_COLS: statistical
    columns in metadata", None meaning every column of the file's schema in order and
    an empty list none. A name the file's schema lacks is a corrupt manifest (``path``)."""
    if stats_cols is None:
        return list(file_fields)
    by_name = {f.name: f for f in file_fields}
    missing = [n for n in stats_cols if n not in by_name]
    if missing:
        raise CorruptDataError(f"_VALUE_STATS_COLS names columns its schema lacks: {missing}", path)
    return [by_name[n] for n in stats_cols]
