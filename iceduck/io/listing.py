"""Listing the files under a table location, for orphan-file removal; listing one folder.

As Java's ``DeleteOrphanFilesSparkAction`` lists with Hadoop's ``HiddenPathFilter``, names
starting with ``.`` or ``_`` are skipped -- files and folders alike, except folders whose
name holds ``=`` (a partition value such as ``_c=1``). Those are not table files: Hadoop's
``.crc`` checksums, ``_SUCCESS`` markers, and the temporary files of a write in progress
(:func:`iceduck.io.fileio.write_new` writes ``.<name>.*.tmp`` before linking the file into
place), which must never be taken for orphans.

In an object store there are no folders, only keys: the same filter applies to every
segment of a key below the listed location (``data/_temporary/f`` is hidden).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from iceduck.io import object_files
from iceduck.io.fileio import storage_errors, to_local_path
from iceduck.io.object_store import is_object_store


@dataclass(frozen=True)
class ListedFile:
    #: the local path, or the object's location in an object store
    path: str
    #: last modification, epoch milliseconds
    modified_ms: int


def is_hidden(name: str, folder: bool) -> bool:
    """Whether Hadoop's hidden-path filter skips ``name``."""
    if folder and "=" in name:
        return False
    return name.startswith((".", "_"))


def list_files(location: str) -> Iterator[ListedFile]:
    """Every file below ``location`` (recursively, symbolic links not followed), hidden
    names skipped; nothing when the folder does not exist."""
    if is_object_store(location):
        yield from _list_objects(location)
        return
    root = to_local_path(location)
    with storage_errors(root):
        for folder, folders, files in os.walk(root):
            folders[:] = [name for name in folders if not is_hidden(name, folder=True)]
            for name in files:
                if is_hidden(name, folder=False):
                    continue
                path = os.path.join(folder, name)
                try:
                    stat = os.lstat(path)
                except FileNotFoundError:  # removed since the folder was read
                    continue
                yield ListedFile(path, stat.st_mtime_ns // 1_000_000)


def list_children(location: str) -> tuple[list[str], list[str]]:
    """(files, folders) directly below the folder ``location``, as locations, sorted;
    both empty when the folder does not exist. Hidden names are kept: a caller that lists
    a folder of its own format knows which names it wants (Paimon's ``snapshot/LATEST``
    beside ``snapshot-<id>``)."""
    if is_object_store(location):
        return object_files.children(location)
    root = to_local_path(location)
    files: list[str] = []
    folders: list[str] = []
    with storage_errors(root):
        try:
            entries = list(os.scandir(root))
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        for entry in entries:
            path = os.path.join(location.rstrip("/"), entry.name)
            (folders if entry.is_dir() else files).append(path)
    return sorted(files), sorted(folders)


def _list_objects(location: str) -> Iterator[ListedFile]:
    for listed in object_files.list_objects(location):
        *folders, name = listed.relative.split("/")
        if is_hidden(name, folder=False) or any(is_hidden(f, folder=True) for f in folders):
            continue
        yield ListedFile(listed.location, listed.modified_ms)
