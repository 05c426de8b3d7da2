"""A Paimon table folder's JSON files: snapshots, schemas, tags and the snapshot hints.

``snapshot/snapshot-<id>`` and ``schema/schema-<id>`` are JSON (:mod:`iceduck.spec.paimon.snapshot`,
:mod:`iceduck.spec.paimon.schema`); ``tag/tag-<name>`` is a snapshot file kept under a
name. ``snapshot/LATEST`` and ``snapshot/EARLIEST`` hold a snapshot id as text; they are
hints only, written after the snapshot, so they are checked the way Java's
``SnapshotManager`` checks them (``findLatest``/``findEarliest``): LATEST is believed when
no snapshot ``LATEST + 1`` exists, EARLIEST when its snapshot exists; otherwise, or when a
hint is missing or unreadable, the snapshot folder is listed.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from iceduck.errors import CorruptDataError, NotFoundError
from iceduck.formats.paimon.paths import table_path
from iceduck.io.fileio import MissingFileError, exists, read_bytes
from iceduck.io.listing import list_children
from iceduck.spec.paimon.schema import TableSchema, schema_from_json
from iceduck.spec.paimon.snapshot import Snapshot, snapshot_from_json

SNAPSHOT_PREFIX = "snapshot-"
SCHEMA_PREFIX = "schema-"
TAG_PREFIX = "tag-"


def snapshot_path(table: str, snapshot_id: int) -> str:
    return table_path(table, "snapshot", f"{SNAPSHOT_PREFIX}{snapshot_id}")


def schema_path(table: str, schema_id: int) -> str:
    return table_path(table, "schema", f"{SCHEMA_PREFIX}{schema_id}")


def tag_path(table: str, name: str) -> str:
    return table_path(table, "tag", f"{TAG_PREFIX}{name}")


def read_json(location: str) -> Any:
    """A JSON file's value; unreadable text raises :class:`CorruptDataError` naming it."""
    data = read_bytes(location)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CorruptDataError(f"not UTF-8 text: {e}", location) from None
    except json.JSONDecodeError as e:
        raise CorruptDataError(
            f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}", location
        ) from None


def read_snapshot(table: str, snapshot_id: int) -> Snapshot:
    """Snapshot ``snapshot_id``; :class:`NotFoundError` when the table has no such snapshot
    (never written, or expired)."""
    location = snapshot_path(table, snapshot_id)
    try:
        obj = read_json(location)
    except MissingFileError:
        raise NotFoundError(f"Paimon snapshot {snapshot_id} does not exist ({location})") from None
    snapshot = snapshot_from_json(obj, location)
    if snapshot.id != snapshot_id:
        raise CorruptDataError(f"the file of snapshot {snapshot_id} holds snapshot {snapshot.id}", location)
    return snapshot


def read_schema(table: str, schema_id: int) -> TableSchema:
    """Schema ``schema_id``; a missing one is the table's fault (a snapshot or a data
    file names it): :class:`~iceduck.io.fileio.MissingFileError` naming the file."""
    location = schema_path(table, schema_id)
    schema = schema_from_json(read_json(location), location)
    if schema.id != schema_id:
        raise CorruptDataError(f"the file of schema {schema_id} holds schema {schema.id}", location)
    return schema


def read_tag(table: str, name: str) -> Snapshot:
    """The snapshot tagged ``name``; :class:`NotFoundError` when there is no such tag."""
    location = tag_path(table, name)
    try:
        obj = read_json(location)
    except MissingFileError:
        raise NotFoundError(f"Paimon tag {name!r} does not exist ({location})") from None
    return snapshot_from_json(obj, location)


def _numbered(table: str, folder: str, prefix: str) -> list[int]:
    ids = []
    for location in list_children(table_path(table, folder))[0]:
        name = posixpath.basename(location.replace("\\", "/"))
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            ids.append(int(name[len(prefix) :]))
    return sorted(ids)


def snapshot_ids(table: str) -> list[int]:
    """The ids of every snapshot file, ascending (by listing the snapshot folder)."""
    return _numbered(table, "snapshot", SNAPSHOT_PREFIX)


def schema_ids(table: str) -> list[int]:
    """The ids of every schema file, ascending."""
    return _numbered(table, "schema", SCHEMA_PREFIX)


def tag_names(table: str) -> list[str]:
    """The names of the table's tags, sorted."""
    names = []
    for location in list_children(table_path(table, "tag"))[0]:
        name = posixpath.basename(location.replace("\\", "/"))
        if name.startswith(TAG_PREFIX) and len(name) > len(TAG_PREFIX):
            names.append(name[len(TAG_PREFIX) :])
    return sorted(names)


def _hint(table: str, name: str) -> int | None:
    """The id in ``snapshot/<name>``, or None when it is missing or unreadable (Java's
    ``readHint`` ignores such a hint too)."""
    try:
        text = read_bytes(table_path(table, "snapshot", name)).decode("utf-8").strip()
    except (MissingFileError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def latest_snapshot_id(table: str) -> int | None:
    """The newest snapshot's id, or None for a table without snapshots."""
    hint = _hint(table, "LATEST")
    if hint is not None and hint > 0 and not exists(snapshot_path(table, hint + 1)):
        if exists(snapshot_path(table, hint)):
            return hint
    ids = snapshot_ids(table)
    return ids[-1] if ids else None


def earliest_snapshot_id(table: str) -> int | None:
    """The oldest snapshot's id still present, or None for a table without snapshots."""
    hint = _hint(table, "EARLIEST")
    if hint is not None and exists(snapshot_path(table, hint)):
        return hint
    ids = snapshot_ids(table)
    return ids[0] if ids else None


def latest_snapshot(table: str) -> Snapshot | None:
    """The newest snapshot, or None for a table without snapshots."""
    snapshot_id = latest_snapshot_id(table)
    return None if snapshot_id is None else read_snapshot(table, snapshot_id)


def snapshot_at_or_before(table: str, time_millis: int) -> Snapshot | None:
    """The newest snapshot committed at or before ``time_millis`` (epoch milliseconds),
    or None when every snapshot is younger (Java ``SnapshotManager.earlierOrEqualTimeMills``:
    a binary search over the ids between EARLIEST and LATEST, whose times ascend)."""
    low, high = earliest_snapshot_id(table), latest_snapshot_id(table)
    if low is None or high is None:
        return None
    found: Snapshot | None = None
    while low <= high:
        middle = (low + high) // 2
        snapshot = read_snapshot(table, middle)
        if snapshot.time_millis <= time_millis:
            found, low = snapshot, middle + 1
        else:
            high = middle - 1
    return found


def is_paimon_table(location: str) -> bool:
    """Whether ``location`` is a Paimon table folder: it has a ``schema/schema-<id>`` file."""
    return bool(_numbered(location, "schema", SCHEMA_PREFIX))
