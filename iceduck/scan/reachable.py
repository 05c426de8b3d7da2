"""The files a set of snapshots reaches, by kind: what snapshot expiry may delete and what
orphan-file removal must keep.

Java's ``ReachableFileCleanup`` decides what an expiry deletes by comparing the files the
table reached before the commit with the files its retained snapshots still reach. This
module is that walk: for each snapshot, its manifest list (v1: the manifests it lists
itself), every manifest in it, and every file those manifests name, plus the statistics
and partition-statistics files of the snapshots.

Deleted entries. A manifest entry with status DELETED records that its snapshot removed
the file; the spec: "Deletes are informational only and not used in scans". No scan of
the snapshot reads it, so it does not keep a file (``live_only``, Java's cleanup reads
only live entries); a walk of what may be deleted or of what orphan removal must keep
takes every entry.

Locations are compared by their local path (:func:`~iceduck.io.fileio.to_local_path`):
Spark writes ``file:/a/b`` where iceduck may write ``/a/b``, and both name the same file.
Object-store locations by their canonical form: ``s3a://b/k`` and ``s3n://b/k`` are
``s3://b/k`` (Hadoop's names of one S3), compared key for key (an S3 key is not a path:
``a//b`` is not ``a/b``).
Each kind maps that key to the location as written, so a file is deleted under the name
the metadata gives it.

Strictness. A walk of what must be *kept* cannot skip an unreadable manifest: its files
would look unreferenced and be deleted. ``strict=True`` raises instead. A walk of what may
be *deleted* skips what it cannot read (those files are only left behind).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from iceduck.catalog.metadata_files import VERSION_HINT
from iceduck.errors import IceduckError
from iceduck.formats.manifest_list import read_manifest_list
from iceduck.formats.manifests import read_manifest
from iceduck.io.fileio import read_bytes, to_local_path
from iceduck.io.object_store import is_object_store, same_location
from iceduck.spec.manifest import FileContent, ManifestFile
from iceduck.spec.snapshot import PartitionStatisticsFile, Snapshot, StatisticsFile
from iceduck.spec.table_metadata import TableMetadata

#: local path -> the location as the metadata writes it
Locations = dict[str, str]


@dataclass
class ReachableFiles:
    """The files some snapshots reach, one map per kind (the kinds Spark's
    ``expire_snapshots`` counts); deletion vectors' Puffin files are position deletes."""

    data: Locations = field(default_factory=dict)
    position_deletes: Locations = field(default_factory=dict)
    equality_deletes: Locations = field(default_factory=dict)
    manifests: Locations = field(default_factory=dict)
    manifest_lists: Locations = field(default_factory=dict)
    statistics: Locations = field(default_factory=dict)
    #: the partition spec ids of the manifests reached
    spec_ids: set[int] = field(default_factory=set)

    def kinds(self) -> tuple[Locations, ...]:
        """Every kind, content files first and metadata last: the order to delete in, so
        an interrupted cleanup never leaves a manifest whose files are already gone
        while the manifest itself is still counted on."""
        return (
            self.data,
            self.position_deletes,
            self.equality_deletes,
            self.manifests,
            self.manifest_lists,
            self.statistics,
        )

    def keys(self) -> set[str]:
        """The local path of every file reached."""
        return {key for kind in self.kinds() for key in kind}


def key(location: str) -> str:
    """The comparison key of a location: its local path, normalised (``//``, ``/./``), or
    an object's canonical location."""
    if is_object_store(location):
        return same_location(location)
    return os.path.normpath(to_local_path(location))


def _add(kind: Locations, location: str) -> None:
    kind.setdefault(key(location), location)


def reachable_files(
    metadata: TableMetadata,
    snapshot_ids: Iterable[int] | None = None,
    *,
    strict: bool = True,
    live_only: bool = False,
) -> ReachableFiles:
    """The files the snapshots ``snapshot_ids`` (default: all) of ``metadata`` reach.

    ``strict``: an unreadable manifest list or manifest raises (the caller keeps what the
    result lists); otherwise it is skipped (the caller deletes what the result lists).
    ``live_only``: content files of DELETED entries are left out (see the module docstring)."""
    wanted = None if snapshot_ids is None else set(snapshot_ids)
    found = ReachableFiles()
    specs = metadata.specs_by_id()
    seen_manifests: set[str] = set()
    for snapshot in metadata.snapshots:
        if wanted is not None and snapshot.snapshot_id not in wanted:
            continue
        for location, row in _manifests(metadata, snapshot, found, strict):
            if location in seen_manifests:
                continue
            seen_manifests.add(location)
            _add(found.manifests, location)
            if row is not None:
                found.spec_ids.add(row.partition_spec_id)
            try:
                meta, entries = read_manifest(read_bytes(location), location, row, specs, inherit=False)
            except (IceduckError, OSError):
                if strict:
                    raise
                continue
            found.spec_ids.add(meta.spec_id)
            for entry in entries:
                if live_only and not entry.is_live:
                    continue
                _add(_content_kind(found, entry.data_file.content), entry.data_file.file_path)
    for stats in _statistics(metadata):  # all of them when all snapshots are asked for,
        if wanted is None or stats.snapshot_id in wanted:  # even one of a missing snapshot
            _add(found.statistics, stats.statistics_path)
    return found


def _statistics(metadata: TableMetadata) -> list[StatisticsFile | PartitionStatisticsFile]:
    return [*metadata.statistics, *metadata.partition_statistics]


def _content_kind(found: ReachableFiles, content: FileContent) -> Locations:
    if content == FileContent.POSITION_DELETES:
        return found.position_deletes
    if content == FileContent.EQUALITY_DELETES:
        return found.equality_deletes
    return found.data


def _manifests(
    metadata: TableMetadata, snapshot: Snapshot, found: ReachableFiles, strict: bool
) -> list[tuple[str, ManifestFile | None]]:
    """(manifest location, its manifest-list row or None for a v1 listed manifest) of a
    snapshot; records the manifest list itself."""
    if snapshot.manifest_list is None:
        return [(path, None) for path in snapshot.manifests or ()]
    _add(found.manifest_lists, snapshot.manifest_list)
    try:
        rows = read_manifest_list(
            read_bytes(snapshot.manifest_list), snapshot.manifest_list, metadata.format_version
        )
    except (IceduckError, OSError):
        if strict:
            raise
        return []
    return [(row.manifest_path, row) for row in rows]


def referenced_by_table(metadata: TableMetadata, metadata_location: str) -> set[str]:
    """The local path of every file the table's metadata references, which orphan-file
    removal must keep: what every snapshot reaches (deleted entries too), every statistics
    and partition-statistics file, each metadata file of the ``metadata-log``, the current
    metadata file and, beside it, a Hadoop table's ``version-hint.text``. Strict: an
    unreadable manifest raises rather than let its files look orphaned."""
    keys = reachable_files(metadata, strict=True).keys()
    keys.update(key(stats.statistics_path) for stats in _statistics(metadata))
    for entry in metadata.metadata_log:
        keys.add(key(entry.metadata_file))
    current = key(metadata_location)
    keys.add(current)
    keys.add(f"{current.rsplit('/', 1)[0]}/{VERSION_HINT}")
    return keys
