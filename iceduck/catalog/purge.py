"""Every file a table's metadata reaches, for ``DROP TABLE ... PURGE``.

As Java's ``CatalogUtil.dropTableData``: the data and delete files of every manifest entry
(live or not) of every snapshot, the manifests, the manifest lists (v1: manifests listed
in the snapshot), statistics and partition-statistics files, the metadata files of the
``metadata-log`` and the current metadata file. Purging runs after the catalog row is
gone, so it is best effort: an unreadable manifest or a file that cannot be deleted is
skipped (the table is already dropped; failing now would only hide that).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from iceduck.catalog.metadata_files import delete_quietly
from iceduck.errors import IceduckError
from iceduck.formats.manifest_list import read_manifest_list
from iceduck.formats.manifests import read_manifest
from iceduck.io import object_files
from iceduck.io.fileio import read_bytes, to_local_path
from iceduck.io.object_store import is_object_store
from iceduck.spec.manifest import ManifestFile
from iceduck.spec.table_metadata import TableMetadata


def _manifests(metadata: TableMetadata) -> Iterator[tuple[str | None, list[ManifestFile] | list[str]]]:
    """(manifest list location, its manifests) per snapshot; v1 snapshots without a list
    give their manifest paths."""
    for snapshot in metadata.snapshots:
        if snapshot.manifest_list is not None:
            try:
                rows = read_manifest_list(
                    read_bytes(snapshot.manifest_list), snapshot.manifest_list, metadata.format_version
                )
            except (IceduckError, OSError):
                rows = []
            yield snapshot.manifest_list, rows
        else:
            yield None, list(snapshot.manifests or ())


def reachable_files(metadata: TableMetadata, metadata_location: str | None) -> list[str]:
    """Every file ``metadata`` references, each once, content files first and the metadata
    files last (so an interrupted purge leaves a table whose metadata still lists what is left)."""
    content: dict[str, None] = {}
    manifests: dict[str, None] = {}
    lists: dict[str, None] = {}
    specs = metadata.specs_by_id()
    for list_location, rows in _manifests(metadata):
        if list_location is not None:
            lists[list_location] = None
        for row in rows:
            path = row if isinstance(row, str) else row.manifest_path
            if path in manifests:
                continue
            manifests[path] = None
            try:
                _, entries = read_manifest(
                    read_bytes(path), path, None if isinstance(row, str) else row, specs, inherit=False
                )
            except (IceduckError, OSError):
                continue
            for entry in entries:
                content[entry.data_file.file_path] = None
    stats = [s.statistics_path for s in metadata.statistics]
    stats += [s.statistics_path for s in metadata.partition_statistics]
    metadata_files = [e.metadata_file for e in metadata.metadata_log]
    if metadata_location is not None:
        metadata_files.append(metadata_location)
    ordered = [*content, *stats, *manifests, *lists, *metadata_files]
    return list(dict.fromkeys(ordered))


def purge_table_files(metadata: TableMetadata, metadata_location: str | None) -> None:
    """Delete every file :func:`reachable_files` lists, ignoring failures (see module docstring),
    then the folders under the table location that this left empty (an object store has no
    folders; on a local disk, empty partition folders would only clutter the warehouse)."""
    for location in reachable_files(metadata, metadata_location):
        delete_quietly(location)
    remove_empty_folders(metadata.location)


def remove_empty_folders(location: str) -> None:
    """Remove ``location`` and the folders below it that hold no file, deepest first. A
    folder that still holds anything (a file no metadata reached) stays, with its parents."""
    if is_object_store(location):
        try:
            object_files.remove_empty_folders(location)
        except IceduckError:
            pass  # as for the files: a purge that could not tidy up has still dropped the table
        return
    try:
        root = Path(to_local_path(location))
    except IceduckError:
        return
    if not root.is_dir():
        return
    for folder, _, _ in sorted(os.walk(root), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(folder)  # only succeeds on an empty folder
        except OSError:
            pass
