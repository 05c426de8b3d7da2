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
        id=_int(obj, "id", path),
        schema_id=_int(obj, "schemaId", path),
        base_manifest_list=_str(obj, "baseManifestList", path),
        delta_manifest_list=_str(obj, "deltaManifestList", path),
        commit_user=commit_user if isinstance(commit_user, str) else "",
        commit_identifier=_opt_int(obj, "commitIdentifier", path) or 0,
        commit_kind=commit_kind,
        time_millis=_int(obj, "timeMillis", path),
        changelog_manifest_list=_opt_str(obj, "changelogManifestList", path),
        index_manifest=_opt_str(obj, "indexManifest", path),
        total_record_count=_opt_int(obj, "totalRecordCount", path),
        delta_record_count=_opt_int(obj, "deltaRecordCount", path),
        changelog_record_count=_opt_int(obj, "changelogRecordCount", path),
        watermark=_opt_int(obj, "watermark", path),
        version=_opt_int(obj, "version", path) or 1,
        statistics=_opt_str(obj, "statistics", path),
        next_row_id=_opt_int(obj, "nextRowId", path),
    )


def _int(obj: dict[str, Any], key: str, path: str) -> int:
    value = _opt_int(obj, key, path)
    if value is None:
        raise CorruptDataError(f"{key!r} is missing", path)
    return value


def _opt_int(obj: dict[str, Any], key: str, path: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise CorruptDataError(f"{key!r} is not an integer: {value!r}", path)
    return value


def _str(obj: dict[str, Any], key: str, path: str) -> str:
    value = _opt_str(obj, key, path)
    if not value:
        raise CorruptDataError(f"{key!r} is missing", path)
    return value


def _opt_str(obj: dict[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise CorruptDataError(f"{key!r} is not a string: {value!r}", path)
    return value
