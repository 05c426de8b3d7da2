"""Partition field summaries of a manifest (the ``partitions`` list of a manifest list row).

Spec, "Manifest Lists": ``field_summary`` holds ``contains_null``, ``contains_nan`` and
"Lower bound for the non-null, non-NaN values in the partition field, or null if all
values are null or NaN", bounds "serialized to bytes using the single-object
serialization in Appendix D. The type of used to encode the value is the type of the
partition field data." Note 2: "If ``-0.0`` is a value of the partition field, the
``lower_bound`` must not be ``+0.0``, and if ``+0.0`` is a value of the partition field,
the ``upper_bound`` must not be ``-0.0``" -- :func:`iceduck.spec.values.sort_key` orders
``-0.0`` before ``+0.0``, so min/max pick the right zero.

Like Java's ``PartitionSummary``, every entry counts (deleted ones too) and
``contains_nan`` is written ``false`` for types that have no NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from iceduck.spec import values
from iceduck.spec.manifest import FieldSummary
from iceduck.spec.types import (
    DoubleType,
    FloatType,
    IcebergType,
    PrimitiveType,
    StructType,
    UnknownType,
    UUIDType,
)


def field_summaries(partition_type: StructType, tuples: Iterable[Sequence[Any]]) -> list[FieldSummary]:
    """One summary per partition field over the partition tuples of a manifest's entries."""
    rows = list(tuples)
    return [
        field_summary(f.field_type, [row[i] for row in rows]) for i, f in enumerate(partition_type.fields)
    ]


def field_summary(t: IcebergType, column: Sequence[Any]) -> FieldSummary:
    """The summary of one partition field's values (``None`` = null)."""
    contains_null = any(v is None for v in column)
    present = [v for v in column if v is not None]
    contains_nan = False
    if isinstance(t, FloatType | DoubleType):
        contains_nan = any(math.isnan(v) for v in present)
        present = [v for v in present if not math.isnan(v)]
    if not present or isinstance(t, UnknownType) or not isinstance(t, PrimitiveType):
        return FieldSummary(contains_null, contains_nan, None, None)
    lower = min(present, key=lambda v: values.sort_key(t, v))
    upper = max(present, key=lambda v: values.sort_key(t, v))
    if isinstance(t, UUIDType) and not _uuid_orders_agree(present, lower, upper):
        # Iceberg Java <= 1.10 orders UUIDs by signed 64-bit halves, the spec by unsigned
        # bytes. Bounds valid in one order can make the other prune wrongly; the bounds
        # are optional, so leave them out when the two orders disagree.
        return FieldSummary(contains_null, contains_nan, None, None)
    return FieldSummary(contains_null, contains_nan, values.to_bytes(t, lower), values.to_bytes(t, upper))


def _uuid_orders_agree(present: list[Any], lower: Any, upper: Any) -> bool:
    signed_lower = min(present, key=values.uuid_signed_sort_key)
    signed_upper = max(present, key=values.uuid_signed_sort_key)
    return signed_lower == lower and signed_upper == upper
