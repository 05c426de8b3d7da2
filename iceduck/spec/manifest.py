"""Manifest lists, manifests and their entries (spec: "Manifests", "Manifest Lists").

These are the rows of the metadata index that scan planning walks: a snapshot's
manifest list holds :class:`ManifestFile` rows (with partition summaries), each
manifest holds :class:`ManifestEntry` rows wrapping a :class:`DataFile` (partition
tuple and column metrics).

Values after reading are *resolved*: ``iceduck.formats.manifests`` applies sequence
number and first-row-id inheritance, so ``ManifestEntry.sequence_number`` is the data
sequence number in effect, never ``None`` for live entries of a committed snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any


class FileContent(IntEnum):
    """``content`` of a data_file: 0 DATA, 1 POSITION_DELETES, 2 EQUALITY_DELETES."""

    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


class ManifestContent(IntEnum):
    """``content`` of a manifest_file: 0 data, 1 deletes."""

    DATA = 0
    DELETES = 1


class EntryStatus(IntEnum):
    """ "Used to track additions and deletions. Deletes are informational only and not used in scans."""

    EXISTING = 0
    ADDED = 1
    DELETED = 2


class FileFormat(Enum):
    AVRO = "avro"
    ORC = "orc"
    PARQUET = "parquet"
    PUFFIN = "puffin"

    @classmethod
    def parse(cls, text: str) -> FileFormat:
        return cls(text.lower())


@dataclass
class DataFile:
    """The ``data_file`` struct (field ids 100-145): a data or delete file and its metrics.

    ``partition`` is the partition tuple in the manifest's spec field order (Python
    values in the representation of ``iceduck.spec.types``). Metric maps are keyed by
    field id; bounds stay serialized (Appendix D bytes) because most are never decoded
    -- evaluators decode only the bounds of the columns a predicate touches.
    """

    content: FileContent
    file_path: str
    file_format: FileFormat
    partition: tuple[Any, ...]
    record_count: int
    file_size_in_bytes: int
    column_sizes: dict[int, int] | None = None
    value_counts: dict[int, int] | None = None
    null_value_counts: dict[int, int] | None = None
    nan_value_counts: dict[int, int] | None = None
    lower_bounds: dict[int, bytes] | None = None
    upper_bounds: dict[int, bytes] | None = None
    key_metadata: bytes | None = None
    split_offsets: list[int] | None = None
    equality_ids: list[int] | None = None
    sort_order_id: int | None = None
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    #: the partition spec the file was written with (the manifest's ``partition-spec-id``)
    spec_id: int = 0
    #: deprecated v1 fields, carried through so rewritten v1 manifests keep them
    block_size_in_bytes: int | None = None
    distinct_counts: dict[int, int] | None = None


@dataclass
class ManifestEntry:
    """The ``manifest_entry`` struct: status and the snapshot/sequence numbers of a file."""

    status: EntryStatus
    snapshot_id: int | None
    data_file: DataFile
    #: data sequence number (field 3); inherited when null and status is ADDED
    sequence_number: int | None = None
    #: file sequence number (field 4)
    file_sequence_number: int | None = None

    @property
    def is_live(self) -> bool:
        return self.status is not EntryStatus.DELETED


@dataclass(frozen=True)
class FieldSummary:
    """``field_summary`` (508): partition-value summary of one partition field."""

    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None


@dataclass
class ManifestFile:
    """A ``manifest_file`` row of a manifest list (field ids 500-520)."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: ManifestContent = ManifestContent.DATA
    sequence_number: int = 0
    min_sequence_number: int = 0
    added_snapshot_id: int = 0
    added_files_count: int | None = None
    existing_files_count: int | None = None
    deleted_files_count: int | None = None
    added_rows_count: int | None = None
    existing_rows_count: int | None = None
    deleted_rows_count: int | None = None
    partitions: list[FieldSummary] | None = field(default=None)
    key_metadata: bytes | None = None
    first_row_id: int | None = None

    def has_added_files(self) -> bool:
        """ "when null is assumed to be non-zero" -- unknown counts never skip a manifest."""
        return self.added_files_count is None or self.added_files_count > 0

    def has_existing_files(self) -> bool:
        return self.existing_files_count is None or self.existing_files_count > 0

    def has_deleted_files(self) -> bool:
        return self.deleted_files_count is None or self.deleted_files_count > 0
