"""Partition specs (spec: "Partitioning", "Partition Evolution", Appendix C).

"A partition spec has a list of fields that consist of: a source column id or a list of
source column ids from the table's schema, a partition field id that is used to
identify a partition field and is unique within a partition spec, a transform, and a
partition name."
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote_plus

from iceduck.errors import UnsupportedError
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
)
from iceduck.spec.types import IcebergType, NestedField, StructType, UnknownType

#: "In v1, partition field IDs were not tracked, but were assigned sequentially starting
#: at 1000 in the reference implementation."
PARTITION_DATA_ID_START = 1000
UNPARTITIONED_LAST_ASSIGNED_ID = 999


@dataclass(frozen=True)
class PartitionField:
    source_id: int
    field_id: int
    name: str
    transform: Transform
    #: v3 multi-argument transforms list their sources here (then ``source_id`` is the first)
    source_ids: tuple[int, ...] | None = None

    @property
    def all_source_ids(self) -> tuple[int, ...]:
        return self.source_ids if self.source_ids is not None else (self.source_id,)


@dataclass(frozen=True)
class PartitionSpec:
    spec_id: int = 0
    fields: tuple[PartitionField, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))

    @property
    def is_unpartitioned(self) -> bool:
        """True when no field partitions data (void fields do not)."""
        return all(f.transform.is_void for f in self.fields)

    @property
    def last_assigned_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=UNPARTITIONED_LAST_ASSIGNED_ID)

    def partition_type(self, schema: Schema) -> StructType:
        """The struct of partition tuples: one optional field per partition field.

        Field ids are the partition field ids ("In v2, the partition struct's field ids
        must match the ids from the partition spec").
        """
        out = []
        for f in self.fields:
            source = schema.find_field_or_none(f.source_id)
            if source is None:
                # The source column was dropped since: the tuple type is unknowable from
                # the schema (readers take it from the manifest's own Avro schema).
                result: IcebergType = UnknownType()
            elif isinstance(f.transform, UnknownTransform):
                result = source.field_type
            else:
                result = f.transform.result_type(source.field_type)
            out.append(NestedField(f.field_id, f.name, result, required=False))
        return StructType(tuple(out))

    def compatible_with(self, other: PartitionSpec) -> bool:
        """Spec equivalence: same number of fields, and for each the same sources,
        transform and name (ids may differ)."""
        if len(self.fields) != len(other.fields):
            return False
        return all(
            a.all_source_ids == b.all_source_ids and str(a.transform) == str(b.transform) and a.name == b.name
            for a, b in zip(self.fields, other.fields, strict=True)
        )


UNPARTITIONED = PartitionSpec(0, ())


def escape_path_segment(text: str) -> str:
    """Java's ``URLEncoder.encode(text, UTF_8)``, which ``PartitionSpec.partitionToPath``
    applies to field names and values: letters, digits and ``.-*_`` kept, space as ``+``,
    everything else as ``%XX`` of its UTF-8 bytes (so the result is always ASCII)."""
    return quote_plus(text, safe="*").replace("~", "%7E")


def partition_path_segments(spec: PartitionSpec, schema: Schema, partition: tuple) -> list[str]:
    """``name=value`` per partition field, exactly as Java's ``PartitionSpec.partitionToPath``
    joins them with ``/``: the escaped field name, ``=``, and the escaped
    ``Transform.toHumanString`` of the value (for the partition type's field, so a dropped
    source column still prints). Java bounds nothing: a long value gives a long segment.

    The path is only a label: "The ``partition`` struct stores the tuple of partition
    values for each file" (spec, "Manifests"), and no Iceberg reader parses it back.
    """
    types = spec.partition_type(schema).fields
    return [
        f"{escape_path_segment(pf.name)}={escape_path_segment(pf.transform.to_human_string(t.field_type, v))}"
        for pf, t, v in zip(spec.fields, types, partition, strict=True)
    ]


_TIME_SUFFIX: dict[type[Transform], str] = {
    YearTransform: "year",
    MonthTransform: "month",
    DayTransform: "day",
    HourTransform: "hour",
}


def partition_name(source_name: str, transform: Transform, *, with_parameter: bool) -> str:
    """The default name of a partition field (Java ``PartitionSpec.Builder`` when
    ``with_parameter`` is false, ``PartitionNameGenerator`` of ALTER when true)."""
    if isinstance(transform, IdentityTransform):
        return source_name
    if isinstance(transform, BucketTransform):
        return f"{source_name}_bucket" + (f"_{transform.num_buckets}" if with_parameter else "")
    if isinstance(transform, TruncateTransform):
        return f"{source_name}_trunc" + (f"_{transform.width}" if with_parameter else "")
    if isinstance(transform, VoidTransform):
        return f"{source_name}_null"
    suffix = _TIME_SUFFIX.get(type(transform))
    if suffix is None:
        raise UnsupportedError(f"cannot partition by unknown transform {transform}")
    return f"{source_name}_{suffix}"
