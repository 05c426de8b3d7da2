"""``files``, ``data_files``, ``delete_files``, ``entries`` and their ``all_`` forms.

Rows as Iceberg Java 1.10's ``BaseFilesTable`` / ``BaseEntriesTable`` produce them:

* the ``files`` family lists the *live* entries' files (``ManifestReader.iterator``); the
  ``entries`` family lists every entry, DELETED ones included (``ManifestReader.entries``);
* ``files``/``entries`` read the manifests of one snapshot (``data_files``/``delete_files``
  only its data or delete manifests); the ``all_`` forms read each distinct manifest (by
  path) reachable from any snapshot once, so a file kept by several manifests repeats;
* ``file_format`` is Java's enum name (``PARQUET``), ``partition`` the file's tuple
  projected into the table's partition type, and ``readable_metrics`` the file's metrics
  per column of the current schema with bounds decoded in the column's current type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from iceduck.errors import CorruptDataError, IceduckError
from iceduck.scan.metadata.partitioning import projectors, table_partition_type
from iceduck.scan.metadata.reader import ManifestSource, snapshot_manifests
from iceduck.scan.metadata.schemas import entries_schema, files_schema, metric_columns
from iceduck.spec import values
from iceduck.spec.manifest import DataFile, ManifestContent, ManifestEntry, ManifestFile
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import IcebergType, PrimitiveType, StructType, UnknownType

Row = tuple[Any, ...]
#: which manifests of a snapshot a table reads
ManifestFilter = Callable[[ManifestFile], bool]


def all_contents(_m: ManifestFile) -> bool:
    return True


def data_only(m: ManifestFile) -> bool:
    return m.content is ManifestContent.DATA


def deletes_only(m: ManifestFile) -> bool:
    return m.content is ManifestContent.DELETES


class FileRows:
    """Turns manifest entries into ``files``/``entries`` rows for one table.

    Built once per metadata-table request: the partition projectors (one per spec) and
    the metric columns are worked out here, not per file.
    """

    def __init__(self, metadata: TableMetadata) -> None:
        self.partition_type = table_partition_type(metadata)
        self.has_partition = bool(self.partition_type.fields)
        self.projectors = projectors(self.partition_type, metadata) if self.has_partition else {}
        self.columns = metric_columns(metadata.schema())
        self.decoders = [_bound_decoder(f.field_type) for _, f in self.columns]

    def files_schema(self) -> StructType:
        return files_schema(self.partition_type, self.columns)

    def entries_schema(self) -> StructType:
        return entries_schema(self.partition_type, self.columns)

    def data_file(self, df: DataFile, manifest_path: str) -> Row:
        """The ``DataFile.getType`` columns of one file."""
        head: Row = (int(df.content), df.file_path, df.file_format.name, df.spec_id)
        if self.has_partition:
            project = self.projectors.get(df.spec_id)
            if project is None:
                raise CorruptDataError(
                    f"file {df.file_path} has partition spec {df.spec_id}, unknown to the table",
                    manifest_path,
                )
            head = (*head, project(df.partition)[1])
        return (
            *head,
            df.record_count,
            df.file_size_in_bytes,
            df.column_sizes,
            df.value_counts,
            df.null_value_counts,
            df.nan_value_counts,
            df.lower_bounds,
            df.upper_bounds,
            df.key_metadata,
            df.split_offsets,
            df.equality_ids,
            df.sort_order_id,
            df.first_row_id,
            df.referenced_data_file,
            df.content_offset,
            df.content_size_in_bytes,
        )

    def readable_metrics(self, df: DataFile, manifest_path: str) -> Row:
        """Per metric column: column size, value/null/NaN counts, lower and upper bound."""
        sizes, counts, nulls, nans = (
            df.column_sizes,
            df.value_counts,
            df.null_value_counts,
            df.nan_value_counts,
        )
        lowers, uppers = df.lower_bounds, df.upper_bounds
        out = []
        try:
            for (_, f), decode in zip(self.columns, self.decoders, strict=True):
                fid = f.field_id
                out.append(
                    (
                        None if sizes is None else sizes.get(fid),
                        None if counts is None else counts.get(fid),
                        None if nulls is None else nulls.get(fid),
                        None if nans is None else nans.get(fid),
                        None if lowers is None else decode(lowers.get(fid)),
                        None if uppers is None else decode(uppers.get(fid)),
                    )
                )
        except IceduckError as e:
            raise CorruptDataError(f"bounds of {df.file_path}: {e}", manifest_path) from e
        return tuple(out)

    def file_row(self, df: DataFile, manifest_path: str) -> Row:
        return (*self.data_file(df, manifest_path), self.readable_metrics(df, manifest_path))

    def entry_row(self, entry: ManifestEntry, manifest_path: str) -> Row:
        df = entry.data_file
        return (
            int(entry.status),
            entry.snapshot_id,
            entry.sequence_number,
            entry.file_sequence_number,
            self.data_file(df, manifest_path),
            self.readable_metrics(df, manifest_path),
        )


def _bound_decoder(t: IcebergType) -> Callable[[bytes | None], Any]:
    """Bounds in the column's current type; bounds written before a promotion (int -> long,
    float -> double, decimal precision) are widened (spec, "Schema Evolution")."""
    if isinstance(t, UnknownType) or not isinstance(t, PrimitiveType):
        return lambda _data: None
    primitive: PrimitiveType = t
    return lambda data: None if data is None else values.bound_from_bytes(primitive, data)


def snapshot_entries(
    metadata: TableMetadata,
    snapshot: Snapshot | None,
    source: ManifestSource,
    which: ManifestFilter,
) -> Iterator[tuple[ManifestFile, list[ManifestEntry]]]:
    """Each chosen manifest of ``snapshot`` with its entries (nothing without a snapshot)."""
    if snapshot is None:
        return
    specs = metadata.specs_by_id()
    for m in snapshot_manifests(snapshot, source, metadata.format_version):
        if which(m):
            yield m, source.manifest(m, specs)


def reachable_entries(
    metadata: TableMetadata, source: ManifestSource, which: ManifestFilter
) -> Iterator[tuple[ManifestFile, list[ManifestEntry]]]:
    """Each distinct chosen manifest reachable from any snapshot, once.

    One manifest can be listed with different inherited values: a table upgraded to v3
    assigns ``first_row_id`` to old manifests in its next manifest list. Java keeps
    whichever row its parallel listing meets first (so Spark's answer varies from run to
    run); iceduck takes the row of the newest list, the one with the ids now in effect.
    """
    specs = metadata.specs_by_id()
    seen: set[str] = set()
    for snapshot in reversed(metadata.snapshots):
        for m in snapshot_manifests(snapshot, source, metadata.format_version):
            if which(m) and m.manifest_path not in seen:
                seen.add(m.manifest_path)
                yield m, source.manifest(m, specs)


def file_rows(builder: FileRows, manifests: Iterable[tuple[ManifestFile, list[ManifestEntry]]]) -> list[Row]:
    """Rows of the ``files`` family: live entries only."""
    return [
        builder.file_row(e.data_file, m.manifest_path)
        for m, entries in manifests
        for e in entries
        if e.is_live
    ]


def entry_rows(builder: FileRows, manifests: Iterable[tuple[ManifestFile, list[ManifestEntry]]]) -> list[Row]:
    """Rows of the ``entries`` family: every entry, DELETED ones included."""
    return [builder.entry_row(e, m.manifest_path) for m, entries in manifests for e in entries]
