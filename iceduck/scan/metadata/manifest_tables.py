"""``manifests`` and ``all_manifests``: one row per manifest of a manifest list.

As Iceberg Java's ``ManifestsTable.manifestFileToRow``: file counts go to the ``*_data_*``
or the ``*_delete_*`` columns by the manifest's content (0 in the other three), and each
partition summary's bounds are shown as the partition value's human string
(``Transform.toHumanString``, the text of partition paths) decoded with the type the
table's spec gives that field -- ``"null"`` when the bound is absent, as Java prints it.
"""

from __future__ import annotations

from typing import Any

from iceduck.errors import CorruptDataError, IceduckError
from iceduck.scan.metadata.reader import ManifestSource, snapshot_manifests
from iceduck.spec import values
from iceduck.spec.manifest import ManifestContent, ManifestFile
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import IcebergType, PrimitiveType, UnknownType

Row = tuple[Any, ...]


def manifest_row(manifest: ManifestFile, spec: PartitionSpec | None, schema: Schema) -> Row:
    """The ``manifests`` row of one manifest-list entry."""
    is_data = manifest.content is ManifestContent.DATA
    counts = (manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count)
    zeros = (0, 0, 0)
    return (
        int(manifest.content),
        manifest.manifest_path,
        manifest.manifest_length,
        manifest.partition_spec_id,
        manifest.added_snapshot_id,
        *(counts if is_data else zeros),
        *(zeros if is_data else counts),
        summaries(manifest, spec, schema),
    )


def summaries(manifest: ManifestFile, spec: PartitionSpec | None, schema: Schema) -> list[Row] | None:
    """``partition_summaries``: (contains_null, contains_nan, lower, upper) per spec field."""
    if manifest.partitions is None:
        return None
    if spec is None:
        raise CorruptDataError(
            f"manifest {manifest.manifest_path} uses partition spec {manifest.partition_spec_id}, "
            "which the table metadata does not define"
        )
    types = [f.field_type for f in spec.partition_type(schema).fields]
    if len(types) < len(manifest.partitions):
        raise CorruptDataError(
            f"manifest has {len(manifest.partitions)} partition summaries but spec "
            f"{spec.spec_id} has {len(types)} fields",
            manifest.manifest_path,
        )
    rows = []
    for i, summary in enumerate(manifest.partitions):
        transform = spec.fields[i].transform
        lower = _human(transform, types[i], summary.lower_bound, manifest)
        upper = _human(transform, types[i], summary.upper_bound, manifest)
        rows.append((summary.contains_null, summary.contains_nan, lower, upper))
    return rows


def _human(transform: Any, t: IcebergType, bound: bytes | None, manifest: ManifestFile) -> str | None:
    if isinstance(t, UnknownType) or not isinstance(t, PrimitiveType):
        # Java's Conversions yields null for unknown types; the human string of null is "null"
        return transform.to_human_string(t, None)
    try:
        value = None if bound is None else values.bound_from_bytes(t, bound)
    except IceduckError as e:
        raise CorruptDataError(f"partition summary bound of type {t}: {e}", manifest.manifest_path) from e
    return transform.to_human_string(t, value)


def manifests_rows(metadata: TableMetadata, snapshot: Snapshot | None, source: ManifestSource) -> list[Row]:
    """``manifests``: the manifests of one snapshot (none for a table without snapshots)."""
    if snapshot is None:
        return []
    specs, schema = metadata.specs_by_id(), metadata.schema()
    return [
        manifest_row(m, specs.get(m.partition_spec_id), schema)
        for m in snapshot_manifests(snapshot, source, metadata.format_version)
    ]


def all_manifests_rows(metadata: TableMetadata, source: ManifestSource) -> list[Row]:
    """``all_manifests``: the manifests of every snapshot, each row with the snapshot whose
    list it came from (``reference_snapshot_id``), so shared manifests repeat."""
    specs, schema = metadata.specs_by_id(), metadata.schema()
    rows = []
    for snapshot in metadata.snapshots:
        for m in snapshot_manifests(snapshot, source, metadata.format_version):
            rows.append((*manifest_row(m, specs.get(m.partition_spec_id), schema), snapshot.snapshot_id))
    return rows
