"""The table-wide partition type of metadata tables, and files' tuples projected into it.

A table whose partitioning evolved has files under several specs, but ``files``,
``entries`` and ``partitions`` show one ``partition`` struct. As Iceberg Java's
``Partitioning.partitionType``: it holds every partition field of every spec whose source
column is still in the current schema, ordered by partition field id, each named as in the
newest spec that has it and typed by that spec's transform -- except that a v1 ``void``
field (how v1 drops a partition field) takes the type of a non-void spec with the same id.
A file's tuple is projected into it by partition field id; fields its spec lacks are null.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iceduck.errors import UnsupportedError
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import IcebergType, NestedField, StructType


def table_partition_type(metadata: TableMetadata) -> StructType:
    """The union of all specs' partition fields (module docstring)."""
    schema = metadata.schema()
    specs = sorted(metadata.partition_specs, key=lambda s: s.spec_id, reverse=True)
    unknown = [str(f.transform) for s in specs for f in s.fields if f.transform.is_unknown]
    if unknown:
        raise UnsupportedError(f"cannot build the table's partition type: unknown transforms {unknown}")
    chosen: dict[int, tuple[PartitionField, str, IcebergType]] = {}
    for spec in specs:
        partition_type = spec.partition_type(schema)
        for pf, struct_field in zip(spec.fields, partition_type.fields, strict=True):
            if schema.find_field_or_none(pf.source_id) is None:
                continue  # the source column was dropped: not an active field
            existing = chosen.get(pf.field_id)
            if existing is None:
                chosen[pf.field_id] = (pf, struct_field.name, struct_field.field_type)
            elif existing[0].transform.is_void and not pf.transform.is_void:
                # "use the correct type for dropped partitions in v1 tables"; keep the newer name
                chosen[pf.field_id] = (pf, existing[1], struct_field.field_type)
    return StructType(
        tuple(NestedField(fid, name, t, required=False) for fid, (_, name, t) in sorted(chosen.items()))
    )


#: a file's partition tuple -> (number of table partition fields its spec has, projected tuple)
Projector = Callable[[tuple[Any, ...]], tuple[int, tuple[Any, ...]]]


def projector(table_type: StructType, spec: PartitionSpec) -> Projector:
    """Project tuples of ``spec`` into ``table_type`` by partition field id.

    The count of projected fields is part of Java's grouping key in ``partitions``
    (``StructProjection.projectedFields``): files of an unpartitioned spec and files whose
    spec has a field that happened to be null are different partitions.
    """
    positions = {pf.field_id: i for i, pf in enumerate(spec.fields)}
    index = [positions.get(f.field_id) for f in table_type.fields]
    count = sum(i is not None for i in index)

    def project(partition: tuple[Any, ...]) -> tuple[int, tuple[Any, ...]]:
        return count, tuple(None if i is None else partition[i] for i in index)

    return project


def projectors(table_type: StructType, metadata: TableMetadata) -> dict[int, Projector]:
    """One projector per spec id: built once per table, applied per file."""
    return {spec.spec_id: projector(table_type, spec) for spec in metadata.partition_specs}
