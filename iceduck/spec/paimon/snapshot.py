"""A Paimon snapshot (``snapshot/snapshot-<id>``): the manifest lists of one table version."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Snapshot:
    """One snapshot file. The table's files are the entries of ``base_manifest_list``
    followed by those of ``delta_manifest_list``, merged in that order; the index
    manifest (deletion vectors, hash indexes) is a separate file, or None."""

    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: str
    time_millis: int
    changelog_manifest_list: str | None = None
    index_manifest: str | None = None
    total_record_count: int | None = None
    delta_record_count: int | None = None
    changelog_record_count: int | None = None
    watermark: int | None = None
    version: int = 3
