"""Snapshots, refs, logs and statistics records of table metadata.

Spec sections: "Snapshots", "Snapshot Row IDs", "Snapshot References", "Table
Statistics", "Partition Statistics", "Encryption Keys", Appendix F (summary fields).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

MAIN_BRANCH = "main"


class Operation(Enum):
    """The snapshot summary's required ``operation`` field."""

    APPEND = "append"
    REPLACE = "replace"
    OVERWRITE = "overwrite"
    DELETE = "delete"


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    timestamp_ms: int
    #: "A string map that summarizes the snapshot changes, including operation"
    summary: dict[str, str] = field(default_factory=dict, hash=False)
    parent_snapshot_id: int | None = None
    #: v1 tables read without a sequence number use 0 (Appendix E)
    sequence_number: int = 0
    manifest_list: str | None = None
    #: v1 only: manifest locations listed directly instead of a manifest list
    manifests: tuple[str, ...] | None = None
    schema_id: int | None = None
    #: v3 row lineage
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None

    @property
    def operation(self) -> str | None:
        return self.summary.get("operation")


class RefType(Enum):
    BRANCH = "branch"
    TAG = "tag"


@dataclass(frozen=True)
class SnapshotRef:
    snapshot_id: int
    type: RefType
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    @property
    def is_branch(self) -> bool:
        return self.type is RefType.BRANCH


@dataclass(frozen=True)
class SnapshotLogEntry:
    timestamp_ms: int
    snapshot_id: int


@dataclass(frozen=True)
class MetadataLogEntry:
    timestamp_ms: int
    metadata_file: str


@dataclass(frozen=True)
class StatisticsBlobMetadata:
    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: dict[str, str] | None = field(default=None, hash=False)


@dataclass(frozen=True)
class StatisticsFile:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[StatisticsBlobMetadata, ...] = ()
    key_metadata: str | None = None


@dataclass(frozen=True)
class PartitionStatisticsFile:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int


@dataclass(frozen=True)
class EncryptedKey:
    """An entry of v3 ``encryption-keys``: carried through, never interpreted."""

    key_id: str
    encrypted_key_metadata: str
    encrypted_by_id: str | None = None
    properties: dict[str, str] | None = field(default=None, hash=False)
