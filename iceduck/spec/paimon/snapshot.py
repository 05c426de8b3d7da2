"""A Paimon snapshot (``snapshot/snapshot-<id>``): the manifest lists of one table version.

The snapshot file is JSON (Java ``Snapshot``)::

    {"version": 3, "id": 1, "schemaId": 0, "baseManifestList": "manifest-list-...-0",
     "deltaManifestList": "manifest-list-...-1", "changelogManifestList": null,
     "indexManifest": "index-manifest-...", "commitUser": "...", "commitIdentifier": 9223372036854775807,
     "commitKind": "APPEND", "timeMillis": 1795594975388, "totalRecordCount": 4, ...}

Tags (``tag/tag-<name>``) are snapshot files too (with extra tag fields).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.spec.paimon.fields import opt_int, opt_str, req_int, req_str

#: ``commitKind``: "APPEND", "COMPACT", "OVERWRITE" or "ANALYZE"
COMMIT_KINDS = ("APPEND", "COMPACT", "OVERWRITE", "ANALYZE")


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
    #: ``statistics``: the table statistics file, if any
    statistics: str | None = None
    #: ``nextRowId``: row tracking's next row id, if the table tracks rows
    next_row_id: int | None = None


def snapshot_from_json(obj: dict[str, Any], path: str) -> Snapshot:
    """A snapshot (or tag) file's JSON object; anything malformed raises
    :class:`CorruptDataError` naming ``path``."""
    if not isinstance(obj, dict):
        raise CorruptDataError("a Paimon snapshot file must hold a JSON object", path)
    commit_kind = obj.get("commitKind")
    if not isinstance(commit_kind, str):
        raise CorruptDataError(f"'commitKind' is missing or not a string: {commit_kind!r}", path)
    commit_user = obj.get("commitUser", "")
    return Snapshot(
        id=req_int(obj, "id", path),
        schema_id=req_int(obj, "schemaId", path),
        base_manifest_list=req_str(obj, "baseManifestList", path),
        delta_manifest_list=req_str(obj, "deltaManifestList", path),
        commit_user=commit_user if isinstance(commit_user, str) else "",
        commit_identifier=opt_int(obj, "commitIdentifier", path) or 0,
        commit_kind=commit_kind,
        time_millis=req_int(obj, "timeMillis", path),
        changelog_manifest_list=opt_str(obj, "changelogManifestList", path),
        index_manifest=opt_str(obj, "indexManifest", path),
        total_record_count=opt_int(obj, "totalRecordCount", path),
        delta_record_count=opt_int(obj, "deltaRecordCount", path),
        changelog_record_count=opt_int(obj, "changelogRecordCount", path),
        watermark=opt_int(obj, "watermark", path),
        version=opt_int(obj, "version", path) or 1,
        statistics=opt_str(obj, "statistics", path),
        next_row_id=opt_int(obj, "nextRowId", path),
    )
