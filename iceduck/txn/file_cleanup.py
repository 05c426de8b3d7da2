"""Deleting the files an expiry left unreachable, after its commit.

Java's ``ReachableFileCleanup``: the files the table reached before the commit minus
the files the table reaches after it are deleted -- content files first, then
manifests, manifest lists and statistics files (:meth:`ReachableFiles.kinds`), so a crash
midway leaves a committed table whose metadata reaches only files that exist; what a
crash leaves behind is an orphan that ``remove_orphan_files`` removes later.

A file that cannot be deleted is skipped and not counted, as Java's cleanup logs and goes
on: the metadata change has landed, and failing now would only hide that.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from iceduck.errors import IceduckError
from iceduck.io import object_files
from iceduck.io.fileio import to_local_path
from iceduck.io.object_store import is_object_store
from iceduck.scan.reachable import ReachableFiles


@dataclass(frozen=True)
class DeletedCounts:
    """How many files of each kind were deleted (Spark's ``expire_snapshots`` columns)."""

    data_files: int = 0
    position_delete_files: int = 0
    equality_delete_files: int = 0
    manifests: int = 0
    manifest_lists: int = 0
    statistics_files: int = 0


def delete_file(location: str) -> bool:
    """Delete a table file and its Hadoop checksum sibling (``.<name>.crc``, which Spark's
    local file system writes next to every file); whether the file is gone now because of
    this call."""
    if is_object_store(location):  # no checksum siblings: Hadoop writes those locally only
        try:
            return object_files.delete(location)
        except IceduckError:
            return False
    try:
        path = to_local_path(location)
        os.unlink(path)
    except (OSError, IceduckError):
        return False
    folder, name = os.path.split(path)
    try:
        os.unlink(os.path.join(folder, f".{name}.crc"))
    except OSError:
        pass
    return True


def delete_unreachable(before: ReachableFiles, after: ReachableFiles) -> DeletedCounts:
    """Delete every file ``before`` lists that ``after`` does not (compared by local path,
    across kinds: a file that is still reached as anything stays)."""
    kept = after.keys()
    counts = []
    for kind in before.kinds():
        counts.append(sum(1 for key, location in kind.items() if key not in kept and delete_file(location)))
    return DeletedCounts(*counts)
