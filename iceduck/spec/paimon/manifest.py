"""Paimon manifest lists, data manifests and index manifests, as records (seed 004).

A manifest list holds :class:`ManifestFileMeta` rows; a data manifest holds
:class:`ManifestEntry` rows, each adding or deleting one :class:`DataFileMeta`; an index
manifest holds :class:`IndexManifestEntry` rows (hash indexes and deletion-vector files).
Partition values, keys and statistics stay as BinaryRow bytes
(:mod:`iceduck.spec.paimon.binary_row` decodes the ones planning needs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from iceduck.errors import CorruptDataError


class FileKind(IntEnum):
    """``_KIND``: "ADD or DELETE"."""

    ADD = 0
    DELETE = 1


@dataclass(frozen=True)
class SimpleStats:
    """ "_MIN_VALUES: BYTES -- BinaryRow; the minimum values of the columns. _MAX_VALUES:
    BYTES -- BinaryRow; the maximum values of the columns. _NULL_COUNTS: ARRAY<BIGINT>"."""

    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...] | None


@dataclass(frozen=True)
class ManifestFileMeta:
    """A manifest list row: one manifest file and its partition statistics."""

    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    #: row tracking: the first and last row id of the manifest's files
    min_row_id: int | None = None
    max_row_id: int | None = None


@dataclass(frozen=True)
class DataFileMeta:
    """``_FILE``: one data file of a manifest entry."""

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...] = ()
    creation_time_ms: int | None = None
    delete_row_count: int | None = None
    embedded_index: bytes | None = None
    file_source: int | None = None
    #: "_VALUE_STATS_COLS: statistical columns in metadata": None means every column
    #: of the file's schema, in order; an empty tuple means none
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ManifestEntry:
    """A data manifest row: ``_KIND``, ``_PARTITION`` (BinaryRow), ``_BUCKET``,
    ``_TOTAL_BUCKETS`` and ``_FILE``."""

    kind: FileKind
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    @property
    def identifier(self) -> tuple[object, ...]:
        """What ADD and DELETE entries of one file share (Paimon's ``FileEntry.Identifier``):
        a compaction that only moves a file up a level deletes it at the old level and
        adds it at the new one, so the level is part of it."""
        f = self.file
        return (
            self.partition,
            self.bucket,
            f.level,
            f.file_name,
            f.extra_files,
            f.embedded_index,
            f.external_path,
        )


@dataclass(frozen=True)
class DeletionVectorRange:
    """Where one data file's deletion vector lies in a deletion-vector index file:
    ``f0`` the data file, ``f1`` the offset, ``f2`` the length, ``_CARDINALITY``."""

    data_file: str
    offset: int
    length: int
    cardinality: int | None


@dataclass(frozen=True)
class IndexManifestEntry:
    """An index manifest row: ``_KIND``, ``_PARTITION``, ``_BUCKET``, ``_INDEX_TYPE``
    (``HASH`` or ``DELETION_VECTORS``), the index file, and for deletion vectors the
    ranges of each data file's vector in it."""

    kind: FileKind
    partition: bytes
    bucket: int
    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorRange, ...] | None = None
    external_path: str | None = None


def merge_entries(entries: Iterable[ManifestEntry], path_hint: str = "") -> list[ManifestEntry]:
    """ADD and DELETE entries merged in order, as Java's ``FileEntry.mergeEntries``.

    Seed 004: "the same file may be added or deleted multiple times. The last version
    should be read." An ADD records the file under its :attr:`ManifestEntry.identifier`;
    a DELETE of a file added before removes both ("each dataFile will only be added once
    and deleted once"); a DELETE of a file not seen yet is kept, because its ADD lies in
    an earlier manifest the caller has not merged in. Adding a file that is already
    there breaks that rule: :class:`CorruptDataError` naming ``path_hint``.

    After merging a snapshot's base and delta manifest lists in full, the entries that
    are still ADDs are the table's live files (:func:`live_files`).
    """
    merged: dict[tuple[object, ...], ManifestEntry] = {}
    for entry in entries:
        key = entry.identifier
        if entry.kind == FileKind.ADD:
            if key in merged:
                raise CorruptDataError(
                    f"data file {entry.file.file_name} (bucket {entry.bucket}, level {entry.file.level}) "
                    "is added twice",
                    path_hint or None,
                )
            merged[key] = entry
        elif key in merged:
            del merged[key]
        else:
            merged[key] = entry
    return list(merged.values())


def live_files(entries: Iterable[ManifestEntry], path_hint: str = "") -> list[ManifestEntry]:
    """The ADD entries left after :func:`merge_entries` of a full read (base + delta)."""
    return [e for e in merge_entries(entries, path_hint) if e.kind == FileKind.ADD]


def merge_index_entries(entries: Iterable[IndexManifestEntry]) -> list[IndexManifestEntry]:
    """Index manifest entries merged in order (Java ``IndexManifestFileHandler``): a DELETE
    removes the ADD of the same index file of the same partition and bucket."""
    merged: dict[tuple[object, ...], IndexManifestEntry] = {}
    for entry in entries:
        key = (entry.partition, entry.bucket, entry.index_type, entry.file_name)
        if entry.kind == FileKind.ADD:
            merged[key] = entry
        else:
            merged.pop(key, None)
    return list(merged.values())
